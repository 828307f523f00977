"""The numpy calls and ``s2s_runtime`` helpers of ``np.linalg``'s derivative rules, in LLVM IR.

The rules (``s2s/rules/linalg.py``, ``reductions.py``) are numpy templates; their
generated code needs, for real 1-d/2-d operands:

* ``np.swapaxes(x, i, j)``: a view with two axes exchanged;
* ``np.expand_dims(x, axis)`` (an int or a tuple of constant ints): a view with
  length-1 axes inserted; of a scalar, a fresh array of shape ``(1,) * len(axis)``;
* ``np.real``/``np.imag`` of numbers and arrays (of a real value: itself / zeros);
* ``np.trace(x, 0, i, j)`` of a matrix: the sum of its diagonal;
* ``as_columns(v, b)`` (``v[..., None]`` when ``b`` is 1-d), ``from_columns(v, b)``
  (``v[..., 0]`` when ``b`` is 1-d): views; ``conj_lower(x, upper)``: ``x``, or its
  transpose for ``upper=True``; ``half_lower_mask(x)``: 1 below the diagonal, 1/2
  on it, 0 above (float64, ``x``'s last two lengths);
* ``cast_vjp(g, x)`` / ``cast_jvp(t, ans)``: ``g`` in ``x``'s float dtype (the real
  part for a real ``x``);
* ``norm_vjp(g, ans, x, ord)`` = ``g c`` and ``norm_jvp(t, ans, x, ord)`` = ``sum(c t)``
  with the cotangent factor ``c`` of the whole-array norm: ``x / ans`` (0 where
  ``ans`` is 0) for ord None/2/'fro'; ``sign(x)`` for 1; for inf/-inf ``sign(x)``
  on the entries with ``|x| = ans``, ties sharing equally; 0 for ord 0;
  ``|x|^(p-1) sign(x) / ans^(p-1)`` for another ``p``.  Matrix ord 1/inf: refused.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir as ll

import s2s_runtime as rt

from ...errors import UnsupportedSyntaxError
from . import abi
from . import arrays as A
from . import reductions as R
from . import scalars as S
from . import types as T
from .calls import register
from .ops_linalg import _RUNTIME, constant
from .ops_norm import norm_options


def _consts(name, atoms, types, loc):
    values = [constant(a, t) for a, t in zip(atoms, types)]
    if any(v is _RUNTIME for v in values):
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


class Trace:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or not 1 <= len(types) <= 4 or not isinstance(types[0], T.Array):
            return None
        offset, *axes = _consts("np.trace", atoms[1:], types[1:], loc) + [0, 0, 1][len(types) - 1:]
        if types[0].ndim != 2 or offset != 0 or \
                sorted(a % 2 for a in axes if type(a) is int) != [0, 1]:
            raise UnsupportedSyntaxError(
                f"jit: np.trace of a {types[0].ndim}-d array with offset {offset!r}, axes "
                f"{tuple(axes)!r} (jit compiles the diagonal sum of a matrix)", loc)
        return R.sum_type(types[0])

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        b = L.b
        n = b.select(b.icmp_signed("<", A.shape_of(L, x, 0), A.shape_of(L, x, 1)),
                     A.shape_of(L, x, 0), A.shape_of(L, x, 1))
        slot = L.entry_alloca(rtype.llvm())
        b.store(L.const(0, rtype), slot)
        A.loop(L, n, lambda i: b.store(S.binary(L, "add", b.load(slot), S.convert(
            L, A.element(L, x, xt, [i, i]), xt.elem, rtype), rtype), slot))
        return b.load(slot)


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
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 2 or not isinstance(types[0], T.Array) or types[0].ndim < 2:
            return None
        if constant(atoms[1], types[1]) is _RUNTIME:
            raise UnsupportedSyntaxError("jit: cholesky with upper= that is not a constant", loc)
        return types[0]

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), (_, ut) = vals
        if not constant(L.call_atoms[0][1], ut):
            return x
        shape, strides = A.shape_list(L, x, xt), A.strides_list(L, x, xt)
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
        view = A.make(L, xt, L.b.extract_value(x, 0), L.b.extract_value(x, 1), shape, strides)
        if xt.dtype != "c16":
            return view
        return A.elementwise(L, lambda v: (L.b.insert_value(v[0][0], L.b.fneg(
            L.b.extract_value(v[0][0], 1)), 1), xt.elem), [(view, xt)], "c16")


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


class NormVjp:
    """``norm_vjp(g, ans, x, ord, axis, keepdims)`` and ``norm_jvp(t, ans, x, ...)``."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if len(types) < 3 or not isinstance(types[2], T.Array) or \
                not all(isinstance(t, (T.Scalar, T.Array)) for t in types[:2]):
            return None
        ord_, vector = norm_options("norm", atoms[2:], kw_atoms, types[2:], kw, loc)
        if not vector and ord_ != "fro":
            raise UnsupportedSyntaxError(
                f"jit does not compile the derivative of the matrix norm ord={ord_!r}", loc)
        x = types[2]
        dtype = "f4" if x.dtype == "f4" and all(
            t.dtype == "f4" or getattr(t, "weak", False) for t in types[:2]) else "f8"
        return T.Array(dtype, x.ndim) if fn is rt.norm_vjp else T.Scalar(dtype)

    def lower(self, L, fn, vals, kw, rtype):
        (s, st), (ans, anst), (x, xt) = vals[:3]
        ord_, _ = norm_options("norm", L.call_atoms[0][2:], L.call_atoms[1],
                               [t for _, t in vals[2:]], {k: t for k, (_, t) in kw.items()},
                               L.loc)
        et = T.Scalar(rtype.dtype)
        ans = S.convert(L, ans, anst, et)
        factor = _factor(L, x, xt, ans, ord_, et)
        if fn is rt.norm_vjp:  # g c
            return A.elementwise(L, lambda v: (S.binary(L, "mul", S.convert(L, v[1][0], v[1][1], et),
                                                        factor(v[0][0], v[0][1]), et), et),
                                 [(x, xt), (s, st)], rtype.dtype)
        prod = A.elementwise(L, lambda v: (S.binary(L, "mul", S.convert(L, v[1][0], v[1][1], et),
                                                    factor(v[0][0], v[0][1]), et), et),
                             [(x, xt), (s, st)], rtype.dtype)
        pt = T.Array(rtype.dtype, max(xt.ndim, getattr(st, "ndim", 0)))
        out = R.sum_all(L, prod, pt)
        abi.release(L, prod, pt)
        return out


