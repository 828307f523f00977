"""The run-time helpers of ``vmap``'s batched code (``s2s_runtime.batching``) in LLVM IR,
so that ``jit(vmap(f))`` compiles the batched program (``s2s/core/vmap_jit.py``).

Batched values carry the batch on axis 0.  Lowered here (same results as the Python
helpers, for the types below; any other use stays refused by the call table, naming
the helper and its argument types):

* ``batch_size(x, ...)``: ``x.shape[0]`` of the first array leaf (tuples searched);
* ``batch_lift(x, n)``: ``n`` copies of a number or array stacked on a new axis 0;
* ``batch_align(x, other, other_batched)``: ``x`` viewed with size-1 axes after the
  batch axis until its per-example rank reaches ``other``'s (a view: stride 0 axes);
* ``batch_index(x, index)``: ``(slice(None),) + index`` for an array ``x``, ``index``
  for a tuple;
* ``batch_shape(x)``: ``x.shape[1:]`` for an array ``x`` (``(len,) + shape[1:]`` for a
  tuple of batched arrays of one shape); ``batch_axes(x)``:
  ``(1, ..., x.ndim - 1)``;
* ``np.moveaxis(a, source, destination)`` with constant axes (a view), which
  ``in_axes``/``out_axes`` other than 0 use;
* ``batch_mask(c)`` of a boolean vector; ``batch_select(c, a, b)``: ``np.where`` with
  ``c`` viewed as ``(n, 1, ..., 1)`` (``b`` None: ``a``), for numbers and arrays;
* ``batch_rows(x)``: ``np.swapaxes(x, 0, 1)`` for an array of rank >= 2 (a view), a
  tuple as it is;
* ``batch_unbroadcast(g, x, True, x_batched)``: each example of ``g`` summed to the
  per-example shape of ``x`` (``contractions.einsum2`` with the summed letters);
  ``sum_vjp_per_example(g, x)`` (``core/vmap_jit.py``'s form of ``sum_vjp(g, x,
  batch_axes(x))``): ``g[b]`` spread over example ``b`` of ``x``;
* ``reduce_per_example(fn)(x)`` (what ``core/vmap_jit.py`` makes of ``fn(x, axis=batch_axes(x))``):
  the reduction ``fn`` (sum, prod, mean, max, min) of each example: ``x`` as
  ``(n, -1)``, reduced over axis 1.
"""
from __future__ import annotations

import numpy as np
import s2s_runtime as rt

from llvmlite import ir as ll

from . import arrays as A
from . import reductions as R
from . import scalars as S
from . import types as T
from .axis import reduce_axis
from .calls import register, register_compiled_form
from .contractions import einsum2
from . import batch_indexing, batch_values  # noqa: F401  (they register themselves)
from .batching_more import BatchFlat, BatchView, int_tuple, restrided
from .ops_arrays import Reduce
from .ops_more import Elementwise


class BatchSize:
    """``batch_size(*xs)``: axis 0 of the first array leaf (tuples searched in order)."""

    def type(self, fn, types, kw, loc):
        first = next((t for t in _leaf_types(types) if isinstance(t, T.Array) and t.ndim), None)
        return T.INT if first is not None and not kw else None

    def lower(self, L, fn, vals, kw, rtype):
        a, t = next((v, t) for v, t in _leaves(L, vals) if isinstance(t, T.Array) and t.ndim)
        return A.shape_of(L, a, 0)


def _leaf_types(types):
    for t in types:
        if isinstance(t, T.Tuple):
            yield from _leaf_types(t.items)
        else:
            yield t


def _leaves(L, vals):
    for v, t in vals:
        if isinstance(t, T.Tuple):
            yield from _leaves(L, [(L.b.extract_value(v, k), it) for k, it in enumerate(t.items)])
        else:
            yield v, t


class BatchLift(BatchView):
    """``batch_lift(x, n)``: ``x`` repeated ``n`` times along a new axis 0, a new array
    (``batch_view``'s view, copied)."""

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), (n, nt) = vals
        if isinstance(xt, T.Scalar):
            return R.create(L, rtype, [S.convert(L, n, nt, T.INT)], (x, xt))
        return A.copy(L, super().lower(L, fn, vals, kw, rtype), rtype)


