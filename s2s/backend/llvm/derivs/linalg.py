"""The numpy calls and ``s2s_runtime`` helpers of ``np.linalg``'s derivative rules, in LLVM IR.

The rules (``s2s/rules/linalg.py``, ``reductions.py``) are numpy templates; their
generated code needs, for real 1-d/2-d operands:

* ``np.swapaxes(x, i, j)``: a view with two axes exchanged;
* ``np.expand_dims(x, axis)`` (an int or a tuple of constant ints): a view with
  length-1 axes inserted; of a scalar, a fresh array of shape ``(1,) * len(axis)``;
* ``np.real``/``np.imag`` of numbers and arrays (of a real value: itself / zeros);
* ``np.trace(x, offset, i, j)`` of a matrix: the sum of a diagonal; ``trace_vjp(g, x,
  offset, i, j)``: zeros with ``g`` on it;
* ``as_columns(v, b)`` (``v[..., None]`` when ``b`` is 1-d), ``from_columns(v, b)``
  (``v[..., 0]`` when ``b`` is 1-d): views; ``conj_lower(x, upper)``: ``x``, or its
  transpose for ``upper=True``; ``half_lower_mask(x)``: 1 below the diagonal, 1/2
  on it, 0 above (float64, ``x``'s last two lengths);
* ``cast_vjp(g, x)`` / ``cast_jvp(t, ans)``: ``g`` in ``x``'s float dtype (the real
  part for a real ``x``); ``record_like(like, fields)`` of a tuple of numbers (the
  tangent of ``slogdet``): ``fields`` in ``like``'s types.

``norm_vjp``/``norm_jvp`` are in ``derivs/norm.py``.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as ll

import s2s_runtime as rt

from ....errors import UnsupportedSyntaxError
from ..values import arrays as A
from ..numerics import reductions as R
from ..values import scalars as S
from ..typing import types as T
from ..ops.calls import register
from ..ops.linalg import RUNTIME, constant, flag_value, is_flag


def _consts(name, atoms, types, loc):
    values = [constant(a, t) for a, t in zip(atoms, types)]
    if any(v is RUNTIME for v in values):
        raise UnsupportedSyntaxError(f"jit: {name} with an axis that is not a constant", loc)
    return values


def _axes(value, ndim, name, loc):
    items = value if isinstance(value, tuple) else (value,)
    if not all(type(a) is int and -ndim <= a < ndim for a in items):
        raise UnsupportedSyntaxError(f"jit: {name} with axis {value!r} ({ndim} axes)", loc)
    out = sorted(a % ndim for a in items)
    if len(set(out)) != len(out):
        raise UnsupportedSyntaxError(f"jit: {name} with a repeated axis {value!r}", loc)
    return out


class SwapAxes:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 3 or not isinstance(types[0], T.Array):
            return None
        i, j = _consts("np.swapaxes", atoms[1:], types[1:], loc)
        _axes((i, j) if i != j else i, types[0].ndim, "np.swapaxes", loc)
        return types[0]

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), (_, it), (_, jt) = vals
        i, j = (v % xt.ndim for v in _consts("np.swapaxes", L.call_atoms[0][1:], [it, jt], L.loc))
        shape, strides = A.shape_list(L, x, xt), A.strides_list(L, x, xt)
        shape[i], shape[j] = shape[j], shape[i]
        strides[i], strides[j] = strides[j], strides[i]
        return A.make(L, xt, L.b.extract_value(x, 0), L.b.extract_value(x, 1), shape, strides)


def inserted_axes(L, x, xt, axes, out_t):
    """A view of ``x`` with length-1 axes at the (sorted) positions ``axes`` of the result."""
    shape, strides = A.shape_list(L, x, xt), A.strides_list(L, x, xt)
    for a in axes:
        shape.insert(a, A.ONE)
        strides.insert(a, A.i64(T.itemsize(xt.dtype)))
    return A.make(L, out_t, L.b.extract_value(x, 0), L.b.extract_value(x, 1), shape, strides)


class ExpandDims:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 2 or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        axis, = _consts("np.expand_dims", atoms[1:], types[1:], loc)
        n = len(axis) if isinstance(axis, tuple) else 1
        ndim = getattr(types[0], "ndim", 0) + n
        _axes(axis, ndim, "np.expand_dims", loc)
        return T.Array(types[0].dtype, ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), (_, at) = vals
        axis, = _consts("np.expand_dims", L.call_atoms[0][1:], [at], L.loc)
        axes = _axes(axis, rtype.ndim, "np.expand_dims", L.loc)
        if isinstance(xt, T.Scalar):
            return R.create(L, rtype, [A.ONE] * rtype.ndim, (x, xt))
        return inserted_axes(L, x, xt, axes, rtype)


class AtLeast:
    """``np.atleast_1d/2d/3d(x)`` of one array or number: a view with numpy's length-1
    axes added (``(n,)`` -> ``(1, n)`` for 2d, ``(1, n, 1)`` for 3d; ``(m, n)`` ->
    ``(m, n, 1)`` for 3d)."""

    RANK = {np.atleast_1d: 1, np.atleast_2d: 2, np.atleast_3d: 3}

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        return T.Array(types[0].dtype, max(getattr(types[0], "ndim", 0), self.RANK[fn]))

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), = vals
        if isinstance(xt, T.Scalar):
            return R.create(L, rtype, [A.ONE] * rtype.ndim, (x, xt))
        nd, rank = xt.ndim, self.RANK[fn]
        if nd >= rank:
            return x
        # numpy's placements: 2d puts the new axis first; 3d wraps 1-D as (1, n, 1)
        axes = {(1, 2): [0], (1, 3): [0, 2], (2, 3): [2]}.get((nd, rank), list(range(rank - nd)))
        return inserted_axes(L, x, xt, axes, rtype)


class RealImag:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        t = types[0]
        if t.dtype != "c16":
            return t
        return T.Array("f8", t.ndim) if isinstance(t, T.Array) else T.Scalar("f8", t.weak)

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), = vals
        part = 0 if fn is np.real else 1
        if xt.dtype != "c16":
            if part == 0:
                return x
            if isinstance(xt, T.Scalar):
                return L.const(0, xt)
            return R.create(L, rtype, A.shape_list(L, x, xt), (L.const(0, xt.elem), xt.elem))
        if isinstance(xt, T.Scalar):
            return L.b.extract_value(x, part)
        return A.elementwise(L, lambda v: (L.b.extract_value(v[0][0], part), T.F64T),
                             [(x, xt)], "f8")


def _trace_args(name, atoms, types, ndim_of, loc, first=1):
    """The constant ``offset`` of ``np.trace(a, offset, axis1, axis2)`` of a matrix, or of
    a stack of them over its last two axes (or of ``trace_vjp(g, a, offset, axis1,
    axis2)``), signed for ``axis1`` before ``axis2``; other layouts are refused by name."""
    values = _consts(name, atoms[first + 1:], types[first + 1:], loc)
    offset, *axes = values + [0, 0, 1][len(values):]
    last_two = [ndim_of - 2, ndim_of - 1]
    if ndim_of < 2 or type(offset) is not int or not all(type(a) is int for a in axes) or \
            sorted(a % ndim_of for a in axes) != last_two:
        raise UnsupportedSyntaxError(
            f"jit: {name} of a {ndim_of}-d array with offset {offset!r}, axes {tuple(axes)!r} "
            "(jit compiles the diagonal sums of a matrix or of a stack's last two axes)", loc)
    return offset if axes[0] % ndim_of == ndim_of - 2 else -offset


def _diagonal(L, x, offset, body):
    """``body(i, j)`` for the entries ``(i, j = i + offset)`` of the matrix ``x``."""
    b = L.b
    rows, cols = A.shape_of(L, x, 0), A.shape_of(L, x, 1)
    r0, c0 = A.i64(max(0, -offset)), A.i64(max(0, offset))
    nr, nc = b.sub(rows, r0), b.sub(cols, c0)
    n = b.select(b.icmp_signed("<", nr, nc), nr, nc)
    n = b.select(b.icmp_signed("<", n, A.ZERO), A.ZERO, n)
    A.loop(L, n, lambda k: body(b.add(k, r0), b.add(k, c0)))


class Trace:
    """``np.trace(a, offset, axis1, axis2)`` of a matrix (a number) or of a stack over its
    last two axes (an array of its leading shape), and ``trace_vjp(g, a, offset, axis1,
    axis2)``: zeros shaped like ``a`` with ``g`` (``g[idx]`` for matrix ``idx`` of a
    stack) on that diagonal -- or, where ``g`` has one axis more (the cotangent of
    ``np.diagonal``, the diagonal as its last axis), ``g[idx + (k,)]`` at its ``k``-th
    entry."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        first = 1 if fn is rt.trace_vjp else 0
        if kw or len(types) < first + 1 or not isinstance(types[first], T.Array):
            return None
        x = types[first]
        _trace_args(self._name(fn), atoms, types, x.ndim, loc, first)
        if fn is rt.trace_vjp:
            g = types[0]
            diagonal = isinstance(g, T.Array) and g.ndim == x.ndim - 1
            if not diagonal and not (isinstance(g, T.Scalar) if x.ndim == 2 else
                                     isinstance(g, T.Array) and g.ndim == x.ndim - 2):
                return None
            return T.Array(T.promote(T.Scalar(g.dtype), x.elem, T.Scalar("f8", True)).dtype,
                           x.ndim)
        return R.sum_type(x) if x.ndim == 2 else T.Array(R.sum_type(x).dtype, x.ndim - 2)

    @staticmethod
    def _name(fn):
        return "trace_vjp" if fn is rt.trace_vjp else "np.trace"

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        first = 1 if fn is rt.trace_vjp else 0
        x, xt = vals[first]
        offset = _trace_args(self._name(fn), L.call_atoms[0], [t for _, t in vals], xt.ndim,
                             L.loc, first)
        lead = A.shape_list(L, x, xt)[:xt.ndim - 2]
        mt = T.Array(xt.dtype, 2)
        if fn is rt.trace_vjp:
            out = R.create(L, rtype, A.shape_list(L, x, xt), (L.const(0, rtype.elem), rtype.elem))
            ot = T.Array(rtype.dtype, 2)
            g, gt = vals[0]
            diagonal = isinstance(gt, T.Array) and gt.ndim == xt.ndim - 1
            first_row = A.i64(max(0, -offset))

            def diagonal_of(idx):
                m = A.leading_view(L, out, rtype, idx)[0] if idx else out
                data, strides = b.extract_value(m, 0), A.strides_list(L, m, ot)
                if diagonal:  # g[idx + (k,)] at the k-th entry of the diagonal
                    def value_at(i):
                        v = A.element(L, g, gt, list(idx) + [b.sub(i, first_row)])
                        return S.convert(L, v, gt.elem, rtype.elem)
                else:
                    value = g if not idx else A.element(L, g, gt, idx)
                    value = S.convert(L, value, gt.elem if idx else gt, rtype.elem)

                    def value_at(i):
                        return value
                _diagonal(L, m, offset, lambda i, j: A.store(
                    L, value_at(i), A.element_ptr(L, data, strides, [i, j], rtype.elem),
                    rtype.elem))

            A.loop_nest(L, lead, diagonal_of)
            return out
        st = rtype if xt.ndim == 2 else rtype.elem

        def diagonal_sum(idx):
            m = A.leading_view(L, x, xt, idx)[0] if idx else x
            slot = L.entry_alloca(st.llvm())
            b.store(L.const(0, st), slot)
            _diagonal(L, m, offset, lambda i, j: b.store(S.binary(L, "add", b.load(slot), S.convert(
                L, A.element(L, m, mt, [i, j]), xt.elem, st), st), slot))
            return b.load(slot)

        if xt.ndim == 2:
            return diagonal_sum(())
        out = A.allocate(L, rtype, lead)
        A.loop_nest(L, lead, lambda idx: A.store(L, diagonal_sum(idx), A.element_ptr(
            L, b.extract_value(out, 0), A.strides_list(L, out, rtype), idx, st), st))
        return out


