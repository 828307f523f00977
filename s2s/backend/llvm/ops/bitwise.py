"""Bitwise operators on flags and ints (``a | b``, ``a & b``, ``a ^ b``, their in-place
forms, ``np.bitwise_*``, ``~x``/``np.invert``, the shifts ``<<``/``>>``), on numbers and elementwise on arrays:
handlers of ``calls.TABLE``.  (numpy's ``logical_*`` functions: ``batching/masks.py``.)"""
from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir as ll

from ..values import arrays as A
from ..values import overlap
from ..values import scalars as S
from ..typing import types as T
from .calls import all_numeric, elem_type, lifted_type, map_elementwise, register


class Bitwise:
    """``a | b``, ``a & b``, ``a ^ b`` (and ``np.bitwise_*``) on bools and ints, numbers or
    arrays broadcast elementwise (``(x > 0) & (x < 1)``; ``|=`` writes into an array).
    (``np.logical_*``: ``batching/masks.py``.)"""

    OPS = {operator.or_: "or_", operator.and_: "and_", operator.xor: "xor",
           operator.ior: "or_", operator.iand: "and_", operator.ixor: "xor",
           np.bitwise_or: "or_", np.bitwise_and: "and_", np.bitwise_xor: "xor"}
    INPLACE = {operator.ior, operator.iand, operator.ixor}

    def maps_elements(self, fn):  # (calls.maps_elements) not the in-place forms
        return fn not in self.INPLACE

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not all_numeric(types):
            return None
        if not all(elem_type(t).dtype in ("b1", "i8") for t in types):
            return None
        if fn in self.INPLACE and isinstance(types[0], T.Array):
            return types[0] if elem_type(types[0]).dtype == "i8" or \
                elem_type(types[1]).dtype == "b1" else None
        return lifted_type(types, T.promote(*map(elem_type, types)))

    def lower(self, L, fn, vals, kw, rtype):
        et = elem_type(rtype)
        op = self.OPS[fn]

        def scalar(values, types):
            a, c = (S.convert(L, v, t, et) for v, t in zip(values, types))
            return getattr(L.b, op)(a, c)

        if fn in self.INPLACE and isinstance(vals[0][1], T.Array):
            def write(operand):  # read from a copy where it overlaps the target otherwise
                A.elementwise(L, lambda items: (scalar([v for v, _ in items],
                                                       [t for _, t in items]), et),
                              [vals[0], (operand, vals[1][1])], rtype.dtype, out=vals[0])
            overlap.operand_guarded(L, *vals[0], *vals[1], write)
            return vals[0][0]
        return map_elementwise(L, vals, rtype, scalar)


register(Bitwise(), *Bitwise.OPS)


class Shift:
    """``a << n``, ``a >> n`` (and ``np.left_shift``/``np.right_shift``, ``<<=``/``>>=``)
    on int64 numbers or arrays, elementwise: the bits of ``a`` moved left (zeros in) or
    right (the sign bit in), numpy's results for a count of 64 or more (0 after a left
    shift, 0 or -1 after a right one); Python's ``ValueError`` for a negative count of
    ``<<``/``>>``. (Python's ints do not overflow; compiled ints are int64, as in numpy.)"""

    LEFT = {operator.lshift, operator.ilshift, np.left_shift}
    INPLACE = {operator.ilshift, operator.irshift}
    PYTHON = {operator.lshift, operator.rshift, operator.ilshift, operator.irshift}

    def maps_elements(self, fn):  # (calls.maps_elements) not the in-place forms
        return fn not in self.INPLACE

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not all_numeric(types):
            return None
        if not all(elem_type(t).dtype == "i8" for t in types):
            return None
        if fn in self.INPLACE and isinstance(types[0], T.Array):
            return types[0]
        return lifted_type(types, T.promote(*map(elem_type, types)))

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        width = ll.Constant(T.I64, 64)

        def scalar(values, types):
            a, n = (S.convert(L, v, t, T.INT) for v, t in zip(values, types))
            if fn in self.PYTHON:
                L.check(b.icmp_signed("<", n, A.ZERO), ValueError, "negative shift count")
            out_of_range = b.icmp_unsigned(">=", n, width)  # (a negative count too)
            count = b.select(out_of_range, A.ZERO, n)
            if fn in self.LEFT:
                return b.select(out_of_range, A.ZERO, b.shl(a, count))
            return b.select(out_of_range, b.ashr(a, ll.Constant(T.I64, 63)), b.ashr(a, count))

        if fn in self.INPLACE and isinstance(vals[0][1], T.Array):
            def write(operand):  # read from a copy where it overlaps the target otherwise
                A.elementwise(L, lambda items: (scalar([v for v, _ in items],
                                                       [t for _, t in items]), T.INT),
                              [vals[0], (operand, vals[1][1])], "i8", out=vals[0])
            overlap.operand_guarded(L, *vals[0], *vals[1], write)
            return vals[0][0]
        return map_elementwise(L, vals, rtype, scalar)


register(Shift(), operator.lshift, operator.rshift, operator.ilshift, operator.irshift,
         np.left_shift, np.right_shift)


class Invert:
    """``~x`` (``np.invert``, ``np.bitwise_not``): logical not of bools, ``-x - 1`` of ints."""

    def maps_elements(self, fn):  # (calls.maps_elements)
        return True

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not all_numeric(types):
            return None
        t = elem_type(types[0])
        return lifted_type(types, t) if t.dtype in ("b1", "i8") else None

    def lower(self, L, fn, vals, kw, rtype):
        def scalar(values, types):
            v, t = values[0], types[0]
            if t.dtype == "b1":
                return L.b.not_(v)
            return L.b.xor(v, ll.Constant(T.I64, -1))

        return map_elementwise(L, vals, rtype, scalar)


register(Invert(), operator.invert, np.invert, np.bitwise_not)
