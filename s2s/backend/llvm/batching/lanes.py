"""Batched loops whose trip count differs per example, in LLVM IR (``s2s_runtime``'s
``batching_lanes``; ``s2s/batch/lanes.py`` writes the calls).

A ``BatchedRange`` is compiled as the tuple ``(start, step, length)`` of three
``i8[:]`` arrays over the batch (the Python helper's fields; generated code only
passes it to the helpers below).  Same results as the Python helpers for the forms
lowered here, any other refused by the call table with the helper's name:

* ``batch_range(n, stop)`` / ``batch_range(n, start, stop[, step])``: ``range`` of
  every example (a bound or step is one integer for all or an ``i8[:]`` per example):
  ``length = max(0, ceil((stop - start) / step))``, a zero step Python's ValueError;
* ``batch_reversed_range(r, n)``: ``r[::-1]`` of every example: ``start + (length - 1) *
  step``, ``-step``, ``length``;
* ``batch_trips(r[, mask])``: ``M = max(length)`` over the examples in ``mask`` (all
  without one; 0 for an empty batch);
* ``batch_lanes_active(r, j, trips, right[, mask])``: ``0 <= t < length`` with ``t = j``
  (left-aligned) or ``j - (trips - length)`` (right-aligned, constant ``right``), and
  the example in ``mask``;
* ``batch_lanes_item(r, j, trips, right)``: ``start + clip(t, 0, max(length - 1, 0)) * step``.
"""
from __future__ import annotations

import llvmlite.ir as ll

import s2s_runtime as rt

from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T
from ..ops.calls import register

INTS = T.Array("i8", 1)
RANGE = T.Tuple((INTS, INTS, INTS))
MASK = T.Array("b1", 1)


def _is_int(t, arrays=True):
    if isinstance(t, T.Scalar):
        return t.dtype in ("i8", "b1")
    return arrays and isinstance(t, T.Array) and t.ndim == 1 and t.dtype in ("i8", "b1")


def _at(L, v, t, k):
    """Example ``k`` of a per-example integer (or the one integer for all), as i64."""
    if isinstance(t, T.Array):
        return S.convert(L, A.element(L, v, t, [k]), t.elem, T.INT)
    return S.convert(L, v, t, T.INT)


def _fields(L, r):
    return [L.b.extract_value(r, i) for i in range(3)]


def _range_per_example(L, n, example):
    """A ``BatchedRange`` of ``n`` examples: new ``start``, ``step`` and ``length``
    arrays, example ``k``'s three integers ``example(k)``."""
    b = L.b
    fields = [A.allocate(L, INTS, [n]) for _ in range(3)]
    ptrs = [(b.extract_value(f, 0), A.strides_list(L, f, INTS)) for f in fields]

    def body(k):
        for (data, strides), v in zip(ptrs, example(k)):
            A.store(L, v, A.element_ptr(L, data, strides, [k], T.INT), T.INT)

    A.loop(L, n, body)
    out = ll.Constant(RANGE.llvm(), None)
    for i, f in enumerate(fields):
        out = b.insert_value(out, f, i)
    return out


class BatchRange:
    def type(self, fn, types, kw, loc):
        if kw or len(types) not in (2, 3, 4) or not _is_int(types[0], False) or \
                not all(_is_int(t) for t in types[1:]):
            return None
        return RANGE

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        bounds = vals[1:]

        def example(k):
            start = _at(L, *bounds[0], k) if len(bounds) >= 2 else A.ZERO
            stop = _at(L, *bounds[1 if len(bounds) >= 2 else 0], k)
            step = _at(L, *bounds[2], k) if len(bounds) == 3 else A.ONE
            if len(bounds) == 3:
                L.check(b.icmp_signed("==", step, A.ZERO), ValueError,
                        "range() arg 3 must not be zero")
            # Python's trip count: ceil((stop - start) / step), at least 0
            up = b.icmp_signed(">", step, A.ZERO)
            span = b.select(up, b.sub(b.add(b.sub(stop, start), step), A.ONE),
                            b.sub(b.sub(b.sub(start, stop), step), A.ONE))
            size = b.sdiv(span, b.select(up, step, b.neg(step)))
            return start, step, b.select(b.icmp_signed(">", size, A.ZERO), size, A.ZERO)

        return _range_per_example(L, S.convert(L, *vals[0], T.INT), example)


