"""Batched products in LLVM IR: ``vmap``'s contractions, so that ``jit(vmap(f))`` compiles
``@``, ``np.dot``, ``np.matmul``, ``np.inner``, ``np.outer``, ``np.vdot``,
``np.tensordot`` and two-operand ``np.einsum`` over a batch (``s2s/batch/rules_products.py``).

* ``batch_spec(kind, a, b, a_batched, b_batched[, axes])`` depends only on the
  operands' ranks and on constants, so it is evaluated while typing: a compile-time
  string (``types.Static``), the einsum subscripts ``"sa,sb->so"`` of the product;
* ``batch_contract(spec, a, b)`` = ``np.einsum(spec, a, b)`` for a constant ``spec``
  (an ellipsis written out as letters of its own where both operands' stand for as many
  axes, ``_without_ellipsis``): one loop nest, the result's letters outside and the summed ones
  inside (or, where the result's last letter is an operand's last axis, innermost:
  rows of the result updated from rows of the operands), ``out[o] = sum_s a[..] *
  b[..]`` in the promoted dtype.  A letter's extent is the broadcast of its sizes
  (size 1 broadcasts, as numpy's einsum does; any other disagreement raises
  ``ValueError``); a letter repeated in one operand reads its diagonal.  Numbers
  (rank 0 operands) take part as they are;
* ``batch_contract_vjp(spec, which, g, a, b)``: the cotangent of operand ``which`` of
  ``batch_contract`` (``ContractVjp``), the same loops with the subscripts of the
  transpose;
* ``batch_bilinear_vjp(kind, which, g, a, b, g_b, a_b, b_b[, axes])``: the cotangent
  of factor ``which``, the contraction of ``g`` with the other factor back to the
  factor's subscripts (``rt.batching_products.bilinear_vjp_subscripts``), written
  into an array of the factor's shape (with the batch in front when only the
  cotangent is batched): where the factor has size 1 and the loop runs longer the
  products are summed into it (``_fit``'s broadcast sum); a real factor gets the real
  part of a complex cotangent.
"""
from __future__ import annotations

import string
import sys

import numpy as np
import s2s_runtime as rt
from llvmlite import ir as ll
from s2s_runtime import batching_products as BP

from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T
from ..ops.calls import register


def _dummy(t):
    return np.zeros((1,) * t.ndim) if isinstance(t, T.Array) else 0.0


def _consts(atoms):
    vals = [getattr(a, "value", None) for a in atoms]
    return vals if all(hasattr(a, "value") for a in atoms) else None


def _parse(spec):
    """``(sa, sb, so)`` of a two-operand spec without ellipsis, else None."""
    if not isinstance(spec, str) or "." in spec or "->" not in spec:
        return None
    ins, so = spec.replace(" ", "").split("->")
    parts = ins.split(",")
    if len(parts) != 2 or not all(c.isalpha() for c in "".join(parts) + so):
        return None
    sa, sb = parts
    if len(set(so)) != len(so) or any(c not in sa + sb for c in so):
        return None
    return sa, sb, so


def _fits(sub, t):
    return isinstance(t, (T.Array, T.Scalar)) and len(sub) == getattr(t, "ndim", 0)


def _product_type(ta, tb):
    st = T.promote(ta.elem if isinstance(ta, T.Array) else ta,
                   tb.elem if isinstance(tb, T.Array) else tb)
    return T.Scalar("i8") if st.dtype == "b1" else st


class BatchSpec:
    """``batch_spec(...)``: the subscripts, a compile-time constant."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        consts = _consts([atoms[0]] + list(atoms[3:]))
        if kw or not 5 <= len(types) <= 6 or consts is None or \
                not all(isinstance(t, (T.Array, T.Scalar)) for t in types[1:3]):
            return None
        kind, flags, axes = consts[0], consts[1:3], (consts[3] if len(consts) > 3 else None)
        try:
            spec = rt.batch_spec(kind, _dummy(types[1]), _dummy(types[2]), *flags, axes)
        except (ValueError, TypeError, IndexError):
            return None
        return T.Static(sys.intern(spec))  # one object per text: a stable type

    def lower(self, L, fn, vals, kw, rtype):
        return ll.Constant(rtype.llvm(), None)


class BatchContract:
    """``batch_contract(spec, a, b)``: ``np.einsum(spec, a, b)`` as native loops."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 3 or not isinstance(types[0], T.Static):
            return None
        parts = _parse(_without_ellipsis(types[0].value, types[1], types[2]))
        if parts is None or not (_fits(parts[0], types[1]) and _fits(parts[1], types[2])):
            return None
        st = _product_type(types[1], types[2])
        return T.Array(st.dtype, len(parts[2])) if parts[2] else st

    def lower(self, L, fn, vals, kw, rtype):
        (spec, _), a, b = vals
        return einsum2(L, _parse(_without_ellipsis(_static(L, 0), a[1], b[1])), a, b, rtype)


