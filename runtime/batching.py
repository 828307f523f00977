"""Run-time helpers of code batched by ``s2s.vmap`` (``s2s/batch/``).

A *batched* value carries the batch on axis 0 of every array leaf: a batch
of ``n`` per-example values of shape ``s`` is one array of shape ``(n,) + s``
(a per-example Python number becomes an array of shape ``(n,)``).  An
*unbatched* value is the same for every example and has its ordinary shape.
The helpers below are the few places where batched code needs to know a
value's per-example rank or whether it is a container; each states the
maths, and each that carries derivatives has JVP/VJP rules
(``s2s/batch/helper_rules.py``) so batched code can be differentiated.
"""
from __future__ import annotations

import numpy as np

from .adjoint import getitem_vjp
from .batching_lanes import BatchedRange
from .mappings import MISSING
from .records import is_record
from .tree import tree_leaves, tree_map

class BatchingRuntimeError(ValueError):
    """Batched code met values it cannot batch (containers of different lengths per
    example); ``vmap(..., fallback="loop")`` then runs the examples one by one."""


#: the message of a batched selection between containers of different structures
STRUCTURES_DIFFER = ("vmap: a branch or loop whose condition differs per example makes "
                     "containers of different lengths or structures (e.g. appending under a "
                     "condition); such code cannot be batched")


def _is_container(x) -> bool:
    return isinstance(x, (tuple, list, dict))


def batch_size(*xs) -> int:
    """The batch size: the length of axis 0 of the first array leaf of ``xs``."""
    for x in xs:
        for leaf in tree_leaves(x):
            if np.ndim(leaf):
                return int(np.shape(leaf)[0])
    raise ValueError("vmap: no batched array to take the batch size from")


def _lift_leaf(x, n, copy):
    if x is MISSING:  # a dict write's "no entry before" (mappings.py): the same for all
        return x
    a = np.asarray(x)
    out = np.broadcast_to(a, (n,) + a.shape)
    return np.array(out) if copy else out


def batch_lift(x, n):
    """``x`` (the same for every example) as a batched value: ``n`` copies stacked on a
    new axis 0 (writable; containers leaf by leaf)."""
    return tree_map(lambda v: _lift_leaf(v, n, True), x)


def batch_view(x, n):
    """``batch_lift`` without the copy: a read-only broadcast view of shape ``(n,) + shape``."""
    return tree_map(lambda v: _lift_leaf(v, n, False), x)


def batch_unlift(x):
    """Transpose of ``batch_lift``: the sum over the batch axis (leaf by leaf)."""
    return tree_map(lambda v: np.sum(v, axis=0), x)


def per_example_ndim(x, batched) -> int:
    return np.ndim(x) - (1 if batched else 0)


def batch_align(x, other, other_batched):
    """Batched ``x`` reshaped so that it broadcasts against ``other`` example by example:
    size-1 axes are inserted after the batch axis until ``x``'s per-example rank is at
    least ``other``'s, so numpy's right-aligned broadcasting pairs the per-example axes
    and the batch axis stays in front.  A pure reshape (its transpose reshapes back); a
    container or a record (a dataclass) as it is (its leaves broadcast by whoever reads
    them)."""
    if _is_container(x) or is_record(x):
        return x
    x = np.asarray(x)
    pad = per_example_ndim(other, other_batched) - (x.ndim - 1)
    if pad <= 0:
        return x
    return x.reshape(x.shape[:1] + (1,) * pad + x.shape[1:])


def batch_core_align(x, core, other, other_batched, other_core):
    """``batch_align`` for the operands of a generalized ufunc (``np.matvec``: core
    dimensions ``(m,n),(n)->(m)``): size-1 axes inserted after the batch axis until the
    *loop* rank of batched ``x`` (its per-example rank less its ``core`` dimensions) is at
    least ``other``'s, so numpy pairs the loop axes example by example.  A pure reshape."""
    x = np.asarray(x)
    pad = (per_example_ndim(other, other_batched) - other_core) - (x.ndim - 1 - core)
    if pad <= 0:
        return x
    return x.reshape(x.shape[:1] + (1,) * pad + x.shape[1:])


def batch_axes(x):
    """Every axis of batched ``x`` but the batch axis: ``(1, ..., ndim - 1)``."""
    return tuple(range(1, np.ndim(x)))


