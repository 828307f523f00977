"""Tuples, ranges (and ``reversed`` of one), slices, shapes, indexing, array creation,
copies, reductions and products: handlers of ``calls.TABLE``."""
from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir as ll

import s2s_runtime as rt

from ..values import arrays as A
from ..numerics import reductions as R
from ..values.nesting import fill_nested, leaf_values, regular_nesting
from ..values import scalars as S
from ..typing import types as T
from ..numerics.axis import reduce_axis, reduced_ndim, reduction_axis
from ..numerics.products import stacked_product
from .calls import elem_type, all_numeric, register
from .linalg import RUNTIME, constant
from ....errors import located


# -- tuples, ranges, shapes ----------------------------------------------------------------
class MakeTuple:
    """A tuple literal; constant items that are no run-time value (``np._NoValue``, a
    dtype) are allowed in a tuple (the ``spec`` of ``apply_linear``), not in a list."""

    def type(self, fn, types, kw, loc):
        if kw or (fn is rt.make_list and any(isinstance(t, T.Static) for t in types)):
            return None
        return T.Tuple(tuple(types))

    def lower(self, L, fn, vals, kw, rtype):
        out = ll.Constant(rtype.llvm(), None)
        for k, (v, _) in enumerate(vals):
            out = L.b.insert_value(out, v, k)
        return out


register(MakeTuple(), rt.make_tuple, rt.make_list)  # a list literal: read, never grown


class TupleOf:
    """``tuple(t)`` and ``list(t)`` of a tuple, namedtuple or list display
    (``tuple([a, b])``, ``list((a, b))``): the same items, themselves (Python's new
    tuple or list holds the operand's items, not copies), as a tuple or as a list
    display (laid out as the tuple).  ``tuple()`` is the empty tuple, ``list()`` the
    empty list that grows; ``list(l)`` of a list that grows is the list value itself
    (``values/lists.py``: a list value never sees an item change, an append to either
    copies where the other would see it).  ``tuple`` of a list that grows, and either of
    an array or an iterator (a length known only at run time) is not compiled: the call
    is refused naming it."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) > 1:
            return None
        if not types:
            return T.Tuple(()) if fn is tuple else T.List(None)
        t = types[0]
        if fn is list and isinstance(t, T.List):  # a new list of the same items: the list
            return t                               # value itself (no value of it changes)
        if not T.plain_tuple(t):
            return None
        if fn is tuple:
            return T.Tuple(t.items)
        if any(isinstance(i, T.Static) for i in t.items):  # (as make_list: no constants)
            return None
        return T.ListLiteral(t.items)

    def lower(self, L, fn, vals, kw, rtype):
        if not vals:
            return ll.Constant(rtype.llvm(), None)
        return vals[0][0]


register(TupleOf(), tuple, list)


class SeqCast:
    """``seq_cast(items, like)`` (the derivative of ``tuple(x)``/``list(x)`` carried back
    to ``x``) of a tuple ``items`` and a tuple or list display ``like`` of its length: the
    items, in ``like``'s kind; ``seq_cast_transpose(ct, items, like)``: ``ct`` in
    ``items``' kind.  (Lists that grow: ``derivs/lists.py``.)"""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != (2 if fn is rt.seq_cast else 3) or \
                not all(T.plain_tuple(t) for t in types) or \
                len({len(t.items) for t in types}) != 1:
            return None
        return T.same_kind(types[1], types[0].items)  # (the kind is like's / items')

    def lower(self, L, fn, vals, kw, rtype):
        return vals[0][0]


register(SeqCast(), rt.seq_cast, rt.seq_cast_transpose)


class MakeNamedTuple:
    """``make_record(cls, fields)`` of a namedtuple class ``cls``, or a dataclass whose
    fields are all ``__init__`` parameters, given every field: the tuple of the fields,
    typed as ``cls`` (``types.NamedTuple``; read by field name, returned as ``cls``)."""
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        cls = getattr(atoms[0], "value", None) if atoms else None
        names = T.record_fields(cls)
        if kw or len(types) != 2 or names is None:
            return None
        fields = types[1]
        if not (T.plain_tuple(fields) and len(fields.items) == len(names)):
            return None
        return T.NamedTuple(fields.items, cls)

    def lower(self, L, fn, vals, kw, rtype):
        return vals[1][0]


register(MakeNamedTuple(), rt.make_record)