def _without_ellipsis(spec, ta, tb):
    """``spec`` with its ``...`` written as letters of their own (the operands' ranks are
    known: ``'z...ij,z...jk->z...ik'`` of 4-d operands is ``'zAij,zAjk->zAik'``) where both
    operands' ``...`` stand for the same number of axes; else ``spec`` as it is (refused by
    ``_parse``)."""
    if not isinstance(spec, str) or "..." not in spec or "->" not in spec:
        return spec
    ins, out = spec.replace(" ", "").split("->")
    parts = ins.split(",")
    if len(parts) != 2 or not all(p.count("...") == 1 for p in parts):
        return spec
    counts = {getattr(t, "ndim", 0) - len(p.replace("...", "")) for p, t in zip(parts, (ta, tb))}
    if len(counts) != 1 or min(counts) < 0:
        return spec
    letters = "".join(c for c in string.ascii_letters if c not in spec)[:counts.pop()]
    return ",".join(p.replace("...", letters) for p in parts) + "->" + out.replace("...", letters)


def _static(L, k):
    atom = L.call_atoms[0][k]
    return L.atom(atom)[1].value


class BilinearVjp:
    """``batch_bilinear_vjp(kind, which, g, a, b, g_b, a_b, b_b[, axes])``."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        plan = _vjp_plan(types, atoms) if not kw and 8 <= len(types) <= 9 else None
        if plan is None:
            return None
        subs, operand_types, target_t, prefix = plan
        st = _product_type(*operand_types)
        target_elem = target_t.elem if isinstance(target_t, T.Array) else target_t
        if target_elem.dtype != "c16" and st.dtype == "c16":
            st = T.F64T
        ndim = getattr(target_t, "ndim", 0) + prefix
        return T.Array(st.dtype, ndim) if ndim else st

    def lower(self, L, fn, vals, kw, rtype):
        atoms = L.call_atoms[0]
        subs, _, target_t, prefix = _vjp_plan([t for _, t in vals], atoms)
        which = atoms[1].value
        g, a, b = vals[2:5]
        target = a if which == 0 else b
        operands = (g, b) if which == 0 else (a, g)
        sizes = None
        if isinstance(target_t, T.Array):
            sizes = ([None] * prefix) + A.shape_list(L, *target)
        return einsum2(L, _parse(subs), *operands, rtype, sizes)


class ContractVjp:
    """``batch_contract_vjp(spec, which, g, a, b)``: the cotangent of operand ``which`` of
    ``batch_contract(spec, a, b)``: ``g`` contracted with the other operand back to that
    operand's subscripts, written into an array of its shape (``einsum2`` with its sizes:
    a letter only that operand has is the same all along it, a size-1 axis under a
    longer letter sums; a real operand takes the real part)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        plan = _contract_vjp_plan(types, atoms) if not kw and len(types) == 5 else None
        if plan is None:
            return None
        _, operands, target = plan
        st = _product_type(*operands)
        if (target.elem if isinstance(target, T.Array) else target).dtype != "c16" \
                and st.dtype == "c16":
            st = T.F64T
        return T.Array(st.dtype, target.ndim) if isinstance(target, T.Array) else st

    def lower(self, L, fn, vals, kw, rtype):
        subs, _, target_t = _contract_vjp_plan([t for _, t in vals], L.call_atoms[0])
        g, a, b = vals[2:5]
        which = L.call_atoms[0][1].value
        target = a if which == 0 else b
        operands = (g, b) if which == 0 else (a, g)
        sizes = A.shape_list(L, *target) if isinstance(target_t, T.Array) else None
        return einsum2(L, subs, *operands, rtype, sizes)


