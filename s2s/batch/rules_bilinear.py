"""Batching rules of the helpers that second-order code of products calls (``vmap`` of
a Hessian-vector product, ``vmap(jvp(grad(f)))``, of code with ``np.dot``,
``np.inner``, ``np.tensordot``, ``np.einsum``).

* ``dot_vjp_jvp(t, out, g, a, b, which, wrt)`` (and ``inner_``/``tensordot_``): the
  tangent of the product VJP ``dot_vjp(g, a, b, which)`` from factor ``wrt``'s
  tangent ``t``: 0 when ``wrt == which`` (the VJP ignores that factor), else the VJP
  with factor ``wrt`` replaced by ``t``, batched as ``rt.batch_bilinear_vjp``;
* ``einsum_vjp2(g, s, k, j, v, a...)`` = ``einsum_vjp`` with ``a_j := v`` (0 if
  ``j == k``) and ``einsum_jvp2(t, s, k, j, v, a...)`` = ``einsum_jvp`` with
  ``a_j := v`` (0 if ``j == k``): batched as those (``rules_products``).

``which``, ``wrt``, ``k``, ``j`` must be constants of the generated code (they are).
"""
from __future__ import annotations

import numpy as np

import s2s_runtime as rt

from ..ir import nodes as ir
from . import rules_products as P
from .table import Site, defbatch


def _const(site, atom, what):
    if not isinstance(atom, ir.Const):
        from .transform import BatchingError
        raise BatchingError(f"vmap: {what} not known when s2s transforms the code", site.loc)
    return atom.value


def _batched_zeros(site, like):
    """Zeros shaped like ``like`` for every example."""
    if not site.b(like):
        like = site.rt(rt.batch_view, like, site.n, batched=True)
    return ir.Call(np.zeros_like, (like,))


def bilinear_vjp_jvp(kind, with_axes=False):
    def rule(site):
        t, out, g, a, b = site.call.args[:5]
        extra = site.call.args[5:]
        axes = extra[0] if with_axes else None
        rest = extra[1:] if with_axes else extra
        which = _const(site, rest[0], "the factor of a product VJP") if rest else 0
        wrt = _const(site, rest[1], "the factor of a product VJP") if len(rest) > 1 else 0
        if which == wrt:
            return _batched_zeros(site, out)
        a, b = (t, b) if wrt == 0 else (a, t)
        if not (site.b(g) or site.b(a) or site.b(b)):
            g = site.rt(rt.batch_view, g, site.n, batched=True)
        args = (ir.Const(kind), ir.Const(which), g, a, b, site.flag(g), site.flag(a),
                site.flag(b)) + ((axes,) if with_axes else ())
        return ir.Call(rt.batch_bilinear_vjp, args)
    return rule


defbatch(bilinear_vjp_jvp("dot"), rt.dot_vjp_jvp)
defbatch(bilinear_vjp_jvp("inner"), rt.inner_vjp_jvp)
defbatch(bilinear_vjp_jvp("tensordot", with_axes=True), rt.tensordot_vjp_jvp)


def _second(site, helper, rule):
    """``helper2(x, s, k, j, v, a...)`` as ``helper(x, s, k, a...; a_j := v)`` batched by
    ``rule`` (0 when ``j == k``: ``rule`` then gives the shape, ``zeros_like`` the zeros)."""
    x, subs, k, j, v = site.call.args[:5]
    ops = list(site.call.args[5:])
    jj = _const(site, j, "the operand of an einsum derivative")
    kk = _const(site, k, "the operand of an einsum derivative")
    if jj != kk:
        ops[jj] = v
    inner = Site(site.tr, ir.Call(helper, (x, subs, k) + tuple(ops)), site.loc)
    inner.out = site.out
    if any(inner.b(a) for a in inner.call.operands()):
        expr = rule(inner)
    else:  # only a_j, which v replaces, was batched: the same for every example
        expr = ir.Call(rt.batch_view, (site.emit(inner.call), site.n))
    if jj == kk:
        value = site.emit(expr)
        site.tr.batched.add(value.name)
        return ir.Call(np.zeros_like, (value,))
    return expr


def einsum_vjp2(site):
    return _second(site, rt.einsum_vjp, P.einsum_vjp)


def einsum_jvp2(site):
    return _second(site, rt.einsum_jvp, P.einsum_jvp)


defbatch(einsum_vjp2, rt.einsum_vjp2)
defbatch(einsum_jvp2, rt.einsum_jvp2)