def batch_axis(axis):
    """A per-example axis argument in the batched array: non-negative axes move up by
    one (the batch axis is in front), negative ones count from the end and stay."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return type(axis)(batch_axis(a) for a in axis)
    axis = int(axis)
    return axis + 1 if axis >= 0 else axis


def batch_axis_in(axis, x, new_axes=0):
    """A per-example axis of batched ``x`` (an int, or a tuple or list of them) as an
    axis of ``x``, as ``batch_axis``, checked against one example: numpy's ``AxisError``
    where an example (rank ``np.ndim(x) - 1``, plus ``new_axes`` for a call that inserts
    axes, ``np.stack``) has no such axis, as the per-example call raises (``np.sort`` of
    a 0-d example with ``axis=-1``), never an axis that reaches the batch."""
    nd = np.ndim(x) - 1 + new_axes
    if isinstance(axis, (tuple, list)):
        return type(axis)(batch_axis_in(a, x, new_axes) for a in axis)
    axis = int(axis)
    if axis < -nd or axis >= nd:
        raise np.exceptions.AxisError(axis, nd)
    return axis + 1 if axis >= 0 else axis


def batch_axis_of(axis, x, new_axes=0):
    """``batch_axis_in(axis, x, new_axes)`` for an axis known only at run time: ``None``
    (every axis of an example) is every axis of batched ``x`` but the batch axis."""
    return batch_axes(x) if axis is None else batch_axis_in(axis, x, new_axes)


def batch_index(x, index):
    """The index that reads ``x[index]`` of every example of batched ``x``: containers are
    indexed as they are, arrays with ``(slice(None),) + index``."""
    if _is_container(x):
        return index
    return (slice(None),) + (index if isinstance(index, tuple) else (index,))


def batch_flat(x):
    """Batched ``x`` with each example flattened: shape ``(n, -1)``."""
    x = np.asarray(x)
    return x.reshape(x.shape[:1] + (-1,))


def batch_shape(x):
    """The shape of one example of batched ``x`` (for nested lists of batched items, the
    batch axis is the one after the list levels)."""
    s = np.shape(x)
    d = _depth(x) if isinstance(x, (list, tuple)) else 0
    return s[:d] + s[d + 1:]


def batch_len(x):
    """``len`` of one example of batched ``x`` (containers: their own length)."""
    return len(x) if _is_container(x) else np.shape(x)[1]


def batch_ndim(x):
    return np.ndim(x) - 1


def batch_size_of(x):
    """``np.size`` of one example of batched ``x``."""
    return int(np.prod(np.shape(x)[1:], dtype=np.int64))


def batch_reshape_arg(x, shape):
    """The ``newshape`` argument that reshapes every example of batched ``x`` to ``shape``."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return (np.shape(x)[0],) + shape


def batch_transpose_axes(x, axes=None):
    """``axes`` of a per-example transpose as axes of the batched array."""
    if axes is None:
        return (0,) + tuple(range(np.ndim(x) - 1, 0, -1))
    nd = np.ndim(x) - 1
    return (0,) + tuple(int(a) % nd + 1 for a in axes)


def batch_rows(x):
    """What iterating (or unpacking) one example of batched ``x`` yields, batched:
    containers as they are, arrays with the first two axes swapped (an involution, so
    it is its own transpose)."""
    if not isinstance(x, np.ndarray):
        return x
    return np.swapaxes(x, 0, 1)


def batch_example(x, k):
    """Example ``k`` of batched ``x`` (row ``k`` of every leaf; a slice or ``...`` as it
    is): what a loop over the examples would see in its ``k``-th run (the values an
    exception is raised with)."""
    return tree_map(lambda v: v if index_constant(v) else v[k], x)


def batch_example_vjp(g, x, k):
    """The cotangent of ``x`` for ``batch_example(x, k)``: ``g`` at row ``k`` of zeros
    shaped like ``x`` (an array), leaf by leaf for a container (a slice or ``...`` it
    holds: itself, as it carries no derivative)."""
    if isinstance(x, np.ndarray):
        return getitem_vjp(g, x, k)
    return tree_map(lambda gv, xv: xv if index_constant(xv) else getitem_vjp(gv, xv, k), g, x)


def batch_mask(c):
    """A batched condition as a boolean vector of shape ``(n,)`` (one decision per example)."""
    c = np.asarray(c, dtype=bool)
    if c.ndim != 1:
        raise ValueError("vmap: a branch or loop condition must be one truth value per "
                         f"example, got per-example shape {c.shape[1:]}")
    return c


