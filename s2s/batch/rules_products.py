"""Batching rules of products and indexing.

* **contractions** (``np.dot``, ``np.matmul``/``@``, ``np.inner``, ``np.outer``,
  ``np.vdot``, ``np.tensordot``, two-operand ``np.einsum``): each is an einsum
  over the examples' axes; batching adds the batch letter ``z`` to the
  batched operands and the result (``rt.batch_spec`` builds the subscripts
  from the per-example ranks), and the product runs once as
  ``rt.batch_contract(spec, a, b)`` (a matrix-matrix product where the
  examples made matrix-vector ones).
* the VJP helpers of products (``rt.dot_vjp``...) are contractions too:
  ``rt.batch_bilinear_vjp`` contracts the batched cotangent with the other
  factor back to the factor's subscripts.  Both run as one ``np.matmul`` on views
  of the operands (``s2s_runtime.blas_contract``).
* ``np.einsum`` of one or three or more operands, and the einsum derivative helpers
  (``rt.einsum_jvp``, ``rt.einsum_vjp``): the batch letter is added to the constant
  subscripts of the batched operands and of the result (``batched_subscripts``);
  the helpers then run on the whole batch.
* **indexing**: ``x[i]`` with an unbatched index reads ``x[:, i]``
  (``rt.batch_index``; containers are indexed as they are); a batched index
  gathers per example (``rt.batch_gather``).  ``unbroadcast`` and
  ``broadcast_like`` (in generated derivative code) work per example.
"""
from __future__ import annotations

import operator

import numpy as np

import s2s_runtime as rt

from ..ir import nodes as ir
from .table import Site, defbatch


def contraction(kind, flatten=False, conj=False, axes_param=None):
    def rule(site):
        a, b = site.call.args[0], site.call.args[1]
        if site.call.fn is np.einsum:
            if len(site.call.args) != 3:
                return einsum_operands(site)
            a, b = site.call.args[1], site.call.args[2]
        if conj:
            a = site.emit(ir.Call(np.conjugate, (a,)))
        if flatten:
            a = site.emit(ir.Call(rt.batch_flat if site.b(a) else np.ravel, (a,)))
            b = site.emit(ir.Call(rt.batch_flat if site.b(b) else np.ravel, (b,)))
        extra = ()
        if site.call.fn is np.einsum:
            extra = (site.call.args[0],)
        elif axes_param is not None:
            extra = (site.arg(axes_param, ir.Const(2)),)
        spec = site.rt(rt.batch_spec, ir.Const(kind), a, b, site.flag(a), site.flag(b), *extra)
        return ir.Call(rt.batch_contract, (spec, a, b))
    return rule


defbatch(contraction("dot"), np.dot)
defbatch(contraction("matmul"), np.matmul, operator.matmul)
defbatch(contraction("inner"), np.inner)
defbatch(contraction("outer", flatten=True), np.outer)
defbatch(contraction("vdot", flatten=True, conj=True), np.vdot)
defbatch(contraction("tensordot", axes_param="axes"), np.tensordot)
defbatch(contraction("einsum"), np.einsum)


def cross(site):
    """``np.cross(a, b)`` over the last axis: the batch axis is a leading axis, which
    ``np.cross`` broadcasts, once each batched operand is aligned against the other
    (``rules_core.aligned_operands``).  Only the default axes (the derivative rules pass
    them positionally: ``-1, -1, -1, None``)."""
    from .rules_core import aligned_operands
    from .transform import BatchingError
    rest = list(site.call.args[2:]) + [a for _, a in site.call.kwargs]
    if len(site.call.args) > 6 or any(getattr(a, "value", "?") not in (-1, None) for a in rest):
        raise BatchingError("vmap: np.cross with axes other than the last", site.loc)
    a, b = aligned_operands(site, site.call.args[:2])
    return ir.Call(np.cross, (a, b))


defbatch(cross, np.cross)
def batched_subscripts(subscripts, flags):
    """The subscripts of ``np.einsum(subscripts, *operands)`` run on the whole batch (at
    transform time: the subscripts are a constant of the code): a
    batch letter (one the subscripts do not use) in front of the operands whose
    ``flags`` entry is true and in front of the (made explicit) output."""
    s = subscripts.replace(" ", "")
    ins, arrow, out = s.partition("->")
    parts = ins.split(",")
    if len(parts) != len(flags):
        raise ValueError(f"einsum: {len(parts)} operand subscripts, {len(flags)} operands")
    if not arrow:
        letters = [c for c in ins if c.isalpha()]
        out = ("..." if "..." in ins else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    z = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
             if c not in s)
    parts = [z + p if f else p for p, f in zip(parts, flags)]
    return ",".join(parts) + "->" + z + out


def _subscripts(site, atom, flags):
    """The batched subscripts (``batched_subscripts``) of a constant ``atom``."""
    if not (isinstance(atom, ir.Const) and isinstance(atom.value, str)):
        from .transform import BatchingError
        raise BatchingError("vmap: np.einsum whose subscripts are not a string constant",
                            site.loc)
    return ir.Const(batched_subscripts(atom.value, flags))


def einsum_operands(site):
    """``np.einsum(s, *ops)`` of one or three or more operands: the batch letter on the
    batched operands and the result (numpy's einsum then runs the whole batch)."""
    subs, ops = site.call.args[0], site.call.args[1:]
    return ir.Call(np.einsum, (_subscripts(site, subs, [site.b(a) for a in ops]),) + ops,
                   site.call.kwargs)


