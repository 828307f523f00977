"""Where the batch axis is, in LLVM IR: ``vmap``'s run-time helpers (``s2s_runtime.batching``)
that size, view, reshape, move and stack batched values, for ``jit(vmap(f))``
(``s2s/core/vmap_jit.py``).

Batched values carry the batch on axis 0.  Lowered here (same results as the Python
helpers, for the types below; any other use stays refused by the call table, naming
the helper and its argument types):

* ``batch_size(x, ...)``: ``x.shape[0]`` of the first array leaf (tuples searched);
* ``batch_lift(x, n)``: ``n`` copies of a number or array stacked on a new axis 0;
* ``batch_unlift(x)``: its transpose, the sum over axis 0 of an array;
* ``batch_view(x, n)``: ``x`` (a number or an array) seen ``n`` times along a new
  axis 0 -- a view with stride 0 on that axis (Python's is a read-only broadcast);
* ``batch_align(x, other, other_batched)``: ``x`` viewed with size-1 axes after the
  batch axis until its per-example rank reaches ``other``'s (a view: stride 0 axes);
* ``batch_index(x, index)``: ``(slice(None),) + index`` for an array ``x``, ``index``
  for a tuple or a list (a constant ``index`` of a tuple: that constant, known when
  compiling, so the tuple's item is read by it);
* ``batch_shape(x)``: ``x.shape[1:]`` for an array ``x`` (``(len,) + shape[1:]`` for a
  tuple of batched arrays of one shape, or a list of batched arrays, of the first item;
  ``(0, 0, ...)`` for an empty list); ``batch_axes(x)``:
  ``(1, ..., x.ndim - 1)``, and ``batch_axis(axis)``/``batch_axis_of(axis, x)`` of a
  constant ``axis``, compile-time constants (axes that reductions read);
* ``batch_len(x)``/``batch_ndim(x)``/``batch_size_of(x)``: ``len``, ``np.ndim`` and
  ``np.size`` of one example of an array ``x`` (``len`` of a tuple: its length);
* ``np.moveaxis(a, source, destination)`` with constant axes (a view), which
  ``in_axes``/``out_axes`` other than 0 use;
* ``batch_rows(x)``: ``np.swapaxes(x, 0, 1)`` for an array of rank >= 2 (a view), a
  tuple or a list as it is;
* ``batch_flat(x)``: each example of ``x`` flattened, ``x.reshape(n, -1)``;
* ``batch_reshape_arg(x, shape)``: ``(x.shape[0],) + shape`` for ``np.reshape``;
* ``transpose_per_example(x)`` (``np.transpose(x, batch_transpose_axes(x, None))``,
  ``x.T`` of each example): the axes after the batch axis reversed, a view;
* ``batch_snapshot(x)``: a copy of an array, a number as it is;
* ``batch_array(np.array or np.asarray, (x_0, ..., x_m-1))`` of batched arrays of one
  rank, or nested tuples / list displays of them: ``out[:, j] = x_j``, shape
  ``(n, m) + x_0.shape[1:]`` (shapes checked; ``BatchArray``); its transpose
  ``batch_array_vjp(g, x)``: the views ``g[:, j]`` nested as ``x`` (``BatchArrayVjp``);
  for a list ``x`` of batched arrays (each example's list), the items stacked on axis
  1, and the views ``g[:, j]`` as a list.
"""
from __future__ import annotations

import numpy as np
import s2s_runtime as rt
from llvmlite import ir as ll

from ....ir import nodes as ir
from ....errors import located

from ..values import arrays as A
from ..values import lists as Li
from ..values import scalars as S
from ..values.nesting import fill_nested, leaf_values, regular_nesting
from ..typing import types as T
from ..numerics import reductions as R
from ..numerics.axis import reduce_axis
from ..ops.build import Reshape
from ..ops.calls import register, register_compiled_form


def restrided(L, rtype, x, shape, strides):
    """A view of array ``x``'s data (its data and block pointers) as ``rtype`` with these
    shape and strides (lists of i64 values): no copy."""
    return A.make(L, rtype, L.b.extract_value(x, 0), L.b.extract_value(x, 1), shape, strides)


