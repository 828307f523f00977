"""More of ``vmap``'s run-time helpers in LLVM IR (``s2s_runtime.batching``), for
``jit(vmap(f))``; same results as the Python helpers for the types below, any other
use refused by the call table with the helper's name and argument types:

* ``batch_view(x, n)``: ``x`` (a number or an array) seen ``n`` times along a new
  axis 0 -- a view with stride 0 on that axis (Python's is a read-only broadcast);
* ``batch_flat(x)``: each example of ``x`` flattened, ``x.reshape(n, -1)``;
* ``batch_reshape_arg(x, shape)``: ``(x.shape[0],) + shape`` for ``np.reshape``;
* ``batch_inplace(op, plain, x, y)``: ``x op= y`` in place where ``x`` is an array of
  rank >= 2 (each example an array), else ``plain(x, y)``, a new value;
* ``batch_len(x)``/``batch_ndim(x)``/``batch_size_of(x)``: ``len``, ``np.ndim`` and
  ``np.size`` of one example of an array ``x`` (``len`` of a tuple: its length);
* ``mean_vjp_per_example(g, x)``, ``max_vjp_per_example(g, ans, x)``: ``rt.mean_vjp``
  and ``rt.max_vjp`` with ``axis=batch_axes(x)`` (what ``core/vmap_jit.py`` makes of them):
  ``g[b]`` spread over example ``b`` divided by its size; ``g[b]`` shared by the
  elements of example ``b`` equal to ``ans[b]`` (``x`` seen as ``(n, -1)``);
* ``transpose_per_example(x)`` (``np.transpose(x, batch_transpose_axes(x, None))``,
  ``x.T`` of each example): the axes after the batch axis reversed, a view;
* ``batch_snapshot(x)``: a copy of an array, a number as it is;
* ``batch_array(np.array or np.asarray, (x_0, ..., x_m-1))`` of batched arrays of one
  rank: ``out[:, j] = x_j``, shape ``(n, m) + x_0.shape[1:]`` (shapes checked);
* ``np.logical_and``/``logical_or``/``logical_xor``/``logical_not`` on booleans,
  numbers and arrays (elementwise, broadcasting; the masks of batched branches);
  ``np.any``/``np.all`` of a whole array (the test of a batched ``while``).
"""
from __future__ import annotations

import numpy as np
import s2s_runtime as rt
from llvmlite import ir as ll

from . import arrays as A
from . import scalars as S
from . import types as T
from .calls import TABLE, register, register_compiled_form
from .ops_build import Reshape


def restrided(L, rtype, x, shape, strides):
    """A view of array ``x``'s data (its data and block pointers) as ``rtype`` with these
    shape and strides (lists of i64 values): no copy."""
    return A.make(L, rtype, L.b.extract_value(x, 0), L.b.extract_value(x, 1), shape, strides)


def int_tuple(L, values):
    """``(value, Tuple of ints)`` holding the i64 ``values`` (a shape, an axes tuple)."""
    t = T.Tuple((T.INT,) * len(values))
    out = ll.Constant(t.llvm(), None)
    for k, v in enumerate(values):
        out = L.b.insert_value(out, v, k)
    return out, t


class BatchView:
    """``batch_view(x, n)``: ``x`` seen ``n`` times along a new axis 0 (stride 0)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not (isinstance(types[1], T.Scalar)
                                         and types[1].dtype in ("i8", "b1")):
            return None
        x = types[0]
        if isinstance(x, T.Scalar):
            return T.Array(x.dtype, 1)
        return T.Array(x.dtype, x.ndim + 1) if isinstance(x, T.Array) else None

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), (n, nt) = vals
        n = S.convert(L, n, nt, T.INT)
        if isinstance(xt, T.Scalar):  # one element, read n times
            one = A.allocate(L, T.Array(xt.dtype, 1), [A.ONE])
            A.fill(L, one, T.Array(xt.dtype, 1), x)
            return restrided(L, rtype, one, [n], [A.ZERO])
        return restrided(L, rtype, x, [n] + A.shape_list(L, x, xt),
                         [A.ZERO] + A.strides_list(L, x, xt))


class BatchFlat:
    """``batch_flat(x)``: ``x.reshape(x.shape[0], -1)``."""

    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) == 1 and isinstance(types[0], T.Array) and types[0].ndim
        return T.Array(types[0].dtype, 2) if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        dims = int_tuple(L, [A.shape_of(L, x, 0), L.b.neg(A.ONE)])
        return Reshape().lower(L, np.reshape, [(x, xt), dims], {}, rtype)


class BatchReshapeArg:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not isinstance(types[0], T.Array) or not types[0].ndim:
            return None
        shape = types[1]
        items = list(shape.items) if isinstance(shape, T.Tuple) else [shape]
        if not all(isinstance(t, T.Scalar) and t.dtype in ("i8", "b1") for t in items):
            return None
        return T.Tuple((T.INT,) * (len(items) + 1))

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), (shape, st) = vals
        items = [L.b.extract_value(shape, k) for k in range(len(st.items))] \
            if isinstance(st, T.Tuple) else [shape]
        types = list(st.items) if isinstance(st, T.Tuple) else [st]
        return int_tuple(L, [A.shape_of(L, x, 0)] +
                     [S.convert(L, v, t, T.INT) for v, t in zip(items, types)])[0]


class BatchInplace:
    """``batch_inplace(op, plain, x, y)``: the handler of ``op`` (in place) or ``plain``."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 4 or not all(hasattr(a, "value") for a in atoms[:2]):
            return None
        op = self._pick(atoms, types[2])
        handler = TABLE.get(op)
        if handler is None or getattr(handler, "wants_atoms", False):
            return None
        return handler.type(op, types[2:], {}, loc)

    @staticmethod
    def _pick(atoms, x):
        return atoms[0].value if isinstance(x, T.Array) and x.ndim >= 2 else atoms[1].value

    def lower(self, L, fn, vals, kw, rtype):
        op = self._pick(L.call_atoms[0], vals[2][1])
        L.call_atoms = (L.call_atoms[0][2:], {})
        return TABLE[op].lower(L, op, vals[2:], {}, rtype)


