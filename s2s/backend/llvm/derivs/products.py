"""Cotangents of products and of ``max``/``min`` in LLVM IR (``s2s_runtime`` helpers).

* ``matmul_vjp_lhs(g, a, b)`` = ``g @ b^T`` (the outer product ``g b^T`` for a 1-D ``b``),
  ``matmul_vjp_rhs(g, a, b)`` = ``a^T @ g`` (``a g^T`` for a 1-D ``a``), and
  ``dot_vjp(g, a, b, which)`` the same for ``np.dot`` -- 1-D and 2-D operands;
* ``max_vjp(g, ans, a, axis, keepdims)`` = ``g * (a == ans) / count``: tied extrema
  share ``g`` (whole array or along one axis);
* ``dot_vjp_jvp(t, out, g, a, b, which, wrt)`` (forward mode over a gradient: JVPs of
  gradients, Hessians): the tangent of ``dot_vjp(g, a, b, which)`` from factor
  ``wrt``'s tangent ``t``; ``dot_vjp`` is linear in the factor it does not
  differentiate and ignores the other, so it is ``dot_vjp(g, a <- t, which)`` for
  ``wrt == 0 != which`` (``b <- t`` for ``wrt == 1``) and zeros like ``out`` for
  ``wrt == which`` (``s2s_runtime.second_order``).
"""
from __future__ import annotations

import operator

import s2s_runtime as rt
from s2s_runtime.second_order import dot_vjp_jvp

from ..values import arrays as A
from ..numerics import reductions as R
from ..values import scalars as S
from ..typing import types as T
from ....errors import UnsupportedSyntaxError
from ....ir import nodes as ir
from ..numerics.axis import out_index, out_shape, reduction_axis
from ..ops.calls import TABLE, register
from .adjoints import Unbroadcast, float_dtype, scalar_of