def int_tuple(L, values):
    """``(value, Tuple of ints)`` holding the i64 ``values`` (a shape, an axes tuple)."""
    t = T.Tuple((T.INT,) * len(values))
    out = ll.Constant(t.llvm(), None)
    for k, v in enumerate(values):
        out = L.b.insert_value(out, v, k)
    return out, t


class BatchView:
    """``batch_view(x, n)``: ``x`` seen ``n`` times along a new axis 0 (stride 0); a
    container (a tuple, a list display, a dict of constant keys) leaf by leaf."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not (isinstance(types[1], T.Scalar)
                                         and types[1].dtype in ("i8", "b1")):
            return None
        x = types[0]
        if isinstance(x, T.Tuple):
            items = [self.type(fn, (t, types[1]), kw, loc) for t in x.items]
            return None if None in items else T.same_kind(x, items)
        if isinstance(x, T.Scalar):
            return T.Array(x.dtype, 1)
        return T.Array(x.dtype, x.ndim + 1) if isinstance(x, T.Array) else None

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), (n, nt) = vals
        if isinstance(xt, T.Tuple):
            out = ll.Constant(rtype.llvm(), None)
            for k, (it, rt_k) in enumerate(zip(xt.items, rtype.items)):
                item = self.lower(L, fn, [(L.b.extract_value(x, k), it), (n, nt)], kw, rt_k)
                out = L.b.insert_value(out, item, k)
            return out
        return self.leaf(L, x, xt, S.convert(L, n, nt, T.INT), rtype)

    def leaf(self, L, x, xt, n, rtype):
        """``x`` (a number or an array) seen ``n`` times."""
        if isinstance(xt, T.Scalar):  # one element, read n times
            one = A.allocate(L, T.Array(xt.dtype, 1), [A.ONE])
            A.fill(L, one, T.Array(xt.dtype, 1), x)
            return restrided(L, rtype, one, [n], [A.ZERO])
        return restrided(L, rtype, x, [n] + A.shape_list(L, x, xt),
                         [A.ZERO] + A.strides_list(L, x, xt))


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
    (``batch_view``'s view, copied); a container leaf by leaf (a tuple, a list display or
    a dict of numbers and arrays: the same container of lifted leaves), so an empty list
    (``[]`` before anything is appended: no leaf) is itself."""

    def type(self, fn, types, kw, loc):
        if not kw and len(types) == 2 and isinstance(types[0], T.List) \
                and types[0].elem is None:
            return types[0]
        return super().type(fn, types, kw, loc)

    def lower(self, L, fn, vals, kw, rtype):
        if isinstance(vals[0][1], T.List):
            return vals[0][0]
        return super().lower(L, fn, vals, kw, rtype)

    def leaf(self, L, x, xt, n, rtype):
        if isinstance(xt, T.Scalar):
            return R.create(L, rtype, [n], (x, xt))
        return A.copy(L, super().leaf(L, x, xt, n, rtype), rtype)


