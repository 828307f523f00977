"""Batched indexing in LLVM IR, for ``jit(vmap(f))``: in-place writes and reads whose
index differs per example, as a loop over the examples (``s2s_runtime.batching``).

* ``batch_setitem(x, index, value, index_batched, value_batched[, mask])``: for each
  example ``k`` (only those with ``mask[k]``, when a mask is given),
  ``x[k][index_k] = value_k`` -- ``index_k`` is the index with each batched part (a
  vector of integers over the batch) read at ``k``, ``value_k`` is ``value[k]`` when
  batched, else ``value``; the write follows unbatched indexing (ints and slices,
  negative indices wrap, bounds checked unless ``boundscheck=False``, the value
  broadcast to the slot).  ``x`` is an array of rank >= 2 (the batch and an axis);
* ``batch_gather(x, index, x_batched, True)``: ``out[k] = x_k[index_k]`` (``x_k`` is
  ``x[k]`` when batched) into a new array ``(n,) + slot shape``; a batched integer is
  clamped into ``[-d, d - 1]`` first, as the Python helper does (examples a masked
  loop has finished still compute their reads);
* ``batch_gather_vjp(g, x, index, x_batched, True)`` (its cotangent): ``g[k]`` added at
  ``index_k`` of example ``k`` of zeros like ``x`` (of the zeros themselves when ``x`` is
  the same for every example);
* ``batch_example(x, k)``: example ``k`` of batched ``x``, row ``k`` of the array (a view;
  a number for a vector) or of every array a tuple or list display holds (its ``None``
  items kept).

Index parts: ints, slices, ``...`` and ``None`` and, for the batched parts, int64 vectors
(an integer per example) or, in ``batch_gather`` and ``batch_check_index``, int64 arrays of
two axes or more (an integer array per example: numpy's advanced indexing of each
example, ``values/fancy.py``, ``np.take(fp, hi)`` in ``np.interp``'s derivative); anything
else (boolean masks, fancy indices of writes) is refused by the call table with the types.
"""
from __future__ import annotations

import s2s_runtime as rt
from llvmlite import ir as ll

from ..values import abi
from ..values import arrays as A
from ..values import fancy as F
from ..values import lists as Li
from ..typing import types as T
from ..ops.calls import register
from ..ops.arrays import index_types, view_ndim


def _is_tuple_index(t) -> bool:
    """Whether an index type is a tuple of parts (one per axis); a list display ``[i, 0]``
    is one advanced index, though its type lays it out as a tuple."""
    return isinstance(t, T.Tuple) and not isinstance(t, T.ListLiteral)


def _items(t):
    return list(t.items) if _is_tuple_index(t) else [t]


def _per_example_index(index_t, batched, arrays=False):
    """The per-example type of the index (batched parts: int64 vectors -> ints, a list
    display of them (one advanced index, ``[i, 0]``) -> a list display of ints; with
    ``arrays``, int64 arrays of rank ``r >= 2`` -> int64 arrays of rank ``r - 1``, an
    advanced index whose result type ``values/fancy.result_type`` gives)."""
    items = []
    for t in _items(index_t):
        if batched and isinstance(t, T.Array):
            if t.dtype != "i8" or t.ndim != 1 and not arrays:
                return None
            items.append(T.INT if t.ndim == 1 else T.Array("i8", t.ndim - 1))
        elif batched and isinstance(t, T.ListLiteral) and t.items and all(
                isinstance(i, T.Array) and i.dtype == "i8" and i.ndim == 1 for i in t.items):
            items.append(T.ListLiteral((T.INT,) * len(t.items)))  # [i, 0]: integers
        else:
            items.append(t)
    out = T.Tuple(tuple(items)) if _is_tuple_index(index_t) else items[0]
    if any(isinstance(t, (T.Array, T.ListLiteral)) for t in items):
        return out
    return out if index_types(out, views=True) is not None else None


def _flags(atoms):
    vals = [getattr(a, "value", None) for a in atoms]
    return vals if all(isinstance(v, bool) for v in vals) else None