def _pad(types, atoms):
    x, other = types[0], types[1]
    flag = getattr(atoms[2], "value", None) if len(atoms) == 3 else None
    if not isinstance(x, T.Array) or not x.ndim or not isinstance(flag, bool):
        return None
    if not isinstance(other, (T.Array, T.Scalar)):
        return None
    per = getattr(other, "ndim", 0) - (1 if flag else 0)
    return max(per - (x.ndim - 1), 0)


class BatchAlign:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        pad = None if kw or len(types) != 3 else _pad(types, atoms)
        return None if pad is None else T.Array(types[0].dtype, types[0].ndim + pad)

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        pad = rtype.ndim - xt.ndim
        if not pad:
            return x
        shape, strides = A.shape_list(L, x, xt), A.strides_list(L, x, xt)
        return restrided(L, rtype, x, shape[:1] + [A.ONE] * pad + shape[1:],
                         strides[:1] + [A.ZERO] * pad + strides[1:])


class BatchIndex:
    def type(self, fn, types, kw, loc):
        if not kw and len(types) == 2 and isinstance(types[0], T.Tuple):
            return types[1]  # a container is indexed as it is
        if kw or len(types) != 2 or not isinstance(types[0], T.Array):
            return None
        index = types[1]
        items = index.items if isinstance(index, T.Tuple) else (index,)
        return T.Tuple((T.Slice((False, False, False)),) + tuple(items))

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        (idx, it) = vals[1]
        if isinstance(vals[0][1], T.Tuple):
            return idx
        out = ll.Constant(rtype.llvm(), None)
        out = b.insert_value(out, ll.Constant(rtype.items[0].llvm(), None), 0)
        parts = [b.extract_value(idx, k) for k in range(len(it.items))] \
            if isinstance(it, T.Tuple) else [idx]
        for k, p in enumerate(parts):
            out = b.insert_value(out, p, k + 1)
        return out


class BatchShape:
    """``batch_shape(x)``: ``x.shape[1:]`` of an array; of a tuple of batched arrays of
    one shape (numpy's array of them has the batch on axis 1): ``(len,) + shape[1:]``."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1:
            return None
        x = types[0]
        if isinstance(x, T.Tuple) and x.items and all(
                isinstance(t, T.Array) and t.ndim == x.items[0].ndim >= 1 for t in x.items):
            return T.Tuple((T.INT,) * x.items[0].ndim)
        if not isinstance(x, T.Array) or not x.ndim:
            return None
        return T.Tuple((T.INT,) * (x.ndim - 1))

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        if isinstance(xt, T.Tuple):
            items = list(_leaves(L, [(x, xt)]))
            dims = A.shape_list(L, *items[0])
            for v, t in items[1:]:
                L.check(A._differs(L, A.shape_list(L, v, t), dims), ValueError,
                        "vmap: the shape of a tuple of arrays of different shapes")
            dims = [A.i64(len(items))] + dims[1:]
        else:
            dims = A.shape_list(L, x, xt)[1:]
        return int_tuple(L, dims)[0]


class BatchAxes:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], T.Array):
            return None
        return T.Tuple((T.INT,) * max(types[0].ndim - 1, 0))

    def lower(self, L, fn, vals, kw, rtype):
        return int_tuple(L, [A.i64(k + 1) for k in range(len(rtype.items))])[0]


class MoveAxis:
    """``np.moveaxis(a, source, destination)`` for constant integer axes: a view."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        axes = _move_axes(types, atoms)
        return None if kw or axes is None else types[0]

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        order = _move_axes([xt], L.call_atoms[0])
        shape, strides = A.shape_list(L, x, xt), A.strides_list(L, x, xt)
        return restrided(L, xt, x, [shape[k] for k in order], [strides[k] for k in order])


def _move_axes(types, atoms):
    """The order of the axes after ``np.moveaxis`` (None unless constant and in range)."""
    if len(atoms) != 3 or not isinstance(types[0], T.Array):
        return None
    src, dst = (getattr(a, "value", None) for a in atoms[1:])
    nd = types[0].ndim
    if not all(type(v) is int and -nd <= v < nd for v in (src, dst)):
        return None
    order = [k for k in range(nd) if k != src % nd]
    order.insert(dst % nd, src % nd)
    return order