class Columns:
    """``as_columns(v, b)`` / ``from_columns(v, b)``: views for a 1-d ``b``, else ``v``."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not isinstance(types[0], T.Array):
            return None
        v, c = types
        if not isinstance(c, T.Array) or c.ndim != 1:
            return v
        if fn is rt.from_columns:
            return T.Array(v.dtype, v.ndim - 1) if v.ndim >= 1 else None
        return T.Array(v.dtype, v.ndim + 1)

    def lower(self, L, fn, vals, kw, rtype):
        (v, vt), (_, ct) = vals
        if rtype == vt:
            return v
        if fn is rt.as_columns:
            return inserted_axes(L, v, vt, [vt.ndim], rtype)
        shape, strides = A.shape_list(L, v, vt), A.strides_list(L, v, vt)
        L.check(L.b.icmp_signed("==", shape[-1], A.ZERO), IndexError,
                "index 0 is out of bounds for axis {0} with size 0", (A.i64(vt.ndim - 1),))
        return A.make(L, rtype, L.b.extract_value(v, 0), L.b.extract_value(v, 1),
                      shape[:-1], strides[:-1])


class ConjLower:
    """``conj_lower(x, upper)``: ``x``, or its conjugate transpose (a view for real
    ``x``) where ``upper`` holds (a constant or a run-time flag)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 2 or not isinstance(types[0], T.Array) or types[0].ndim < 2:
            return None
        if constant(atoms[1], types[1]) is RUNTIME and not is_flag(types[1]):
            raise UnsupportedSyntaxError(f"jit: cholesky with upper= of type {types[1]}", loc)
        return types[0]

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), upper = vals
        flag = flag_value(L, L.call_atoms[0][1], upper)
        if getattr(flag, "constant", None) == 0:
            return x
        shape, strides = A.shape_list(L, x, xt), A.strides_list(L, x, xt)
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
        view = A.make(L, xt, L.b.extract_value(x, 0), L.b.extract_value(x, 1), shape, strides)
        if xt.dtype == "c16":
            view = A.elementwise(L, lambda v: (L.b.insert_value(v[0][0], L.b.fneg(
                L.b.extract_value(v[0][0], 1)), 1), xt.elem), [(view, xt)], "c16")
        return L.b.select(flag, view, x)


