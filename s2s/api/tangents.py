"""The public forward-mode transform ``jvp`` (JAX's semantics), and its IR when it is
called inside transformed code (``jvp.__s2s_ir__``, ``core/protocol.py``).
"""
from __future__ import annotations

import inspect
import operator
from dataclasses import replace
import s2s_runtime as rt
from s2s_runtime import build
from ..core.protocol import ClosureSite
from ..core.reverse import depends_on_kinds
from ..core.varargs import adapter, wants_adapter
from ..ir import nodes as ir
from ..passes.sites import IRCallable
from ..core.forward import check_pairs, forward_of
from ..passes.partials import readable


def jvp(fun, primals, tangents, has_aux=False):
    """``(fun(*primals), J(primals) @ tangents)`` in one forward pass (JAX's ``jvp``).

    With ``has_aux``, ``fun`` returns ``(out, aux)`` and jvp returns
    ``(out, tangent_out, aux)``.  Integer leaves take a ``None`` or zero
    tangent and are ignored.
    """
    fun = readable(fun)
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
    return _jvp_site_ir(fun, primals, tangents, has_aux)


def _jvp_site_ir(fun, primals, tangents, has_aux, captured=None):
    """The IR of a ``jvp`` site (``_jvp_wrapper``) for these values; ``captured``: the
    values of the variables a local function captures (``ClosureJvp``'s form, maybe
    none), trailing arguments of ``fun`` without tangents."""
    closure, captured = captured is not None, tuple(captured or ())
    primals, tangents = check_pairs(primals, tangents, fun)
    nprimals = len(primals)
    if wants_adapter(fun) or depends_on_kinds(fun):
        fun = adapter(fun, nprimals + len(captured), ())  # *args: one parameter per primal
    transform = forward_of(fun, has_aux)
    values, kw = transform._bind(primals + tuple(captured), None)
    # a tangent None (s2s's symbolic zero) is not carried
    carries = [c and (i >= nprimals or tangents[i] is not None)
               for i, c in enumerate(transform._carries(values, nprimals))]
    fwd_ir, free = transform.site_ir(values, carries, kw)
    return _jvp_wrapper(fwd_ir, free, values, carries, nprimals, has_aux, fwd_ir.loc,
                        len(captured), closure)


class ClosureJvp(ClosureSite):
    """``jvp(local function, primals, tangents)`` inside transformed code
    (``ClosureSite``): the captures appended to the primals, with no tangent (they are
    constants of the function)."""

    transform = "jvp"

    def __call__(self, primals, tangents, *captured, has_aux=False):
        primals, tangents = check_pairs(primals, tangents, self.lifted)  # the user's own
        return jvp(self.lifted, primals + captured, tangents + (None,) * len(captured),
                   has_aux)

    def __s2s_ir__(self, args=None, kwargs=None):
        if args is None:  # the IR depends on the arguments' kinds
            return None
        if len(args) != 2 + self.n_captured or set(kwargs or {}) - {"has_aux"}:
            raise TypeError("jvp takes a function, the primals, the tangents and has_aux=")
        primals, tangents, captured = args[0], args[1], tuple(args[2:])
        return _jvp_site_ir(self.lifted, primals, tangents,
                            (kwargs or {}).get("has_aux", False), captured)


def _jvp_wrapper(fwd_ir, free, values, carries, nprimals, has_aux, loc, n_captured=0,
                 closure=False):
    """IR of ``lambda fun, primals, tangents, has_aux: jvp(f, primals, tangents)`` for fixed kinds,
    where ``fwd_ir`` (free variables ``free``) is the JVP function of ``f``; with
    ``closure``, ``lambda primals, tangents, *captured, has_aux`` (``ClosureJvp``: the
    ``n_captured`` variables a local function captures)."""
    loc = loc and replace(loc, derived=True)
    body, names = [], []

    def let(name, value):
        body.append(ir.Assign(ir.Var(name), value, loc))
        names.append(name)
        return ir.Var(name)

    primals, tangents = ir.Var("primals"), ir.Var("tangents")
    args, dots = [], []
    captured = [ir.Var(f"c{k}") for k in range(n_captured)]
    for i, v in enumerate(values):
        if nprimals <= i < nprimals + n_captured:  # a variable a local function captures
            args.append(captured[i - nprimals])
            continue
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
    params = ((() if closure else (ir.Param(ir.Var("fun")),)) +
              (ir.Param(primals), ir.Param(tangents)) + tuple(map(ir.Param, captured)) +
              (ir.Param(ir.Var("has_aux"), ir.Const(False)),))
    return ir.Function(f"jvp_{fwd_ir.name}", params, tuple(body), loc,
                       temps=frozenset(names)), {}


jvp.__s2s_ir__ = _jvp_ir
jvp._s2s_closure_site = ClosureJvp  # jvp of a local function in code: passes/callables.py