class BatchUnlift:
    """``batch_unlift(x)``: ``np.sum(x, axis=0)`` of an array (the transpose of
    ``batch_lift``: each example's contributions summed)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], T.Array) or not types[0].ndim:
            return None
        total = R.sum_type(types[0])
        return total if types[0].ndim == 1 else T.Array(total.dtype, types[0].ndim - 1)

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        if xt.ndim == 1:
            return R.sum_all(L, x, xt)
        return reduce_axis(L, x, xt, 0, False, "sum", rtype)


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
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if not kw and len(types) == 2 and isinstance(types[0], (T.Tuple, T.List)):
            k = getattr(atoms[1], "value", None) if len(atoms) > 1 else None
            if isinstance(types[0], T.Tuple) and type(k) is int:
                return T.Static(k)  # a constant index of a tuple: known when compiling
            return types[1]  # a container is indexed as it is
        if kw or len(types) != 2 or not isinstance(types[0], T.Array):
            return None
        index = types[1]
        whole = isinstance(index, T.Tuple) and not isinstance(index, T.ListLiteral)
        items = index.items if whole else (index,)  # (a list display: one fancy index)
        return T.Tuple((T.Slice((False, False, False)),) + tuple(items))

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        (idx, it) = vals[1]
        if isinstance(vals[0][1], (T.Tuple, T.List)):
            return idx
        out = ll.Constant(rtype.llvm(), None)
        out = b.insert_value(out, ll.Constant(rtype.items[0].llvm(), None), 0)
        parts = [b.extract_value(idx, k) for k in range(len(it.items))] \
            if isinstance(it, T.Tuple) and not isinstance(it, T.ListLiteral) else [idx]
        for k, p in enumerate(parts):
            out = b.insert_value(out, p, k + 1)
        return out


class BatchShape:
    """``batch_shape(x)``: ``x.shape[1:]`` of an array; of a (regularly nested) tuple or
    list display of batched arrays of one shape (numpy's array of them has the batch on
    the axis after the nesting levels): the lengths of the levels, then ``shape[1:]``."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1:
            return None
        x = types[0]
        if isinstance(x, T.Tuple):
            nesting = regular_nesting(x)
            if nesting is None:
                return None
            dims, leaves = nesting
            return T.Tuple((T.INT,) * (len(dims) + leaves[0].ndim - 1))
        if _batched_list(x):  # each example's list: its length, then an item's shape
            return T.Tuple((T.INT,) * x.elem.ndim)
        if not isinstance(x, T.Array) or not x.ndim:
            return None
        return T.Tuple((T.INT,) * (x.ndim - 1))

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        if _batched_list(xt):
            b = L.b
            data, _, n = Li.fields(L, x)
            slot = L.entry_alloca(xt.elem.llvm())
            b.store(ll.Constant(xt.elem.llvm(), None), slot)  # []: zeros
            with b.if_then(b.icmp_signed(">", n, A.ZERO)):
                b.store(Li.load(L, data, A.ZERO, xt), slot)
            return int_tuple(L, [n] + A.shape_list(L, b.load(slot), xt.elem)[1:])[0]
        if isinstance(xt, T.Tuple):
            items = list(_leaves(L, [(x, xt)]))
            dims = A.shape_list(L, *items[0])
            for v, t in items[1:]:
                L.check(A.differs(L, A.shape_list(L, v, t), dims), ValueError,
                        "vmap: the shape of a tuple of arrays of different shapes")
            dims = [A.i64(n) for n in regular_nesting(xt)[0]] + dims[1:]
        else:
            dims = A.shape_list(L, x, xt)[1:]
        return int_tuple(L, dims)[0]