def _einsum_helper_args(site, first):
    """``(subscripts atom, k, operand atoms)`` of ``einsum_jvp``/``einsum_vjp``: operand
    ``k`` (the one replaced by ``first``: the tangent, or the cotangent's target)."""
    subs, k = site.call.args[1], site.call.args[2]
    if not isinstance(k, ir.Const):
        from .transform import BatchingError
        raise BatchingError("vmap: an einsum derivative of an operand not known when s2s "
                            "transforms the code", site.loc)
    ops = list(site.call.args[3:])
    present = [i for i, a in enumerate(ops) if not (isinstance(a, ir.Const) and a.value is None)]
    return subs, k.value, ops, present


def einsum_jvp(site):
    """``einsum_jvp(t, s, k, a...) = einsum(s, a; a_k := t)``: the batch letter on the
    batched operands (``t`` in operand ``k``'s place) and the result; ``t`` is viewed
    over the batch when only ``a_k`` (which it replaces) is batched."""
    t, (subs, k, ops, present) = site.call.args[0], _einsum_helper_args(site, None)
    flags = [site.b(t) if i == k else site.b(ops[i]) for i in present]
    if not any(flags):
        t = site.rt(rt.batch_view, t, site.n, batched=True)
        flags[present.index(k)] = True
    return ir.Call(rt.einsum_jvp, (t, _subscripts(site, subs, flags), ir.Const(k),
                                   *ops))


def einsum_vjp(site):
    """``einsum_vjp(g, s, k, a...)``: the cotangent of operand ``k`` for every example, so
    the batch letter is on the result ``g`` and on ``a_k`` (both viewed over the batch
    when not batched; ``a_k`` gives only its shape) and on the batched other operands."""
    g, (subs, k, ops, present) = site.call.args[0], _einsum_helper_args(site, None)
    if not site.b(g):
        g = site.rt(rt.batch_view, g, site.n, batched=True)
    if not site.b(ops[k]):
        ops[k] = site.rt(rt.batch_view, ops[k], site.n, batched=True)
    flags = [True if i == k else site.b(ops[i]) for i in present]
    return ir.Call(rt.einsum_vjp, (g, _subscripts(site, subs, flags), ir.Const(k), *ops))


defbatch(einsum_jvp, rt.einsum_jvp)
defbatch(einsum_vjp, rt.einsum_vjp)


def product_vjp(kind, which=None, axes_param=None):
    def rule(site):
        g, a, b = site.call.args[:3]
        w = ir.Const(which) if which is not None else site.arg("which", ir.Const(0))
        extra = (site.arg(axes_param, ir.Const(2)),) if axes_param else ()
        return ir.Call(rt.batch_bilinear_vjp, (ir.Const(kind), w, g, a, b, site.flag(g),
                                               site.flag(a), site.flag(b)) + extra)
    return rule


defbatch(product_vjp("dot"), rt.dot_vjp)
defbatch(product_vjp("inner"), rt.inner_vjp)
defbatch(product_vjp("tensordot", axes_param="axes"), rt.tensordot_vjp)
defbatch(product_vjp("matmul", 0), rt.matmul_vjp_lhs)
defbatch(product_vjp("matmul", 1), rt.matmul_vjp_rhs)


def getitem(site):
    x, index = site.call.args
    from .value_reads import gathered_read, value_read
    if site.b(index):  # out of range in an example that runs the read: IndexError
        mask = () if site.tr.mask is None else (site.tr.mask,)
        site.out.append(ir.ExprStmt(ir.Call(rt.batch_check_index, (x, index, site.flag(x))
                                            + mask), site.loc))
        return gathered_read(site, ir.Call(rt.batch_gather, (x, index, site.flag(x),
                                                             ir.Const(True))))
    if isinstance(index, ir.Const) and site.tr.known_array(x):
        return value_read(site, ir.Call(operator.getitem, (
            x, ir.Const(rt.batch_index(np.zeros(0), index.value)))))
    return value_read(site, ir.Call(operator.getitem, (x, site.rt(rt.batch_index, x, index))))


def getitem_vjp(site):
    g, x, index = site.call.args
    if not site.b(x):
        x = site.rt(rt.batch_view, x, site.n, batched=True)
    if site.b(index):
        return ir.Call(rt.batch_gather_vjp, (g, x, index, ir.Const(True), ir.Const(True)))
    if not site.b(g):
        g = site.rt(rt.batch_view, g, site.n, batched=True)
    return ir.Call(rt.getitem_vjp, (g, x, site.rt(rt.batch_index, x, index)))


def add_at(site):
    """``add_at(acc, g, x, index) = add(acc, getitem_vjp(g, x, index))``: the scatter
    batched as ``getitem_vjp``'s rule does it, then the sum of the two batched values."""
    acc, g, x, index = site.call.args
    scatter = Site(site.tr, ir.Call(rt.getitem_vjp, (g, x, index)), site.loc)
    scatter.out = site.out  # its statements go before this call
    part = site.emit(getitem_vjp(scatter))
    site.tr.batched.add(part.name)
    if isinstance(acc, ir.Var) and not site.b(acc):
        acc = site.rt(rt.batch_view, acc, site.n, batched=True)
    return ir.Call(rt.add, (acc, part))


def unbroadcast(site):
    g, x = site.call.args
    return ir.Call(rt.batch_unbroadcast, (g, x, site.flag(g), site.flag(x)))


def broadcast_like(site):
    t, ans = site.call.args
    if site.b(t):
        t = site.emit(ir.Call(rt.batch_align, (t, ans, site.flag(ans))))
    if not site.b(ans):
        ans = site.rt(rt.batch_view, ans, site.n, batched=True)
    return ir.Call(rt.broadcast_like, (t, ans))


defbatch(getitem, operator.getitem)
defbatch(getitem_vjp, rt.getitem_vjp)
defbatch(add_at, rt.add_at)
defbatch(unbroadcast, rt.unbroadcast)
defbatch(broadcast_like, rt.broadcast_like)