def _contract_vjp_plan(types, atoms):
    """``((sp, sq, so), operand types, target type)`` of ``batch_contract_vjp``, or None."""
    spec, which = types[0], getattr(atoms[1], "value", None)
    parts = _parse(spec.value) if isinstance(spec, T.Static) else None
    if parts is None or which not in (0, 1) or \
            not all(isinstance(t, (T.Array, T.Scalar)) for t in types[2:5]):
        return None
    sa, sb, so = parts
    g, a, b = types[2:5]
    subs, operands, target = ((so, sb, sa), (g, b), a) if which == 0 else \
        ((sa, so, sb), (a, g), b)
    if not (_fits(subs[0], operands[0]) and _fits(subs[1], operands[1])
            and _fits(subs[2], target)) or len(set(subs[2])) != len(subs[2]) or \
            (isinstance(target, T.Array) and target.ndim == 0):
        return None
    return subs, operands, target


def _vjp_plan(types, atoms):
    """``(subscripts, operand types, target type, batch axes put in front)``."""
    consts = _consts([atoms[0], atoms[1]] + list(atoms[5:]))
    if consts is None or not all(isinstance(t, (T.Array, T.Scalar)) for t in types[2:5]):
        return None
    kind, which, flags = consts[0], consts[1], consts[2:5]
    axes = consts[5] if len(consts) > 5 else None
    if which not in (0, 1) or not all(isinstance(f, bool) for f in flags):
        return None
    g, a, b = types[2:5]
    try:
        subs, lift = BP.bilinear_vjp_subscripts(kind, which, _dummy(a), _dummy(b), *flags, axes)
    except (ValueError, TypeError, IndexError):
        return None
    if lift or _parse(subs) is None:
        return None
    sp, sq, so = _parse(subs)
    operands = (g, b) if which == 0 else (a, g)
    if not (_fits(sp, operands[0]) and _fits(sq, operands[1])):
        return None
    target = a if which == 0 else b
    prefix = len(so) - getattr(target, "ndim", 0)
    return (subs, operands, target, prefix) if prefix in (0, 1) else None


