"""The cotangent and tangent of ``np.linalg.norm`` in LLVM IR (``s2s_runtime`` helpers).

``norm_vjp(g, ans, x, ord, axis, keepdims)`` = ``g c`` and ``norm_jvp(t, ans, x, ord,
axis, keepdims)`` = ``sum(c t)`` over the normed entries, with the cotangent factor
``c`` of each entry of ``x`` given its norm ``n`` (``ans`` at that entry's line, or the
whole-array norm):

* ord None/2/'fro': ``x / n`` (0 where ``n`` is 0);  ord 1: ``sign(x)``;  ord 0: 0;
* ord inf/-inf: ``sign(x)`` on the entries with ``|x| = n``, tied entries sharing it
  equally (``1 / #ties`` each);
* another ``p``: ``|x|^(p-1) sign(x) / n^(p-1)``.

Whole arrays and one ``axis`` (``keepdims`` either way), as ``ops/norm.py`` computes
them; the matrix norms 1/-1/inf/-inf have no compiled derivative (refused by name).
"""
from __future__ import annotations

import math

import s2s_runtime as rt

from ....errors import UnsupportedSyntaxError
from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T
from ..numerics.axis import out_index
from ..ops.calls import register
from ..ops.norm import norm_options


def _spec(atoms, kw_atoms, types, kw_types, loc):
    return norm_options("norm", atoms[2:], kw_atoms, types[2:], kw_types, loc)


class NormDerivative:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if len(types) < 3 or not isinstance(types[2], T.Array) or \
                not all(isinstance(t, (T.Scalar, T.Array)) for t in types[:2]):
            return None
        spec = _spec(atoms, kw_atoms, types, kw, loc)
        if not spec.vector and spec.ord != "fro":
            raise UnsupportedSyntaxError(
                f"jit does not compile the derivative of the matrix norm ord={spec.ord!r}", loc)
        x = types[2]
        dtype = "f4" if x.dtype == "f4" and all(
            t.dtype == "f4" or getattr(t, "weak", False) for t in types[:2]) else "f8"
        if fn is rt.norm_vjp:
            return T.Array(dtype, x.ndim)
        r = spec.result(x)
        return T.Array(dtype, r.ndim) if isinstance(r, T.Array) else T.Scalar(dtype)

    def lower(self, L, fn, vals, kw, rtype):
        (s, st), (ans, anst), (x, xt) = vals[:3]
        args, kwargs = L.call_atoms
        spec = _spec(args, kwargs, [t for _, t in vals], {k: t for k, (_, t) in kw.items()},
                     L.loc)
        et = T.Scalar(rtype.dtype)
        b = L.b

        def reduced(v, vt):
            """``idx -> v`` at the line of the entry ``idx`` of ``x`` (v: g or ans)."""
            if isinstance(vt, T.Scalar):
                c = S.convert(L, v, vt, et)
                return lambda idx: c
            if spec.axis is None:
                c = S.convert(L, A.element(L, v, vt, [A.ZERO] * vt.ndim), vt.elem, et)
                return lambda idx: c
            return lambda idx: S.convert(L, A.element(L, v, vt, out_index(idx, spec.axis,
                                                                             spec.keepdims)),
                                         vt.elem, et)

        ans_at = reduced(ans, anst)
        ties_at = _ties(L, x, xt, ans, anst, ans_at, spec, et)
        factor = _factor(L, spec.ord, et)
        shape = A.shape_list(L, x, xt)

        def c_at(idx):
            v = S.convert(L, A.element(L, x, xt, idx), xt.elem, et)
            return factor(v, ans_at(idx), ties_at(idx))

        if fn is rt.norm_vjp:  # g c, shaped like x
            g_at = reduced(s, st)
            out = A.allocate(L, rtype, shape)
            data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)
            A.loop_nest(L, shape, lambda idx: A.store(
                L, b.fmul(g_at(idx), c_at(idx)), A.element_ptr(L, data, strides, idx, et), et))
            return out
        if isinstance(st, T.Array) and st.ndim != xt.ndim:
            raise UnsupportedSyntaxError(f"jit: a norm tangent {st} of a {xt} array", L.loc)

        def t_at(idx):
            if isinstance(st, T.Scalar):
                return S.convert(L, s, st, et)
            return S.convert(L, A.element(L, s, st, idx), st.elem, et)

        if isinstance(rtype, T.Scalar) or spec.axis is None:
            slot = L.entry_alloca(et.llvm())
            b.store(L.const(0, et), slot)
            A.loop_nest(L, shape, lambda idx: b.store(
                b.fadd(b.load(slot), b.fmul(c_at(idx), t_at(idx))), slot))
            if isinstance(rtype, T.Scalar):
                return b.load(slot)
            from ..numerics.reductions import create
            return create(L, rtype, [A.ONE] * rtype.ndim, (b.load(slot), et))
        out_shape = _reduced_shape(shape, spec)
        out = A.allocate(L, rtype, out_shape)
        A.fill(L, out, rtype, L.const(0, et))
        data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)

        def add(idx):
            ptr = A.element_ptr(L, data, strides, out_index(idx, spec.axis, spec.keepdims), et)
            A.store(L, b.fadd(A.load(L, ptr, et), b.fmul(c_at(idx), t_at(idx))), ptr, et)

        A.loop_nest(L, shape, add)
        return out


