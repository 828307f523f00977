"""Handlers of ``calls.TABLE`` for an advanced index (``fancy.py``): reads, writes and the
run-time helpers of their derivatives.

Each handler is an overload (``calls.overload``, family "advanced indices"): it takes
a call over only when the index operand holds an integer array or a boolean mask (and
the indexed operand is an array); otherwise it defers to the callable's next handler.  Maths, for an index
``i`` naming places of ``x`` (``S``: scatter into zeros shaped like ``x``,
repeated places accumulating; ``G``: gather):

* ``x[i]`` -> ``G(x)``, ``read_copy``/``read_checked`` the same (a gather is a copy);
* ``y[i] = v`` (``operator.setitem``, ``index_set`` in place, ``index_updated`` on a
  copy): the last write to a place wins;
* ``np.add.at(y, i, v)``: ``y += S(v)`` in place (``np.subtract.at``: ``y -= S(v)``);
* ``getitem_vjp(g, x, i)`` = ``S(g)``; ``add_at(acc, g, x, i)`` = ``acc + S(g)``;
* ``index_set_vjp_base(g, i)``: ``g`` with zeros at the places;
  ``index_set_vjp_value(g, i, v)``: ``G(g)`` with zeros where a later entry writes
  the same place, unbroadcast to ``v``.
"""
from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir as ll

import s2s_runtime as rt

from ..values import arrays as A
from ..values import fancy as F
from ..numerics import reductions as R
from ..typing import types as T
from .calls import overload
from ..derivs.adjoints import Unbroadcast, float_dtype, scalar_of


class _Fancy:
    """Defers to ``inner`` (the callable's next handler, ``calls.overload``; None: refuse)
    unless operand ``index_at`` is advanced and ``base_at`` an array."""

    base_at, index_at = 0, 1
    inner = None

    @property
    def wants_atoms(self):
        return getattr(self.inner, "wants_atoms", False)

    def mine(self, types):
        return len(types) > self.index_at and isinstance(types[self.base_at], T.Array) \
            and F.is_advanced(types[self.index_at])

    def type(self, fn, types, kw, loc, *atoms):
        if self.mine(types) and not kw:
            return self.fancy_type(list(types))
        if self.inner is None:
            return None
        return self.inner.type(fn, types, kw, loc, *atoms)

    def lower(self, L, fn, vals, kw, rtype):
        if self.mine([t for _, t in vals]):
            return self.fancy_lower(L, vals, rtype)
        return self.inner.lower(L, fn, vals, kw, rtype)


def _numeric(t):
    return isinstance(t, (T.Scalar, T.Array))


class Read(_Fancy):
    """``x[i]``, ``read_copy(x, i)``, ``read_checked(x, i, where)``."""

    def fancy_type(self, types):
        return F.result_type(types[0], types[1])

    def fancy_lower(self, L, vals, rtype):
        (a, t), (idx, it) = vals[:2]
        return F.gather(L, a, t, idx, it)


class Write(_Fancy):
    """``y[i] = v``, ``index_set``, ``index_updated``, ``np.add.at``, ``np.subtract.at``."""

    def __init__(self, result, copy=False, mode="set"):
        self.result, self.copy, self.mode = result, copy, mode

    def fancy_type(self, types):
        if len(types) != 3 or not _numeric(types[2]) or F.result_type(*types[:2]) is None:
            return None
        if scalar_of(types[2]).dtype == "c16" and types[0].dtype != "c16":
            return None
        return T.NONE if self.result == "none" else types[0]

    def fancy_lower(self, L, vals, rtype):
        (y, yt), (idx, it), (v, vt) = vals
        if self.copy:
            y = A.copy(L, y, yt)
        F.scatter(L, y, yt, idx, it, v, vt, self.mode)
        return ll.Constant(T.NONE.llvm(), None) if self.result == "none" else y


class SetVjpBase(_Fancy):
    def fancy_type(self, types):
        return types[0] if F.result_type(*types[:2]) is not None else None

    def fancy_lower(self, L, vals, rtype):
        (g, gt), (idx, it) = vals
        out = A.copy(L, g, gt)
        F.scatter(L, out, gt, idx, it, L.const(0, T.INT), T.INT)
        return out


class SetVjpValue(_Fancy):
    def fancy_type(self, types):
        read = F.result_type(*types[:2])
        return None if read is None else Unbroadcast().type(None, [read, types[2]], {}, None)

    def fancy_lower(self, L, vals, rtype):
        (g, gt), (idx, it), (v, vt) = vals
        read = F.last_writes_only(L, g, gt, idx, it)
        read_t = F.result_type(gt, it)
        return Unbroadcast().lower(L, None, [(read, read_t), (v, vt)], {}, rtype)


class GetitemVjp(_Fancy):
    """``getitem_vjp(g, x, i)``: ``g`` scattered (accumulated) into zeros like ``x``."""

    base_at, index_at = 1, 2

    def fancy_type(self, types):
        g, x, it = types
        if F.result_type(x, it) is None or not _numeric(g):
            return None
        code = "c16" if scalar_of(g).dtype == "c16" else float_dtype(x.dtype)
        return T.Array(code, x.ndim)

    def fancy_lower(self, L, vals, rtype):
        (g, gt), (x, xt), (idx, it) = vals
        out = R.create(L, rtype, A.shape_list(L, x, xt), (L.const(0, T.INT), T.INT))
        F.scatter(L, out, rtype, idx, it, g, gt, "add")
        return out


class AddAt(_Fancy):
    """``add_at(acc, g, x, i)``: a copy of ``acc`` (zeros when None) plus ``S(g)``."""

    base_at, index_at = 2, 3

    def fancy_type(self, types):
        acc, g, x, it = types
        if isinstance(acc, T.NoneType):
            return GetitemVjp().fancy_type([g, x, it])
        if not (isinstance(acc, T.Array) and acc.ndim == x.ndim) or F.result_type(x, it) is None:
            return None
        if not _numeric(g) or (scalar_of(g).dtype == "c16" and acc.dtype != "c16"):
            return None
        return acc

    def fancy_lower(self, L, vals, rtype):
        (acc, at), (g, gt), (x, xt), (idx, it) = vals
        if isinstance(at, T.NoneType):
            return GetitemVjp().fancy_lower(L, vals[1:], rtype)
        out = A.copy(L, acc, at)
        F.scatter(L, out, at, idx, it, g, gt, "add")
        return out


def _wrap(cls, fn, *args, **kwargs):
    overload("advanced indices", cls(*args, **kwargs), fn)


for _fn in (operator.getitem, rt.read_copy, rt.read_checked):
    _wrap(Read, _fn)
_wrap(Write, operator.setitem, "none")
_wrap(Write, rt.index_set, "array")
_wrap(Write, rt.index_updated, "array", copy=True)
_wrap(Write, np.add.at, "none", mode="add")
_wrap(Write, np.subtract.at, "none", mode="sub")
_wrap(SetVjpBase, rt.index_set_vjp_base)
_wrap(SetVjpValue, rt.index_set_vjp_value)
_wrap(GetitemVjp, rt.getitem_vjp)
_wrap(AddAt, rt.add_at)