class BatchReversedRange:
    """``batch_reversed_range(r, n)`` of a ``BatchedRange`` ``r``: per example ``start +
    (length - 1) * step``, ``-step``, ``length`` (new arrays)."""

    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) == 2 and types[0] == RANGE and _is_int(types[1], False)
        return RANGE if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        start, step, length = _fields(L, vals[0][0])

        def example(k):
            s0, st, ln = (A.element(L, f, INTS, [k]) for f in (start, step, length))
            return b.add(s0, b.mul(b.sub(ln, A.ONE), st)), b.neg(st), ln

        return _range_per_example(L, A.shape_of(L, length, 0), example)


class BatchTrips:
    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) in (1, 2) and types[0] == RANGE and (
            len(types) == 1 or types[1] == MASK)
        return T.INT if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        length = _fields(L, vals[0][0])[2]
        mask = vals[1][0] if len(vals) == 2 else None
        acc = b.alloca(T.I64)
        b.store(A.ZERO, acc)

        def body(k):
            v = A.element(L, length, INTS, [k])
            if mask is not None:  # an example outside the mask makes no trip
                v = b.select(A.element(L, mask, MASK, [k]), v, A.ZERO)
            old = b.load(acc)
            b.store(b.select(b.icmp_signed(">", v, old), v, old), acc)

        A.loop(L, A.shape_of(L, length, 0), body)
        return b.load(acc)


class _Lanes:
    """``(r, j, trips, right)`` with ``right`` a constant bool: per example ``t``."""

    wants_atoms = True
    result = None

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) not in (4, 5) or types[0] != RANGE \
                or not _is_int(types[1], False) or not _is_int(types[2], False) \
                or not isinstance(getattr(atoms[3], "value", None), bool) \
                or len(types) == 5 and (self.result != MASK or types[4] != MASK):
            return None
        return self.result

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        start, step, length = _fields(L, vals[0][0])
        j = S.convert(L, *vals[1], T.INT)
        trips = S.convert(L, *vals[2], T.INT)
        right = L.call_atoms[0][3].value
        mask = vals[4][0] if len(vals) == 5 else None
        n = A.shape_of(L, length, 0)
        out = A.allocate(L, rtype, [n])
        data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)

        def body(k):
            ln = A.element(L, length, INTS, [k])
            t = b.sub(j, b.sub(trips, ln)) if right else j
            v = self.value(L, t, ln, lambda f: A.element(L, f, INTS, [k]), start, step)
            if mask is not None:  # (batch_lanes_active only) examples in the mask
                v = b.and_(v, A.element(L, mask, MASK, [k]))
            A.store(L, v, A.element_ptr(L, data, strides, [k], rtype.elem), rtype.elem)

        A.loop(L, n, body)
        return out


class LanesActive(_Lanes):
    result = T.Array("b1", 1)

    @staticmethod
    def value(L, t, ln, at, start, step):
        b = L.b
        return b.and_(b.icmp_signed(">=", t, A.ZERO), b.icmp_signed("<", t, ln))


class LanesItem(_Lanes):
    result = INTS

    @staticmethod
    def value(L, t, ln, at, start, step):
        b = L.b
        top = b.sub(ln, A.ONE)
        top = b.select(b.icmp_signed(">", top, A.ZERO), top, A.ZERO)
        t = b.select(b.icmp_signed("<", t, A.ZERO), A.ZERO, t)
        t = b.select(b.icmp_signed(">", t, top), top, t)
        return b.add(at(start), b.mul(t, at(step)))


register(BatchRange(), rt.batch_range)
register(BatchReversedRange(), rt.batch_reversed_range)
register(BatchTrips(), rt.batch_trips)
register(LanesActive(), rt.batch_lanes_active)
register(LanesItem(), rt.batch_lanes_item)