def _example(L, v, t, k, batched):
    """``v[k]`` (a view, or an element) when batched, else ``v``."""
    return A.first_axis_item(L, v, t, k) if batched else (v, t)


def _batch_count(L, idx, it):
    """The number of examples: the first axis of the index's first batched part (an array,
    or the first item of a list display of them), None where no part is batched."""
    b = L.b
    parts = [(b.extract_value(idx, j), t) for j, t in enumerate(it.items)] \
        if _is_tuple_index(it) else [(idx, it)]
    for p, pt in parts:
        if isinstance(pt, T.ListLiteral) and pt.items and isinstance(pt.items[0], T.Array):
            p, pt = b.extract_value(p, 0), pt.items[0]
        if isinstance(pt, T.Array):
            return A.shape_of(L, p, 0)
    return None


def _clamped(L, p, d):
    """Integer ``p`` clamped into ``[-d, d - 1]``."""
    b = L.b
    p = b.select(b.icmp_signed("<", p, b.neg(d)), b.neg(d), p)
    last = b.sub(d, A.ONE)
    return b.select(b.icmp_signed(">", p, last), last, p)


def _index_at(L, idx, it, et, k, batched, dims=None, temps=None):
    """The index of example ``k`` (of type ``et``); ``dims``: clamp batched ints to them
    (an integer array per example: a clamped copy, appended to ``temps`` for the caller to
    release; a list display of integers per example: each clamped); ``k`` None: every
    batched int 0 and every batched array example 0's view (an index for the slot's
    shape, read from no array)."""
    b = L.b
    if not batched:
        return idx
    parts = [b.extract_value(idx, j) for j in range(len(it.items))] \
        if _is_tuple_index(it) else [idx]
    out = []
    for j, (p, pt) in enumerate(zip(parts, _items(it))):
        if isinstance(pt, T.Array) and pt.ndim >= 2:  # an integer array per example
            p, row_t = A.first_axis_item(L, p, pt, A.ZERO if k is None else k)
            if dims is not None and k is not None:
                p = A.elementwise(L, lambda vs, d=dims[j]: (_clamped(L, vs[0][0], d), T.INT),
                                  [(p, row_t)], "i8")
                temps.append((p, row_t))
        elif isinstance(pt, T.Array):
            p = A.ZERO if k is None else A.first_axis_item(L, p, pt, k)[0]
            if dims is not None:
                p = _clamped(L, p, dims[j])
        elif isinstance(pt, T.ListLiteral) and isinstance(et, (T.Tuple, T.ListLiteral)) and \
                isinstance(_items(et)[j], T.ListLiteral) and pt != _items(et)[j]:
            row = ll.Constant(_items(et)[j].llvm(), None)
            for m, item_t in enumerate(pt.items):
                v = A.ZERO if k is None else A.first_axis_item(
                    L, b.extract_value(p, m), item_t, k)[0]
                row = b.insert_value(row, v if dims is None else _clamped(L, v, dims[j]), m)
            p = row
        out.append(p)
    if not _is_tuple_index(et):
        return out[0]
    value = ll.Constant(et.llvm(), None)
    for j, p in enumerate(out):
        value = b.insert_value(value, p, j)
    return value


class BatchSetitem:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) not in (5, 6) or _flags(atoms[3:5]) is None:
            return None
        x, index, value = types[:3]
        index_b, value_b = _flags(atoms[3:5])
        if not isinstance(x, T.Array) or x.ndim < 2:
            return None
        et = _per_example_index(index, index_b)
        if et is None or len(_items(et)) > x.ndim - 1:
            return None
        if F.is_advanced(et) and F.result_type(T.Array(x.dtype, x.ndim - 1), et) is None:
            return None  # (an advanced index the compiled scatter does not lay out)
        if value_b and not (isinstance(value, T.Array) and value.ndim >= 1) or \
                not isinstance(value, (T.Array, T.Scalar)):
            return None
        if len(types) == 6 and types[5] != T.Array("b1", 1):
            return None
        return T.NONE

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        (x, xt), (idx, it), (v, vt) = vals[:3]
        index_b, value_b = (a.value for a in L.call_atoms[0][3:5])
        et = _per_example_index(it, index_b)
        mask = vals[5] if len(vals) == 6 else None

        def write(k):
            xk, xkt = A.first_axis_item(L, x, xt, k)
            vk, vkt = _example(L, v, vt, k, value_b)
            A.setitem(L, xk, xkt, _index_at(L, idx, it, et, k, index_b), et, vk, vkt)

        def example(k):
            if mask is None:
                write(k)
                return
            with b.if_then(A.first_axis_item(L, mask[0], mask[1], k)[0]):
                write(k)

        A.loop(L, A.shape_of(L, x, 0), example)
        return ll.Constant(T.NONE.llvm(), None)