def index_constant(v) -> bool:
    """Whether ``v`` is a slice or ``...``: an index part the same in every example, which
    a batched tuple holds unlifted (``batch/rules_core.container``)."""
    return isinstance(v, slice) or v is Ellipsis


def _select_leaf(c, a, b):
    if index_constant(a) or index_constant(b):
        if a == b:
            return a
        raise BatchingRuntimeError("vmap: an index that holds different slices per example")
    a, b = np.asarray(a), np.asarray(b)
    nd = max(a.ndim, b.ndim, 1)
    return np.where(c.reshape(c.shape + (1,) * (nd - 1)), a, b)


def batch_select(c, a, b):
    """Example by example ``a if c else b`` (``c`` a boolean vector over the batch; ``a``
    and ``b`` batched values of one structure).  ``b`` None (a name not yet assigned
    before a loop) selects ``a``.  Containers of different structures (a tape one loop
    iteration longer) are selected whole where ``c`` is the same for every example."""
    if b is None:
        return a
    c = np.asarray(c, dtype=bool)
    if isinstance(a, BatchedRange):
        return BatchedRange(*(_select_leaf(c, x, y) for x, y in
                              zip((a.start, a.step, a.length), (b.start, b.step, b.length))))
    if _is_container(a):
        try:
            return tree_map(lambda x, y: _select_leaf(c, x, y), a, b)
        except ValueError:
            if c.all():
                return a
            if not c.any():
                return b
            raise BatchingRuntimeError(STRUCTURES_DIFFER) from None
    return _select_leaf(c, a, b)


def batch_select_replayed(c, a, b):
    """``batch_select`` of a name a tape gives back: ``a`` None (the "not yet assigned"
    an adjoint loop replays for its first iteration, which no example reads again)
    selects ``b``."""
    return b if a is None else batch_select(c, a, b)


def _part_axes(parts, ndim):
    """The axis of an example each index part reads (None for ``None``, which reads none;
    ``...`` stands for the axes no other part reads, named by the first of them)."""
    taken = sum(1 for p in parts if p is not None and p is not Ellipsis)
    axes, axis = [], 0
    for p in parts:
        axes.append(None if p is None else axis)
        axis += 0 if p is None else (ndim - taken if p is Ellipsis else 1)
    return axes


def _check_in_bounds(parts, dims, n, active):
    """``IndexError`` (as numpy's, naming the example) where an integer index part is out of
    range in an example that runs the access (``active``: a boolean vector, None: all)."""
    for p, axis in zip(parts, _part_axes(parts, len(dims))):
        if not isinstance(p, np.ndarray) or p.dtype.kind not in "iu" or axis is None \
                or axis >= len(dims):
            continue
        d = dims[axis]
        bad = (p < -d) | (p >= d)
        if not bad.any():
            continue
        per = bad.reshape(n, -1).any(axis=1) if p.ndim and p.shape[0] == n else \
            np.full(n, True)
        if active is not None:
            per = per & np.asarray(active, dtype=bool)
        if per.any():
            k = int(np.argmax(per))
            value = p[k] if p.ndim and p.shape[0] == n else p
            value = value[bad[k]].flat[0] if np.ndim(value) else value
            raise IndexError(f"index {int(value)} is out of bounds for axis {axis} with size "
                             f"{d} (example {k} of the vmap batch, per-example shape "
                             f"{tuple(dims)})")


def batch_check_index(x, index, x_batched, active=None):
    """Raises ``IndexError`` where a per-example index ``x[index]`` is out of range in an
    example ``active`` runs (all when None); the examples a condition has finished may
    hold any index (their reads are clamped, as JAX's batched gathers are)."""
    n = batch_size(x if x_batched else (), index)
    _gather_index(x, index, x_batched, n, np.ones(n, bool) if active is None else active)


def _index_array(p):
    """An index part as an array: a list display of batched items (``[i, 0]``, each
    an integer per example) with the batch in front, as ``batch_array`` gives it."""
    d = _depth(p)
    out = np.asarray(p)
    return np.moveaxis(out, d, 0) if d and out.ndim > d else out


