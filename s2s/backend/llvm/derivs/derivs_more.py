"""Run-time helpers of derivative code added after the first backend, in LLVM IR.

``add_at(acc, g, x, index)``: reverse mode's accumulation of the adjoint of a
read ``x[index]`` into ``x``'s adjoint ``acc``.  Maths (``s2s_runtime.add_at``): ``acc + S(g)``, ``S`` the scatter of ``g`` into
zeros shaped like ``x`` at ``index``.  For the indices compiled code takes
(integers and slices: no index repeats) that is a copy of ``acc`` with
``g`` added at ``index``.  ``acc`` is a float array of ``x``'s shape (its
adjoint), or None (no adjoint yet: the result is ``getitem_vjp(g, x, index)``).
A complex ``g`` into a real ``acc`` is refused (Python mode would widen ``acc``).

``owned(x)``: ``x`` itself (a number or a tuple of numbers), a copy when it is an array (the snapshot reverse mode
takes of an operand that a later in-place write could change).

``clip_selected(a, a_min, a_max, which)``: 1.0 where ``np.clip`` takes its value
from argument ``which`` (0: ``a``, 1: ``a_min``, 2: ``a_max``), else 0.0
(``s2s_runtime.shape_helpers``); here for number (or None) bounds and a
constant ``which``.
"""
from __future__ import annotations

import s2s_runtime as rt

from llvmlite import ir as ll

from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T
from ..ops.calls import register
from .adjoints import GetitemVjp, _scalar_of


class AddAt:
    def type(self, fn, types, kw, loc):
        acc, g, x, index = types
        if isinstance(acc, T.NoneType):
            return GetitemVjp().type(fn, [g, x, index], kw, loc)
        if not (isinstance(acc, T.Array) and isinstance(x, T.Array) and acc.ndim == x.ndim):
            return None
        g_elem = _scalar_of(g)
        if not isinstance(g_elem, T.Scalar) or (g_elem.dtype == "c16" and acc.dtype != "c16"):
            return None
        return acc

    def lower(self, L, fn, vals, kw, rtype):
        (acc, at), (g, gt), (x, xt), (idx, it) = vals
        if isinstance(at, T.NoneType):
            return GetitemVjp().lower(L, fn, [(g, gt), (x, xt), (idx, it)], kw, rtype)
        out = A.copy(L, acc, at)
        read, rt_ = A.getitem(L, out, at, idx, it)
        if isinstance(rt_, T.Array):  # a slice: add g over it, in place in the copy
            A.elementwise(L, lambda v: _added(L, v[0], v[1]), [(read, rt_), (g, gt)],
                          at.dtype, out=(read, rt_))
        else:
            value, vt = _added(L, (read, rt_), (g, gt))
            A.setitem(L, out, at, idx, it, value, vt)
        return out


def _added(L, a, c):
    """``a + c`` for two ``(value, scalar type)`` pairs, in their common type."""
    (av, at), (cv, ct) = a, c
    t = S.arith_type("add", at, ct)
    return S.binary(L, "add", S.convert(L, av, at, t), S.convert(L, cv, ct, t), t), t


class ClipSelected:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 4 or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        if not all(isinstance(t, T.NoneType) or (isinstance(t, T.Scalar) and t.dtype != "c16")
                   for t in types[1:3]):
            return None
        which = getattr(atoms[3], "value", None) if len(atoms) == 4 else None
        if which not in (0, 1, 2) or _scalar_of(types[0]).dtype == "c16":
            return None
        return T.Array("f8", types[0].ndim) if isinstance(types[0], T.Array) else T.F64T

    def lower(self, L, fn, vals, kw, rtype):
        (a, at), lo, hi = vals[0], vals[1], vals[2]
        which = L.call_atoms[0][3].value  # a constant: checked by type()
        b = L.b

        def scalar(x, xt):
            false = ll.Constant(T.I1, 0)
            below, low, low_t = false, x, xt
            if not isinstance(lo[1], T.NoneType):
                ct = T.promote(xt, lo[1])
                xv, lv = S.convert(L, x, xt, ct), S.convert(L, lo[0], lo[1], ct)
                below = S.compare(L, ">", lv, xv, ct)
                low, low_t = b.select(below, lv, xv), ct
            above = false
            if not isinstance(hi[1], T.NoneType):
                ct = T.promote(low_t, hi[1])
                above = S.compare(L, ">", S.convert(L, low, low_t, ct),
                                  S.convert(L, hi[0], hi[1], ct), ct)
            keep = b.not_(above)
            mask = (b.and_(b.not_(below), keep), b.and_(below, keep), above)[which]
            return S.convert(L, mask, T.BOOL, T.F64T)

        if isinstance(at, T.Scalar):
            return scalar(a, at)
        return A.elementwise(L, lambda xs: (scalar(*xs[0]), T.F64T), [(a, at)], "f8")


class Owned:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1:
            return None
        t = types[0]
        if isinstance(t, (T.Array, T.Scalar, T.NoneType)) or (  # a tuple of numbers: itself
                isinstance(t, T.Tuple) and all(isinstance(i, T.Scalar) for i in t.items)):
            return t
        return None

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        return A.copy(L, v, t) if isinstance(t, T.Array) else v


register(AddAt(), rt.add_at)
register(Owned(), rt.owned)
register(ClipSelected(), rt.clip_selected)