class HalfLowerMask:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], T.Array) or types[0].ndim < 2:
            return None
        return T.Array("f8", 2)

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), = vals
        b = L.b
        rows, cols = A.shape_of(L, x, xt.ndim - 2), A.shape_of(L, x, xt.ndim - 1)
        out = A.allocate(L, rtype, [rows, cols])
        data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)
        one, half, zero = (ll.Constant(T.F64, v) for v in (1.0, 0.5, 0.0))

        def body(idx):
            i, j = idx
            v = b.select(b.icmp_signed(">", i, j), one,
                         b.select(b.icmp_signed("==", i, j), half, zero))
            A.store(L, v, A.element_ptr(L, data, strides, idx, T.F64T), T.F64T)

        A.loop_nest(L, [rows, cols], body)
        return out


class Cast:
    """``cast_vjp(g, x)`` and ``cast_jvp(t, ans)``: the first operand in the second's
    float dtype (its real part when the second is real), shaped like the first."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2:
            return None
        g, x = types
        if not isinstance(g, (T.Scalar, T.Array)) or not isinstance(x, (T.Scalar, T.Array)):
            return None
        dtype = x.dtype if x.dtype in ("f4", "f8", "c16") else \
            ("f8" if g.dtype == "c16" else g.dtype)
        if isinstance(g, T.Array):
            return T.Array(dtype, g.ndim)
        weak = isinstance(x, T.Scalar) and x.weak and x.dtype in ("f8", "c16")
        return T.Scalar(dtype, weak)

    def lower(self, L, fn, vals, kw, rtype):
        (g, gt), _ = vals
        if gt == rtype:
            return g
        return S.convert(L, g, gt, rtype)


class RecordLike:
    """``record_like(like, fields)`` of a tuple or record ``like`` (``slogdet``'s result,
    compiled as a plain tuple; a namedtuple or dataclass made in the compiled code):
    ``fields`` as ``like``'s kind, numbers in ``like``'s item types, arrays (a stack's
    ``slogdet``, a record's array field) as they are (every field of a compiled record is
    an ``__init__`` parameter, so there are no other fields to fill with zeros)."""

    def type(self, fn, types, kw, loc):
        like, fields = types if len(types) == 2 else (None, None)
        if kw or not isinstance(like, T.Tuple) or not isinstance(fields, T.Tuple) \
                or len(like.items) != len(fields.items):
            return None
        items = []
        for t, f in zip(like.items, fields.items):
            if isinstance(t, T.Scalar) and isinstance(f, T.Scalar):
                items.append(t)
            elif isinstance(t, T.Array) and isinstance(f, T.Array) and t.ndim == f.ndim:
                items.append(f)
            else:
                return None
        return T.tuple_like(like, items)

    def lower(self, L, fn, vals, kw, rtype):
        value, ft = vals[1]
        out = ll.Constant(rtype.llvm(), None)
        for k, (want, have) in enumerate(zip(rtype.items, ft.items)):
            item = L.b.extract_value(value, k)
            if isinstance(want, T.Scalar) and want != have:
                item = S.convert(L, item, have, want)
            out = L.b.insert_value(out, item, k)
        return out


register(RecordLike(), rt.record_like)
register(SwapAxes(), np.swapaxes)
register(ExpandDims(), np.expand_dims)
register(AtLeast(), np.atleast_1d, np.atleast_2d, np.atleast_3d)
register(RealImag(), np.real, np.imag)
register(Trace(), np.trace, rt.trace_vjp)
register(Columns(), rt.as_columns, rt.from_columns)
register(ConjLower(), rt.conj_lower)
register(HalfLowerMask(), rt.half_lower_mask)
register(Cast(), rt.cast_vjp, rt.cast_jvp)