class RecordFields:
    """``record_fields(g)`` of a record (``types.NamedTuple``, every field of which is an
    ``__init__`` parameter): its fields as a tuple (the cotangent of ``make_record``)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], T.NamedTuple):
            return None
        return T.Tuple(types[0].items)

    def lower(self, L, fn, vals, kw, rtype):
        return vals[0][0]


register(RecordFields(), rt.record_fields)


class Sequence:
    """``rt.sequence(x)`` (what a loop over ``x`` iterates): ``x`` itself for an array, a
    tuple or a range (indexed and measured like the list Python makes of it)."""

    def type(self, fn, types, kw, loc):
        return types[0] if len(types) == 1 and \
            isinstance(types[0], (T.Array, T.Tuple, T.Range)) else None

    def lower(self, L, fn, vals, kw, rtype):
        return vals[0][0]


register(Sequence(), rt.sequence)


class DtypeOf:
    """``x.dtype`` of an array or number: a compile-time constant (``dtype=x.dtype``)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        return T.Static(T.numpy_type(types[0].dtype))

    def lower(self, L, fn, vals, kw, rtype):
        return ll.Constant(rtype.llvm(), None)


register(DtypeOf(), rt.dtype_of)


class RangeItem:
    """``r[i]`` of a range: ``start + i * step`` (negative ``i`` from the end, checked)."""

    def type(self, fn, types, kw, loc):
        r, i = types
        return T.INT if isinstance(r, T.Range) and isinstance(i, T.Scalar) and \
            i.dtype in ("i8", "b1") else None

    def lower(self, L, fn, vals, kw, rtype):
        (r, _), (i, it) = vals
        b = L.b
        j = A.wrap_index(L, S.convert(L, i, it, T.INT), _range_len(L, r), 0)
        return b.add(b.extract_value(r, 0), b.mul(j, b.extract_value(r, 2)))


class MakeRange:
    def type(self, fn, types, kw, loc):
        ok = 1 <= len(types) <= 3 and not kw and all(
            isinstance(t, T.Scalar) and t.dtype in ("i8", "b1") for t in types)
        return T.Range() if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        ints = [S.convert(L, v, t, T.INT) for v, t in vals]
        if len(ints) == 1:
            ints = [A.ZERO] + ints
        if len(ints) == 2:
            ints.append(A.ONE)
        out = ll.Constant(rtype.llvm(), None)
        for k, v in enumerate(ints):
            out = L.b.insert_value(out, v, k)
        return out


register(MakeRange(), range)


class Reversed:
    """``reversed(range(...))``: the same numbers, last first."""

    def type(self, fn, types, kw, loc):
        return T.Range() if not kw and len(types) == 1 and isinstance(types[0], T.Range) else None

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        r = vals[0][0]
        start, stop, step = (b.extract_value(r, k) for k in range(3))
        up = b.icmp_signed(">", step, A.ZERO)
        span = b.select(up, b.sub(stop, start), b.sub(start, stop))
        mag = b.select(up, step, b.neg(step))
        n = b.sdiv(b.add(span, b.sub(mag, A.ONE)), mag)
        n = b.select(b.icmp_signed("<", n, A.ZERO), A.ZERO, n)
        last = b.add(start, b.mul(b.sub(n, A.ONE), step))
        new_stop = b.sub(last, b.mul(n, step))
        out = ll.Constant(rtype.llvm(), None)
        for k, v in enumerate((last, new_stop, b.neg(step))):
            out = b.insert_value(out, v, k)
        return out


register(Reversed(), reversed)


class MakeSlice:
    def type(self, fn, types, kw, loc):
        ok = 1 <= len(types) <= 3 and not kw and all(
            isinstance(t, T.NoneType) or isinstance(t, T.Scalar) and t.dtype in ("i8", "b1")
            for t in types)
        if not ok:
            return None
        parts = list(types) if len(types) > 1 else [T.NONE] + list(types)
        parts += [T.NONE] * (3 - len(parts))
        return T.Slice(tuple(not isinstance(t, T.NoneType) for t in parts))

    def lower(self, L, fn, vals, kw, rtype):
        parts = list(vals) if len(vals) > 1 else [(None, T.NONE)] + list(vals)
        parts += [(None, T.NONE)] * (3 - len(parts))
        out = ll.Constant(rtype.llvm(), None)
        for k, (v, t) in enumerate(parts):
            if not isinstance(t, T.NoneType):
                out = L.b.insert_value(out, S.convert(L, v, t, T.INT), k)
        return out


