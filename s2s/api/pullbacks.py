"""The public ``vjp`` and ``linearize`` (JAX's semantics); the closures they return,
``VJPFunction`` and ``LinearizedFunction``, are in ``core/pullbacks.py``.
"""
from __future__ import annotations

from ..core.pullbacks import LinearizedFunction, vjp_of
from ..core.specialise import check_callable
from ..core.transform_code import vjp_ir


def vjp(fun, *primals, has_aux=False):
    """``(fun(*primals), vjp_fun)`` where ``vjp_fun(ct)`` returns one cotangent per primal.

    With ``has_aux``: ``(out, vjp_fun, aux)``.  The primal runs once, in the
    generated forward sweep, which hands the values the adjoint needs
    (the residuals) to ``vjp_fun``; ``vjp_fun`` runs only the adjoint sweep
    and may be called many times, with cotangents shaped like the output.
    """
    return vjp_of(fun, primals, has_aux)


def _vjp_ir(args=None, kwargs=None):
    """``vjp(f, *primals)`` inside transformed code, as IR (``vjp.__s2s_ir__``,
    ``core/protocol.py``; ``transform_code.vjp_ir``)."""
    if args is None:  # the IR depends on the arguments' kinds
        return None
    kwargs = dict(kwargs or {})
    has_aux = kwargs.pop("has_aux", False)
    if kwargs or not args:
        raise TypeError("vjp takes a function, the primals and has_aux=")
    return vjp_ir(args[0], tuple(args[1:]), has_aux)


vjp.__s2s_ir__ = _vjp_ir


def linearize(fun, *primals):
    """``(fun(*primals), jvp_fun)`` where ``jvp_fun(*tangents)`` is the JVP at ``primals``."""
    check_callable(fun, "linearize")
    out = fun(*primals)
    return out, LinearizedFunction(fun, primals)