def _reduced_shape(shape, spec):
    return shape[:spec.axis] + ([A.ONE] if spec.keepdims else []) + shape[spec.axis + 1:]


def _ties(L, x, xt, ans, anst, ans_at, spec, et):
    """``idx -> #entries with |x| = n`` on the line of ``idx`` (inf/-inf ords; else None)."""
    if spec.ord not in (math.inf, -math.inf):
        return lambda idx: None
    b = L.b
    shape = A.shape_list(L, x, xt)

    def hit(idx):
        v = S.convert(L, A.element(L, x, xt, idx), xt.elem, et)
        return b.uitofp(b.fcmp_ordered("==", S.absolute(L, v, et), ans_at(idx)), et.llvm())

    if spec.axis is None:
        slot = L.entry_alloca(et.llvm())
        b.store(L.const(0, et), slot)
        A.loop_nest(L, shape, lambda idx: b.store(b.fadd(b.load(slot), hit(idx)), slot))
        count = b.load(slot)
        return lambda idx: count
    ct = T.Array(et.dtype, len(_reduced_shape(shape, spec)))
    counts = A.allocate(L, ct, _reduced_shape(shape, spec))
    A.fill(L, counts, ct, L.const(0, et))
    data, strides = b.extract_value(counts, 0), A.strides_list(L, counts, ct)

    def at(idx):
        return A.element_ptr(L, data, strides, out_index(idx, spec.axis, spec.keepdims), et)

    A.loop_nest(L, shape, lambda idx: A.store(L, b.fadd(A.load(L, at(idx), et), hit(idx)),
                                              at(idx), et))
    return lambda idx: A.load(L, at(idx), et)


def _factor(L, ord_, et):
    """``(v, n, ties) -> c``: the cotangent factor of an entry ``v`` of a line of norm ``n``."""
    b = L.b
    zero, one = L.const(0, et), L.const(1, et)

    def sign(v):
        pos = b.uitofp(b.fcmp_ordered(">", v, zero), et.llvm())
        neg = b.uitofp(b.fcmp_ordered("<", v, zero), et.llvm())
        return b.fsub(pos, neg)

    if ord_ in (None, 2, "fro"):
        def two(v, n, ties):
            nonzero = b.fcmp_unordered("!=", n, zero)
            return b.select(nonzero, b.fdiv(v, b.select(nonzero, n, one)), zero)
        return two
    if ord_ == 1:
        return lambda v, n, ties: sign(v)
    if ord_ == 0:
        return lambda v, n, ties: zero
    if ord_ in (math.inf, -math.inf):
        def tied(v, n, ties):
            share = b.fdiv(one, S.min_max(L, "max", ties, one, et))
            return b.select(b.fcmp_ordered("==", S.absolute(L, v, et), n),
                            b.fmul(share, sign(v)), zero)
        return tied
    p = L.const(float(ord_) - 1.0, et)

    def power(v, n, ties):
        return b.fdiv(b.fmul(S.math2(L, "pow", S.absolute(L, v, et), p, et), sign(v)),
                      S.math2(L, "pow", n, p, et))
    return power


register(NormDerivative(), rt.norm_vjp, rt.norm_jvp)