register(MakeSlice(), slice)


class Shape:
    """``np.shape``/``np.size``/``np.ndim`` of an array or a number (``()``, 1, 0), ``len``
    of an array, a tuple or a range; ``np.ndim`` and ``len`` of a tuple are compile-time
    ints (``types.Static``: a tuple's length is part of its type)."""

    def type(self, fn, types, kw, loc):
        if not kw and len(types) == 1 and isinstance(types[0], T.Scalar) and fn is not len:
            return T.Tuple(()) if fn is np.shape else T.INT if fn is np.size else T.Static(0)
        if kw or len(types) != 1 or not isinstance(types[0], T.Array):
            if fn is len and len(types) == 1 and isinstance(types[0], T.Tuple):
                return T.Static(len(types[0].items))
            if fn is len and len(types) == 1 and isinstance(types[0], T.Range):
                return T.INT
            return None
        t = types[0]
        if fn is np.shape:
            return T.Tuple((T.INT,) * t.ndim)
        if fn is len:
            return T.INT if t.ndim else None
        return T.Static(t.ndim) if fn is np.ndim else T.INT  # (ndim: known when compiling)

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if isinstance(t, T.Scalar):
            return ll.Constant(rtype.llvm(), None) if fn is np.shape else \
                A.i64(int(fn is np.size))
        if isinstance(t, T.Tuple):
            return A.i64(len(t.items))
        if isinstance(t, T.Range):
            return _range_len(L, v)
        if fn is np.shape:
            out = ll.Constant(rtype.llvm(), None)
            for k in range(t.ndim):
                out = L.b.insert_value(out, A.shape_of(L, v, k), k)
            return out
        if fn is len:
            return A.shape_of(L, v, 0)
        if fn is np.ndim:
            return A.i64(t.ndim)
        return A.size(L, v, t)


register(Shape(), np.shape, len, np.size, np.ndim)


class GetItem:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2:
            return None
        base, index = types
        if isinstance(base, T.Range):
            return RangeItem().type(fn, types, kw, loc)
        if isinstance(base, T.Tuple):
            return "tuple"  # resolved with the constant index (type_getitem_tuple)
        if not isinstance(base, T.Array):
            return None
        kept = view_ndim(base, index)
        return None if kept is None else base.elem if kept == 0 else T.Array(base.dtype, kept)

    def lower(self, L, fn, vals, kw, rtype):
        (a, t), (idx, it) = vals
        if isinstance(t, T.Range):
            return RangeItem().lower(L, fn, vals, kw, rtype)
        return A.getitem(L, a, t, idx, it)[0]


def index_types(index, views=False):
    """The kinds of an index's parts, ``"int"`` or ``"slice"`` (``views``: also
    ``"ellipsis"`` and ``"new"``, which only a view's read and write take), or None."""
    items = index.items if isinstance(index, T.Tuple) else (index,)
    out = []
    for t in items:
        if isinstance(t, T.Scalar) and t.dtype in ("i8", "b1"):
            out.append("int")
        elif isinstance(t, T.Slice):
            out.append("slice")
        elif views and isinstance(t, T.NoneType):
            out.append("new")
        elif views and isinstance(t, T.Static) and t.value is Ellipsis:
            out.append("ellipsis")
        else:
            return None
    return out


def view_ndim(base: T.Array, index):
    """The ndim of ``base[index]`` for a basic index (None: not one, or too many parts)."""
    parts = index_types(index, views=True)
    if parts is None or parts.count("ellipsis") > 1:
        return None
    real = sum(1 for p in parts if p in ("int", "slice"))
    if real > base.ndim:
        return None
    return base.ndim - parts.count("int") + parts.count("new")


class SetItem:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 3 or not isinstance(types[0], T.Array):
            return None
        if view_ndim(types[0], types[1]) is None or not all_numeric([types[2]]):
            return None
        return T.NONE

    def lower(self, L, fn, vals, kw, rtype):
        (a, t), (idx, it), (v, vt) = vals
        A.setitem(L, a, t, idx, it, v, vt)
        return ll.Constant(T.NONE.llvm(), None)


register(SetItem(), operator.setitem)
_GETITEM = register(GetItem(), operator.getitem)


# -- creation, copies, reductions, products ------------------------------------------------
def _dtype_of(kw, default):
    if "dtype" not in kw:
        return default
    t = kw["dtype"]
    if isinstance(t, T.NoneType):
        return default
    if not isinstance(t, T.Static):
        return None
    return T.dtype_code(t.value)


