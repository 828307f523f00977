"""Per-example reductions and their cotangents in LLVM IR, for ``jit(vmap(f))``: the
forms ``s2s/core/vmap_jit.py`` makes of a reduction over ``batch_axes(x)`` and of
``batch_unbroadcast`` (same results as the Python helpers for the types below, any
other use refused by the call table with the helper's name and argument types):

* ``reduce_per_example(fn)(x)`` (what ``core/vmap_jit.py`` makes of ``fn(x, axis=batch_axes(x))``):
  the reduction ``fn`` (sum, prod, mean, max, min) of each example: ``x`` as
  ``(n, -1)``, reduced over axis 1; ``reduce_per_example(fn)(x, like)`` the same for
  ``fn(x, axis=batch_axes(like))`` where ``like`` has ``x``'s rank;
* ``batch_unbroadcast(g, x, True, x_batched)``: each example of ``g`` summed to the
  per-example shape of ``x`` (``contractions.einsum2`` with the summed letters);
* ``sum_vjp_per_example(g, x)`` (``core/vmap_jit.py``'s form of ``sum_vjp(g, x,
  batch_axes(x))``): ``g[b]`` spread over example ``b`` of ``x``;
* ``mean_vjp_per_example(g, x)``, ``max_vjp_per_example(g, ans, x)``: ``rt.mean_vjp``
  and ``rt.max_vjp`` with ``axis=batch_axes(x)``: ``g[b]`` spread over example ``b``
  divided by its size; ``g[b]`` shared by the elements of example ``b`` equal to
  ``ans[b]`` (``x`` seen as ``(n, -1)``).
"""
from __future__ import annotations

import numpy as np
import s2s_runtime as rt

from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T
from ..numerics.axis import reduce_axis
from ..ops.arrays import Reduce
from ..ops.build import Reshape
from .contractions import einsum2
from ..ops.calls import TABLE, register, register_compiled_form
from .axes import BatchFlat, PerExampleShape, int_tuple, restrided


class ReducePerExample:
    """``fn(x, axis=(1, ..., x.ndim - 1))`` for a batched array ``x`` (rank 1: no axis to
    reduce, ``x`` itself)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) not in (1, 2) or not isinstance(types[0], T.Array) \
                or types[0].ndim < 1:
            return None
        if len(types) == 2 and not (isinstance(types[1], T.Array)
                                    and types[1].ndim == types[0].ndim):
            return None  # the axes of ``like``: those of ``x`` only for the same rank
        whole = Reduce().type(fn.reduction, types[:1], {}, loc, [None], {})
        return None if whole is None else T.Array(whole.dtype, 1)

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        if xt.ndim == 1:  # a number per example: reduced over no axis, itself (a copy)
            return A.copy(L, x, xt, rtype.dtype)
        flat_t = T.Array(xt.dtype, 2)
        flat = BatchFlat().lower(L, rt.batch_flat, [(x, xt)], {}, flat_t)
        return reduce_axis(L, flat, flat_t, 1, False, Reduce.OPS[fn.reduction], rtype)


class BatchUnbroadcast:
    """``batch_unbroadcast(g, x, True, x_batched)``: each example's ``g`` summed to the
    per-example shape of ``x`` (``x.shape[1:]`` if batched, else ``x.shape``): the
    leading per-example axes it lacks summed away, its size-1 axes summed into; the
    real part when ``x`` is real.  Equal ranks with both batched: ``unbroadcast``."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        flags = [getattr(a, "value", None) for a in atoms[2:]]
        if kw or len(types) != 4 or flags[:1] != [True] or not isinstance(flags[1], bool):
            return None
        return self.type_of(types[0], types[1], flags[1], loc)

    @staticmethod
    def type_of(g, x, x_batched, loc):
        per_x = getattr(x, "ndim", 0) - x_batched
        if not (isinstance(g, T.Array) and isinstance(x, (T.Array, T.Scalar))) or \
                g.ndim - 1 < per_x or per_x < 0:
            return None
        if x_batched and g.ndim == x.ndim:
            from ..derivs.adjoints import Unbroadcast  # derivs imports calls, which imports this module
            return Unbroadcast().type(rt.unbroadcast, [g, x], {}, loc)
        x_elem = x.elem if isinstance(x, T.Array) else x
        real = x_elem.dtype != "c16" and g.dtype == "c16"
        return T.Array("f8" if real else g.dtype, per_x + 1)

    def lower(self, L, fn, vals, kw, rtype):
        return self.sum_to(L, vals[0], vals[1], L.call_atoms[0][3].value, rtype)

    @staticmethod
    def sum_to(L, g, x, x_batched, rtype):
        (g, gt), (x, xt) = g, x
        if x_batched and gt.ndim == xt.ndim:
            from ..derivs.adjoints import Unbroadcast
            return Unbroadcast().lower(L, rt.unbroadcast, [(g, gt), (x, xt)], {}, rtype)
        letters = "abcdefghijklmnopqrstuvwxy"[:gt.ndim - 1]
        keep = letters[len(letters) - (rtype.ndim - 1):] if rtype.ndim > 1 else ""
        sizes = [None] + (A.shape_list(L, x, xt)[1 if x_batched else 0:]
                          if isinstance(xt, T.Array) else [])
        one = (L.const(1, gt.elem), gt.elem)
        return einsum2(L, ("z" + letters, "", "z" + keep), (g, gt), one, rtype, sizes)


