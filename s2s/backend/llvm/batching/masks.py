"""Batched control flow in LLVM IR: the masks of batched branches and loops, for
``jit(vmap(f))`` (``s2s_runtime.batching``; same results as the Python helpers for the
types below, any other use refused by the call table with the helper's name and
argument types):

* ``batch_mask(c)`` of a boolean vector; ``batch_select(c, a, b)``: ``np.where`` with
  ``c`` viewed as ``(n, 1, ..., 1)`` (``b`` None: ``a``), for numbers and arrays;
* ``np.logical_and``/``logical_or``/``logical_xor``/``logical_not`` on booleans,
  numbers and arrays (elementwise, broadcasting; the masks of batched branches);
  ``np.any``/``np.all`` of a whole array (the test of a batched ``while``);
* ``batch_inplace(op, plain, x, y)``: ``x op= y`` in place where ``x`` is an array of
  rank >= 2 (each example an array), else ``plain(x, y)``, a new value;
* ``tape_select(tape, c, mark)`` (compiled code only: ``passes/tape_pushes.masked_tapes``
  writes it for ``tape = batch_select(c, tape, saved)`` of a native tape): the tape as
  it is where ``c`` holds for every example, back at the height ``mark`` where it holds
  for none, and ``BatchingRuntimeError`` otherwise (the examples' tapes would differ in
  length: Python's ``batch_select`` of two tapes raises the same).
"""
from __future__ import annotations

import numpy as np
import s2s_runtime as rt
from llvmlite import ir as ll

from ..values import arrays as A
from ..values import scalars as S
from ..numerics import reductions as R
from ..numerics.axis import reduce_axis, reduced_ndim, reduction_axis
from ..typing import types as T
from ..ops.numbers import Elementwise
from ..ops.calls import TABLE, register
from ....rules.registry import defno_mode
from ..derivs.jacobian_ops import COMPILED_TAPES_ONLY
from ..lower import stacks
from .axes import restrided


class BatchMask:
    """``batch_mask(c)``: a boolean vector over the batch (comparisons make one)."""

    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) == 1 and types[0] == T.Array("b1", 1)
        return types[0] if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        return vals[0][0]


class BatchSelect:
    """``batch_select(c, a, b)``: ``np.where`` with ``c`` viewed as ``(n, 1, ..., 1)``
    (numbers and arrays, and tuples of them item by item; ``b`` None -- also an array
    variable still holding the None it started as, a null data pointer -- selects ``a``;
    an ``a`` holding None selects ``b``)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 3 or not isinstance(types[0], T.Array) or types[0].ndim != 1:
            return None
        c, a, b_ = types
        if isinstance(b_, T.NoneType):
            return a
        if type(a) is T.Tuple and type(b_) is T.Tuple and len(a.items) == len(b_.items):
            items = [self.type(fn, [c, x, y], kw, loc) for x, y in zip(a.items, b_.items)]
            return None if any(t is None for t in items) else T.Tuple(tuple(items))
        if not all(isinstance(t, (T.Array, T.Scalar)) for t in (a, b_)):
            return None
        return Elementwise().type(np.where, [_mask_type(c, a, b_), a, b_], {}, loc)

    def lower(self, L, fn, vals, kw, rtype):
        (c, ct), a, b_ = vals
        if isinstance(b_[1], T.NoneType):
            return a[0]
        if type(rtype) is T.Tuple:  # item by item (a range per example: three arrays)
            bld = L.b
            out = ll.Constant(rtype.llvm(), None)
            for j, t in enumerate(rtype.items):
                x = (bld.extract_value(a[0], j), a[1].items[j])
                y = (bld.extract_value(b_[0], j), b_[1].items[j])
                out = bld.insert_value(out, self._item(L, (c, ct), x, y, t, True), j)
            return out
        return self._item(L, (c, ct), a, b_, rtype, L.may_hold_none(L.call_atoms[0][1]))

    def _item(self, L, c, a, b_, rtype, a_may_hold_none):
        (c, ct) = c
        if isinstance(b_[1], T.NoneType):
            return a[0]
        if type(rtype) is T.Tuple:
            return self.lower(L, None, [(c, ct), a, b_], {}, rtype)
        if isinstance(b_[1], T.Array) and a[1] == rtype:
            # ``b`` may still hold the None it started as (a name a loop assigns later,
            # typed as the array it becomes: a null array): then ``a``, as in Python;
            # ``a`` None (a value a tape gives back for the iteration before the first
            # assignment, which no example reads again): ``b``, as batch_select_replayed
            bld = L.b
            slot = L.entry_alloca(rtype.llvm())
            with bld.if_else(A.holds_none(L, b_[0])) as (then, otherwise):
                with then:
                    bld.store(a[0], slot)
                with otherwise:
                    if a_may_hold_none:
                        with bld.if_else(A.holds_none(L, a[0])) as (a_none, both):
                            with a_none:
                                bld.store(b_[0], slot)
                            with both:
                                bld.store(self._where(L, c, ct, a, b_, rtype), slot)
                    else:
                        bld.store(self._where(L, c, ct, a, b_, rtype), slot)
            return bld.load(slot)
        return self._where(L, c, ct, a, b_, rtype)

    @staticmethod
    def _where(L, c, ct, a, b_, rtype):
        mt = _mask_type(ct, a[1], b_[1])
        pad = mt.ndim - 1
        mask = restrided(L, mt, c, [A.shape_of(L, c, 0)] + [A.ONE] * pad,
                         [A.stride_of(L, c, 0)] + [A.ZERO] * pad)
        return Elementwise().lower(L, np.where, [(mask, mt), a, b_], {}, rtype)


def _mask_type(c, a, b):
    return T.Array(c.dtype, max(getattr(a, "ndim", 0), getattr(b, "ndim", 0), 1))


class BatchInplace:
    """``batch_inplace(op, plain, x, y)``: the handler of ``op`` (in place) or ``plain``."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 4 or not all(hasattr(a, "value") for a in atoms[:2]):
            return None
        op = self._pick(atoms, types[2])
        handler = TABLE.get(op)
        if handler is None or getattr(handler, "wants_atoms", False):
            return None
        return handler.type(op, types[2:], {}, loc)

    @staticmethod
    def _pick(atoms, x):
        return atoms[0].value if isinstance(x, T.Array) and x.ndim >= 2 else atoms[1].value

    def lower(self, L, fn, vals, kw, rtype):
        op = self._pick(L.call_atoms[0], vals[2][1])
        L.call_atoms = (L.call_atoms[0][2:], {})
        return TABLE[op].lower(L, op, vals[2:], {}, rtype)