class Create:
    FILL = {np.zeros: 0, np.ones: 1, np.empty: None, np.zeros_like: 0, np.ones_like: 1,
            np.empty_like: None}

    def type(self, fn, types, kw, loc):
        if len(types) != 1 or set(kw) - {"dtype"}:
            return None
        if fn in (np.zeros, np.ones, np.empty):
            t = types[0]
            dims = [t] if isinstance(t, T.Scalar) else list(getattr(t, "items", [None]))
            if not all(isinstance(d, T.Scalar) and d.dtype in ("i8", "b1") for d in dims):
                return None
            code = _dtype_of(kw, "f8")
            return T.Array(code, len(dims)) if code else None
        if isinstance(types[0], T.Scalar) and fn in (np.zeros_like, np.ones_like):
            code = _dtype_of(kw, types[0].dtype)  # numpy: a 0-d array, a number here
            return T.Scalar(code) if code else None
        if not isinstance(types[0], T.Array):
            return None
        code = _dtype_of(kw, types[0].dtype)
        return T.Array(code, types[0].ndim) if code else None

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if isinstance(rtype, T.Scalar):
            return L.const(self.FILL[fn], rtype)
        shape = R.shape_values(L, v, t) if fn in (np.zeros, np.ones, np.empty) \
            else A.shape_list(L, v, t)
        fill = self.FILL[fn]
        return R.create(L, rtype, shape, None if fill is None else (L.const(fill, T.INT), T.INT))


register(Create(), *Create.FILL)


class Copy:
    """``np.copy(x)`` and ``np.ascontiguousarray(x)``: a fresh C-contiguous copy of an
    array (of a number: the number; ``ascontiguousarray`` of one: numpy's 1-element
    array); ``np.asfortranarray(x)``: a fresh Fortran-ordered copy (the transpose of a C
    copy of the transpose)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        t = types[0]
        if isinstance(t, T.Scalar) and fn is not np.copy:
            return T.Array(t.dtype, 1)
        return t

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if isinstance(t, T.Scalar):
            return v if fn is np.copy else R.create(L, rtype, [A.ONE], (v, t))
        if fn is np.asfortranarray:
            return A.transpose(L, A.copy(L, A.transpose(L, v, t), t), t)
        return A.copy(L, v, t)


register(Copy(), np.copy, np.ascontiguousarray, np.asfortranarray)


def _axis_items(value):
    """A constant axes operand as a list of ints (None if it is not an int, or a tuple or
    list of ints)."""
    items = list(value) if type(value) in (tuple, list) else [value]
    return items if all(type(k) is int for k in items) else None


class Transpose:
    """``np.transpose(x, axes)`` (``x.transpose(*axes)``): a view of ``x`` whose axis ``k``
    is ``x``'s axis ``axes[k]`` (reversed for ``axes=None``); constant axes only. numpy's
    errors at the call's line: ``ValueError`` for axes that are not a permutation of
    ``x``'s, ``AxisError`` for one out of range. A number is its own transpose."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) not in (1, 2) or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        if len(types) == 2 and self.order(types, atoms, loc) is None:
            return None
        return types[0]

    def order(self, types, atoms, loc):
        """The axes of the view, as a list of ints (None: refuse)."""
        nd = getattr(types[0], "ndim", 0)
        value = constant(atoms[1], types[1]) if len(atoms) > 1 else None
        if value is None:
            return list(range(nd))[::-1]
        if value is RUNTIME:
            return None
        items = _axis_items(value)
        if items is None:
            return None
        if len(items) != nd:
            raise ValueError(located("axes don't match array", loc))
        for k in items:
            if not -nd <= k < nd:
                raise np.exceptions.AxisError(located(
                    f"axis {k} is out of bounds for array of dimension {nd}", loc))
        items = [k % nd for k in items]
        if len(set(items)) != nd:
            raise ValueError(located("repeated axis in transpose", loc))
        return items

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if isinstance(t, T.Scalar):
            return v
        order = self.order([t] + [vt for _, vt in vals[1:]], L.call_atoms[0], L.loc)
        shape, strides = A.shape_list(L, v, t), A.strides_list(L, v, t)
        return A.make(L, t, L.b.extract_value(v, 0), L.b.extract_value(v, 1),
                      [shape[k] for k in order], [strides[k] for k in order])


register(Transpose(), np.transpose)


