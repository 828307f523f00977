"""Writes whose value overlaps their target in memory (``y[1:] = y[:-1]``).

numpy evaluates the right-hand side before it writes: where the value array shares
memory with the place written, it is read from a copy.  Contract:
``guarded(L, target, tt, value, vt, write)`` calls ``write(value)`` with ``value``
itself, or -- when the byte ranges of the two arrays intersect at run time (views of
one block, or arguments that are views of one numpy array) -- with a copy of it,
released at once after the write.  Numbers never overlap.  ``operand_guarded`` does the
same for the operand of an in-place operator (``z += z[::-1]``, ``a += a.T``) written
element by element into its target, except where the operand is the target's own view
(``z += z``: each element is read before it is written).
"""
from __future__ import annotations

from llvmlite import ir as ll

from . import abi
from . import arrays as A
from ..typing import types as T


def _byte_range(L, a, t: T.Array):
    """``(lo, hi, empty)``: the addresses an array's elements span (``hi`` exclusive)."""
    b = L.b
    lo = hi = b.ptrtoint(b.extract_value(a, 0), T.I64)
    empty = ll.Constant(T.I1, 0)
    for k in range(t.ndim):
        n, st = A.shape_of(L, a, k), A.stride_of(L, a, k)
        empty = b.or_(empty, b.icmp_signed("<=", n, A.ZERO))
        span = b.mul(b.sub(n, A.ONE), st)
        neg = b.icmp_signed("<", span, A.ZERO)
        lo = b.add(lo, b.select(neg, span, A.ZERO))
        hi = b.add(hi, b.select(neg, A.ZERO, span))
    return lo, b.add(hi, A.i64(T.itemsize(t.dtype))), empty


def overlaps(L, a, at, c, ct):
    """i1: the two arrays' byte ranges intersect (both non-empty)."""
    b = L.b
    alo, ahi, aempty = _byte_range(L, a, at)
    clo, chi, cempty = _byte_range(L, c, ct)
    meet = b.and_(b.icmp_unsigned("<", alo, chi), b.icmp_unsigned("<", clo, ahi))
    return b.and_(meet, b.not_(b.or_(aempty, cempty)))


def guarded(L, target, tt, value, vt, write, own_view=False):
    """``write(value)``, ``value`` read from a copy where it shares memory with
    ``target`` (a copy released after the write); with ``own_view``, not where ``value``
    is ``target``'s own view exactly (element for element: ``z *= z`` needs no copy)."""
    if not isinstance(vt, T.Array):
        return write(value)
    b = L.b
    shared = overlaps(L, target, tt, value, vt)
    if own_view and vt.ndim == tt.ndim:
        shared = b.and_(shared, b.not_(_same_view(L, target, tt, value, vt)))
    slot = L.entry_alloca(vt.llvm())
    b.store(value, slot)
    with b.if_then(shared, likely=False):
        b.store(A.copy(L, value, vt), slot)
    out = write(b.load(slot))
    with b.if_then(shared, likely=False):
        abi.release(L, b.load(slot), vt)  # the copy: nobody else holds it
    return out


def _same_view(L, a, at, c, ct):
    """i1: ``c`` is ``a``'s view exactly (data, shape and strides)."""
    b = L.b
    same = b.icmp_unsigned("==", b.ptrtoint(b.extract_value(a, 0), T.I64),
                           b.ptrtoint(b.extract_value(c, 0), T.I64))
    for k in range(at.ndim):
        same = b.and_(same, b.icmp_signed("==", A.shape_of(L, a, k), A.shape_of(L, c, k)))
        same = b.and_(same, b.icmp_signed("==", A.stride_of(L, a, k), A.stride_of(L, c, k)))
    return same


def operand_guarded(L, target, tt, value, vt, write):
    """``guarded`` for the operand of an in-place operator (``z += z[::-1]``), which
    reads its target's own view element by element without a copy."""
    return guarded(L, target, tt, value, vt, write, own_view=True)