class BatchGather:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        flags = _flags(atoms[2:4])
        if kw or len(types) != 4 or flags is None or flags[1] is not True:
            return None
        x, index = types[:2]
        if not isinstance(x, T.Array):
            return None
        per = x.ndim - flags[0]
        et = _per_example_index(index, True, arrays=True)
        if et is None or len(_items(et)) > per:
            return None
        if F.is_advanced(et):
            read = F.result_type(T.Array(x.dtype, per), et)
            return None if read is None else T.Array(x.dtype, read.ndim + 1)
        kept = view_ndim(T.Array(x.dtype, per), et)
        return None if kept is None else T.Array(x.dtype, kept + 1)

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        (x, xt), (idx, it) = vals[:2]
        x_b = L.call_atoms[0][2].value
        et = _per_example_index(it, True, arrays=True)
        n = _batch_count(L, idx, it)
        if x_b:
            L.check(b.icmp_signed("!=", A.shape_of(L, x, 0), n), ValueError,
                    "vmap: an index over {0} examples into an array of {1}",
                    (n, A.shape_of(L, x, 0)))
        per_t = T.Array(xt.dtype, xt.ndim - x_b)
        dims = A.shape_list(L, x, xt)[x_b:]
        checks, L.boundscheck = L.boundscheck, False  # the slot's shape: slices and dims only
        try:
            first = _example(L, x, xt, A.ZERO, x_b)[0]
            if F.is_advanced(et):  # (the places' shape: the index arrays' shapes only)
                selection = F.Selection(L, first, per_t, _index_at(L, idx, it, et, None, True),
                                        et)
                shape = selection.shape()
                selection.done()
            else:
                parts = A.index_parts(L, _index_at(L, idx, it, et, None, True), et)
                _, shape, _ = A.view(L, first, per_t, parts)
        finally:
            L.boundscheck = checks
        out = A.allocate(L, rtype, [n] + shape)

        def example(k):
            xk, xkt = _example(L, x, xt, k, x_b)
            temps = []
            ik = _index_at(L, idx, it, et, k, True, dims, temps)
            value, vt = A.getitem(L, xk, xkt, ik, et)
            if F.is_advanced(et):  # (a gathered copy)
                temps.append((value, vt))
            ok, okt = A.first_axis_item(L, out, rtype, k)
            if isinstance(okt, T.Array):
                A.elementwise(L, lambda vs: vs[0], [(value, vt)], rtype.dtype, out=(ok, okt))
            else:
                ptr = A.element_ptr(L, b.extract_value(out, 0), A.strides_list(L, out, rtype),
                                    [k], rtype.elem)
                A.store(L, value, ptr, rtype.elem)
            for temp in temps:
                abi.release(L, *temp)

        A.loop(L, n, example)
        return out