def einsum2(L, parts, a, b, rtype, sizes=None):
    """``out[so] = sum a[sa] * b[sb]`` over the letters not in ``so``: a new array of type
    ``rtype`` (or a number, for an empty ``so``).  ``sizes``: the result's dimensions
    (None entries: the letter's extent); a dimension of 1 under a longer letter sums; a
    letter of ``so`` that neither operand has takes its size there (the sum is the same
    all along it)."""
    bld = L.b
    sa, sb, so = parts
    out_t = rtype.elem if isinstance(rtype, T.Array) else rtype
    acc_t = _product_type(a[1], b[1])
    operands = [(sa, a), (sb, b)]
    extent = {}
    for sub, (v, t) in operands:
        for k, c in enumerate(sub):
            n = A.shape_of(L, v, k)
            if c not in extent:
                extent[c] = n
                continue
            m = extent[c]
            bad = bld.and_(bld.and_(bld.icmp_signed("!=", n, m), bld.icmp_signed("!=", n, A.ONE)),
                           bld.icmp_signed("!=", m, A.ONE))
            L.check(bad, ValueError, "einsum: operands could not be broadcast together "
                    "(a dimension of size {0} against {1})", (n, m))
            extent[c] = bld.select(bld.icmp_signed("==", m, A.ONE), n, m)
    for k, c in enumerate(so):
        if c not in extent:  # (``_contract_vjp_plan``: only with sizes)
            extent[c] = sizes[k]
    readers = []
    for sub, (v, t) in operands:
        if isinstance(t, T.Scalar):
            readers.append((v, t, None, None))
            continue
        strides = []
        for k, c in enumerate(sub):
            n = A.shape_of(L, v, k)
            strides.append((c, bld.select(bld.icmp_signed("==", n, A.ONE), A.ZERO,
                                          A.stride_of(L, v, k))))
        readers.append((bld.extract_value(v, 0), t, strides, None))
    summed = [c for c in dict.fromkeys(sa + sb) if c not in so]
    slot = L.entry_alloca(acc_t.llvm())

    def term(idx, unit=None):
        """a[..] * b[..] at ``idx``; ``unit``: a letter read with unit strides."""
        vals = []
        for data, t, strides, _ in readers:
            if strides is None:
                vals.append(S.convert(L, data, t, acc_t))
                continue
            offset = A.ZERO
            for c, s in strides:
                s = A.i64(T.itemsize(t.dtype)) if c == unit else s
                offset = bld.add(offset, bld.mul(idx[c], s))
            ptr = bld.bitcast(bld.gep(data, [offset]), T.memory_llvm(t.elem).as_pointer())
            vals.append(S.convert(L, A.load(L, ptr, t.elem), t.elem, acc_t))
        return S.binary(L, "mul", vals[0], vals[1], acc_t)

    def total(outer):
        bld.store(L.const(0, acc_t), slot)

        def step(inner):
            idx = dict(zip(so, outer))
            idx.update(zip(summed, inner))
            bld.store(S.binary(L, "add", bld.load(slot), term(idx), acc_t), slot)

        A.loop_nest(L, [extent[c] for c in summed], step)
        return bld.load(slot)

    if not so:
        return S.convert(L, total([]), acc_t, out_t)
    dims = [extent[c] if sizes is None or sizes[k] is None else sizes[k]
            for k, c in enumerate(so)]
    for k, c in enumerate(so):
        if sizes is not None and sizes[k] is not None:
            bad = bld.and_(bld.icmp_signed("!=", dims[k], extent[c]),
                           bld.icmp_signed("!=", dims[k], A.ONE))
            L.check(bad, ValueError, "einsum cotangent: a dimension of size {0} against {1}",
                    (extent[c], dims[k]))
    out = A.allocate(L, rtype, dims)
    A.fill(L, out, rtype, L.const(0, out_t))
    data = bld.extract_value(out, 0)
    strides = [bld.select(bld.icmp_signed("==", d, A.ONE), A.ZERO, s)
               for d, s in zip(dims, A.strides_list(L, out, rtype))]

    def add_to(outer, value, unit=False):
        st = strides[:-1] + [A.i64(T.itemsize(out_t.dtype))] if unit else strides
        ptr = A.element_ptr(L, data, st, outer, out_t)
        value = S.convert(L, value, acc_t, out_t)
        A.store(L, S.binary(L, "add", A.load(L, ptr, out_t), value, out_t), ptr, out_t)

    last = so[-1]
    if summed and last in (sa[-1:] + sb[-1:]) and sa.count(last) < 2 and sb.count(last) < 2:
        # the result's last axis innermost: a row of the output updated from rows of the
        # operands; a second copy of that loop with unit strides (C-contiguous rows,
        # the usual case) lets LLVM vectorise it
        order = list(so[:-1]) + summed
        unit = _unit_strides(L, last, readers, strides[-1], out_t)

        def rows(indices):
            idx = dict(zip(order, indices))

            def update(j, fast):
                idx[last] = j
                add_to([idx[c] for c in so], term(idx, last if fast else None), fast)

            with bld.if_else(unit) as (then, otherwise):
                with then:
                    A.loop(L, extent[last], lambda j: update(j, True))
                with otherwise:
                    A.loop(L, extent[last], lambda j: update(j, False))

        A.loop_nest(L, [extent[c] for c in order], rows)
        return out
    A.loop_nest(L, [extent[c] for c in so], lambda outer: add_to(outer, total(outer)))
    return out


def _unit_strides(L, letter, readers, out_stride, out_t):
    """i1: every operand with ``letter``, and the result, step one item along it."""
    bld = L.b
    ok = bld.icmp_signed("==", out_stride, A.i64(T.itemsize(out_t.dtype)))
    for _, t, strides, _ in readers:
        for c, s in strides or ():
            if c == letter:
                ok = bld.and_(ok, bld.icmp_signed("==", s, A.i64(T.itemsize(t.dtype))))
    return ok


register(BatchSpec(), rt.batch_spec)
register(BatchContract(), rt.batch_contract)
register(ContractVjp(), rt.batch_contract_vjp)
register(BilinearVjp(), rt.batch_bilinear_vjp)