def _gather_index(x, index, x_batched, n, active=False):
    """``(parts, move)``: the advanced index that reads ``x[index_k]`` for each example
    ``k`` (``active``: the examples checked for out-of-range indices, False: none), and
    None or the ``(source, destination)`` axes of the ``np.moveaxis`` that makes numpy's
    result of it the examples' results stacked.  That move is needed where the index's
    integer parts (an integer or an integer array per example) come together after a
    slice, ``None`` or ``...``: each example's result keeps the slices' axes first, where
    numpy puts the batch's (and the arrays') axes in the gather."""
    parts = index if isinstance(index, tuple) else (index,)
    parts = [p if p is None or index_constant(p) else _index_array(p) for p in parts]
    if any(getattr(p, "dtype", None) == bool for p in parts):
        raise TypeError("vmap: a boolean mask that differs per example selects a different "
                        "number of entries per example, which cannot be batched")
    dims = np.shape(x)[1:] if x_batched else np.shape(x)
    if active is not False:
        _check_in_bounds(parts, dims, n, active)
    # out-of-range indices are clamped (as JAX's batched gathers do): examples that a
    # condition has finished (a masked loop, a short-circuit 'and') still compute the read
    axes = _part_axes(parts, len(dims))
    parts = [np.clip(p, -dims[a], dims[a] - 1) if isinstance(p, np.ndarray) and
             p.dtype.kind in "iu" and a is not None and a < len(dims) else p
             for p, a in zip(parts, axes)]
    at = [k for k, p in enumerate(parts) if isinstance(p, np.ndarray)]
    split = bool(at) and at[0] > 0 and at == list(range(at[0], at[-1] + 1))
    before = sum(len(dims) - len(at) - sum(1 for q in parts if isinstance(q, slice))
                 if p is Ellipsis else 1 for p in parts[:at[0]]) if split else 0
    lead = max((p.ndim - 1 for p in parts if isinstance(p, np.ndarray) and p.ndim
                and p.shape[0] == n), default=0)
    # each example's integer parts broadcast after the batch axis, which they share
    parts = [p if not isinstance(p, np.ndarray) or p.ndim == 0 or p.shape[0] != n else
             p.reshape(p.shape[:1] + (1,) * (lead - (p.ndim - 1)) + p.shape[1:])
             for p in parts]
    if x_batched:
        parts = [np.arange(n).reshape((n,) + (1,) * lead)] + parts
    if not split:
        return tuple(parts), None
    group = len(np.broadcast_shapes(*(p.shape for p in parts if isinstance(p, np.ndarray))))
    if x_batched:  # numpy: (batch, arrays, slices before, ...) -> (batch, before, arrays, ...)
        source = list(range(1, group))
        return tuple(parts), (source, [before + a for a in source])
    return tuple(parts), ([before], [0])  # (before, batch, arrays, ...) -> (batch, ...)


def batch_gather(x, index, x_batched, index_batched):
    """``x[index]`` example by example where the index is batched (each part of the index
    an integer per example, or unbatched): one advanced-indexing gather."""
    n = batch_size(x if x_batched else (), index)
    if not index_batched:
        return np.asarray(x)[batch_index(x, index)]
    idx, move = _gather_index(x, index, x_batched, n)
    out = np.asarray(x)[idx]
    return out if move is None else np.moveaxis(out, move[0], move[1])


def batch_gather_vjp(g, x, index, x_batched, index_batched):
    """Cotangent of ``x`` in ``batch_gather``: ``g`` scattered (added) into zeros."""
    xa = np.asarray(x)
    dtype = np.result_type(xa.dtype, np.asarray(g).dtype, np.float64)
    out = np.zeros(xa.shape, dtype=dtype)
    n = batch_size(x if x_batched else (), index)
    if not index_batched:
        np.add.at(out, batch_index(x, index), g)
        return out
    idx, move = _gather_index(x, index, x_batched, n)
    g = np.asarray(g) if move is None else np.moveaxis(np.asarray(g), move[1], move[0])
    np.add.at(out, idx, g)  # (x the same for every example: the cotangents add up)
    return out


