"""The public compiling transform ``jit`` (``core.jit.Jitted``, the LLVM backend).
"""
from __future__ import annotations

from ..core.jit import Jitted
from ..passes.callables import same_arguments


def jit(fun=None, *, boundscheck: bool = True, cache: bool = False):
    """Compile ``fun`` to native code with LLVM (``@jit`` or ``jit(f, boundscheck=...)``).

    Bounds checks raise ``IndexError`` unless ``boundscheck=False``.  Compiled code
    is kept in memory per signature; ``cache=True`` also keeps the object code on
    disk (``$S2S_CACHE_DIR`` or ``~/.cache/s2s/jit``), keyed by the module text (so
    the source), the signature and the s2s/llvmlite versions.
    """
    if fun is None:
        return lambda f: jit(f, boundscheck=boundscheck, cache=cache)
    return Jitted(fun, boundscheck=boundscheck, cache=cache)


jit._s2s_static_factory = True  # jit(f)(x) in code: made while lowering (grad of it is grad(f))
jit._s2s_closure_arguments = same_arguments  # of a local function: passes/callables.py
