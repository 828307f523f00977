"""Calls of checkpointed functions (``s2s/core/remat.py``) in both modes.

Reverse mode: ``y = f_ckpt(a, b)`` stays in the primal sweep as it is (it
runs ``f`` and records nothing of its internals); its adjoint is

    t = f_ckpt_vjp(a, b, y_bar)      # recomputes f with its tape, runs its adjoint
    a_bar = t[0]; b_bar = t[1]       # for the arguments that need one

so the caller's tape keeps only the arguments (where a loop overwrites
them), never ``f``'s intermediates.  Forward mode: ``r = f_ckpt_jvp(a, b,
da, db); y = r[0]; dy = r[1]`` (zeros for arguments without a tangent).
Both companions are ``Remat`` objects too, so transforming the generated
code again takes the same path (second order).  Where forward-mode code reads
only ``r[0]`` of a pushforward (the tangent is dead: a value read only for its
shape, as in the ``jacrev`` code ``hessian`` pushes forward),
``primal_only_pushforwards`` calls the checkpointed function itself instead, so
no tangent of ``f`` is built (nor refused, for a ``custom_vjp`` call in ``f``).
"""
from __future__ import annotations

import operator
from typing import List

import s2s_runtime as rt
from s2s_runtime import build

from ..errors import unsupported
from ..ir import nodes as ir
from .common import is_in


def is_remat_call(v) -> bool:
    return isinstance(v, ir.Call) and getattr(v.fn, "_s2s_remat", False)


def positional_atoms(v: ir.Call, loc) -> List[ir.Atom]:
    """The call's arguments as one atom per positional parameter of the function
    (keywords and defaults bound by its signature)."""
    try:
        sig = v.fn.signature()
    except (TypeError, ValueError):  # a companion (pullback, pushforward): positional
        return list(v.args)
    try:
        bound = sig.bind(*v.args, **dict(v.kwargs))
    except TypeError as exc:
        raise unsupported(f"this call of the checkpointed {v.fn.fun.__name__}: {exc}", loc)
    bound.apply_defaults()
    out = []
    for name, p in sig.parameters.items():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise unsupported(f"checkpoint of {v.fn.fun.__name__}, which has *args, **kwargs "
                              "or keyword-only parameters", loc,
                              "give the checkpointed function plain parameters")
        a = bound.arguments[name]
        out.append(a if isinstance(a, (ir.Var, ir.Const)) else ir.Const(a))
    return out


def remat_adjoint(rev, s: ir.Assign, g: ir.Atom, have, out: List, loc) -> None:
    """The adjoint of ``s`` (``y = f_ckpt(...)``), whose cotangent is ``g``, for ``rev``
    (a ``Reverse``)."""
    remat = s.value.fn
    remat.check_replayable()
    args = positional_atoms(s.value, s.loc)
    wanted = [i for i, a in enumerate(args)
              if is_in(a, rev.relevant) and i not in remat.static_argnums]
    if not wanted:
        return
    t = rev.temp()
    out.append(ir.Assign(t, ir.Call(remat.pullback, tuple(args) + (g,)), loc))
    for i in wanted:
        c = rev.temp()
        out.append(ir.Assign(c, ir.Call(operator.getitem, (t, ir.Const(i))), loc))
        rev.accumulate(args[i], c, have, out, loc)


def remat_tangent(fwd, v: ir.Call, ans: ir.Var, loc, out: List) -> ir.Atom:
    """The tangent of ``ans = v`` (``v`` a call of a ``Remat``) for ``fwd`` (a
    ``Forward``): the primal statement last in ``out`` becomes a call of the
    pushforward."""
    remat = v.fn
    args = positional_atoms(v, loc)
    primal = out.pop()
    dots = []
    for i, a in enumerate(args):
        if is_in(a, fwd.active) and i not in remat.static_argnums:
            dots.append(fwd.dot_of(a.name))
        else:
            z = fwd.temp()
            out.append(ir.Assign(z, ir.Call(rt.zeros_like, (a,)), loc))
            dots.append(z)
    r = fwd.temp()
    out.append(ir.Assign(r, ir.Call(remat.pushforward, tuple(args) + tuple(dots)), primal.loc))
    out.append(ir.Assign(ans, ir.Call(operator.getitem, (r, ir.Const(0))), primal.loc))
    d = fwd.temp()
    out.append(ir.Assign(d, ir.Call(operator.getitem, (r, ir.Const(1))), loc))
    return d



def primal_only_pushforwards(func: ir.Function) -> ir.Function:
    """``func`` with every ``r = f_ckpt_jvp(*args, *tangents)`` whose uses are all
    ``y = r[0]`` replaced by ``y_ = f_ckpt(*args); r = (y_,)`` (dead code removal
    then drops the tangents)."""
    calls, other_uses = {}, set()
    for s in ir.walk(func.body):
        v = getattr(s, "value", None)
        if isinstance(s, ir.Assign) and is_remat_call(v) and \
                getattr(getattr(v.fn, "base", None), "pushforward", None) is v.fn:
            calls[s.target.name] = s
        primal_read = (isinstance(s, ir.Assign) and isinstance(v, ir.Call)
                       and v.fn is operator.getitem and v.args[1] == ir.Const(0))
        for a in (v.args[1:] if primal_read else ir.stmt_uses(s)):
            if isinstance(a, ir.Var):
                other_uses.add(a.name)
    primal_only = {n for n in calls if n not in other_uses}
    if not primal_only:
        return func
    names = ir.all_names(func)

    def rewrite(s):
        if not (isinstance(s, ir.Assign) and s.target.name in primal_only):
            return s
        k = 0
        while f"{s.target.name}_primal{k or ''}" in names:
            k += 1
        y = ir.Var(f"{s.target.name}_primal{k or ''}")
        names.add(y.name)
        push = s.value
        args = push.args[:len(push.args) // 2]
        return [ir.Assign(y, ir.Call(push.fn.base, args), s.loc),
                ir.Assign(s.target, ir.Call(build.make_tuple, (y,)), s.loc)]

    return func.with_body(_flat_map(func.body, rewrite))


def _flat_map(body, fn):
    out = []
    for s in body:
        r = fn(s)
        for x in (r if isinstance(r, list) else [r]):
            blocks = ir.sub_blocks(x)
            out.append(ir.with_blocks(x, [_flat_map(b, fn) for b in blocks]) if blocks else x)
    return tuple(out)