class BatchAxes:
    """``batch_axes(x)``: a compile-time tuple of ints (``types.Static``), which an axis
    argument reads as a constant (``np.sum(y, axis=batch_axes(x))``)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], T.Array):
            return None
        return T.Static(tuple(range(1, types[0].ndim)))


class BatchAxisArgument:
    """``batch_axis(axis)``, ``batch_axis_in(axis, x, new_axes)`` and
    ``batch_axis_of(axis, x, new_axes)`` of a constant ``axis`` (a compile-time one:
    ``batch_axes``, ``tuple(range(...))`` of ``np.ndim``): the axes of the batched array,
    themselves a compile-time constant (``types.Static``) that an axis argument reads
    (``np.sum(y, axis=batch_axis_of(axes, y))``).  An axis one example of ``x`` does not
    have is numpy's ``AxisError`` at the call's line, when compiling (the rank is known).

    An ``axis`` known only at run time (one integer: ``np.cov``'s, chosen by a flag) gives
    a run-time integer, checked against the example's rank there (numpy's ``AxisError``).
    """

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or not atoms or not all(isinstance(a, ir.Const) for a in atoms[2:]):
            return None
        if not isinstance(atoms[0], ir.Const):  # integers known when running
            axis_t = types[0]
            items = axis_t.items if type(axis_t) is T.Tuple else (axis_t,)
            if not all(isinstance(t, T.Scalar) and t.dtype == "i8" for t in items) or \
                    fn is not rt.batch_axis and not (len(types) in (2, 3) and
                                                      isinstance(types[1], T.Array)):
                return None
            return T.Tuple((T.INT,) * len(items)) if type(axis_t) is T.Tuple else T.INT
        axis = atoms[0].value
        try:
            if fn is rt.batch_axis:
                if len(types) != 1:
                    return None
                value = rt.batch_axis(axis)
            else:
                if len(types) not in (2, 3) or not isinstance(types[1], T.Array):
                    return None
                new_axes = atoms[2].value if len(atoms) == 3 else 0
                value = fn(axis, np.empty((0,) * types[1].ndim), new_axes)
        except np.exceptions.AxisError as err:
            raise np.exceptions.AxisError(located(str(err), loc)) from None
        return T.Static(value) if value is None or type(value) is int or \
            T.is_int_tuple(value) else None


    def lower(self, L, fn, vals, kw, rtype):
        """Run-time integer axes (``type``'s ``T.INT`` or a tuple of them): each ``axis +
        1`` if non-negative, else itself, after numpy's ``AxisError`` check against one
        example's rank."""
        b = L.b

        def shifted(axis):
            if fn is not rt.batch_axis:
                new_axes = L.call_atoms[0][2].value if len(vals) == 3 else 0
                nd = A.i64(vals[1][1].ndim - 1 + new_axes)
                outside = b.or_(b.icmp_signed("<", axis, b.neg(nd)),
                                b.icmp_signed(">=", axis, nd))
                L.check(outside, np.exceptions.AxisError,
                        "axis {0} is out of bounds for array of dimension {1}", (axis, nd))
            return b.select(b.icmp_signed(">=", axis, A.ZERO), b.add(axis, A.ONE), axis)

        axis, axis_t = vals[0]
        if type(axis_t) is not T.Tuple:
            return shifted(axis)
        out = ll.Constant(rtype.llvm(), None)
        for k in range(len(axis_t.items)):
            out = b.insert_value(out, shifted(b.extract_value(axis, k)), k)
        return out


class BatchPadWidth:
    """``batch_pad_width(x, pad_width)``: ``np.pad``'s widths for batched ``x`` as a tuple
    of ``x.ndim`` pairs of integers, ``(0, 0)`` for the batch axis, then ``pad_width``
    broadcast to one ``(before, after)`` pair per per-example axis as numpy broadcasts it
    (an integer, one pair, or one pair per axis; run-time integers); numpy's
    ``ValueError`` at the call's line when compiling where it does not broadcast (the
    ranks are known)."""

    def type(self, fn, types, kw, loc):
        grid = self._grid(types, loc) if not kw and len(types) == 2 else None
        if grid is None:
            return None
        pair = T.Tuple((T.INT, T.INT))
        return T.Tuple((pair,) * (len(grid) + 1))

    @staticmethod
    def _paths(t, path=()):
        """An object array of the positions of ``t``'s integers in the value, shaped as
        numpy would shape ``np.asarray`` of it (None: not integers of one nesting)."""
        if isinstance(t, T.Scalar) and t.dtype == "i8":
            out = np.empty((), dtype=object)
            out[()] = path
            return out
        if type(t) in (T.Tuple, T.ListLiteral) and t.items:
            parts = [BatchPadWidth._paths(item, path + (k,)) for k, item in enumerate(t.items)]
            if any(p is None for p in parts) or len({p.shape for p in parts}) != 1:
                return None
            return np.stack(parts)
        return None

    def _grid(self, types, loc):
        x, width = types
        if not isinstance(x, T.Array) or x.ndim < 1:
            return None
        paths = self._paths(width)
        if paths is None:
            return None
        try:
            return np.broadcast_to(paths, (x.ndim - 1, 2))
        except ValueError as err:
            raise ValueError(located(str(err), loc)) from None

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), (width, wt) = vals
        b = L.b

        def read(path):
            v = width
            for k in path:
                v = b.extract_value(v, k)
            return v

        out = ll.Constant(rtype.llvm(), None)
        pairs = [(A.ZERO, A.ZERO)] + [(read(p[0]), read(p[1])) for p in
                                      self._grid([xt, wt], L.loc)]
        for k, (before, after) in enumerate(pairs):
            out = b.insert_value(out, before, [k, 0])
            out = b.insert_value(out, after, [k, 1])
        return out


