"""What ``vjp`` and ``linearize`` (JAX's semantics, ``api/pullbacks.py``) compute, and the
closures they return.

The closures carry their IR (``__s2s_ir__``, ``core/protocol.py``), so they are transformed like
user code: ``grad``/``jvp``/``vjp`` of a ``vjp_fun`` or of a linearized
``jvp_fun``, and calls of them inside transformed code, differentiate the
adjoint (or tangent) code s2s generated, with the values it closes over as
constants.
"""
from __future__ import annotations

import inspect
import operator
import pickle
from dataclasses import replace

import numpy as np

from s2s_runtime.tree import tree_flatten, tree_structure

from . import pipeline
from .reverse import reverse_transform, ReverseTransform
from .specialise import raise_if_not_a_pair
from .forward import check_pairs, forward_of
from .varargs import adapter, wants_adapter
from ..frontend.scope import FreeVar
from ..ir import nodes as ir
from ..ir.names import NameGen
from ..ir.kinds import kind_of
from .travel import travelling


class VJPFunction:
    """``vjp_fun(ct)``: the adjoint sweep of a ``vjp``, applied to the residuals its
    forward sweep handed over; returns one cotangent per primal.

    Its IR is the adjoint sweep with the residuals as constants.
    """

    __signature__ = inspect.Signature([inspect.Parameter("ct", inspect.Parameter.POSITIONAL_OR_KEYWORD)])

    def __init__(self, bwd, bwd_ir: ir.Function, residuals: tuple, out):
        self._bwd, self._bwd_ir, self._residuals, self._out = bwd, bwd_ir, residuals, out
        self.__name__ = self.__qualname__ = bwd_ir.name
        self._ir = None

    #: ``(fun, primals, has_aux)`` of the ``vjp`` call that made it, for pickling
    made_by = None

    def __reduce__(self):
        """The ``vjp`` call that made it, run again where it arrives (the forward sweep
        recomputes the residuals; no generated code travels: ``core/travel.py``)."""
        if self.made_by is None:
            raise pickle.PicklingError(f"{self.__name__}: a vjp function s2s made internally "
                                       "cannot be pickled")
        return travelling(self, pullback, self.made_by)

    def __call__(self, ct):
        out = self._out
        try:
            parts = tree_structure(out).flatten_up_to(ct)
        except ValueError as exc:
            raise TypeError(f"vjp: the cotangent does not match the output's structure: "
                            f"{exc}") from None
        for o, c in zip(tree_flatten(out)[0], parts):
            if np.shape(o) != np.shape(c):
                raise ValueError(f"vjp: the output has shape {np.shape(o)} but the "
                                 f"cotangent has shape {np.shape(c)}")
        try:
            return self._bwd(*self._residuals, ct)
        except Exception as exc:  # the user's file:line as a note
            pipeline.note_user_line(exc)
            raise

    def __s2s_ir__(self, args=None, kwargs=None):
        if self._ir is None:
            params = self._bwd_ir.params
            held = params[:-1]  # the residuals; the last parameter is the cotangent
            func = replace(self._bwd_ir, params=(params[-1],) + tuple(
                replace(p, kwonly=True) for p in held))
            free = {p.var.name: FreeVar.constant(p.var.name, v)
                    for p, v in zip(held, self._residuals)}
            self._ir = (func, free)
        return self._ir


