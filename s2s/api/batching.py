"""The public batching transform ``vmap`` (JAX's semantics; ``core.vmap.Vmapped``).
"""
from __future__ import annotations

from ..core.vmap import Vmapped
from ..passes.partials import readable


def vmap(fun=None, in_axes=0, out_axes=0, fallback=None, axis_size=None):
    """``fun`` mapped over a batch axis of its arguments (JAX's ``vmap``), as one batched
    program (see the module docstring); ``axis_size``: the batch size, needed only when
    no argument is mapped."""
    if fun is None:
        return lambda f: vmap(f, in_axes, out_axes, fallback, axis_size)
    return Vmapped(readable(fun), in_axes, out_axes, fallback, axis_size)


vmap._s2s_static_factory = True


def _captures_unmapped(args, kwargs, n_args, n_captured):
    """vmap of a local function inside transformed code (``passes/callables.py``): the
    variables it captures, passed after its own arguments, are mapped on no axis."""
    args, kwargs = list(args), dict(kwargs)
    in_axes = args[0] if args else kwargs.get("in_axes", 0)
    axes = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,) * n_args
    axes += (None,) * n_captured
    if args:
        args[0] = axes
    else:
        kwargs["in_axes"] = axes
    return tuple(args), kwargs


vmap._s2s_closure_arguments = _captures_unmapped