class MoveAxis:
    """``np.moveaxis(a, source, destination)`` for constant integer axes: a view."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        _check_move_axes(types, atoms, loc)
        axes = _move_axes(types, atoms)
        return None if kw or axes is None else types[0]

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        order = _move_axes([xt], L.call_atoms[0])
        shape, strides = A.shape_list(L, x, xt), A.strides_list(L, x, xt)
        return restrided(L, xt, x, [shape[k] for k in order], [strides[k] for k in order])


def _axes_list(v):
    """A constant ``source``/``destination`` of ``np.moveaxis`` as a list of ints (None
    if it is not an int or a tuple or list of them)."""
    items = list(v) if type(v) in (tuple, list) else [v]
    return items if all(type(k) is int for k in items) else None


def _check_move_axes(types, atoms, loc):
    """numpy's ``AxisError`` (at the call's line) for a constant axis out of range, and its
    ``ValueError`` for ``source`` and ``destination`` of different lengths."""
    if len(atoms) != 3 or not isinstance(types[0], T.Array):
        return
    nd = types[0].ndim
    lists = [_axes_list(getattr(a, "value", None)) for a in atoms[1:]]
    for items in lists:
        for v in items or ():
            if not -nd <= v < nd:
                raise np.exceptions.AxisError(located(
                    f"axis {v} is out of bounds for array of dimension {nd}", loc))
    if None not in lists and len(lists[0]) != len(lists[1]):
        raise ValueError(located("`source` and `destination` arguments must have the same "
                                 "number of elements", loc))


def _move_axes(types, atoms):
    """The order of the axes after ``np.moveaxis`` (None unless constant and in range):
    each source axis at its destination, the others in order in the places left."""
    if len(atoms) != 3 or not isinstance(types[0], T.Array):
        return None
    src, dst = (_axes_list(getattr(a, "value", None)) for a in atoms[1:])
    nd = types[0].ndim
    if src is None or dst is None or len(src) != len(dst) or \
            not all(-nd <= v < nd for v in src + dst):
        return None
    src, dst = [v % nd for v in src], [v % nd for v in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        return None
    rest = iter(k for k in range(nd) if k not in src)
    placed = dict(zip(dst, src))
    return [placed[k] if k in placed else next(rest) for k in range(nd)]


class BatchRows:
    """``batch_rows(x)`` of an array: ``np.swapaxes(x, 0, 1)``, a view; of a tuple or a
    list: the container itself."""

    def type(self, fn, types, kw, loc):
        if not kw and len(types) == 1 and isinstance(types[0], (T.Tuple, T.List)):
            return types[0]
        ok = not kw and len(types) == 1 and isinstance(types[0], T.Array) and types[0].ndim > 1
        return types[0] if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        if isinstance(xt, (T.Tuple, T.List)):
            return x
        shape, strides = A.shape_list(L, x, xt), A.strides_list(L, x, xt)
        return restrided(L, xt, x, [shape[1], shape[0]] + shape[2:],
                         [strides[1], strides[0]] + strides[2:])


class BatchFlat:
    """``batch_flat(x)``: ``x.reshape(x.shape[0], -1)``."""

    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) == 1 and isinstance(types[0], T.Array) and types[0].ndim
        return T.Array(types[0].dtype, 2) if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        dims = int_tuple(L, [A.shape_of(L, x, 0), L.b.neg(A.ONE)])
        return Reshape().lower(L, np.reshape, [(x, xt), dims], {}, rtype)


class BatchReshapeArg:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not isinstance(types[0], T.Array) or not types[0].ndim:
            return None
        shape = types[1]
        items = list(shape.items) if isinstance(shape, T.Tuple) else [shape]
        if not all(isinstance(t, T.Scalar) and t.dtype in ("i8", "b1") for t in items):
            return None
        return T.Tuple((T.INT,) * (len(items) + 1))

    def lower(self, L, fn, vals, kw, rtype):
        (x, xt), (shape, st) = vals
        items = [L.b.extract_value(shape, k) for k in range(len(st.items))] \
            if isinstance(st, T.Tuple) else [shape]
        types = list(st.items) if isinstance(st, T.Tuple) else [st]
        return int_tuple(L, [A.shape_of(L, x, 0)] +
                     [S.convert(L, v, t, T.INT) for v, t in zip(items, types)])[0]


class PerExampleShape:
    """``batch_len``, ``batch_ndim``, ``batch_size_of`` of an array (a tuple's length);
    ``batch_ndim`` is a compile-time int (``types.Static``)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1:
            return None
        x = types[0]
        if fn is rt.batch_len and isinstance(x, T.Tuple):
            return T.INT
        ok = isinstance(x, T.Array) and x.ndim >= (2 if fn is rt.batch_len else 1)
        if ok and fn is rt.batch_ndim:
            return T.Static(x.ndim - 1)  # known when compiling, as np.ndim (ops/arrays.py)
        return T.INT if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        if isinstance(xt, T.Tuple):
            return A.i64(len(xt.items))
        if fn is rt.batch_len:
            return A.shape_of(L, x, 1)
        if fn is rt.batch_ndim:
            return A.i64(xt.ndim - 1)
        n = A.ONE
        for d in A.shape_list(L, x, xt)[1:]:
            n = L.b.mul(n, d)
        return n


class TransposePerExample:
    """``transpose_per_example(x)``, and ``(g, x)``: the cotangent (the same
    permutation, its own inverse), the real part where ``x`` is real."""

    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) in (1, 2) and isinstance(types[0], T.Array) and \
            types[0].ndim and (len(types) == 1 or getattr(types[1], "ndim", -1) == types[0].ndim)
        if ok and len(types) == 2 and types[0].dtype == "c16" and types[1].dtype != "c16":
            return T.Array("f8", types[0].ndim)
        return types[0] if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        shape, strides = A.shape_list(L, x, xt), A.strides_list(L, x, xt)
        out = restrided(L, xt, x, shape[:1] + shape[:0:-1], strides[:1] + strides[:0:-1])
        return out if rtype == xt else A.copy(L, out, xt, rtype.dtype)