class BatchGatherVjp:
    """``batch_gather_vjp(g, x, index, x_batched, True)``: zeros like ``x`` with example
    ``k``'s cotangent ``g[k]`` added at ``index_k`` of example ``k`` (of ``x`` itself when
    ``x`` is the same for every example: the examples' cotangents add up), the batched
    integers clamped into ``[-d, d - 1]`` and wrapped as in the gather; an integer array
    per example adds at every place it names (repeated places accumulate, ``np.add.at``)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        flags = _flags(atoms[3:5])
        if kw or len(types) != 5 or flags is None or flags[1] is not True:
            return None
        g, x, index = types[:3]
        if not (isinstance(x, T.Array) and isinstance(g, T.Array) and g.ndim >= 1):
            return None
        per = x.ndim - flags[0]
        et = _per_example_index(index, True, arrays=True)
        if et is None or len(_items(et)) > per or \
                F.is_advanced(et) and F.result_type(T.Array(x.dtype, per), et) is None:
            return None
        codes = {x.dtype, g.dtype}
        return T.Array("c16" if "c16" in codes else ("f4" if codes == {"f4"} else "f8"),
                       x.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        from ..values import scalars as S
        b = L.b
        (g, gt), (x, xt), (idx, it) = vals[:3]
        x_b = L.call_atoms[0][3].value
        et = _per_example_index(it, True, arrays=True)
        n = A.shape_of(L, g, 0)
        if x_b:
            L.check(b.icmp_signed("!=", A.shape_of(L, x, 0), n), ValueError,
                    "vmap: an index over {0} examples into an array of {1}",
                    (n, A.shape_of(L, x, 0)))
        out = A.allocate(L, rtype, A.shape_list(L, x, xt), zeroed=True)
        dims = A.shape_list(L, x, xt)[x_b:]
        slot_t = T.Array(rtype.dtype, xt.ndim - x_b)

        def example(k):
            ok, okt = A.first_axis_item(L, out, rtype, k) if x_b else (out, slot_t)
            gk, gkt = A.first_axis_item(L, g, gt, k)
            temps = []
            ik = _index_at(L, idx, it, et, k, True, dims, temps)
            if F.is_advanced(et):
                F.scatter(L, ok, okt, ik, et, gk, gkt, "add")
            else:
                old, old_t = A.getitem(L, ok, okt, ik, et)
                if isinstance(old_t, T.Array):
                    total = A.elementwise(L, lambda vs: (S.binary(
                        L, "add", vs[0][0], S.convert(L, vs[1][0], vs[1][1], old_t.elem),
                        old_t.elem), old_t.elem), [(old, old_t), (gk, gkt)], old_t.dtype)
                    temps.append((total, old_t))
                else:
                    total = S.binary(L, "add", old, S.convert(L, gk, gkt, old_t), old_t)
                A.setitem(L, ok, okt, ik, et, total, old_t)
            for temp in temps:
                abi.release(L, *temp)

        A.loop(L, n, example)
        return out


class BatchExample:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not (isinstance(types[1], T.Scalar)
                                          and types[1].dtype == "i8"):
            return None
        return self._example(types[0])

    def _example(self, t):
        if isinstance(t, T.Array):
            return None if t.ndim < 1 else T.Array(t.dtype, t.ndim - 1) if t.ndim > 1 else t.elem
        if isinstance(t, T.NoneType):  # (no leaf)
            return t
        if isinstance(t, T.List) and isinstance(t.elem, T.Array):  # a list of batched items
            item = self._example(t.elem)
            return None if item is None else T.List(item)
        if type(t) in (T.Tuple, T.ListLiteral) and t.items:
            items = tuple(map(self._example, t.items))
            return None if None in items else type(t)(items)
        return None

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), (k, _) = vals
        return self._row(L, x, xt, k)

    def _row(self, L, x, xt, k):
        if isinstance(xt, T.Array):
            return A.getitem(L, x, xt, k, T.INT)[0]
        if isinstance(xt, T.NoneType):
            return x
        if isinstance(xt, T.List):  # example k's list: row k of every item (a new list)
            data, _, n = Li.fields(L, x)
            out_t = self._example(xt)
            return Li.fresh(L, out_t, n, Li.room(L, n), lambda i: (
                self._row(L, Li.load(L, data, i, xt), xt.elem, k), out_t.elem))
        out = ll.Constant(self._example(xt).llvm(), None)
        for j, item in enumerate(xt.items):
            out = L.b.insert_value(out, self._row(L, L.b.extract_value(x, j), item, k), j)
        return out


register(BatchExample(), rt.batch_example)
register(BatchSetitem(), rt.batch_setitem)
register(BatchGather(), rt.batch_gather)
register(BatchGatherVjp(), rt.batch_gather_vjp)


class BatchReadChecked:
    """``batch_read_checked(y, index, where)`` where each example reads a number: a copy
    of ``y[:, index]`` (a read of a view is refused here, as Python raises for it)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 3 or not isinstance(types[0], T.Array):
            return None
        et = _per_example_index(types[1], False)
        if et is None or len(_items(et)) != types[0].ndim - 1 or \
                any(p != "int" for p in index_types(et)):
            return None
        return T.Array(types[0].dtype, 1)

    def lower(self, L, fn, vals, kw, rtype):
        (y, yt), (idx, it) = vals[:2]
        view, vt = A.getitem(L, y, yt, _batch_index(L, idx, it), _batch_index_type(it))
        return A.copy(L, view, vt)