class Logical:
    """numpy's logical functions: truth values of numbers, elementwise on arrays."""

    OPS = {np.logical_and: "and", np.logical_or: "or", np.logical_xor: "xor",
           np.logical_not: "not"}

    def type(self, fn, types, kw, loc):
        arity = 1 if fn is np.logical_not else 2
        if kw or len(types) != arity or not all(isinstance(t, (T.Scalar, T.Array))
                                                for t in types):
            return None
        arrays = [t.ndim for t in types if isinstance(t, T.Array)]
        return T.Array("b1", max(arrays)) if arrays else T.Scalar("b1")

    def lower(self, L, fn, vals, kw, rtype):
        b, op = L.b, self.OPS[fn]

        def combine(items):
            x = [S.truth(L, v, t) for v, t in items]
            if op == "not":
                return b.not_(x[0]), T.BOOL
            return getattr(b, "xor" if op == "xor" else op + "_")(x[0], x[1]), T.BOOL

        if isinstance(rtype, T.Scalar):
            return combine(vals)[0]
        return A.elementwise(L, combine, vals, "b1")


class AnyAll:
    """``np.any(x)`` / ``np.all(x)``: whether some (every) element is true; along constant
    ``axis`` (``keepdims=``), ``any`` is a count of the true elements above zero and
    ``all`` a count of the false ones at zero."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if not types or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        if len(types) == 1 and not kw:
            return T.Scalar("b1")
        if not isinstance(types[0], T.Array):
            return None
        axis, keepdims = reduction_axis(fn, atoms, kw_atoms or {}, types[0].ndim, loc)
        if axis is None:  # every axis
            return T.Array("b1", types[0].ndim) if keepdims else T.Scalar("b1")
        ndim = reduced_ndim(types[0].ndim, axis, keepdims)
        return T.Array("b1", ndim) if ndim else T.Scalar("b1")

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        if isinstance(xt, T.Scalar):
            return S.truth(L, x, xt)
        if isinstance(rtype, T.Array):
            return self.along(L, fn, x, xt, rtype)
        op = L.b.or_ if fn is np.any else L.b.and_
        init = ll.Constant(T.I1, 0 if fn is np.any else 1)
        # (reduce_all hands each element over as the accumulator's type: a bool)
        return A.reduce_all(L, x, xt, lambda acc, v: op(acc, v), init, T.Scalar("b1"))

    def along(self, L, fn, x, xt, rtype):
        b = L.b
        args, kwargs = L.call_atoms
        axis, keepdims = reduction_axis(fn, args, kwargs, xt.ndim, L.loc)
        counted = A.elementwise(  # 1 where the element is true (any) / false (all)
            L, lambda items: (b.zext(S.truth(L, *items[0]) if fn is np.any else
                                     b.not_(S.truth(L, *items[0])), T.I64), T.INT),
            [(x, xt)], "i8")
        ct = T.Array("i8", xt.ndim)
        if axis is None:  # keepdims of the whole array
            total = R.sum_all(L, counted, ct, "add")
            some = b.icmp_signed(">", total, A.ZERO)
            return R.create(L, rtype, [A.ONE] * xt.ndim,
                            (some if fn is np.any else b.not_(some), T.BOOL))
        counts_t = T.Array("i8", rtype.ndim)
        counts = reduce_axis(L, counted, ct, axis, keepdims, "sum", counts_t)
        return A.elementwise(
            L, lambda items: (b.icmp_signed(">" if fn is np.any else "==", items[0][0],
                                            A.ZERO), T.BOOL), [(counts, counts_t)], "b1")


def tape_select(tape, c, mark):
    raise NotImplementedError("tape_select exists only in compiled code")


class TapeSelect:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms, kw_atoms):
        tape, c, mark = types
        ok = isinstance(tape, T.Stack) and not tape.tagged and \
            c in (T.Array("b1", 1), T.BOOL) and mark == T.INT
        return T.NONE if ok and not kw else None

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        c = vals[1]
        every = AnyAll().lower(L, np.all, [c], {}, T.BOOL)
        some = AnyAll().lower(L, np.any, [c], {}, T.BOOL)
        L.check(b.and_(some, b.not_(every)), rt.BatchingRuntimeError,
                rt.batching.STRUCTURES_DIFFER)
        top = stacks.height_ptr(L, L.call_atoms[0][0].name)
        b.store(b.select(every, b.load(top), vals[2][0]), top)
        return ll.Constant(rtype.llvm(), None)


register(TapeSelect(), tape_select)
for _mode in ("jvp", "vjp", "vmap"):
    defno_mode(_mode, COMPILED_TAPES_ONLY, tape_select)
register(BatchMask(), rt.batch_mask)
register(BatchSelect(), rt.batch_select)
register(BatchInplace(), rt.batch_inplace)
register(Logical(), *Logical.OPS)
register(AnyAll(), np.any, np.all)
