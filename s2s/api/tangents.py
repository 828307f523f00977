"""The public forward-mode transform ``jvp`` (JAX's semantics), and its IR when it is
called inside transformed code (``jvp.__s2s_ir__``, ``core/protocol.py``).
"""
from __future__ import annotations

import inspect
import operator
from dataclasses import replace
import s2s_runtime as rt
from s2s_runtime import build
from ..core.reverse import depends_on_kinds
from ..core.varargs import adapter, wants_adapter
from ..ir import nodes as ir
from ..passes.sites import IRCallable
from ..core.forward import check_pairs, forward_of


def jvp(fun, primals, tangents, has_aux=False):
    """``(fun(*primals), J(primals) @ tangents)`` in one forward pass (JAX's ``jvp``).

    With ``has_aux``, ``fun`` returns ``(out, aux)`` and jvp returns
    ``(out, tangent_out, aux)``.  Integer leaves take a ``None`` or zero
    tangent and are ignored.
    """
    if (wants_adapter(fun) or depends_on_kinds(fun)) and isinstance(primals, (tuple, list)):
        fun = adapter(fun, len(primals), ())  # *args: one parameter per primal
    return forward_of(fun, has_aux)(primals, tangents)


def _jvp_ir(args=None, kwargs=None):
    """``jvp(f, primals, tangents)`` inside transformed code, as IR (``jvp.__s2s_ir__``,
    ``core/protocol.py``): the primals and tangents are unpacked, the tangents
    densified, and the JVP function of ``f`` for these kinds is called on them."""
    if args is None:  # the IR depends on the arguments' kinds
        return None
    bound = inspect.signature(jvp).bind(*args, **kwargs)
    bound.apply_defaults()
    fun, primals, tangents, has_aux = (bound.arguments[n] for n in
                                       ("fun", "primals", "tangents", "has_aux"))
    primals, tangents = check_pairs(primals, tangents, fun)
    if wants_adapter(fun) or depends_on_kinds(fun):
        fun = adapter(fun, len(primals), ())  # *args: one parameter per primal
    transform = forward_of(fun, has_aux)
    values, kw = transform._bind(primals, None)
    carries = transform._carries(values, len(primals))
    fwd_ir, free = transform.site_ir(values, carries, kw)
    return _jvp_wrapper(fwd_ir, free, values, carries, len(primals), has_aux, fwd_ir.loc)


def _jvp_wrapper(fwd_ir, free, values, carries, nprimals, has_aux, loc):
    """IR of ``lambda fun, primals, tangents, has_aux: jvp(f, primals, tangents)`` for fixed kinds,
    where ``fwd_ir`` (free variables ``free``) is the JVP function of ``f``."""
    loc = loc and replace(loc, derived=True)
    body, names = [], []

    def let(name, value):
        body.append(ir.Assign(ir.Var(name), value, loc))
        names.append(name)
        return ir.Var(name)

    primals, tangents = ir.Var("primals"), ir.Var("tangents")
    args, dots = [], []
    for i, v in enumerate(values):
        if i >= nprimals:  # a default value of f
            args.append(ir.Const(v))
            continue
        p = let(f"p{i}", ir.Call(operator.getitem, (primals, ir.Const(i))))
        args.append(p)
        if carries[i]:
            t = let(f"t{i}", ir.Call(operator.getitem, (tangents, ir.Const(i))))
            dots.append(let(f"d{i}", ir.Call(rt.densify, (t, p))))
    result = let("r", ir.Call(IRCallable(fwd_ir, free), tuple(args + dots)))
    if has_aux:
        pair = let("o", ir.Call(operator.getitem, (result, ir.Const(0))))
        parts = [let("out", ir.Call(operator.getitem, (pair, ir.Const(0)))),
                 let("dout", ir.Call(operator.getitem, (result, ir.Const(1)))),
                 let("aux", ir.Call(operator.getitem, (pair, ir.Const(1))))]
        result = let("res", ir.Call(build.make_tuple, tuple(parts)))
    body.append(ir.Return(result, loc))
    # the call's own parameters: fun and has_aux were fixed when this IR was made
    params = (ir.Param(ir.Var("fun")), ir.Param(primals), ir.Param(tangents),
              ir.Param(ir.Var("has_aux"), ir.Const(False)))
    return ir.Function(f"jvp_{fwd_ir.name}", params, tuple(body), loc,
                       temps=frozenset(names)), {}


jvp.__s2s_ir__ = _jvp_ir