def _batch_index_type(it):
    return T.Tuple((T.Slice((False, False, False)),) + tuple(_items(it)))


def _batch_index(L, idx, it):
    """``(slice(None),) + index``: the same index in every example."""
    from .axes import BatchIndex
    return BatchIndex().lower(L, None, [(None, None), (idx, it)], {}, _batch_index_type(it))


class BatchIndexSetVjpValue:
    """``batch_index_set_vjp_value(g, index, v, True, v_batched)``: ``g[:, index]`` summed
    to each example's ``v`` (a basic index: ints, slices, new axes and ``...``)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        flags = _flags(atoms[3:5])
        if kw or len(types) != 5 or flags is None or not flags[0] or \
                not isinstance(types[0], T.Array):
            return None
        read = self._read_type(types[0], types[1])
        from .per_example import BatchUnbroadcast
        return None if read is None else BatchUnbroadcast.type_of(read, types[2], flags[1], loc)

    @staticmethod
    def _read_type(g, index):
        if _whole(index):
            return g
        et = _per_example_index(index, False)
        if et is None:
            return None
        kept = view_ndim(T.Array(g.dtype, g.ndim - 1), et)  # (a basic index: ints, slices,
        return None if kept is None else T.Array(g.dtype, kept + 1)  # None and ...)

    def lower(self, L, fn, vals, kw, rtype):
        from .per_example import BatchUnbroadcast
        (g, gt), (idx, it), v = vals[:3]
        read = (g, gt) if _whole(it) else \
            A.getitem(L, g, gt, _batch_index(L, idx, it), _batch_index_type(it))
        return BatchUnbroadcast.sum_to(L, read, v, L.call_atoms[0][4].value, rtype)


class BatchIndexSet:
    """``batch_index_set(y, index, v, y_batched, v_batched, n[, copy])``: ``batch_setitem``
    on ``y`` (a copy first when ``copy``; ``y`` the same for every example: lifted to ``n``
    examples first, a new array), returning it; for the index ``...`` (``y`` batched),
    ``y[...] = v`` (``v`` aligned with ``y`` example by example, or one example
    broadcast)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        flags = _flags(list(atoms[3:5]) + list(atoms[6:7]))
        if kw or len(types) not in (6, 7) or flags is None:
            return None
        if not flags[0]:  # y the same for every example: lifted (a new array), then set
            if not isinstance(types[0], T.Array) or _whole(types[1]):
                return None
            lifted = T.Array(types[0].dtype, types[0].ndim + 1)
            ok = BatchSetitem().type(fn, [lifted] + types[1:3] + [T.BOOL, T.BOOL], {}, loc,
                                     [atoms[0], atoms[1], atoms[2], _Const(False), atoms[4]])
            return lifted if ok is not None else None
        if _whole(types[1]):  # y[...] = v: v (aligned with y, or one example) broadcast
            ok = isinstance(types[0], T.Array) and isinstance(types[2], (T.Array, T.Scalar)) \
                and getattr(types[2], "ndim", 0) <= types[0].ndim
            return types[0] if ok else None
        ok = BatchSetitem().type(fn, types[:3] + [T.BOOL, T.BOOL], {}, loc,
                                 [atoms[0], atoms[1], atoms[2], _Const(False), atoms[4]])
        return types[0] if ok is not None else None

    def lower(self, L, fn, vals, kw, rtype):
        atoms = L.call_atoms[0]
        y = vals[0]
        if not atoms[3].value:
            from .axes import BatchLift
            y = (BatchLift().lower(L, rt.batch_lift, [y, vals[5]], {}, rtype), rtype)
        elif len(atoms) == 7 and atoms[6].value:
            y = (A.copy(L, *y), y[1])
        if _whole(vals[1][1]):
            A.setitem(L, y[0], y[1], vals[1][0], vals[1][1], *vals[2])
            return y[0]
        L.call_atoms = ((atoms[0], atoms[1], atoms[2], _Const(False), atoms[4]), {})
        BatchSetitem().lower(L, fn, [y] + list(vals[1:3]), {}, T.NONE)
        return y[0]


