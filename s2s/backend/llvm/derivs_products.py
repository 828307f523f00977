"""Cotangents of products and of ``max``/``min`` in LLVM IR (``s2s_runtime`` helpers).

* ``matmul_vjp_lhs(g, a, b)`` = ``g @ b^T`` (the outer product ``g b^T`` for a 1-D ``b``),
  ``matmul_vjp_rhs(g, a, b)`` = ``a^T @ g`` (``a g^T`` for a 1-D ``a``), and
  ``dot_vjp(g, a, b, which)`` the same for ``np.dot`` -- 1-D and 2-D operands;
* ``max_vjp(g, ans, a)`` = ``g * (a == ans) / count``: tied extrema share ``g``.
"""
from __future__ import annotations

import s2s_runtime as rt

from . import arrays as A
from . import reductions as R
from . import scalars as S
from . import types as T
from .calls import register
from .derivs import _defaults, _float_dtype, _scalar_of


class Products:
    """Cotangents of ``a @ b`` / ``np.dot(a, b)`` for 1-D and 2-D operands."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=()):
        g, a, b = types[:3]
        if not all(isinstance(t, (T.Array, T.Scalar)) for t in (g, a, b)):
            return None
        which = self._which(fn, types)
        if fn is rt.dot_vjp and len(atoms) == 4:
            which = getattr(atoms[3], "value", None)
        target = a if which == 0 else b
        if isinstance(a, T.Scalar) or isinstance(b, T.Scalar):
            return None
        if which is None or not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2):
            return None
        return T.Array(T.promote(_scalar_of(g), target.elem).dtype, target.ndim)

    @staticmethod
    def _which(fn, types):
        if fn is rt.matmul_vjp_lhs:
            return 0
        if fn is rt.matmul_vjp_rhs:
            return 1
        if len(types) == 3:
            return 0
        return None  # dot_vjp(g, a, b, which): resolved with the constant in lower

    def lower(self, L, fn, vals, kw, rtype):
        (g, gt), (a, at), (c, ct) = vals[:3]
        which = 0 if fn is rt.matmul_vjp_lhs else 1
        if fn is rt.dot_vjp:
            which = 0 if len(vals) == 3 else int(vals[3][0].constant)
        if which == 0:  # a_bar = g @ b^T (outer product when b is 1-D and a 2-D)
            if ct.ndim == 1:
                return _outer_or_scale(L, g, gt, c, ct, rtype, at.ndim)
            return R.dot(L, g, gt, A.transpose(L, c, ct), ct, rtype)
        if at.ndim == 1:  # b_bar = a (outer) g
            return _outer_or_scale(L, a, at, g, gt, rtype, ct.ndim, left=True)
        return R.dot(L, A.transpose(L, a, at), at, g, gt, rtype)


def _outer_or_scale(L, u, ut, v, vt, rtype, ndim, left=False):
    """``u * v`` (``ndim`` 1: a scalar times a vector) or the outer product ``u v^T``."""
    b = L.b
    st = rtype.elem
    if ndim == 1 and isinstance(ut, T.Scalar):
        return A.elementwise(L, lambda xs: (S.binary(L, "mul", S.convert(L, u, ut, st),
                                                      S.convert(L, xs[0][0], xs[0][1], st), st),
                                            st), [(v, vt)], st.dtype)
    if ndim == 1 and isinstance(vt, T.Scalar):
        return A.elementwise(L, lambda xs: (S.binary(L, "mul", S.convert(L, xs[0][0], xs[0][1], st),
                                                      S.convert(L, v, vt, st), st), st),
                             [(u, ut)], st.dtype)
    col_t, row_t = T.Array(ut.dtype, 2), T.Array(vt.dtype, 2)
    col = A.make(L, col_t, b.extract_value(u, 0), b.extract_value(u, 1),
                 [A.shape_of(L, u, 0), A.ONE], [A.stride_of(L, u, 0), A.ZERO])
    row = A.make(L, row_t, b.extract_value(v, 0), b.extract_value(v, 1),
                 [A.ONE, A.shape_of(L, v, 0)], [A.ZERO, A.stride_of(L, v, 0)])
    return A.elementwise(L, lambda xs: (S.binary(L, "mul", *(S.convert(L, x, t, st) for x, t in xs),
                                                 st), st), [(col, col_t), (row, row_t)], st.dtype)


class MaxVjp:
    """``max_vjp(g, ans, a)``: ``g * (a == ans) / count`` (ties share)."""

    def type(self, fn, types, kw, loc):
        if len(types) < 3 or not _defaults(types[3:], kw) or not isinstance(types[2], T.Array) \
                or not isinstance(types[0], T.Scalar):
            return None
        return T.Array(_float_dtype(types[2].dtype), types[2].ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (g, gt), (ans, anst), (a, at) = vals[:3]
        et = rtype.elem
        b = L.b
        slot = L.entry_alloca(T.I64)
        b.store(A.ZERO, slot)
        target = S.convert(L, ans, anst, at.elem)

        def count_one(idx):
            hit = S.compare(L, "==", A.element(L, a, at, idx), target, at.elem)
            b.store(b.add(b.load(slot), b.zext(hit, T.I64)), slot)

        A.loop_nest(L, A.shape_list(L, a, at), count_one)
        count = b.load(slot)
        share = S.binary(L, "truediv", S.convert(L, g, gt, et), S.convert(L, count, T.INT, et), et)
        return A.elementwise(L, lambda xs: (L.b.select(
            S.compare(L, "==", xs[0][0], S.convert(L, ans, anst, at.elem), at.elem),
            share, L.const(0, et)), et), [(a, at)], et.dtype)

register(Products(), rt.matmul_vjp_lhs, rt.matmul_vjp_rhs, rt.dot_vjp)
register(MaxVjp(), rt.max_vjp)
