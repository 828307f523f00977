"""The public ``vjp`` and ``linearize`` (JAX's semantics); the closures they return,
``VJPFunction`` and ``LinearizedFunction``, are in ``core/pullbacks.py``.
"""
from __future__ import annotations

from ..passes.partials import readable
from ..core.protocol import ClosureSite
from ..core.pullbacks import LinearizedFunction, vjp_of
from ..core.specialise import check_callable
from ..core.transform_code import linearize_ir, vjp_ir

_VJP_USAGE = "vjp takes a function, the primals and has_aux="
_LINEARIZE_USAGE = "linearize takes a function and the primals"


def vjp(fun, *primals, has_aux=False):
    """``(fun(*primals), vjp_fun)`` where ``vjp_fun(ct)`` returns one cotangent per primal.

    With ``has_aux``: ``(out, vjp_fun, aux)``.  The primal runs once, in the
    generated forward sweep, which hands the values the adjoint needs
    (the residuals) to ``vjp_fun``; ``vjp_fun`` runs only the adjoint sweep
    and may be called many times, with cotangents shaped like the output.
    """
    return vjp_of(readable(fun), primals, has_aux)


def _vjp_ir(args=None, kwargs=None):
    """``vjp(f, *primals)`` inside transformed code, as IR (``vjp.__s2s_ir__``,
    ``core/protocol.py``; ``transform_code.vjp_ir``)."""
    if args is None:  # the IR depends on the arguments' kinds
        return None
    kwargs = dict(kwargs or {})
    has_aux = kwargs.pop("has_aux", False)
    if kwargs or not args:
        raise TypeError(_VJP_USAGE)
    return vjp_ir(args[0], tuple(args[1:]), has_aux)


class ClosureVjp(ClosureSite):
    """``vjp(local function, *primals)`` inside transformed code (``ClosureSite``): the
    captures after the primals; its pullback gives the cotangents of the primals only
    (the captures are constants of the function)."""

    transform = "vjp"

    def __call__(self, *args, has_aux=False):
        primals, captured = self.split(args, _VJP_USAGE)
        out = vjp_of(self.lifted, primals + captured, has_aux)
        k = len(primals)
        return (out[0], lambda ct: out[1](ct)[:k]) + tuple(out[2:])

    def __s2s_ir__(self, args=None, kwargs=None):
        if args is None:  # the IR depends on the arguments' kinds
            return None
        kwargs = dict(kwargs or {})
        has_aux = kwargs.pop("has_aux", False)
        if kwargs:
            raise TypeError(_VJP_USAGE)
        primals, captured = self.split(args, _VJP_USAGE)
        return vjp_ir(self.lifted, primals, has_aux, captured)


vjp.__s2s_ir__ = _vjp_ir
vjp._s2s_closure_site = ClosureVjp  # vjp of a local function in code: passes/callables.py


def linearize(fun, *primals):
    """``(fun(*primals), jvp_fun)`` where ``jvp_fun(*tangents)`` is the JVP at ``primals``."""
    check_callable(fun, "linearize")
    fun = readable(fun)
    out = fun(*primals)
    return out, LinearizedFunction(fun, primals)


def _linearize_ir(args=None, kwargs=None):
    """``linearize(f, *primals)`` inside transformed code, as IR (``linearize.__s2s_ir__``,
    ``core/protocol.py``; ``transform_code.linearize_ir``)."""
    if args is None:  # the IR depends on the arguments' kinds
        return None
    if kwargs or not args:
        raise TypeError(_LINEARIZE_USAGE)
    return linearize_ir(args[0], tuple(args[1:]))


class ClosureLinearize(ClosureSite):
    """``linearize(local function, *primals)`` inside transformed code (``ClosureSite``):
    the captures after the primals, with no tangent."""

    transform = "linearize"

    def __call__(self, *args):
        primals, captured = self.split(args, _LINEARIZE_USAGE)
        out, jvp_fun = linearize(self.lifted, *primals, *captured)
        return out, lambda *tangents: jvp_fun(*tangents, *(None,) * len(captured))

    def __s2s_ir__(self, args=None, kwargs=None):
        if args is None:  # the IR depends on the arguments' kinds
            return None
        if kwargs:
            raise TypeError(_LINEARIZE_USAGE)
        primals, captured = self.split(args, _LINEARIZE_USAGE)
        return linearize_ir(self.lifted, primals, captured)


linearize.__s2s_ir__ = _linearize_ir
linearize._s2s_closure_site = ClosureLinearize  # of a local function: passes/callables.py