def _whole(index_t) -> bool:
    """Whether an index is ``...`` alone (the whole array, every example)."""
    return isinstance(index_t, T.Static) and index_t.value is Ellipsis


class _Const:
    def __init__(self, value):
        self.value = value


register(BatchReadChecked(), rt.batch_read_checked)
register(BatchIndexSetVjpValue(), rt.batch_index_set_vjp_value)
register(BatchIndexSet(), rt.batch_index_set)


class BatchCheckIndex:
    """``batch_check_index(x, index, x_batched[, active])``: ``IndexError`` where an
    integer index part is out of range (below ``-d`` or at least ``d``) in an example
    that runs the access (``active[k]``, a boolean vector; every example without it).
    Nothing is checked under ``boundscheck=False``."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) not in (3, 4) or _flags(atoms[2:3]) is None:
            return None
        x, index = types[:2]
        if not isinstance(x, T.Array) or _per_example_index(index, True, arrays=True) is None:
            return None
        if len(types) == 4 and types[3] != T.Array("b1", 1):
            return None
        return T.NONE

    def lower(self, L, fn, vals, kw, rtype):
        none = ll.Constant(T.NONE.llvm(), None)
        if not L.boundscheck:
            return none
        b = L.b
        (x, xt), (idx, it) = vals[:2]
        x_b = L.call_atoms[0][2].value
        active = vals[3] if len(vals) == 4 else None
        parts = [(b.extract_value(idx, j), t) for j, t in enumerate(it.items)] \
            if _is_tuple_index(it) else [(idx, it)]
        dims = A.shape_list(L, x, xt)[x_b:]
        n = _batch_count(L, idx, it)
        if n is None:
            return none

        def example(k):
            def one(p, axis, d):
                bad = b.or_(b.icmp_signed("<", p, b.neg(d)), b.icmp_signed(">=", p, d))
                L.check(bad, IndexError, f"index {{0}} is out of bounds for axis {axis} "
                        "with size {1} (example {2} of the vmap batch)", (p, d, k))

            def check():
                for axis, ((p, pt), d) in enumerate(zip(parts, dims)):
                    if isinstance(pt, T.ListLiteral):  # [i, 0]: an integer per item
                        for m, item_t in enumerate(pt.items):
                            if isinstance(item_t, T.Array):
                                one(A.first_axis_item(L, b.extract_value(p, m), item_t, k)[0],
                                    axis, d)
                        continue
                    if isinstance(pt, T.Array) and pt.ndim >= 2:  # an array per example
                        row, row_t = A.first_axis_item(L, p, pt, k)
                        A.loop_nest(L, A.shape_list(L, row, row_t), lambda pos, row=row,
                                    row_t=row_t, axis=axis, d=d: one(
                                        A.element(L, row, row_t, pos), axis, d))
                        continue
                    if isinstance(pt, T.Array):
                        p = A.first_axis_item(L, p, pt, k)[0]
                    elif not (isinstance(pt, T.Scalar) and pt.dtype in ("i8", "b1")):
                        continue  # a slice
                    if isinstance(pt, T.Scalar) and pt.dtype == "b1":
                        continue
                    one(p, axis, d)
            if active is None:
                check()
                return
            with b.if_then(A.first_axis_item(L, active[0], active[1], k)[0]):
                check()

        A.loop(L, n, example)
        return none


register(BatchCheckIndex(), rt.batch_check_index)