def vjp_of(fun, primals, has_aux=False):
    """``vjp(fun, *primals, has_aux=has_aux)``: ``(out, vjp_fun)`` or ``(out, vjp_fun, aux)``;
    the forward sweep runs once and hands the residuals to the ``VJPFunction``."""
    if not primals:
        raise TypeError("vjp needs at least one primal argument")
    given = fun
    kwonly = {}
    if isinstance(fun, ReverseTransform):  # vjp(grad(f)): the vjp of the code grad(f) generated
        fun, kwonly = fun.generated(fun._bind(primals, {}))
    if wants_adapter(fun):
        fun = adapter(fun, len(primals), ())  # *args: one parameter per primal
    transform = reverse_transform(fun, tuple(range(len(primals))), has_aux, False, "vjp")
    values = transform._bind(primals, kwonly)
    free = transform.free_values()
    cache_key = ("split",) + tuple(map(kind_of, values)) + tuple(map(kind_of, free.values()))
    hit = transform.cache.get(cache_key)
    if hit is None:
        def make():
            fwd_ir, bwd_ir, freevars = transform.split_ir(values)
            return (pipeline.compile_function(fwd_ir)[0], pipeline.compile_function(bwd_ir)[0],
                    bwd_ir, {n: fv for n, fv in freevars.items()
                             if n not in transform.front.freevars})

        hit = transform.cache[cache_key] = transform.shared(cache_key, make)
    fwd, bwd, bwd_ir, extra = hit
    free.update((name, fv.load()) for name, fv in extra.items())
    if transform.kwonly_names:
        free.update(zip(transform.kwonly_names, values[transform.n_positional:]))
        values = values[:transform.n_positional]
    try:
        result, residuals = fwd(*values, **free)  # the primal runs once; residuals are values
    except Exception as exc:  # the user's file:line as a note
        pipeline.note_user_line(exc)
        if has_aux:
            raise_if_not_a_pair(exc, "vjp", fun)
        raise
    out, aux = result if has_aux else (result, None)
    vjp_fun = VJPFunction(bwd, bwd_ir, residuals, out)
    vjp_fun.made_by = (given, primals, has_aux)
    return (out, vjp_fun, aux) if has_aux else (out, vjp_fun)


def pullback(fun, primals, has_aux=False):
    """The ``vjp_fun`` of ``vjp(fun, *primals, has_aux=has_aux)`` (what a pickled
    ``vjp_fun`` is made again from)."""
    return vjp_of(fun, primals, has_aux)[1]


class LinearizedFunction:
    """``jvp_fun(*tangents)``: the JVP of ``fun`` at fixed primals.

    Its IR is the JVP function with the primals as constants; each call
    evaluates it on the tangents (the primal values it needs are
    recomputed, as the IR holds no residuals).
    """

    def __init__(self, fun, primals):
        if wants_adapter(fun):  # *args, or a jacfwd... function: one parameter per primal
            fun = adapter(fun, len(primals), ())
        self._fun, self._primals = fun, tuple(primals)
        self._forward = forward_of(fun, False)
        name = "".join(ch if ch.isalnum() else "_" for ch in getattr(fun, "__name__", "f"))
        self.__name__ = self.__qualname__ = f"jvp_{name.strip('_') or 'f'}"
        self._ir = self._make_ir()
        self.__signature__ = inspect.Signature([
            inspect.Parameter(p.var.name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for p in self._ir[0].params if not p.kwonly])

    def __call__(self, *tangents):
        primals, tangents = check_pairs(self._primals, tangents, self._fun,
                                         "the linearized function")
        return self._forward(primals, tangents, checked=True)[1]

    def __reduce__(self):  # its function and primals: the IR is made again (core/travel.py)
        return travelling(self, LinearizedFunction, (self._fun, self._primals))

    def __s2s_ir__(self, args=None, kwargs=None):
        return self._ir

    def _make_ir(self):
        forward = self._forward
        primals, _ = check_pairs(self._primals, self._primals, self._fun, dtypes=False)
        values, kw = forward._bind(primals, None)
        carries = forward._carries(values, len(primals))
        func, free = forward.site_ir(values, carries, kw)
        params = list(func.params)
        n = len(values)
        held, dots, rest = params[:n], params[n:n + sum(carries)], params[n + sum(carries):]
        free = dict(free)
        for p, v in zip(held, values):
            free[p.var.name] = FreeVar.constant(p.var.name, v)
        # one tangent parameter t<i> per primal (those of integer primals are ignored),
        # named as in __signature__ and copied into the JVP function's tangent names
        body = list(func.body)
        ret = body.pop()
        names = NameGen(ir.all_names(func))
        tangent_params = [ir.Param(ir.Var(names.fresh(f"t{i}"))) for i in range(len(primals))]
        by_index = iter(dots)
        body[:0] = [ir.Assign(next(by_index).var, p.var, ret.loc)
                    for p, c in zip(tangent_params, carries) if c]
        t = ir.Var(names.fresh("tangent_out"))
        body += [ir.Assign(t, ir.Call(operator.getitem, (ret.value, ir.Const(1))), ret.loc),
                 ir.Return(t, ret.loc)]
        func = replace(func, name=self.__name__, body=tuple(body),
                       params=tuple(tangent_params) + tuple(replace(p, kwonly=True)
                                                            for p in held) + tuple(rest),
                       temps=func.temps | {t.name})
        return func, free