class BatchMask:
    """``batch_mask(c)``: a boolean vector over the batch (comparisons make one)."""

    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) == 1 and types[0] == T.Array("b1", 1)
        return types[0] if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        return vals[0][0]


class BatchSelect:
    """``batch_select(c, a, b)``: ``np.where`` with ``c`` viewed as ``(n, 1, ..., 1)``
    (numbers and arrays; ``b`` None -- also an array variable still holding the None it
    started as, a null data pointer -- selects ``a``)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 3 or not isinstance(types[0], T.Array) or types[0].ndim != 1:
            return None
        c, a, b_ = types
        if isinstance(b_, T.NoneType):
            return a
        if not all(isinstance(t, (T.Array, T.Scalar)) for t in (a, b_)):
            return None
        return Elementwise().type(np.where, [_mask_type(c, a, b_), a, b_], {}, loc)

    def lower(self, L, fn, vals, kw, rtype):
        (c, ct), a, b_ = vals
        if isinstance(b_[1], T.NoneType):
            return a[0]
        if isinstance(b_[1], T.Array) and a[1] == rtype:
            # ``b`` may still hold the None it started as (a name a loop assigns later,
            # typed as the array it becomes: a null array): then ``a``, as in Python
            bld = L.b
            is_none = bld.icmp_unsigned("==", bld.ptrtoint(bld.extract_value(b_[0], 0), T.I64),
                                        A.ZERO)
            with bld.if_else(is_none) as (then, otherwise):
                with then:
                    then_end = bld.block
                with otherwise:
                    picked = self._where(L, c, ct, a, b_, rtype)
                    else_end = bld.block
            out = bld.phi(rtype.llvm())
            out.add_incoming(a[0], then_end)
            out.add_incoming(picked, else_end)
            return out
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


class BatchRows:
    """``batch_rows(x)`` of an array: ``np.swapaxes(x, 0, 1)``, a view; of a tuple: the
    tuple itself."""

    def type(self, fn, types, kw, loc):
        if not kw and len(types) == 1 and isinstance(types[0], T.Tuple):
            return types[0]
        ok = not kw and len(types) == 1 and isinstance(types[0], T.Array) and types[0].ndim > 1
        return types[0] if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        if isinstance(xt, T.Tuple):
            return x
        shape, strides = A.shape_list(L, x, xt), A.strides_list(L, x, xt)
        return restrided(L, xt, x, [shape[1], shape[0]] + shape[2:],
                         [strides[1], strides[0]] + strides[2:])


class ReducePerExample:
    """``fn(x, axis=(1, ..., x.ndim - 1))`` for a batched array ``x`` of rank >= 2."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], T.Array) or types[0].ndim < 2:
            return None
        whole = Reduce().type(fn.reduction, types, {}, loc, [None], {})
        return None if whole is None else T.Array(whole.dtype, 1)

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
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
            from .derivs import Unbroadcast  # derivs imports calls, which imports this module
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
            from .derivs import Unbroadcast
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
    so the call table can tell them apart)."""
    found = _PER_EXAMPLE.get(reduction)
    if found is None:
        def per_example(x):
            return reduction(x, axis=rt.batch_axes(x))
        per_example.reduction = reduction
        per_example.__name__ = f"{reduction.__name__}_per_example"
        per_example.__qualname__ = per_example.__name__
        found = _PER_EXAMPLE[reduction] = per_example
        register_compiled_form(ReducePerExample(), per_example)
    return found


_PER_EXAMPLE: dict = {}

register(BatchSize(), rt.batch_size)
register(BatchLift(), rt.batch_lift)
register(BatchAlign(), rt.batch_align)
register(BatchIndex(), rt.batch_index)
register(BatchShape(), rt.batch_shape)
register(BatchAxes(), rt.batch_axes)
register(BatchMask(), rt.batch_mask)
register(BatchSelect(), rt.batch_select)
register(BatchRows(), rt.batch_rows)
register(BatchUnbroadcast(), rt.batch_unbroadcast)
register_compiled_form(SumVjpPerExample(), sum_vjp_per_example)
register(MoveAxis(), np.moveaxis)
