"""The public compiling transform ``jit`` (``core.jit.Jitted``, the LLVM backend).
"""
from __future__ import annotations

from ..core.jit import Jitted, StaticJitted
from ..passes.callables import same_arguments
from ..passes.partials import readable


def jit(fun=None, *, static_argnums=(), static_argnames=(), boundscheck: bool = True,
        cache: bool = False):
    """Compile ``fun`` to native code with LLVM (``@jit`` or ``jit(f, boundscheck=...)``).

    Bounds checks raise ``IndexError`` unless ``boundscheck=False``.  Compiled code
    is kept in memory per signature; ``cache=True`` also keeps the object code on
    disk (``$S2S_CACHE_DIR`` or ``~/.cache/s2s/jit``), keyed by the module text (so
    the source), the signature and the s2s/llvmlite versions.  ``static_argnums`` /
    ``static_argnames`` (JAX's): the arguments at those positions or of those names are
    compile-time constants, one compiled function per value (they must be hashable);
    any value may be static (a callable, a string, a tuple giving a shape).
    """
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             boundscheck=boundscheck, cache=cache)
    fun = readable(fun)
    if static_argnums != () or static_argnames != ():
        return StaticJitted(fun, static_argnums, static_argnames, boundscheck, cache)
    return Jitted(fun, boundscheck=boundscheck, cache=cache)


jit._s2s_static_factory = True  # jit(f)(x) in code: made while lowering (grad of it is grad(f))
jit._s2s_closure_arguments = same_arguments  # of a local function: passes/callables.py