class Logical:
    """numpy's logical functions: truth values of numbers, elementwise on arrays."""

    OPS = {np.logical_and: "and", np.logical_or: "or", np.logical_xor: "xor",
           np.logical_not: "not"}

    def type(self, fn, types, kw, loc):
        arity = 1 if fn is np.logical_not else 2
        if kw or len(types) != arity or not all(isinstance(t, (T.Scalar, T.Array))
                                                for t in types):
            return None
        arrays = [t.ndim for t in types if isinstance(t, T.Array)]
        return T.Array("b1", max(arrays)) if arrays else T.Scalar("b1")

    def lower(self, L, fn, vals, kw, rtype):
        b, op = L.b, self.OPS[fn]

        def combine(items):
            x = [S.truth(L, v, t) for v, t in items]
            if op == "not":
                return b.not_(x[0]), T.BOOL
            return getattr(b, op + "_")(x[0], x[1]), T.BOOL

        if isinstance(rtype, T.Scalar):
            return combine(vals)[0]
        return A.elementwise(L, combine, vals, "b1")


class PerExampleShape:
    """``batch_len``, ``batch_ndim``, ``batch_size_of`` of an array (a tuple's length)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1:
            return None
        x = types[0]
        if fn is rt.batch_len and isinstance(x, T.Tuple):
            return T.INT
        ok = isinstance(x, T.Array) and x.ndim >= (2 if fn is rt.batch_len else 1)
        return T.INT if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        if isinstance(xt, T.Tuple):
            return A.i64(len(xt.items))
        if fn is rt.batch_len:
            return A.shape_of(L, x, 1)
        if fn is rt.batch_ndim:
            return A.i64(xt.ndim - 1)
        n = A.ONE
        for d in A.shape_list(L, x, xt)[1:]:
            n = L.b.mul(n, d)
        return n


class MeanVjpPerExample:
    def type(self, fn, types, kw, loc):
        from .batching import SumVjpPerExample
        return SumVjpPerExample().type(fn, types, kw, loc)

    def lower(self, L, fn, vals, kw, rtype):
        from .batching import SumVjpPerExample
        spread = SumVjpPerExample().lower(L, fn, vals, kw, rtype)
        x, xt = vals[1]
        count = S.convert(L, PerExampleShape().lower(L, rt.batch_size_of, [(x, xt)], {}, T.INT),
                          T.INT, rtype.elem)

        def divide(items):
            return S.binary(L, "truediv", items[0][0], count, rtype.elem), rtype.elem

        A.elementwise(L, divide, [(spread, rtype)], rtype.dtype, out=(spread, rtype))
        return spread


class MaxVjpPerExample:
    def type(self, fn, types, kw, loc):
        g, ans, x = types if len(types) == 3 else (None,) * 3
        if kw or not all(isinstance(t, T.Array) and t.ndim == 1 for t in (g, ans)) or \
                not isinstance(x, T.Array) or x.ndim < 2:
            return None
        flat = TABLE[rt.max_vjp].type(rt.max_vjp, [g, ans, T.Array(x.dtype, 2)], {}, loc,
                                      [None, None, None, _Const(1), _Const(False)], {})
        return None if flat is None else T.Array(flat.dtype, x.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        g, ans, (x, xt) = vals
        flat_t = T.Array(xt.dtype, 2)
        flat = BatchFlat().lower(L, rt.batch_flat, [(x, xt)], {}, flat_t)
        L.call_atoms = ([None, None, None, _Const(1), _Const(False)], {})
        r_t = T.Array(rtype.dtype, 2)
        r = TABLE[rt.max_vjp].lower(L, rt.max_vjp, [g, ans, (flat, flat_t)], {}, r_t)
        shape = int_tuple(L, A.shape_list(L, x, xt))
        return Reshape().lower(L, np.reshape, [(r, r_t), shape], {}, rtype)


class _Const:
    def __init__(self, value):
        self.value = value


class TransposePerExample:
    """``transpose_per_example(x)``, and ``(g, x)``: the cotangent (the same
    permutation, its own inverse), the real part where ``x`` is real."""

    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) in (1, 2) and isinstance(types[0], T.Array) and \
            types[0].ndim and (len(types) == 1 or getattr(types[1], "ndim", -1) == types[0].ndim)
        if ok and len(types) == 2 and types[0].dtype == "c16" and types[1].dtype != "c16":
            return T.Array("f8", types[0].ndim)
        return types[0] if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        shape, strides = A.shape_list(L, x, xt), A.strides_list(L, x, xt)
        out = restrided(L, xt, x, shape[:1] + shape[:0:-1], strides[:1] + strides[:0:-1])
        return out if rtype == xt else A.copy(L, out, xt, rtype.dtype)


class TransposeAxes:
    """``batch_transpose_axes(x, None)``: ``(0, ndim - 1, ..., 1)``."""

    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) in (1, 2) and isinstance(types[0], T.Array) and \
            (len(types) == 1 or isinstance(types[1], T.NoneType))
        return T.Tuple((T.INT,) * types[0].ndim) if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        nd = len(rtype.items)
        return int_tuple(L, [A.i64(0)] + [A.i64(k) for k in range(nd - 1, 0, -1)])[0]


def transpose_per_example(x, like=None):
    """``np.transpose(x, rt.batch_transpose_axes(x, None))``; with ``like``, the cotangent
    ``rt.transpose_vjp(x, like, rt.batch_transpose_axes(like, None))``."""
    if like is not None:
        return rt.transpose_vjp(x, like, rt.batch_transpose_axes(like, None))
    return np.transpose(x, rt.batch_transpose_axes(x, None))


def mean_vjp_per_example(g, x):
    """``rt.mean_vjp(g, x, rt.batch_axes(x))``."""
    return rt.mean_vjp(g, x, rt.batch_axes(x))


def max_vjp_per_example(g, ans, x):
    """``rt.max_vjp(g, ans, x, rt.batch_axes(x))``."""
    return rt.max_vjp(g, ans, x, rt.batch_axes(x))


register_compiled_form(TransposePerExample(), transpose_per_example)
register(TransposeAxes(), rt.batch_transpose_axes)
register_compiled_form(MeanVjpPerExample(), mean_vjp_per_example)
register_compiled_form(MaxVjpPerExample(), max_vjp_per_example)
register(PerExampleShape(), rt.batch_len, rt.batch_ndim, rt.batch_size_of)
class AnyAll:
    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) == 1 and isinstance(types[0], (T.Array, T.Scalar))
        return T.Scalar("b1") if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        if isinstance(xt, T.Scalar):
            return S.truth(L, x, xt)
        op = L.b.or_ if fn is np.any else L.b.and_
        init = ll.Constant(T.I1, 0 if fn is np.any else 1)
        return A.reduce_all(L, x, xt, lambda acc, v: op(acc, S.truth(L, v, xt.elem)),
                            init, T.Scalar("b1"))


class BatchSnapshot:
    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) == 1 and isinstance(types[0], (T.Array, T.Scalar))
        return types[0] if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        return A.copy(L, x, xt) if isinstance(xt, T.Array) else x


class BatchArray:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 2 or getattr(atoms[0], "value", None) not in (np.array,
                                                                             np.asarray):
            return None
        items = getattr(types[1], "items", None)
        if not items or not all(isinstance(t, T.Array) and t.ndim == items[0].ndim >= 1
                                for t in items):
            return None
        st = T.promote(*(t.elem for t in items))
        return T.Array(st.dtype, items[0].ndim + 1)

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        tup, tt = vals[1]
        items = [(b.extract_value(tup, j), t) for j, t in enumerate(tt.items)]
        shape = A.shape_list(L, *items[0])
        for v, t in items[1:]:
            L.check(A._differs(L, A.shape_list(L, v, t), shape), ValueError,
                    "vmap: np.array of items of different shapes")
        out = A.allocate(L, rtype, shape[:1] + [A.i64(len(items))] + shape[1:])
        for j, (v, t) in enumerate(items):
            row_t = T.Array(rtype.dtype, rtype.ndim - 1)
            strides = A.strides_list(L, out, rtype)
            data = b.gep(b.extract_value(out, 0), [b.mul(A.i64(j), strides[1])])
            row = A.make(L, row_t, data, b.extract_value(out, 1), shape,
                         strides[:1] + strides[2:])
            A.elementwise(L, lambda vs: vs[0], [(v, t)], rtype.dtype, out=(row, row_t))
        return out


register(BatchSnapshot(), rt.batch_snapshot)
register(BatchArray(), rt.batch_array)
register(BatchView(), rt.batch_view)
register(BatchFlat(), rt.batch_flat)
register(BatchReshapeArg(), rt.batch_reshape_arg)
register(BatchInplace(), rt.batch_inplace)
register(Logical(), *Logical.OPS)
register(AnyAll(), np.any, np.all)