class Products:
    """Cotangents of ``a @ b`` / ``np.dot(a, b)`` for 1-D and 2-D operands, and of ``a @ b``
    for stacks of matrices (both operands of at least two axes, one of at least three):
    ``a_bar = unbroadcast(g @ swapaxes(b, -1, -2), a)``, ``b_bar = unbroadcast(swapaxes(a,
    -1, -2) @ g, b)`` (the stacked product, ``Dot``, and ``Unbroadcast`` summing the
    stack axes an operand was broadcast along)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        g, a, b = types[:3]
        if not all(isinstance(t, (T.Array, T.Scalar)) for t in (g, a, b)):
            return None
        which = self._which(fn, types)
        if fn is rt.dot_vjp and len(atoms) == 4:
            which = getattr(atoms[3], "value", None)
        target = a if which == 0 else b
        if isinstance(a, T.Scalar) or isinstance(b, T.Scalar):
            return None
        stacked = fn is not rt.dot_vjp and min(a.ndim, b.ndim) >= 2 and max(a.ndim, b.ndim) >= 3
        if which is None or not (stacked or 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2):
            return None
        if stacked and not isinstance(g, T.Array):
            return None
        return T.Array(T.promote(scalar_of(g), target.elem).dtype, target.ndim)

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
        if max(at.ndim, ct.ndim) >= 3:
            return self._stacked(L, which, (g, gt), (a, at), (c, ct), rtype)
        if which == 0:  # a_bar = g @ b^T (outer product when b is 1-D and a 2-D)
            if ct.ndim == 1:
                return outer_or_scale(L, g, gt, c, ct, rtype, at.ndim)
            return R.dot(L, g, gt, A.transpose(L, c, ct), ct, rtype)
        if at.ndim == 1:  # b_bar = a (outer) g
            return outer_or_scale(L, a, at, g, gt, rtype, ct.ndim, left=True)
        return R.dot(L, A.transpose(L, a, at), at, g, gt, rtype)


    @staticmethod
    def _stacked(L, which, g, a, c, rtype):
        """The cotangent of operand ``which`` of a stacked ``a @ c`` (see the class)."""
        matmul = TABLE[operator.matmul]
        left, right = (g, _swapped(L, *c)) if which == 0 else (_swapped(L, *a), g)
        prod_t = matmul.type(operator.matmul, [left[1], right[1]], {}, L.loc)
        prod = matmul.lower(L, operator.matmul, [left, right], {}, prod_t)
        target = a if which == 0 else c
        return Unbroadcast().lower(L, None, [(prod, prod_t), target], {}, rtype)


def _swapped(L, v, t):
    """``(np.swapaxes(v, -1, -2), type)``: a view."""
    shape, strides = A.shape_list(L, v, t), A.strides_list(L, v, t)
    shape[-2:], strides[-2:] = shape[-1:-3:-1], strides[-1:-3:-1]
    return A.make(L, t, L.b.extract_value(v, 0), L.b.extract_value(v, 1), shape, strides), t


def outer_or_scale(L, u, ut, v, vt, rtype, ndim, left=False):
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
    """``max_vjp(g, ans, a, axis, keepdims)``: ``g * (a == ans) / count`` (ties share),
    over the whole array or along axes (``ans`` and ``g`` then reduced arrays)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if len(types) < 3 or not isinstance(types[2], T.Array):
            return None
        a = types[2]
        axis, keepdims = self._axis(fn, atoms, kw_atoms or {}, a.ndim, loc)
        whole = axis is None and not keepdims
        if whole != isinstance(types[0], T.Scalar) or whole != isinstance(types[1], T.Scalar):
            return None
        return T.Array(float_dtype(a.dtype), a.ndim)

    @staticmethod
    def _axis(fn, atoms, kw_atoms, ndim, loc):
        """max_vjp(g, ans, a, axis, keepdims, initial, where): initial must be None."""
        atoms = list(atoms)
        extra = dict(kw_atoms)
        if len(atoms) > 5:
            extra["initial"] = atoms[5]
            atoms = atoms[:5] + atoms[6:]
        if getattr(extra.pop("initial", None), "value", None) is not None:
            raise UnsupportedSyntaxError("jit: max/min with initial=", loc)
        return reduction_axis(fn, [atoms[0]] + atoms[2:], extra, ndim, loc, vjp=True)

    def lower(self, L, fn, vals, kw, rtype):
        (g, gt), (ans, anst), (a, at) = vals[:3]
        args, kwargs = L.call_atoms
        axis, keepdims = self._axis(fn, args, kwargs, at.ndim, L.loc)
        et = rtype.elem
        b = L.b
        shape = A.shape_list(L, a, at)
        if axis is None:
            def reduced(idx):
                return [A.ZERO] * (gt.ndim if isinstance(gt, T.Array) else 0)
            counts_shape = []
        else:
            def reduced(idx):
                return out_index(idx, axis, keepdims)
            counts_shape = out_shape(shape, axis, keepdims)

        def value_of(v, t, idx):
            return A.element(L, v, t, reduced(idx)) if isinstance(t, T.Array) else v

        def elem_t(t):
            return t.elem if isinstance(t, T.Array) else t

        counts_t = T.Array("i8", len(counts_shape))
        counts = R.create(L, counts_t, counts_shape, (L.const(0, T.INT), T.INT))
        cdata, cstrides = b.extract_value(counts, 0), A.strides_list(L, counts, counts_t)

        def hit(idx):
            target = S.convert(L, value_of(ans, anst, idx), elem_t(anst), at.elem)
            return S.compare(L, "==", A.element(L, a, at, idx), target, at.elem)

        def count_one(idx):
            ptr = A.element_ptr(L, cdata, cstrides, reduced(idx) if axis is not None else [],
                                T.I64T)
            b.store(b.add(b.load(ptr), b.zext(hit(idx), T.I64)), ptr)

        A.loop_nest(L, shape, count_one)
        out = A.allocate(L, rtype, shape)
        odata, ostrides = b.extract_value(out, 0), A.strides_list(L, out, rtype)

        def share(idx):
            ptr = A.element_ptr(L, cdata, cstrides, reduced(idx) if axis is not None else [],
                                T.I64T)
            n = S.convert(L, b.load(ptr), T.INT, et)
            gv = S.convert(L, value_of(g, gt, idx), elem_t(gt), et)
            v = b.select(hit(idx), S.binary(L, "truediv", gv, n, et), L.const(0, et))
            A.store(L, v, A.element_ptr(L, odata, ostrides, idx, et), et)

        A.loop_nest(L, shape, share)
        return out


register(Products(), rt.matmul_vjp_lhs, rt.matmul_vjp_rhs, rt.dot_vjp)
register(MaxVjp(), rt.max_vjp)


def _flags(atoms):
    """``(which, wrt)`` from the constant atoms after ``t, out, g, a, b``."""
    consts = [getattr(a, "value", None) for a in atoms[5:7]]
    consts += [0] * (2 - len(consts))
    return tuple(c if type(c) is int else None for c in consts)


class DotVjpJvp:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if len(types) < 5 or kw:
            return None
        which, wrt = _flags(atoms)
        if which is None or wrt is None:
            return None
        if which == wrt:
            return TABLE[rt.zeros_like].type(rt.zeros_like, [types[1]], {}, loc)
        t, _, g, a, b = types[:5]
        factors = (t, b) if wrt == 0 else (a, t)
        return TABLE[rt.dot_vjp].type(rt.dot_vjp, [g, *factors, T.INT], {}, loc,
                                      [atoms[2], None, None, ir.Const(which)], {})

    def lower(self, L, fn, vals, kw, rtype):
        which, wrt = _flags(L.call_atoms[0])
        if which == wrt:
            return TABLE[rt.zeros_like].lower(L, rt.zeros_like, [vals[1]], {}, rtype)
        t, _, g, a, b = vals[:5]
        factors = (t, b) if wrt == 0 else (a, t)
        return TABLE[rt.dot_vjp].lower(L, rt.dot_vjp, [g, *factors, (L.const(which, T.INT),
                                                                     T.INT)], {}, rtype)


register(DotVjpJvp(), dot_vjp_jvp)