def _factor(L, x, xt, ans, ord_, et):
    """``c(x_i, xtype)``: the per-entry cotangent factor of the norm ``ans`` of ``x``."""
    b = L.b
    zero, one = L.const(0, et), L.const(1, et)

    def sign(v):
        pos = b.uitofp(b.fcmp_ordered(">", v, zero), et.llvm())
        neg = b.uitofp(b.fcmp_ordered("<", v, zero), et.llvm())
        return b.fsub(pos, neg)

    if ord_ in (None, 2, "fro"):
        nonzero = b.fcmp_unordered("!=", ans, zero)
        safe = b.select(nonzero, ans, one)
        return lambda v, t: b.select(nonzero, b.fdiv(S.convert(L, v, t, et), safe), zero)
    if ord_ == 1:
        return lambda v, t: sign(S.convert(L, v, t, et))
    if ord_ == 0:
        return lambda v, t: zero
    if ord_ in (math.inf, -math.inf):
        ties = A.reduce_all(L, x, xt, lambda acc, v: b.fadd(acc, b.uitofp(b.fcmp_ordered(
            "==", S.absolute(L, v, et), ans), et.llvm())), zero, et)
        share = b.fdiv(one, S.min_max(L, "max", ties, one, et))

        def tied(v, t):
            v = S.convert(L, v, t, et)
            hit = b.fcmp_ordered("==", S.absolute(L, v, et), ans)
            return b.select(hit, b.fmul(share, sign(v)), zero)
        return tied
    p = L.const(float(ord_) - 1.0, et)
    scale = S.math2(L, "pow", ans, p, et)

    def power(v, t):
        v = S.convert(L, v, t, et)
        return b.fdiv(b.fmul(S.math2(L, "pow", S.absolute(L, v, et), p, et), sign(v)), scale)
    return power


register(SwapAxes(), np.swapaxes)
register(ExpandDims(), np.expand_dims)
register(RealImag(), np.real, np.imag)
register(Trace(), np.trace)
register(Columns(), rt.as_columns, rt.from_columns)
register(ConjLower(), rt.conj_lower)
register(HalfLowerMask(), rt.half_lower_mask)
register(Cast(), rt.cast_vjp, rt.cast_jvp)
register(NormVjp(), rt.norm_vjp, rt.norm_jvp)