def batch_setitem(x, index, value, index_batched, value_batched, mask=None):
    """``x[index] = value`` in every example of batched ``x`` (in place); with ``mask``
    (a boolean vector over the batch: the examples that run this write) only in those
    examples."""
    if _is_container(x):
        if mask is not None:
            raise ValueError("vmap: a write into a list or dict under a condition that "
                             "differs per example")
        x[index] = value
        return None
    if mask is not None:
        n = np.shape(x)[0]
        idx, move = _gather_index(x, index, True, n, mask) if index_batched else \
            (batch_index(x, index), None)
        old = x[idx] if move is None else np.moveaxis(x[idx], move[0], move[1])
        new = np.asarray(value)
        if value_batched:
            new = new.reshape(new.shape[:1] + (1,) * (old.ndim - new.ndim) + new.shape[1:])
        m = np.asarray(mask).reshape((n,) + (1,) * (old.ndim - 1))
        new = np.where(m, new, old)
        x[idx] = new if move is None else np.moveaxis(new, move[1], move[0])
        return None
    n = np.shape(x)[0]
    mask = np.asarray(index) if index_batched and not isinstance(index, tuple) else None
    if mask is not None and mask.dtype == bool and mask.shape == np.shape(x) and \
            np.ndim(value) <= (1 if value_batched else 0):
        # x[mask] = v with a mask that differs per example and one value per example
        v = np.asarray(value)
        v = v.reshape(v.shape + (1,) * (mask.ndim - v.ndim)) if value_batched else v
        x[...] = np.where(mask, v, x)
        return None
    idx, move = _gather_index(x, index, True, n, None) if index_batched else \
        (batch_index(x, index), None)
    if value_batched:
        slot_nd = np.ndim(x[idx])
        value = np.asarray(value)
        pad = slot_nd - value.ndim
        if pad > 0:
            value = value.reshape(value.shape[:1] + (1,) * pad + value.shape[1:])
    if move is not None:  # the examples' slots stacked, as numpy lays the gather out
        slot = np.moveaxis(x[idx], move[0], move[1]).shape
        value = np.moveaxis(np.broadcast_to(value, slot), move[1], move[0])
    x[idx] = value
    return None


def batch_unbroadcast(g, x, g_batched, x_batched):
    """``unbroadcast`` example by example: batched ``g`` summed to the per-example shape of
    ``x``, the batch axis kept."""
    g = np.asarray(g)
    if not g_batched:
        g = g[None]
    target = np.shape(x)[1:] if x_batched else np.shape(x)
    extra = g.ndim - 1 - len(target)
    if extra > 0:
        g = g.sum(axis=tuple(range(1, 1 + extra)))
    axes = tuple(i + 1 for i, s in enumerate(target) if s == 1 and g.shape[i + 1] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    xs = x if not x_batched else np.asarray(x)[:1]
    if not np.iscomplexobj(xs) and np.iscomplexobj(g):
        g = g.real
    if not g_batched:
        return np.broadcast_to(g, (np.shape(x)[0],) + g.shape[1:]) if x_batched else g[0]
    return g


def batch_loop(fn, flags, n, *args, **kwargs):
    """``fn`` called once per example (``flags[i]``: whether argument ``i`` is batched;
    keyword arguments are never batched) and the results stacked: the fallback the
    user asks for with ``vmap(..., fallback="loop")`` where no batching rule exists."""
    outs = []
    for k in range(n):
        call = [a[k] if f and not _is_container(a) else
                (batch_example(a, k) if f else a) for a, f in zip(args, flags)]
        outs.append(fn(*call, **kwargs))
    return stack_examples(outs, getattr(fn, "__qualname__", None) or repr(fn))


def stack_examples(outs, name="a call"):
    """The results of one call per example (``batch_loop``'s, or its loop written out:
    ``passes/per_example_loops.py``) as one batch: stacked on a new axis 0, leaf by
    leaf where each result is a container (``name``: the function, for the error where
    they do not stack)."""
    try:
        if _is_container(outs[0]):
            return tree_map(lambda *vs: np.stack([np.asarray(v) for v in vs]), *outs)
        return np.stack([np.asarray(o) for o in outs])
    except ValueError as exc:  # results of other structures or shapes per example
        raise BatchingRuntimeError(
            f"vmap: {name} gives results of different structures or shapes per example "
            f"({exc}); they cannot be stacked into one batch") from None


def stack_examples_vjp(g, outs):
    """The cotangent of the list ``outs`` for ``stack_examples(outs)``: row ``k`` of every
    leaf of ``g`` for the ``k``-th result."""
    return [tree_map(lambda v: v[k], g) for k in range(len(outs))]


def _depth(x):
    """How many list/tuple levels wrap the leaves of ``x`` (np.array's leading axes)."""
    d = 0
    while isinstance(x, (list, tuple)) and len(x):
        x, d = x[0], d + 1
    return d