class TransposeAxes:
    """``batch_transpose_axes(x, None)``: ``(0, ndim - 1, ..., 1)``."""

    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) in (1, 2) and isinstance(types[0], T.Array) and \
            (len(types) == 1 or isinstance(types[1], T.NoneType))
        return T.Tuple((T.INT,) * types[0].ndim) if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        nd = len(rtype.items)
        return int_tuple(L, [A.i64(0)] + [A.i64(k) for k in range(nd - 1, 0, -1)])[0]


def transpose_per_example(x, like=None):
    """``np.transpose(x, rt.batch_transpose_axes(x, None))``; with ``like``, the cotangent
    ``rt.transpose_vjp(x, like, rt.batch_transpose_axes(like, None))``."""
    if like is not None:
        return rt.transpose_vjp(x, like, rt.batch_transpose_axes(like, None))
    return np.transpose(x, rt.batch_transpose_axes(x, None))


class BatchSnapshot:
    def type(self, fn, types, kw, loc):
        ok = not kw and len(types) == 1 and isinstance(types[0], (T.Array, T.Scalar))
        return types[0] if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        return A.copy(L, x, xt) if isinstance(xt, T.Array) else x


class BatchArray:
    """``batch_array(np.array or np.asarray, x)``: ``x`` a batched array (as it is, for
    ``np.asarray``), or a regular nesting of tuples / list displays (``values/nesting.regular_nesting``)
    of batched arrays of one shape: ``out[:, j_1, ..., j_d] = x[j_1]...[j_d]``, shape
    ``(n, m_1, ..., m_d) + x_0.shape[1:]`` (shapes checked at run time)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 2 or getattr(atoms[0], "value", None) not in (np.array,
                                                                             np.asarray):
            return None
        if isinstance(types[1], T.Array) and types[1].ndim >= 1 and \
                atoms[0].value is np.asarray:
            return types[1]  # a batched array converted as it is: itself
        if _batched_list(types[1]):  # a list of batched items: one more axis
            return T.Array(types[1].elem.dtype, types[1].elem.ndim + 1)
        nesting = None if isinstance(types[1], T.Array) else regular_nesting(types[1])
        if nesting is None:
            return None
        dims, leaves = nesting
        st = T.promote(*(t.elem for t in leaves))
        return T.Array(st.dtype, leaves[0].ndim + len(dims))

    def lower(self, L, fn, vals, kw, rtype):
        tup, tt = vals[1]
        if isinstance(tt, T.Array):
            return tup
        if _batched_list(tt):  # np.array of each example's list: the items stacked on
            return _first_axes_swapped(L, *Li.as_array(L, tup, tt))  # axis 1
        dims, _ = regular_nesting(tt)
        items = leaf_values(L, tup, tt)
        a, at = items[0]
        first = A.shape_list(L, a, at)
        out = A.allocate(L, rtype, first[:1] + [A.i64(m) for m in dims] + first[1:])
        fill_nested(L, out, rtype, items, dims)
        return out


class BatchArrayJvp:
    """``batch_array_jvp(t, ans, object, copy=True, ndmin=0)`` for a regular nesting of
    batched tangents (None items: zeros), or a list of them of ``ans``'s dtype: them in
    ``ans``'s batched shape and dtype (the real part for a real ``ans``), as
    ``array_jvp`` does for each example."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or not 3 <= len(types) <= 5 or not isinstance(types[1], T.Array):
            return None
        ndmin = getattr(atoms[4], "value", None) if len(atoms) > 4 else 0
        if _batched_list(types[0]):  # a list of batched tangents: stacked on axis 1
            t, ans = types[0].elem, types[1]
            ok = ndmin in (0, 1) and ans.ndim == t.ndim + 1 and ans.dtype == t.dtype
            return ans if ok else None
        nesting = regular_nesting(types[0], nones=True)
        if nesting is None or ndmin not in (0, 1) or types[1].dtype not in ("f4", "f8", "c16"):
            return None
        dims, leaves = nesting
        rank = next(t.ndim for t in leaves if isinstance(t, T.Array)) + len(dims)
        return types[1] if types[1].ndim == rank else None

    def lower(self, L, fn, vals, kw, rtype):
        (t, tt), (ans, ans_t) = vals[0], vals[1]
        if _batched_list(tt):  # (a fresh array: np.array of the list, axes swapped)
            out = _first_axes_swapped(L, *Li.as_array(L, t, tt))
            L.check(A.differs(L, A.shape_list(L, out, rtype), A.shape_list(L, ans, ans_t)),
                    ValueError, "vmap: np.array of tangents of different shapes")
            return out
        dims, _ = regular_nesting(tt, nones=True)
        items = leaf_values(L, t, tt)
        want = A.shape_list(L, ans, ans_t)
        a, at = next((v, t) for v, t in items if isinstance(t, T.Array))
        L.check(A.differs(L, A.shape_list(L, a, at), want[:1] + want[1 + len(dims):]),
                ValueError, "vmap: np.array of tangents of different shapes")
        out = A.allocate(L, rtype, want, zeroed=True)
        fill_nested(L, out, rtype, items, dims)  # the other items checked against ``a``
        return out


