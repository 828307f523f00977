"""The public batching transform ``vmap`` (JAX's semantics; ``core.vmap.Vmapped``).
"""
from __future__ import annotations

from ..core.vmap import Vmapped


def vmap(fun=None, in_axes=0, out_axes=0, fallback=None, axis_size=None):
    """``fun`` mapped over a batch axis of its arguments (JAX's ``vmap``), as one batched
    program (see the module docstring); ``axis_size``: the batch size, needed only when
    no argument is mapped."""
    if fun is None:
        return lambda f: vmap(f, in_axes, out_axes, fallback, axis_size)
    return Vmapped(fun, in_axes, out_axes, fallback, axis_size)


vmap._s2s_static_factory = True
