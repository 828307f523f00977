"""Lists that grow (``lists.py``), of numbers or of arrays, under jit: handlers of
``calls.TABLE``.

Each handler is an overload (``calls.overload``, family "lists"): it takes over
when an operand is a ``types.List`` (``[]`` is one whose element type is not known
yet) and otherwise defers to the callable's next handler.  Maths (``s2s_runtime.containers`` and ``adjoint``, the
same semantics):

* ``[]``, ``l.append(v)``, ``l.extend(w)``, ``l.insert(i, v)``, ``l.pop(i)``,
  ``l[i] = v``, ``l[i]``, ``l[a:b:c]``, ``len(l)``, ``sum(l)`` (Python's, from 0),
  ``max(l)``/``min(l)``, ``l + w``, ``for x in l``; numpy functions of a list
  (``np.array``/``np.asarray`` copy it; ``np.sum``, ``np.mean``, ``np.max``,
  ``np.shape``, ... read it as a 1-D array);
* cotangents and tangents of lists: ``derivs/lists.py``.

Items are numbers, or arrays of one dtype and number of dimensions (a list of
arrays: ``sum(l)`` adds them, numpy functions read ``np.array(l)``; ``max(l)``
of arrays is refused, as Python's comparison of arrays is ambiguous).  A list
of lists, or of arrays of different kinds, is refused naming the construct and
the line.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np
from llvmlite import ir as ll

import s2s_runtime as rt

from ....errors import UnsupportedSyntaxError
from ..values import arrays as A
from ..values import lists as Li
from ..numerics import reductions as R
from ..values import scalars as S
from ..typing import types as T
from .calls import TABLE, overload
from ..derivs.adjoints import float_dtype


def is_list(t):
    return isinstance(t, T.List)


def is_number(t):
    return isinstance(t, T.Scalar)


def is_item(t):
    """A type a list that grows holds: a number or an array."""
    return isinstance(t, (T.Scalar, T.Array))


def cotangent_type(t: T.List) -> T.List:
    """The type of a cotangent of list ``t``: float items (numbers, or arrays like the
    items)."""
    if t.elem is None:
        return t  # ``[]`` before anything is appended: still empty
    e = t.elem
    dtype = e.dtype if e.dtype in ("f4", "f8", "c16") else float_dtype(e.dtype)
    return T.List(T.Array(dtype, e.ndim) if isinstance(e, T.Array) else T.Scalar(dtype))


def zero_item(L, like, like_t, e):
    """A zero item of type ``e``: a number, or zeros shaped like the array ``like``."""
    if isinstance(e, T.Array):
        return A.allocate(L, e, A.shape_list(L, like, like_t), zeroed=True)
    return S.convert(L, ll.Constant(T.I64, 0), T.INT, e)


def sum_item_type(a, c, loc):
    """The type of the sum of items of types ``a`` and ``c`` (numbers or arrays)."""
    if isinstance(a, T.Array) or isinstance(c, T.Array):
        return TABLE[operator.add].type(operator.add, [a, c], {}, loc)
    return T.promote(a, c)


def add_items(L, x, xt, y, yt, e):
    """``x + y`` for items (numbers or arrays, numpy's broadcasting) as type ``e``."""
    if isinstance(e, T.Array):
        return TABLE[operator.add].lower(L, operator.add, [(x, xt), (y, yt)], {}, e)
    return S.binary(L, "add", S.convert(L, x, xt, e), S.convert(L, y, yt, e), e)


def listish(t):
    """A list type for ``t`` (a list, ``[]``, a literal tuple of numbers), else None."""
    if is_list(t):
        return t
    return Li.join_list(T.List(None), t) if T.plain_tuple(t) else None


class ListOp:
    """``op.ltype(types)`` / ``op.llower(L, vals, rtype)`` when ``when(types)``, else defer
    to ``inner``, the callable's next handler (``calls.overload``; None: refuse)."""

    inner = None
    reads_atoms = False  # True: a handler whose ltype reads self.atoms itself
    keywords = False  # True: a handler that reads keyword arguments (self.kw)

    def __init__(self, when):
        self.when = when

    @property
    def wants_atoms(self):
        return self.reads_atoms or getattr(self.inner, "wants_atoms", False)

    def type(self, fn, types, kw, loc, *atoms):
        if self.when(types):
            if kw and not self.keywords:
                return None
            self.atoms = atoms  # (atoms, keyword atoms) for an inner handler that reads them
            self.kw = kw
            return self.ltype(fn, list(types), loc)
        if self.inner is None:
            return None
        return self.inner.type(fn, types, kw, loc, *atoms)

    def lower(self, L, fn, vals, kw, rtype):
        if self.when([t for _, t in vals]):
            self.kw = kw
            return self.llower(L, fn, list(vals), rtype)
        return self.inner.lower(L, fn, vals, kw, rtype)


def growable(t) -> bool:
    """A list, or a list display (``[a, b]``) of items a list holds."""
    return is_list(t) or isinstance(t, T.ListLiteral) and listish(t) is not None


def list_at(k):
    return lambda types: len(types) > k and is_list(types[k])


def as_list(L, v, t):
    """``(value, list type)`` of a list or a literal tuple of numbers."""
    lt = listish(t)
    return (v if t == lt else Li.convert_list(L, v, t, lt)), lt


def overload_lists(cls, fn, when, *args, family="lists"):
    overload(family, cls(when, *args), fn)


# -- building --------------------------------------------------------------------------------
class Display(ListOp):
    """``[]`` (a list that will grow) and ``[a, b, ...]`` (a ``ListLiteral``: read as a
    tuple until it grows, ``lists.convert_list``)."""

    def ltype(self, fn, types, loc):
        if not types:
            return T.List(None)
        t = self.inner.type(fn, types, {}, loc)
        return None if t is None else T.ListLiteral(t.items)

    def llower(self, L, fn, vals, rtype):
        if not vals:
            return ll.Constant(rtype.llvm(), None)
        return self.inner.lower(L, fn, vals, {}, rtype)


class Append(ListOp):
    def ltype(self, fn, types, loc):
        lt, v = listish(types[0]), types[1]
        out = Li.join_list(lt, T.Tuple((v,))) if lt is not None and is_item(v) else None
        if out is None:
            raise UnsupportedSyntaxError(
                f"jit: appending a {v} to a {types[0]} (a list that grows holds numbers, or "
                "arrays of one dtype and number of dimensions)", loc)
        return out

    def llower(self, L, fn, vals, rtype):
        (v, vt), (x, xt) = as_list(L, *vals[0]), vals[1]
        return Li.append(L, v, vt, x, xt, rtype)


def grows_as_display(types) -> bool:
    """``l.append(v)`` where ``l`` is ``[]`` or a list display and no list that grows holds
    its items and ``v`` (``v`` a tuple, a dict, arrays of different kinds): the result
    is a longer display (``DisplayAppend``)."""
    lst, v = types[0], types[1]
    if not (isinstance(lst, T.ListLiteral) or is_list(lst) and lst.elem is None):
        return False
    lt = listish(lst)
    return lt is None or not is_item(v) or Li.join_list(lt, T.Tuple((v,))) is None


class DisplayAppend(ListOp):
    """``l.append(v)`` of a list display or ``[]`` that no list that grows could hold (a
    list of tuples, of dicts, of arrays of different kinds): the display of ``l``'s items
    and ``v``.  Its length is part of its type, so a loop that appends so compiles where
    its range is known when compiling (typing unrolls it: ``passes/tuple_loops.py``)."""

    def ltype(self, fn, types, loc):
        lst, v = types
        return T.ListLiteral(tuple(lst.items if isinstance(lst, T.ListLiteral) else ()) + (v,))

    def llower(self, L, fn, vals, rtype):
        (lst, lt), (v, _) = vals
        out = ll.Constant(rtype.llvm(), None)
        n = len(lt.items) if isinstance(lt, T.ListLiteral) else 0
        for k in range(n):
            out = L.b.insert_value(out, L.b.extract_value(lst, k), k)
        return L.b.insert_value(out, v, n)


class Extend(ListOp):
    """``l.extend(w)`` and ``l + w`` (``seq_concat``): ``w`` a list or a tuple of numbers."""

    def ltype(self, fn, types, loc):
        a, c = listish(types[0]), listish(types[1])
        return None if a is None or c is None else Li.join_list(a, c)

    def llower(self, L, fn, vals, rtype):
        (v, vt), (w, wt) = as_list(L, *vals[0]), as_list(L, *vals[1])
        b = L.b
        out = Li.copy(L, v, vt, rtype, 0) if fn is rt.seq_concat else v
        ot = rtype if fn is rt.seq_concat else vt
        slot = L.entry_alloca(rtype.llvm())
        b.store(Li.convert_list(L, out, ot, rtype) if ot != rtype else out, slot)
        wdata, _, wn = Li.fields(L, w)
        A.loop(L, wn, lambda i: b.store(Li.append(L, b.load(slot), rtype, Li.load(L, wdata, i, wt),
                                                  Li.elem_of(wt), rtype), slot))
        return b.load(slot)


def _rebuilt(L, v, vt, rtype, n, item):
    """A new list of ``n`` items ``item(i) -> (value, type)``."""
    return Li.fresh(L, rtype, n, Li.room(L, n), item)


def _placed(L, vals, rtype, inserted):
    """A new list: list ``vals[0]`` with ``vals[2]`` at position ``vals[1]`` (normalised),
    inserted there (the items from it on move up one) or replacing the item there."""
    (v, vt), (p, pt), (x, xt) = as_list(L, *vals[0]), vals[1], vals[2]
    b = L.b
    data, _, n = Li.fields(L, v)
    p = S.convert(L, p, pt, T.INT)

    def item(i):
        j = i
        if inserted:  # the old item i - 1 from p on (never read at p itself)
            j = b.select(b.icmp_signed("<", i, p), i, b.sub(i, A.ONE))
            j = b.select(b.icmp_signed("<", j, A.ZERO), A.ZERO, j)
        old = Li.convert_item(L, Li.load(L, data, j, vt), Li.elem_of(vt), rtype.elem)
        return b.select(b.icmp_signed("==", i, p), Li.convert_item(L, x, xt, rtype.elem),
                        old), rtype.elem

    return _rebuilt(L, v, vt, rtype, b.add(n, A.ONE) if inserted else n, item)


class Insert(ListOp):
    def ltype(self, fn, types, loc):
        return Append.ltype(self, fn, [types[0], types[2]], loc)

    def llower(self, L, fn, vals, rtype):
        return _placed(L, vals, rtype, inserted=True)


class Remove(ListOp):
    """``list_remove(l, p, item)``: the last item dropped is a view; others copy."""

    def ltype(self, fn, types, loc):
        return listish(types[0])

    def llower(self, L, fn, vals, rtype):
        (v, vt), (p, pt) = as_list(L, *vals[0]), vals[1]
        b = L.b
        data, block, n = Li.fields(L, v)
        p = S.convert(L, p, pt, T.INT)
        last = b.sub(n, A.ONE)
        slot = L.entry_alloca(rtype.llvm())
        with b.if_else(b.icmp_signed("==", p, last)) as (tail, inner):
            with tail:
                b.store(Li.make(L, rtype, data, block, last), slot)
            with inner:
                b.store(_rebuilt(L, v, vt, rtype, last, lambda i: (Li.load(
                    L, data, b.select(b.icmp_signed("<", i, p), i, b.add(i, A.ONE)), vt),
                    Li.elem_of(vt))), slot)
        return b.load(slot)


class SetItem(ListOp):
    """``list_set(l, p, v, old)``: a copy with ``v`` at the normalised position ``p``."""

    def ltype(self, fn, types, loc):
        return Append.ltype(self, fn, [types[0], types[2]], loc)

    def llower(self, L, fn, vals, rtype):
        return _placed(L, vals, rtype, inserted=False)


class Position(ListOp):
    """``item_index(l, i)`` (checked) and ``insert_index(l, i)`` (clamped)."""

    def ltype(self, fn, types, loc):
        return T.INT if is_number(types[1]) else None

    def llower(self, L, fn, vals, rtype):
        (v, _), (i, it) = as_list(L, *vals[0]), vals[1]
        n = Li.fields(L, v)[2]
        return (Li.item_position if fn is rt.item_index else Li.insert_position)(L, i, it, n)


# -- reading -----------------------------------------------------------------------------------
class GetItem(ListOp):
    def ltype(self, fn, types, loc):
        lt, it = types[0], types[1]
        if isinstance(it, T.Slice):
            return lt
        return Li.elem_of(lt) if is_number(it) and it.dtype in ("i8", "b1") else None

    def llower(self, L, fn, vals, rtype):
        (v, vt), (i, it) = vals[0], vals[1]
        if isinstance(it, T.Slice):
            return Li.sliced(L, v, vt, i, it)
        data, _, n = Li.fields(L, v)
        return Li.load(L, data, Li.item_position(L, i, it, n), vt)


class Length(ListOp):
    def ltype(self, fn, types, loc):
        return T.INT

    def llower(self, L, fn, vals, rtype):
        return Li.fields(L, vals[0][0])[2]


class ListOfArray(ListOp):
    """``list(a)`` of an array of at least one axis: a list that grows, of its numbers
    (copied) or of its rows (views of ``a``, as numpy's)."""

    def ltype(self, fn, types, loc):
        return Li.rows_type(types[0])

    def llower(self, L, fn, vals, rtype):
        return Li.from_array(L, vals[0][0], vals[0][1], rtype)


class ReversedItems(ListOp):
    """``rt.reversed_items(a)`` (``reversed(a)`` read by something other than a loop) of
    an array of at least one axis: ``list(a[::-1])``, its numbers (copied) or its rows
    (views of ``a``) backwards."""

    def ltype(self, fn, types, loc):
        return Li.rows_type(types[0])

    def llower(self, L, fn, vals, rtype):
        a, t = vals[0]
        b = L.b
        shape, strides = A.shape_list(L, a, t), A.strides_list(L, a, t)
        data = b.extract_value(a, 0)
        last = b.mul(b.sub(shape[0], A.ONE), strides[0])
        data = b.select(b.icmp_signed(">", shape[0], A.ZERO), b.gep(data, [last]), data)
        view = A.make(L, t, data, b.extract_value(a, 1), shape,
                      [b.neg(strides[0])] + strides[1:])
        return Li.from_array(L, view, t, rtype)


class Same(ListOp):
    """``rt.sequence(l)``: the list itself."""

    def ltype(self, fn, types, loc):
        return types[0]

    def llower(self, L, fn, vals, rtype):
        return vals[0][0]


class Sum(ListOp):
    """Python's ``sum(l, start=0)``: numbers from ``start`` on; arrays as
    ``start + l[0] + l[1] + ...`` (numpy's broadcasting; an empty list of arrays is a
    ``ValueError``, as its sum is the number ``start``, not an array)."""

    def ltype(self, fn, types, loc):
        start = types[1] if len(types) > 1 else T.INT
        if not is_number(start):
            return None
        e = Li.elem_of(types[0])
        if isinstance(e, T.Array):
            return TABLE[operator.add].type(operator.add, [start, e], {}, loc)
        return T.promote(start, e)

    def llower(self, L, fn, vals, rtype):
        (v, vt) = vals[0]
        start = vals[1] if len(vals) > 1 else (ll.Constant(T.I64, 0), T.INT)
        if Li.holds_arrays(vt):
            return _sum_of_arrays(L, v, vt, start, rtype)
        view, at = Li.as_array(L, v, vt)
        return A.reduce_all(L, view, at, lambda acc, x: S.binary(L, "add", acc, x, rtype),
                            S.convert(L, start[0], start[1], rtype), rtype)


def _sum_of_arrays(L, v, vt, start, rtype):
    b = L.b
    data, _, n = Li.fields(L, v)
    e = Li.elem_of(vt)
    add = TABLE[operator.add]
    L.check(b.icmp_signed("==", n, A.ZERO), ValueError,
            "jit: sum() of an empty list of arrays (the number 0 in Python, not an array)")
    acc = L.entry_alloca(rtype.llvm())
    b.store(add.lower(L, operator.add, [start, (Li.load(L, data, A.ZERO, vt), e)], {}, rtype),
            acc)
    A.loop(L, n, lambda i: b.store(add.lower(L, operator.add, [
        (b.load(acc), rtype), (Li.load(L, data, i, vt), e)], {}, rtype), acc), start=A.ONE)
    return b.load(acc)


class ArraySum(ListOp):
    """Python's ``sum(a, start=0)`` of an array: ``start + a[0] + a[1] + ...`` over its
    first axis (numbers of a 1-D array; rows, with numpy's broadcasting, of more axes: an
    array of more axes and no rows is a ``ValueError``, its sum being the number
    ``start``)."""

    def ltype(self, fn, types, loc):
        a = types[0]
        start = types[1] if len(types) > 1 else T.INT
        if len(types) > 2 or not (is_number(start) or isinstance(start, T.Array)):
            return None
        if a.ndim == 1 and is_number(start):
            return T.promote(start, a.elem)
        item = a.elem if a.ndim == 1 else T.Array(a.dtype, a.ndim - 1)
        return TABLE[operator.add].type(operator.add, [start, item], {}, loc)

    def llower(self, L, fn, vals, rtype):
        b = L.b
        (a, at) = vals[0]
        start = vals[1] if len(vals) > 1 else (ll.Constant(T.I64, 0), T.INT)
        if at.ndim == 1 and isinstance(rtype, T.Scalar):
            return A.reduce_all(L, a, at, lambda acc, x: S.binary(L, "add", acc, x, rtype),
                                S.convert(L, start[0], start[1], rtype), rtype)
        add = TABLE[operator.add]
        n = A.shape_of(L, a, 0)
        L.check(b.icmp_signed("==", n, A.ZERO), ValueError,
                "jit: sum() of an array with no rows (the number 0 in Python, not an array)")
        acc = L.entry_alloca(rtype.llvm())
        b.store(add.lower(L, operator.add, [start, A.first_axis_item(L, a, at, A.ZERO)], {},
                          rtype), acc)
        A.loop(L, n, lambda i: b.store(add.lower(L, operator.add, [
            (b.load(acc), rtype), A.first_axis_item(L, a, at, i)], {}, rtype), acc),
            start=A.ONE)
        return b.load(acc)


class TupleSum(ListOp):
    """Python's ``sum(t, start=0)`` of a tuple that is empty or holds arrays:
    ``start + t[0] + t[1] + ...`` item by item (numbers and arrays, numpy's
    broadcasting); the empty tuple's sum is ``start``."""

    def ltype(self, fn, types, loc):
        acc = types[1] if len(types) > 1 else T.INT
        for item in [acc] + list(types[0].items):
            if not is_item(item):
                return None
        for item in types[0].items:
            acc = sum_item_type(acc, item, loc)
            if acc is None:
                return None
        return acc

    def llower(self, L, fn, vals, rtype):
        (v, vt) = vals[0]
        acc, acc_t = vals[1] if len(vals) > 1 else (ll.Constant(T.I64, 0), T.INT)
        for k, item in enumerate(vt.items):
            new_t = sum_item_type(acc_t, item, L.loc)
            acc = add_items(L, acc, acc_t, L.b.extract_value(v, k), item, new_t)
            acc_t = new_t
        return S.convert(L, acc, acc_t, rtype)


def _tuple_to_sum(types):
    """A tuple ``sum`` reads item by item: empty, or holding an array."""
    return bool(types) and T.plain_tuple(types[0]) and (
        not types[0].items or any(isinstance(t, T.Array) for t in types[0].items))


class SumJvp(ListOp):
    """``sum_builtin_jvp(t, ans)``: the sum of the items' tangents, as ``ans``'s type."""

    def ltype(self, fn, types, loc):
        return types[1] if is_item(types[1]) else None

    def llower(self, L, fn, vals, rtype):
        start = (L.const(0, T.INT), T.INT)
        return Sum(None).llower(L, builtins.sum, [vals[0], start], rtype)


class Extreme(ListOp):
    """Python's ``max(items)``/``min(items)`` of a list of numbers or a 1-D array, as the
    builtin runs: the first item, replaced by each later one that compares greater (less)
    -- so a nan first stays, a nan later is passed over, the first of tied items wins --
    and ``ValueError`` ("max() iterable argument is empty") when there is none."""

    def ltype(self, fn, types, loc):
        if len(types) == 1 and (Li.holds_arrays(types[0]) if is_list(types[0])
                                else types[0].ndim != 1):
            raise UnsupportedSyntaxError(
                f"jit: {fn.__name__}() of a {types[0]} (Python compares the arrays, an "
                "ambiguous truth value)", loc)
        if len(types) != 1:
            return None
        return Li.elem_of(types[0]) if is_list(types[0]) else types[0].elem

    def llower(self, L, fn, vals, rtype):
        b = L.b
        view, at = Li.as_array(L, *vals[0]) if is_list(vals[0][1]) else vals[0]
        which = "max" if fn in (rt.max_of, builtins.max) else "min"
        L.check(b.icmp_signed("==", A.shape_of(L, view, 0), A.ZERO), ValueError,
                f"{which}() iterable argument is empty")
        first = A.element(L, view, at, [A.ZERO])

        def keep_or_take(best, x):
            better = S.compare(L, ">" if which == "max" else "<", x, best, at.elem)
            return b.select(better, x, best)

        return A.reduce_all(L, view, at, keep_or_take, first, at.elem)


class TupleExtreme(ListOp):
    """Python's ``max(a, b, c)``/``min(...)`` of numbers (``max`` of a tuple display): the
    first item, replaced by each later one that compares greater (less), as the builtin
    scans; the items promoted to one number type (a compiled value has one type)."""

    def ltype(self, fn, types, loc):
        items = types[0].items
        if len(types) != 1 or not items or not all(
                isinstance(t, T.Scalar) and t.dtype != "c16" for t in items):
            return None
        out = items[0]
        for t in items[1:]:
            out = T.promote(out, t)
        return out

    def llower(self, L, fn, vals, rtype):
        b = L.b
        (v, vt) = vals[0]
        greater = fn in (rt.max_of, builtins.max)
        best = S.convert(L, b.extract_value(v, 0), vt.items[0], rtype)
        for k, t in enumerate(vt.items[1:], start=1):
            x = S.convert(L, b.extract_value(v, k), t, rtype)
            better = S.compare(L, ">" if greater else "<", x, best, rtype)
            best = b.select(better, x, best)
        return best


class ArrayView(ListOp):
    """A numpy function of a list: the list read as a 1-D array (``np.array`` copies it;
    ``sum_vjp``/``mean_vjp`` of a list give a list)."""

    keywords = True  # handed to the numpy function's handler (np.mean(l, axis=None))

    def __init__(self, when, copy=False, to_list=False):
        super().__init__(when)
        self.copy, self.to_list = copy, to_list

    def _types(self, types):
        return [Li.array_type(t) if is_list(t) else t for t in types]

    def ltype(self, fn, types, loc):
        if self.copy:
            return None if self.kw else Li.array_type(types[0])
        inner = self.inner
        if inner is None:
            return None
        t = inner.type(fn, self._types(types), self.kw, loc, *self.atoms)
        if self.to_list and isinstance(t, T.Array) and t.ndim >= 1:
            return Li.rows_type(t)
        return t

    def llower(self, L, fn, vals, rtype):
        lists = [t for _, t in vals if is_list(t)]
        vals = [Li.as_array(L, v, t) if is_list(t) else (v, t) for v, t in vals]
        if self.copy:
            return vals[0][0] if Li.holds_arrays(lists[0]) else A.copy(L, *vals[0])
        if self.to_list:
            at = Li.array_type(rtype)
            out = self.inner.lower(L, fn, vals, self.kw, at)
            return Li.from_array(L, out, at, rtype)
        return self.inner.lower(L, fn, vals, self.kw, rtype)


overload_lists(Display, rt.make_list, lambda types: True)
overload_lists(DisplayAppend, rt.list_append, grows_as_display)
overload_lists(Append, rt.list_append, lambda ts: listish(ts[0]) is not None)
overload_lists(Extend, rt.list_extend, lambda ts: is_list(ts[0]) or is_list(ts[1]))
overload_lists(Extend, rt.seq_concat, lambda ts: is_list(ts[0]) or is_list(ts[1]))
overload_lists(Insert, rt.list_insert, lambda ts: listish(ts[0]) is not None)
overload_lists(Remove, rt.list_remove, lambda ts: growable(ts[0]))
overload_lists(SetItem, rt.list_set, lambda ts: listish(ts[0]) is not None)
for _fn in (rt.item_index, rt.insert_index):
    overload_lists(Position, _fn, lambda ts: growable(ts[0]))
overload_lists(GetItem, operator.getitem, list_at(0))
overload_lists(Length, len, list_at(0))
overload_lists(Length, rt.batch_len, list_at(0))  # a list of batched items: its own length
overload_lists(Same, rt.sequence, list_at(0))
overload_lists(ListOfArray, list, lambda ts: len(ts) == 1 and isinstance(ts[0], T.Array)
               and ts[0].ndim >= 1)
overload_lists(ReversedItems, rt.reversed_items,
               lambda ts: len(ts) == 1 and isinstance(ts[0], T.Array) and ts[0].ndim >= 1)
overload_lists(Sum, builtins.sum, list_at(0))
overload_lists(TupleSum, builtins.sum, _tuple_to_sum)
overload_lists(ArraySum, builtins.sum,
               lambda ts: bool(ts) and isinstance(ts[0], T.Array) and ts[0].ndim >= 1)
overload_lists(SumJvp, rt.sum_builtin_jvp, list_at(0))
for _fn in (rt.max_of, rt.min_of, builtins.max, builtins.min):
    overload_lists(Extreme, _fn, lambda ts: len(ts) == 1 and (
        is_list(ts[0]) or isinstance(ts[0], T.Array) and ts[0].ndim >= 1))
for _fn in (rt.max_of, rt.min_of):
    overload_lists(TupleExtreme, _fn, lambda ts: len(ts) == 1 and T.plain_tuple(ts[0]))
for _fn in (np.array, np.asarray):
    overload_lists(ArrayView, _fn, lambda ts: len(ts) == 1 and is_list(ts[0]), True)
for _fn in (np.sum, np.mean, np.average, np.max, np.min, np.amax, np.amin, np.prod, np.shape,
            np.size, np.ndim, np.dot):
    overload_lists(ArrayView, _fn, lambda ts: any(map(is_list, ts)))
for _fn in (rt.sum_vjp, rt.mean_vjp):
    overload_lists(ArrayView, _fn, list_at(1), False, True)

from ..derivs import lists as derivs_lists  # noqa: E402,F401  (their cotangents and tangents)
