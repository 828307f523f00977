"""Batched loops whose trip count differs per example, in LLVM IR (``s2s_runtime``'s
``batching_lanes``; ``s2s/batch/lanes.py`` writes the calls).

A ``BatchedRange`` is compiled as the tuple ``(start, step, length)`` of three
``i8[:]`` arrays over the batch (the Python helper's fields; generated code only
passes it to the helpers below).  Same results as the Python helpers for the forms
lowered here, any other refused by the call table with the helper's name:

* ``batch_range(n, stop)`` / ``batch_range(n, start, stop)``: ``range`` of every
  example (step 1; a bound is one integer for all or an ``i8[:]`` per example):
  ``length = max(0, stop - start)``;
* ``batch_trips(r)``: ``M = max(length)`` (0 for an empty batch);
* ``batch_lanes_active(r, j, trips, right)``: ``0 <= t < length`` with ``t = j``
  (left-aligned) or ``j - (trips - length)`` (right-aligned, constant ``right``);
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


class BatchRange:
    def type(self, fn, types, kw, loc):
        if kw or len(types) not in (2, 3) or not _is_int(types[0], False) or \
                not all(_is_int(t) for t in types[1:]):
            return None
        return RANGE

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        n = S.convert(L, *vals[0], T.INT)
        bounds = vals[1:]
        fields = [A.allocate(L, INTS, [n]) for _ in range(3)]
        ptrs = [(b.extract_value(f, 0), A.strides_list(L, f, INTS)) for f in fields]

        def body(k):
            start = _at(L, *bounds[0], k) if len(bounds) == 2 else A.ZERO
            stop = _at(L, *bounds[-1], k)
            span = b.sub(stop, start)
            length = b.select(b.icmp_signed(">", span, A.ZERO), span, A.ZERO)
            for (data, strides), v in zip(ptrs, (start, A.ONE, length)):
                A.store(L, v, A.element_ptr(L, data, strides, [k], T.INT), T.INT)

        A.loop(L, n, body)
        out = ll.Constant(RANGE.llvm(), None)
        for i, f in enumerate(fields):
            out = b.insert_value(out, f, i)
        return out


class BatchTrips:
    def type(self, fn, types, kw, loc):
        return T.INT if not kw and len(types) == 1 and types[0] == RANGE else None

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        length = _fields(L, vals[0][0])[2]
        acc = b.alloca(T.I64)
        b.store(A.ZERO, acc)

        def body(k):
            v = A.element(L, length, INTS, [k])
            old = b.load(acc)
            b.store(b.select(b.icmp_signed(">", v, old), v, old), acc)

        A.loop(L, A.shape_of(L, length, 0), body)
        return b.load(acc)


class _Lanes:
    """``(r, j, trips, right)`` with ``right`` a constant bool: per example ``t``."""

    wants_atoms = True
    result = None

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 4 or types[0] != RANGE or not _is_int(types[1], False) \
                or not _is_int(types[2], False) \
                or not isinstance(getattr(atoms[3], "value", None), bool):
            return None
        return self.result

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        start, step, length = _fields(L, vals[0][0])
        j = S.convert(L, *vals[1], T.INT)
        trips = S.convert(L, *vals[2], T.INT)
        right = L.call_atoms[0][3].value
        n = A.shape_of(L, length, 0)
        out = A.allocate(L, rtype, [n])
        data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)

        def body(k):
            ln = A.element(L, length, INTS, [k])
            t = b.sub(j, b.sub(trips, ln)) if right else j
            v = self.value(L, t, ln, lambda f: A.element(L, f, INTS, [k]), start, step)
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
register(BatchTrips(), rt.batch_trips)
register(LanesActive(), rt.batch_lanes_active)
register(LanesItem(), rt.batch_lanes_item)