class BatchArrayVjp:
    """``batch_array_vjp(g, x)`` for a regular nesting ``x`` of batched arrays of one rank:
    the nesting of the views ``g[:, j_1, ..., j_d]`` (each example's ``array_vjp``: the
    cotangent of item ``x[j_1]...[j_d]``), laid out as ``x`` is.  ``g`` of ``x``'s dtype
    kind (a complex ``g`` of real items is left to Python)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not isinstance(types[0], T.Array):
            return None
        if _batched_list(types[1]):  # a list: the views g[:, j] as its items
            return Li.rows_type(types[0]) if types[0].ndim == types[1].elem.ndim + 1 \
                else None
        nesting = regular_nesting(types[1])
        if nesting is None:
            return None
        dims, leaves = nesting
        g = types[0]
        if g.ndim != leaves[0].ndim + len(dims) or \
                g.dtype == "c16" and any(t.dtype != "c16" for t in leaves):
            return None
        return _nested_like(types[1], T.Array(g.dtype, leaves[0].ndim))

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        (g, gt), (_, xt) = vals
        if _batched_list(xt):
            return Li.from_array(L, _first_axes_swapped(L, g, gt), gt, rtype)
        dims, leaves = regular_nesting(xt)
        shape, strides = A.shape_list(L, g, gt), A.strides_list(L, g, gt)
        row_t = T.Array(gt.dtype, leaves[0].ndim)

        def build(t, rt_, position):
            if isinstance(t, T.Array):
                offset = A.ZERO
                for k, j in enumerate(position):
                    offset = b.add(offset, b.mul(A.i64(j), strides[1 + k]))
                data = b.gep(b.extract_value(g, 0), [offset])
                return A.make(L, row_t, data, b.extract_value(g, 1),
                              shape[:1] + shape[1 + len(dims):],
                              strides[:1] + strides[1 + len(dims):])
            out = ll.Constant(rt_.llvm(), None)
            for k, (it, irt) in enumerate(zip(t.items, rt_.items)):
                out = b.insert_value(out, build(it, irt, position + (k,)), k)
            return out

        return build(xt, rtype, ())


def _batched_list(t) -> bool:
    """``t`` is a list of batched arrays (each example's list of numbers or arrays)."""
    return isinstance(t, T.List) and isinstance(t.elem, T.Array) and t.elem.ndim >= 1


def _first_axes_swapped(L, a, at):
    """A view of ``a`` with its first two axes swapped (``np.swapaxes(a, 0, 1)``)."""
    shape, strides = A.shape_list(L, a, at), A.strides_list(L, a, at)
    order = [1, 0] + list(range(2, at.ndim))
    return A.make(L, at, L.b.extract_value(a, 0), L.b.extract_value(a, 1),
                  [shape[k] for k in order], [strides[k] for k in order])


def _nested_like(t, leaf):
    """The type of ``t``'s nesting (tuples stay tuples, list displays list displays) with
    ``leaf`` at every leaf."""
    if isinstance(t, T.Array):
        return leaf
    return T.same_kind(t, [_nested_like(i, leaf) for i in t.items])


register(BatchSize(), rt.batch_size)
register(BatchArrayVjp(), rt.batch_array_vjp)
register(BatchArrayJvp(), rt.batch_array_jvp)
register(BatchLift(), rt.batch_lift)
register(BatchUnlift(), rt.batch_unlift)
register(BatchAlign(), rt.batch_align)
register(BatchIndex(), rt.batch_index)
register(BatchShape(), rt.batch_shape)
register(BatchAxes(), rt.batch_axes)
register(BatchAxisArgument(), rt.batch_axis, rt.batch_axis_in, rt.batch_axis_of)
register(BatchRows(), rt.batch_rows)
register(MoveAxis(), np.moveaxis)
register(BatchPadWidth(), rt.batch_pad_width)
register_compiled_form(TransposePerExample(), transpose_per_example)
register(TransposeAxes(), rt.batch_transpose_axes)
register(PerExampleShape(), rt.batch_len, rt.batch_ndim, rt.batch_size_of)
register(BatchSnapshot(), rt.batch_snapshot)
register(BatchArray(), rt.batch_array)
register(BatchView(), rt.batch_view)
register(BatchFlat(), rt.batch_flat)
register(BatchReshapeArg(), rt.batch_reshape_arg)
