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
* ``batch_gather_vjp(g, x, index, True, True)`` (its cotangent, ``x`` of rank 2, one
  batched integer): ``g[k]`` added at ``index_k`` of example ``k`` of zeros like ``x``;
* ``batch_example(x, k)``: example ``k`` of batched ``x``, row ``k`` of the array (a view;
  a number for a vector) or of every array a tuple or list display holds (its ``None``
  items kept).

Index parts: ints, slices, ``...`` and ``None`` and, for the batched parts, int64 vectors;
anything else (boolean masks, fancy indices) is refused by the call table with the types.
"""
from __future__ import annotations

import s2s_runtime as rt
from llvmlite import ir as ll

from ..values import arrays as A
from ..typing import types as T
from ..ops.calls import register
from ..ops.arrays import index_types


def _items(t):
    return list(t.items) if isinstance(t, T.Tuple) else [t]


def _per_example_index(index_t, batched):
    """The per-example type of the index (batched parts: int64 vectors -> ints)."""
    items = []
    for t in _items(index_t):
        if batched and isinstance(t, T.Array):
            if t.ndim != 1 or t.dtype != "i8":
                return None
            items.append(T.INT)
        else:
            items.append(t)
    out = T.Tuple(tuple(items)) if isinstance(index_t, T.Tuple) else items[0]
    return out if index_types(out, views=True) is not None else None


def _flags(atoms):
    vals = [getattr(a, "value", None) for a in atoms]
    return vals if all(isinstance(v, bool) for v in vals) else None


def _example(L, v, t, k, batched):
    """``v[k]`` (a view, or an element) when batched, else ``v``."""
    return A.first_axis_item(L, v, t, k) if batched else (v, t)


def _index_at(L, idx, it, et, k, batched, dims=None):
    """The index of example ``k`` (of type ``et``); ``dims``: clamp batched ints to them;
    ``k`` None: every batched int 0 (an index for the slot's shape, read from no array)."""
    b = L.b
    if not batched:
        return idx
    parts = [b.extract_value(idx, j) for j in range(len(it.items))] \
        if isinstance(it, T.Tuple) else [idx]
    out = []
    for j, (p, pt) in enumerate(zip(parts, _items(it))):
        if isinstance(pt, T.Array):
            p = A.ZERO if k is None else A.first_axis_item(L, p, pt, k)[0]
            if dims is not None:
                d = dims[j]
                p = b.select(b.icmp_signed("<", p, b.neg(d)), b.neg(d), p)
                last = b.sub(d, A.ONE)
                p = b.select(b.icmp_signed(">", p, last), last, p)
        out.append(p)
    if not isinstance(et, T.Tuple):
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
        et = _per_example_index(index, True)
        if et is None or len(_items(et)) > per:
            return None
        kept = per - sum(1 for p in index_types(et) if p == "int")
        return T.Array(x.dtype, kept + 1)

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        (x, xt), (idx, it) = vals[:2]
        x_b = L.call_atoms[0][2].value
        et = _per_example_index(it, True)
        n = next(A.shape_of(L, p, 0) for p, pt in
                 ([(b.extract_value(idx, j), t) for j, t in enumerate(it.items)]
                  if isinstance(it, T.Tuple) else [(idx, it)]) if isinstance(pt, T.Array))
        if x_b:
            L.check(b.icmp_signed("!=", A.shape_of(L, x, 0), n), ValueError,
                    "vmap: an index over {0} examples into an array of {1}",
                    (n, A.shape_of(L, x, 0)))
        per_t = T.Array(xt.dtype, xt.ndim - x_b)
        dims = A.shape_list(L, x, xt)[x_b:]
        checks, L.boundscheck = L.boundscheck, False  # the slot's shape: slices and dims only
        try:
            first = _example(L, x, xt, A.ZERO, x_b)[0]
            parts = A.index_parts(L, _index_at(L, idx, it, et, None, True), et)
            _, shape, _ = A.view(L, first, per_t, parts)
        finally:
            L.boundscheck = checks
        out = A.allocate(L, rtype, [n] + shape)

        def example(k):
            xk, xkt = _example(L, x, xt, k, x_b)
            ik = _index_at(L, idx, it, et, k, True, dims)
            value, vt = A.getitem(L, xk, xkt, ik, et)
            ok, okt = A.first_axis_item(L, out, rtype, k)
            if isinstance(okt, T.Array):
                A.elementwise(L, lambda vs: vs[0], [(value, vt)], rtype.dtype, out=(ok, okt))
            else:
                ptr = A.element_ptr(L, b.extract_value(out, 0), A.strides_list(L, out, rtype),
                                    [k], rtype.elem)
                A.store(L, value, ptr, rtype.elem)

        A.loop(L, n, example)
        return out


class BatchGatherVjp:
    """``batch_gather_vjp(g, x, index, True, True)`` for a batched ``x`` of rank 2 and one
    batched integer per example: zeros like ``x`` with ``out[k, index_k] += g[k]``, the
    index clamped into ``[-d, d - 1]`` and wrapped as in the gather."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 5 or _flags(atoms[3:5]) != [True, True]:
            return None
        g, x, index = types[:3]
        if not (isinstance(x, T.Array) and x.ndim == 2 and isinstance(g, T.Array)
                and g.ndim == 1 and isinstance(index, T.Array) and index.ndim == 1
                and index.dtype == "i8"):
            return None
        codes = {x.dtype, g.dtype}
        return T.Array("c16" if "c16" in codes else ("f4" if codes == {"f4"} else "f8"), 2)

    def lower(self, L, fn, vals, kw, rtype):
        from ..values import scalars as S
        b = L.b
        (g, gt), (x, xt), (idx, it) = vals[:3]
        n, d = A.shape_of(L, x, 0), A.shape_of(L, x, 1)
        L.check(b.icmp_signed("!=", A.shape_of(L, idx, 0), n), ValueError,
                "vmap: an index over {0} examples into an array of {1}",
                (A.shape_of(L, idx, 0), n))
        out = A.allocate(L, rtype, [n, d], zeroed=True)
        data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)
        et = rtype.elem

        def example(k):
            i = A.element(L, idx, it, [k])
            low, high = b.neg(d), b.sub(d, A.ONE)
            i = b.select(b.icmp_signed("<", i, low), low, i)
            i = b.select(b.icmp_signed(">", i, high), high, i)
            i = b.select(b.icmp_signed("<", i, A.ZERO), b.add(i, d), i)
            ptr = A.element_ptr(L, data, strides, [k, i], et)
            gv = S.convert(L, A.element(L, g, gt, [k]), gt.elem, et)
            A.store(L, S.binary(L, "add", A.load(L, ptr, et), gv, et), ptr, et)

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
    to each example's ``v`` (an index of ints and slices, or ``...``: all of ``g``)."""

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
        if et is None or len(_items(et)) > g.ndim - 1:
            return None
        kept = g.ndim - sum(1 for p in index_types(et) if p == "int")
        return T.Array(g.dtype, kept)

    def lower(self, L, fn, vals, kw, rtype):
        from .per_example import BatchUnbroadcast
        (g, gt), (idx, it), v = vals[:3]
        read = (g, gt) if _whole(it) else \
            A.getitem(L, g, gt, _batch_index(L, idx, it), _batch_index_type(it))
        return BatchUnbroadcast.sum_to(L, read, v, L.call_atoms[0][4].value, rtype)


class BatchIndexSet:
    """``batch_index_set(y, index, v, True, v_batched, n[, copy])``: ``batch_setitem`` on
    ``y`` (a copy first when ``copy``), returning it; for the index ``...``, ``y[...] = v``
    (``v`` aligned with ``y`` example by example, or one example broadcast)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        flags = _flags(list(atoms[3:5]) + list(atoms[6:7]))
        if kw or len(types) not in (6, 7) or flags is None or not flags[0]:
            return None
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
        if len(atoms) == 7 and atoms[6].value:
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
        if not isinstance(x, T.Array) or _per_example_index(index, True) is None:
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
            if isinstance(it, T.Tuple) else [(idx, it)]
        dims = A.shape_list(L, x, xt)[x_b:]
        batched = [(p, pt) for p, pt in parts if isinstance(pt, T.Array)]
        if not batched:
            return none
        n = A.shape_of(L, batched[0][0], 0)

        def example(k):
            def check():
                for axis, ((p, pt), d) in enumerate(zip(parts, dims)):
                    if isinstance(pt, T.Array):
                        p = A.first_axis_item(L, p, pt, k)[0]
                    elif not (isinstance(pt, T.Scalar) and pt.dtype in ("i8", "b1")):
                        continue  # a slice
                    if isinstance(pt, T.Scalar) and pt.dtype == "b1":
                        continue
                    bad = b.or_(b.icmp_signed("<", p, b.neg(d)), b.icmp_signed(">=", p, d))
                    L.check(bad, IndexError, f"index {{0}} is out of bounds for axis {axis} "
                            "with size {1} (example {2} of the vmap batch)", (p, d, k))
            if active is None:
                check()
                return
            with b.if_then(A.first_axis_item(L, active[0], active[1], k)[0]):
                check()

        A.loop(L, n, example)
        return none


register(BatchCheckIndex(), rt.batch_check_index)