class MatrixTranspose:
    """``np.matrix_transpose(x)`` (``np.linalg.matrix_transpose``): a view of ``x`` with
    its last two axes exchanged; numpy's ``ValueError`` for fewer than two axes."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        if getattr(types[0], "ndim", 0) < 2:
            raise ValueError(located("Input array must be at least 2-dimensional, but it is "
                                     f"{getattr(types[0], 'ndim', 0)}", loc))
        return types[0]

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        shape, strides = A.shape_list(L, v, t), A.strides_list(L, v, t)
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
        return A.make(L, t, L.b.extract_value(v, 0), L.b.extract_value(v, 1), shape, strides)


register(MatrixTranspose(), *{f for f in (getattr(np, "matrix_transpose", None),  # numpy >= 2
                                         getattr(np.linalg, "matrix_transpose", None)) if f})


class RollAxis:
    """``np.rollaxis(x, axis, start=0)`` for constant ints: the view numpy gives, ``axis``
    moved to just before ``start`` (numpy's ``AxisError`` for either out of range)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) not in (2, 3) or not isinstance(types[0], T.Array):
            return None
        return None if self.order(types, atoms, loc) is None else types[0]

    def order(self, types, atoms, loc):
        nd = types[0].ndim
        axis = constant(atoms[1], types[1])
        start = constant(atoms[2], types[2]) if len(atoms) > 2 else 0
        if type(axis) is not int or type(start) is not int or RUNTIME in (axis, start):
            return None
        if not -nd <= axis < nd:
            raise np.exceptions.AxisError(located(
                f"axis {axis} is out of bounds for array of dimension {nd}", loc))
        if not -nd <= start <= nd:
            raise np.exceptions.AxisError(located(
                f"start arg requires {-nd} <= start < {nd + 1} but {start} was passed in", loc))
        axis, start = axis % nd, start + nd if start < 0 else start
        if axis < start:
            start -= 1
        order = [k for k in range(nd) if k != axis]
        order.insert(start, axis)
        return order

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        order = self.order([vt for _, vt in vals], L.call_atoms[0], L.loc)
        shape, strides = A.shape_list(L, v, t), A.strides_list(L, v, t)
        return A.make(L, t, L.b.extract_value(v, 0), L.b.extract_value(v, 1),
                      [shape[k] for k in order], [strides[k] for k in order])


register(RollAxis(), np.rollaxis)


class AsArray:
    """``np.asarray(x)`` / ``np.asanyarray(x)`` of an array or a number: ``x`` itself
    (numpy copies nothing; a number stays a number here, as every 0-d value of compiled
    code); with ``dtype=`` of another dtype, a converted copy. ``np.array(x)`` (and with
    ``dtype=``): always a copy.  Of a regular nesting of tuples or list displays of
    arrays of one rank (``np.array([x, y ** 2, np.sin(x)])``): a new array with the
    nesting's axes first (``values/nesting.py``; numpy's ``ValueError`` where the arrays'
    shapes differ)."""

    def type(self, fn, types, kw, loc):
        if set(kw) - {"dtype"} or len(types) != 1:
            return None
        t = types[0]
        nesting = regular_nesting(t) if T.plain_tuple(t) else None
        if nesting is not None:
            dims, leaves = nesting
            code = _dtype_of(kw, T.promote(*(leaf.elem for leaf in leaves)).dtype)
            return None if code is None else T.Array(code, leaves[0].ndim + len(dims))
        if not isinstance(t, (T.Array, T.Scalar)):
            return None
        code = _dtype_of(kw, t.dtype)
        if code is None:
            return None
        return T.Array(code, t.ndim) if isinstance(t, T.Array) else T.Scalar(code)

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if T.plain_tuple(t):  # a nesting of arrays
            dims, _ = regular_nesting(t)
            items = leaf_values(L, v, t)
            first = A.shape_list(L, *items[0])
            out = A.allocate(L, rtype, [A.i64(m) for m in dims] + first)
            fill_nested(L, out, rtype, items, dims, lead=0, message=(
                "setting an array element with a sequence: np.array of arrays of different "
                "shapes (an inhomogeneous shape)"))
            return out
        if isinstance(t, T.Scalar):
            return S.convert(L, v, t, rtype)
        if fn is not np.array and rtype.dtype == t.dtype:
            return v
        return A.copy(L, v, t, rtype.dtype)


register(AsArray(), np.asarray, np.asanyarray, np.array)


class Reduce:
    """Whole-array reductions, and along one axis (``axis.py``)."""

    wants_atoms = True
    OPS = {np.sum: "sum", np.prod: "prod", np.mean: "mean", np.average: "mean",
           np.max: "max", np.amax: "max", np.min: "min", np.amin: "min"}

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if not types or not all_numeric(types[:1]):
            return None
        t = types[0]
        if fn is np.average and (len(types) > 2 or set(kw) - {"axis"}):
            return None
        axis, keepdims = reduction_axis(fn, atoms, kw_atoms or {}, getattr(t, "ndim", 0), loc)
        if axis is not None or keepdims:
            whole = self.type(fn, types[:1], {}, loc, atoms[:1], {})
            if whole is None or not isinstance(t, T.Array):
                return None
            if axis is None:  # keepdims of a whole-array reduction
                return T.Array(whole.dtype, t.ndim)
            return T.Array(whole.dtype, reduced_ndim(t.ndim, axis, keepdims))
        if fn in (np.mean, np.average):
            e = elem_type(t)
            return T.Scalar("f4" if e.dtype == "f4" else ("c16" if e.dtype == "c16" else "f8"))
        if isinstance(t, T.Scalar):
            return R.sum_type(T.Array(t.dtype, 0)) if fn in (np.sum, np.prod) else T.Scalar(t.dtype)
        if fn in (np.sum, np.prod):
            return R.sum_type(t)
        return None if t.dtype == "c16" else t.elem

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if isinstance(rtype, T.Array):
            args, kwargs = L.call_atoms
            axis, keepdims = reduction_axis(fn, args, kwargs, t.ndim, L.loc)
            if axis is None:  # keepdims=True of a whole-array reduction
                total = self.lower_all(L, fn, v, t, rtype.elem)
                return R.create(L, rtype, [A.ONE] * t.ndim, (total, rtype.elem))
            return reduce_axis(L, v, t, axis, keepdims, self.OPS[fn], rtype)
        return self.lower_all(L, fn, v, t, rtype)

    def lower_all(self, L, fn, v, t, rtype):
        if isinstance(t, T.Scalar):
            return S.convert(L, v, t, rtype)
        if fn in (np.sum, np.prod):
            return R.sum_all(L, v, t, "add" if fn is np.sum else "mul")
        if fn in (np.mean, np.average):
            return R.mean_all(L, v, t)
        return R.min_max_all(L, v, t, "max" if fn in (np.max, np.amax) else "min")


register(Reduce(), np.sum, np.prod, np.max, np.min, np.amax, np.amin, np.mean, np.average)


class Dot:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2:
            return None
        a, c = types
        if fn is np.dot and isinstance(a, T.Scalar) and isinstance(c, T.Scalar):
            return S.arith_type("mul", a, c)
        if not (isinstance(a, T.Array) and isinstance(c, T.Array)):
            return None
        if fn is not np.dot and a.ndim >= 2 and c.ndim >= 2 and max(a.ndim, c.ndim) > 2:
            st = T.promote(a.elem, c.elem)  # stacks of matrices (products.stacked_product)
            return T.Array("i8" if st.dtype == "b1" else st.dtype, max(a.ndim, c.ndim))
        if not (1 <= a.ndim <= 2 and 1 <= c.ndim <= 2):
            return None
        st = T.promote(a.elem, c.elem)
        st = T.Scalar("i8") if st.dtype == "b1" else st
        ndim = (a.ndim - 1) + (c.ndim - 1)
        return st if ndim == 0 else T.Array(st.dtype, ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (a, ta), (c, tc) = vals
        if isinstance(ta, T.Scalar):
            return S.binary(L, "mul", S.convert(L, a, ta, rtype), S.convert(L, c, tc, rtype), rtype)
        if max(ta.ndim, tc.ndim) > 2:
            return stacked_product(L, a, ta, c, tc, rtype)
        return R.dot(L, a, ta, c, tc, rtype)


register(Dot(), np.dot, np.matmul, operator.matmul)


def _range_len(L, r):
    b = L.b
    start, stop, step = (b.extract_value(r, k) for k in range(3))
    up = b.icmp_signed(">", step, A.ZERO)
    span = b.select(up, b.sub(stop, start), b.sub(start, stop))
    mag = b.select(up, step, b.neg(step))
    n = b.sdiv(b.add(span, b.sub(mag, A.ONE)), mag)
    return b.select(b.icmp_signed("<", n, A.ZERO), A.ZERO, n)
