"""Forward and reverse mode of calls of ``custom_jvp``/``custom_vjp`` functions.

The frontend leaves such a call as ``y = <f>(*args)`` (``custom.CustomCall``;
every callable below carries ``_s2s_custom``).  What each mode makes of it:

Forward mode (``tangent``), ``f`` a ``custom_jvp``::

    pair = <f_jvp>(*args, *tangents)     # zeros for arguments without a tangent
    y = pair[0]; dy = pair[1]

and a ``custom_vjp`` is an error, as in JAX.

Reverse mode: before the analyses, ``expand_vjp_calls`` rewrites a call of a
``custom_vjp`` ``g`` into ``pair = <g_fwd>(*args); y = <g_out>(pair, *args)``,
so the primal sweep runs the user's forward function and keeps its
residuals (``pair``) like any other value (on the tape inside loops).  The
adjoint (``adjoint``) of ``y = <g_out>(pair, *args)`` is
``cts = <g_bwd>(pair, y_bar, *args)`` and of ``y = <f>(*args)``, ``f`` a
``custom_jvp``, ``cts = <f_transpose>(*args, y_bar)``; ``cts[i]`` accumulates
into the ``i``-th differentiable argument.  Nothing is added to ``pair``'s
adjoint: the rule replaces the derivative of the forward function.

A ``nondiff_argnums`` argument that carries a derivative is an error (its
derivative would be lost), as is a custom function without its rule.
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import List

import s2s_runtime as rt

from ..errors import CustomRuleError, S2SError
from ..ir import nodes as ir
from ..rules.registry import defno_mode
from .common import is_in


def is_custom(fn) -> bool:
    """A call the transforms handle here (see the module docstring)."""
    return getattr(type(fn), "_s2s_custom", None) is not None


def _error(message, loc):
    return CustomRuleError(message, loc)


def _check_nondiff(owner, args, active, loc, mode) -> None:
    for i in owner.nondiff_argnums:
        if i < len(args) and is_in(args[i], active):
            raise _error(f"{mode} of {owner.describe()}: argument {i} is in nondiff_argnums "
                         "but carries a derivative here; its derivative would be lost "
                         "(leave it out of nondiff_argnums, or pass a constant)", loc)


# -- reverse mode ------------------------------------------------------------------------

def expand_vjp_calls(body, names, temps) -> List:
    """``y = <g>(*args)`` of a ``custom_vjp`` -> ``pair = <g_fwd>(*args); y = <g_out>(pair,
    *args)``, in every block of ``body``."""
    out = []
    for s in body:
        v = getattr(s, "value", None)
        if isinstance(s, ir.Assign) and isinstance(v, ir.Call) and is_custom(v.fn) \
                and v.fn._s2s_custom == "call" and v.fn.owner.kind == "custom_vjp":
            owner = v.fn.owner
            if owner.fwd is None:
                raise _error(f"no VJP rule defined for {owner.describe()}: call "
                             f"{owner.name}.defvjp(fwd, bwd) first", s.loc)
            pair = ir.Var(names.fresh(f"{owner.name}_pair"))
            temps.add(pair.name)
            out.append(ir.Assign(pair, replace(v, fn=owner.fwd_call), s.loc))
            out.append(ir.Assign(s.target, ir.Call(owner.out_call, (pair,) + v.args), s.loc))
            continue
        blocks = ir.sub_blocks(s)
        if blocks:
            s = ir.with_blocks(s, tuple(tuple(expand_vjp_calls(b, names, temps))
                                        for b in blocks))
        out.append(s)
    return out


def adjoint(rev, s: ir.Assign, g, have, out, loc) -> None:
    """The adjoint of ``s``, a custom call, with the output cotangent ``g`` (``rev`` is
    the ``Reverse`` building it)."""
    fn = s.value.fn
    kind, owner = fn._s2s_custom, fn.owner
    if kind == "vjp_out":
        args = s.value.args[1:]
        _check_nondiff(owner, args, rev.relevant, s.loc, "reverse mode")
        call = ir.Call(owner.bwd_call, (s.value.args[0], g) + args)
    elif kind == "call" and owner.kind == "custom_jvp":
        args = s.value.args
        if owner.jvp is None:
            raise _error(f"no JVP rule defined for {owner.describe()}: decorate its rule "
                         f"with @{owner.name}.defjvp first", s.loc)
        _check_nondiff(owner, args, rev.relevant, s.loc, "reverse mode")
        call = ir.Call(owner.transpose, args + (g,))
    else:
        raise S2SError(f"internal error: reverse mode reached {fn!r} unexpanded", s.loc)
    cts = rev.temp()
    out.append(ir.Assign(cts, call, loc))
    for k, i in enumerate(owner.diff_argnums):
        a = args[i]
        if is_in(a, rev.relevant):
            c = rev.temp()
            out.append(ir.Assign(c, ir.Call(operator.getitem, (cts, ir.Const(k))), loc))
            rev.accumulate(a, c, have, out, loc)


# -- forward mode ------------------------------------------------------------------------

def refusals(func: ir.Function) -> ir.Function:
    """``func`` (forward-mode code, dead code removed), or the error of the first tangent
    it could not compute that it still needs (``rt.refused_tangent``: a ``custom_vjp``
    call's, left dead where its value is used only for its shape or not at all, as in
    the ``jacrev`` code ``hessian`` pushes forward)."""
    for s in ir.walk(func.body):
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call) and v.fn is rt.refused_tangent:
            raise _error(v.args[0].value, s.loc)
    return func


def tangent(fwd, v: ir.Call, ans: ir.Var, loc, out: List) -> ir.Atom:
    """The tangent of ``ans = v`` (the last statement of ``out``, replaced here)."""
    fn = v.fn
    owner = getattr(fn, "owner", None)
    if fn._s2s_custom != "call":
        raise S2SError(f"internal error: forward mode reached {fn!r} unexpanded", loc)
    if owner.kind == "custom_vjp":  # refused where the tangent is needed (``refusals``)
        dy = fwd.temp()
        out.append(ir.Assign(dy, ir.Call(rt.refused_tangent, (ir.Const(
            f"can't apply forward-mode autodiff (jvp) to a custom_vjp function "
            f"({owner.describe()}); s2s, like JAX, differentiates it only in reverse mode "
            "(grad, vjp, jacrev): define a custom_jvp for forward mode"),)), loc))
        return dy
    if owner.jvp is None:
        raise _error(f"no JVP rule defined for {owner.describe()}: decorate its rule with "
                     f"@{owner.name}.defjvp first", loc)
    _check_nondiff(owner, v.args, fwd.active, loc, "forward mode")
    primal = out.pop()
    tangents = []
    for i in owner.diff_argnums:
        a = v.args[i]
        if is_in(a, fwd.active):
            tangents.append(fwd.dot_of(a.name))
        else:  # JAX passes zeros for inputs without a tangent
            z = fwd.temp()
            out.append(ir.Assign(z, ir.Call(rt.zeros_like, (a,)), loc))
            tangents.append(z)
    pair = fwd.temp()
    out.append(ir.Assign(pair, ir.Call(owner.jvp_call, v.args + tuple(tangents)), primal.loc))
    out.append(ir.Assign(ans, ir.Call(operator.getitem, (pair, ir.Const(0))), primal.loc))
    dy = fwd.temp()
    out.append(ir.Assign(dy, ir.Call(operator.getitem, (pair, ir.Const(1))), loc))
    return dy


for _mode in ("jvp", "vjp", "vmap", "jit"):  # never in code a transform or the emitter sees
    defno_mode(_mode, "a placeholder forward mode refuses (refusals) or removes as dead code "
               "before any other transform sees it", rt.refused_tangent)