class SumVjpPerExample:
    """``sum_vjp(g, x, axis=batch_axes(x))``: each example's cotangent ``g[b]`` (``g`` of
    shape ``(n,)``) spread over that example of ``x``."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not all(isinstance(t, T.Array) for t in types):
            return None
        g, x = types
        if g.ndim != 1 or x.ndim < 1:
            return None
        code = x.dtype if x.dtype in ("f4", "f8", "c16") else "f8"
        return T.Array("c16" if g.dtype == "c16" else code, x.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (g, gt), (x, xt) = vals
        shape = [A.shape_of(L, g, 0)] + A.shape_list(L, x, xt)[1:]
        spread_t = T.Array(gt.dtype, xt.ndim)
        spread = restrided(L, spread_t, g, shape, [A.stride_of(L, g, 0)] + [A.ZERO] * (xt.ndim - 1))
        return A.copy(L, spread, spread_t, rtype.dtype)


def sum_vjp_per_example(g, x):
    """``rt.sum_vjp(g, x, rt.batch_axes(x))`` (what ``core/vmap_jit.py`` makes of that call)."""
    return rt.sum_vjp(g, x, rt.batch_axes(x))


def reduce_per_example(reduction):
    """The Python function ``reduction(x, axis=(1, ..., ndim - 1))`` (one per reduction,
    so the call table can tell them apart); ``like``: over ``batch_axes(like)``, the
    same axes where ``like`` has ``x``'s rank (compiled only then)."""
    found = _PER_EXAMPLE.get(reduction)
    if found is None:
        def per_example(x, like=None):
            return reduction(x, axis=rt.batch_axes(x if like is None else like))
        per_example.reduction = reduction
        per_example.__name__ = f"{reduction.__name__}_per_example"
        per_example.__qualname__ = per_example.__name__
        found = _PER_EXAMPLE[reduction] = per_example
        register_compiled_form(ReducePerExample(), per_example)
    return found


_PER_EXAMPLE: dict = {}


class MeanVjpPerExample:
    def type(self, fn, types, kw, loc):
        return SumVjpPerExample().type(fn, types, kw, loc)

    def lower(self, L, fn, vals, kw, rtype):
        spread = SumVjpPerExample().lower(L, fn, vals, kw, rtype)
        x, xt = vals[1]
        count = S.convert(L, PerExampleShape().lower(L, rt.batch_size_of, [(x, xt)], {}, T.INT),
                          T.INT, rtype.elem)

        def divide(items):
            return S.binary(L, "truediv", items[0][0], count, rtype.elem), rtype.elem

        A.elementwise(L, divide, [(spread, rtype)], rtype.dtype, out=(spread, rtype))
        return spread


class MaxVjpPerExample:
    def type(self, fn, types, kw, loc):
        g, ans, x = types if len(types) == 3 else (None,) * 3
        if kw or not all(isinstance(t, T.Array) and t.ndim == 1 for t in (g, ans)) or \
                not isinstance(x, T.Array) or x.ndim < 2:
            return None
        flat = TABLE[rt.max_vjp].type(rt.max_vjp, [g, ans, T.Array(x.dtype, 2)], {}, loc,
                                      [None, None, None, _Const(1), _Const(False)], {})
        return None if flat is None else T.Array(flat.dtype, x.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        g, ans, (x, xt) = vals
        flat_t = T.Array(xt.dtype, 2)
        flat = BatchFlat().lower(L, rt.batch_flat, [(x, xt)], {}, flat_t)
        L.call_atoms = ([None, None, None, _Const(1), _Const(False)], {})
        r_t = T.Array(rtype.dtype, 2)
        r = TABLE[rt.max_vjp].lower(L, rt.max_vjp, [g, ans, (flat, flat_t)], {}, r_t)
        shape = int_tuple(L, A.shape_list(L, x, xt))
        return Reshape().lower(L, np.reshape, [(r, r_t), shape], {}, rtype)


class _Const:
    def __init__(self, value):
        self.value = value


def mean_vjp_per_example(g, x):
    """``rt.mean_vjp(g, x, rt.batch_axes(x))``."""
    return rt.mean_vjp(g, x, rt.batch_axes(x))


def max_vjp_per_example(g, ans, x):
    """``rt.max_vjp(g, ans, x, rt.batch_axes(x))``."""
    return rt.max_vjp(g, ans, x, rt.batch_axes(x))


register(BatchUnbroadcast(), rt.batch_unbroadcast)
register_compiled_form(SumVjpPerExample(), sum_vjp_per_example)
register_compiled_form(MeanVjpPerExample(), mean_vjp_per_example)
register_compiled_form(MaxVjpPerExample(), max_vjp_per_example)
