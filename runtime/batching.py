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

import math

import numpy as np

from .tree import tree_leaves, tree_map

_LETTERS = "abcdefghijklmnopqrstuvwxy"  # 'z' is the batch letter


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
    and the batch axis stays in front.  A pure reshape (its transpose reshapes back)."""
    x = np.asarray(x)
    pad = per_example_ndim(other, other_batched) - (x.ndim - 1)
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


def batch_mask(c):
    """A batched condition as a boolean vector of shape ``(n,)`` (one decision per example)."""
    c = np.asarray(c, dtype=bool)
    if c.ndim != 1:
        raise ValueError("vmap: a branch or loop condition must be one truth value per "
                         f"example, got per-example shape {c.shape[1:]}")
    return c


def _select_leaf(c, a, b):
    a, b = np.asarray(a), np.asarray(b)
    nd = max(a.ndim, b.ndim, 1)
    return np.where(c.reshape(c.shape + (1,) * (nd - 1)), a, b)


def batch_select(c, a, b):
    """Example by example ``a if c else b`` (``c`` a boolean vector over the batch; ``a``
    and ``b`` batched values of one structure).  ``b`` None (a name not yet assigned
    before a loop) selects ``a``."""
    if b is None:
        return a
    c = np.asarray(c, dtype=bool)
    if _is_container(a):
        try:
            return tree_map(lambda x, y: _select_leaf(c, x, y), a, b)
        except ValueError:
            raise ValueError("vmap: a branch or loop whose condition differs per example "
                             "makes containers of different lengths or structures (e.g. "
                             "appending under a condition); such code cannot be batched"
                             ) from None
    return _select_leaf(c, a, b)


def _gather_index(x, index, x_batched, n):
    """The advanced index that reads ``x[index_k]`` for each example ``k``."""
    parts = index if isinstance(index, tuple) else (index,)
    parts = [np.asarray(p) for p in parts]
    if any(p.dtype == bool for p in parts):
        raise TypeError("vmap: a boolean mask that differs per example selects a different "
                        "number of entries per example, which cannot be batched")
    # out-of-range indices are clamped (as JAX's batched gathers do): examples that a
    # condition has finished (a masked loop, a short-circuit 'and') still compute the read
    dims = np.shape(x)[1:] if x_batched else np.shape(x)
    parts = [np.clip(p, -d, d - 1) if p.dtype.kind in "iu" else p
             for p, d in zip(parts, dims)]
    if x_batched:
        lead = max((p.ndim - 1 for p in parts if p.ndim), default=0)
        arange = np.arange(n).reshape((n,) + (1,) * lead)
        parts = [arange] + [p.reshape(p.shape + (1,) * 0) if p.ndim == 0 else
                            p.reshape(p.shape[:1] + (1,) * (lead - (p.ndim - 1)) + p.shape[1:])
                            if p.shape[:1] == (n,) else p for p in parts]
    return tuple(parts)


def batch_gather(x, index, x_batched, index_batched):
    """``x[index]`` example by example where the index is batched (each part of the index
    an integer per example, or unbatched): one advanced-indexing gather."""
    n = batch_size(x if x_batched else (), index)
    if not index_batched:
        return np.asarray(x)[batch_index(x, index)]
    return np.asarray(x)[_gather_index(x, index, x_batched, n)]


def batch_gather_vjp(g, x, index, x_batched, index_batched):
    """Cotangent of ``x`` in ``batch_gather``: ``g`` scattered (added) into zeros."""
    xa = np.asarray(x)
    dtype = np.result_type(xa.dtype, np.asarray(g).dtype, np.float64)
    out = np.zeros(xa.shape, dtype=dtype)
    n = batch_size(x if x_batched else (), index)
    idx = _gather_index(x, index, x_batched, n) if index_batched else batch_index(x, index)
    if x_batched or not index_batched:
        np.add.at(out, idx, g)
    else:  # x the same for every example: the examples' cotangents add up
        np.add.at(out, idx, g)
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
        idx = _gather_index(x, index, True, n) if index_batched else batch_index(x, index)
        old = x[idx]
        new = np.asarray(value)
        if value_batched:
            new = new.reshape(new.shape[:1] + (1,) * (old.ndim - new.ndim) + new.shape[1:])
        m = np.asarray(mask).reshape((n,) + (1,) * (old.ndim - 1))
        x[idx] = np.where(m, new, old)
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
    idx = _gather_index(x, index, True, n) if index_batched else batch_index(x, index)
    if value_batched:
        slot_nd = np.ndim(x[idx])
        value = np.asarray(value)
        pad = slot_nd - value.ndim
        if pad > 0:
            value = value.reshape(value.shape[:1] + (1,) * pad + value.shape[1:])
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


# -- contractions (dot, matmul, inner, outer, vdot, tensordot, einsum) ------------------
def _letters(k, start=0):
    return _LETTERS[start:start + k]


def batch_spec(kind, a, b, a_batched, b_batched, axes=None):
    """The einsum subscripts of a per-example contraction of ``a`` and ``b`` with the
    batch as the letter ``z`` on the batched operands and the result.

    ``kind``: ``dot`` (last axis of a with the second-to-last of b; scalars multiply),
    ``matmul`` (stacked matrices; 1-D operands are vectors), ``inner`` (last axes),
    ``outer`` (operands already flat), ``vdot`` (flat operands, summed),
    ``tensordot`` (``axes`` as numpy's), ``einsum`` (``axes`` is the user's subscripts).
    """
    ra, rb = per_example_ndim(a, a_batched), per_example_ndim(b, b_batched)
    if kind == "einsum":
        sa, sb, so = _einsum_parts(axes)
    elif kind in ("dot", "inner") and (ra == 0 or rb == 0):
        sa, sb = _letters(ra), _letters(rb, 12)
        so = sa + sb
    elif kind == "dot" or kind == "inner":
        sa = _letters(ra)
        sb = list(_letters(rb, 12))
        k = max(rb - 2, 0) if kind == "dot" else rb - 1
        sb[k] = sa[-1]
        sb = "".join(sb)
        so = sa[:-1] + sb.replace(sa[-1], "")
    elif kind == "matmul":  # stacked axes right-aligned, as numpy broadcasts them
        stack = "abcdefgh"[:max(ra, rb, 2) - 2]
        sa = (stack[len(stack) - (ra - 2):] + "ij") if ra >= 2 else "j"
        sb = (stack[len(stack) - (rb - 2):] + "jk") if rb >= 2 else "j"
        so = stack + ("i" if ra >= 2 else "") + ("k" if rb >= 2 else "")
    elif kind == "outer":
        sa, sb, so = "i", "j", "ij"
    elif kind == "vdot":
        sa, sb, so = "i", "i", ""
    elif kind == "tensordot":
        sa, sb, so = _tensordot_parts(ra, rb, axes)
    else:
        raise ValueError(f"unknown contraction {kind!r}")
    za, zb = ("z" if a_batched else ""), ("z" if b_batched else "")
    zo = "z" if (a_batched or b_batched) else ""
    return f"{za}{sa},{zb}{sb}->{zo}{so}"


def _tensordot_parts(ra, rb, axes):
    if isinstance(axes, (int, np.integer)):
        ka, kb = list(range(ra - axes, ra)), list(range(axes))
    else:
        ka, kb = axes
        ka = [ka] if isinstance(ka, (int, np.integer)) else list(ka)
        kb = [kb] if isinstance(kb, (int, np.integer)) else list(kb)
    ka, kb = [k % ra for k in ka], [k % rb for k in kb]
    sa = list(_letters(ra))
    sb = list(_letters(rb, 12))
    for i, j in zip(ka, kb):
        sb[j] = sa[i]
    so = "".join(c for i, c in enumerate(sa) if i not in ka) + \
        "".join(c for j, c in enumerate(sb) if j not in kb)
    return "".join(sa), "".join(sb), so


def _einsum_parts(subscripts):
    s = subscripts.replace(" ", "")
    if "->" in s:
        ins, out = s.split("->")
    else:
        ins = s
        letters = [c for c in ins if c.isalpha()]
        out = ("..." if "..." in ins else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    parts = ins.split(",")
    if len(parts) != 2:
        raise ValueError("vmap: einsum with other than two operands")
    if "z" in s:
        swap = next(c for c in "ZYXWV" if c not in s)
        parts = [p.replace("z", swap) for p in parts]
        out = out.replace("z", swap)
    return parts[0], parts[1], out


def batch_contract(spec, a, b):
    """``np.einsum(spec, a, b)``: a per-example contraction (``batch_spec``)."""
    return _einsum2(spec, a, b)


_PLANS = {}


def _plan(spec):
    """How ``einsum(spec, a, b)`` runs as one (broadcast) matrix product: the letters
    shared by both operands and the result (batch), only by one operand and the result
    (free), by both operands only (contracted); None where that does not describe it."""
    hit = _PLANS.get(spec)
    if hit is None and spec not in _PLANS:
        ins, so = spec.split("->")
        sa, sb = ins.split(",")
        if "." in spec or len(set(sa)) != len(sa) or len(set(sb)) != len(sb) or \
                any(c not in sb and c not in so for c in sa) or \
                any(c not in sa and c not in so for c in sb):
            _PLANS[spec] = None
            return None
        batch = [c for c in so if c in sa and c in sb]
        free_a = [c for c in sa if c in so and c not in sb]
        free_b = [c for c in sb if c in so and c not in sa]
        summed = [c for c in sa if c in sb and c not in so]
        order = batch + free_a + free_b
        hit = ([sa.index(c) for c in batch + free_a + summed],
               [sb.index(c) for c in batch + summed + free_b],
               len(batch), len(free_a), len(summed),
               [order.index(c) for c in so])
        _PLANS[spec] = hit
    return hit


def _einsum2(spec, a, b):
    """``np.einsum(spec, a, b)`` as one matrix product (BLAS), without numpy's per-call
    search for a contraction order."""
    plan = _plan(spec)
    a, b = np.asarray(a), np.asarray(b)
    if plan is None or a.ndim != len(plan[0]) or b.ndim != len(plan[1]):
        return np.einsum(spec, a, b, optimize=True)
    pa, pb, nb, nfa, ns, final = plan
    a0, b0 = a, b
    a, b = a.transpose(pa), b.transpose(pb)
    bshape_a, bshape_b = a.shape[:nb], b.shape[:nb]
    fa, sm = a.shape[nb:nb + nfa], a.shape[nb + nfa:]
    fb = b.shape[nb + ns:]
    if sm != b.shape[nb:nb + ns]:  # a summed axis broadcast (size 1 against n)
        return np.einsum(spec, a0, b0, optimize=True)
    ka, kb, kc = math.prod(fa), math.prod(fb), math.prod(sm)
    out = np.matmul(a.reshape(bshape_a + (ka, kc)), b.reshape(bshape_b + (kc, kb)))
    out = out.reshape(out.shape[:nb] + fa + fb)
    return out.transpose(final) if final != sorted(final) else out


def batch_contract_vjp(spec, which, g, a, b):
    """Cotangent of operand ``which`` of ``batch_contract(spec, a, b)`` for the result's
    cotangent ``g``: ``g`` contracted with the other operand back to the operand's
    subscripts (the transpose of a bilinear form); the batch letter is summed away for
    an operand the same for every example, broadcast stacked axes are summed back."""
    ins, so = spec.split("->")
    sa, sb = ins.split(",")
    if which == 0:
        out = _einsum2(f"{so},{sb}->{sa}", g, b)
    else:
        out = _einsum2(f"{sa},{so}->{sb}", a, g)
    return _fit(out, a if which == 0 else b)


def batch_bilinear_vjp(kind, which, g, a, b, g_batched, a_batched, b_batched, axes=None):
    """The batched form of the VJP helpers of products (``dot_vjp``, ``inner_vjp``,
    ``tensordot_vjp``, ``matmul_vjp_lhs``/``_rhs``): the cotangent of factor ``which``.
    The result is batched when any operand is; a factor the same for every example whose
    cotangent does not depend on the batch is broadcast over it."""
    spec = batch_spec(kind, a, b, a_batched, b_batched, axes)
    batched = g_batched or a_batched or b_batched
    target_batched = a_batched if which == 0 else b_batched
    ins, so = spec.split("->")
    sa, sb = ins.split(",")
    if batched and not target_batched:
        if which == 0:
            sa = "z" + sa
        else:
            sb = "z" + sb
    if g_batched and "z" not in so:
        so = "z" + so
    other_sub = sb if which == 0 else sa
    target_sub = sa if which == 0 else sb
    if "z" in target_sub and "z" not in so and "z" not in other_sub:
        target_sub = target_sub[1:]
        lift = True
    else:
        lift = False
    subs = f"{so},{other_sub}->{target_sub}" if which == 0 else f"{other_sub},{so}->{target_sub}"
    operands = (g, b) if which == 0 else (a, g)
    out = _einsum2(subs, *operands)
    target = a if which == 0 else b
    if lift:
        out = _fit(out, target)
        return np.broadcast_to(out, (batch_size(g, a, b),) + np.shape(out))
    if batched and not target_batched:
        n = out.shape[0]
        return _fit(out, np.broadcast_to(np.asarray(target), (n,) + np.shape(target)))
    return _fit(out, target)


def _fit(out, target):
    """``out`` summed over broadcast axes to ``target``'s shape, real if ``target`` is."""
    shape = np.shape(target)
    out = np.asarray(out)
    if out.shape != shape:
        extra = out.ndim - len(shape)
        if extra > 0:
            out = out.sum(axis=tuple(range(extra)))
        axes = tuple(i for i, s in enumerate(shape) if s == 1 and out.shape[i] != 1)
        if axes:
            out = out.sum(axis=axes, keepdims=True)
    if not np.iscomplexobj(target) and np.iscomplexobj(out):
        out = out.real
    return out if np.ndim(target) or type(target) is np.ndarray else out[()]


def batch_loop(fn, flags, n, *args, **kwargs):
    """``fn`` called once per example (``flags[i]``: whether argument ``i`` is batched;
    keyword arguments are never batched) and the results stacked: the fallback the
    user asks for with ``vmap(..., fallback="loop")`` where no batching rule exists."""
    outs = []
    for k in range(n):
        call = [a[k] if f and not _is_container(a) else
                (tree_map(lambda v: v[k], a) if f else a) for a, f in zip(args, flags)]
        outs.append(fn(*call, **kwargs))
    first = outs[0]
    if _is_container(first):
        return tree_map(lambda *vs: np.stack([np.asarray(v) for v in vs]), *outs)
    return np.stack([np.asarray(o) for o in outs])


# -- functions whose batched form depends on the per-example rank ----------------------
def batch_squeeze_axes(x):
    """The per-example axes of size 1 of batched ``x`` (what ``np.squeeze`` removes)."""
    return tuple(i for i in range(1, np.ndim(x)) if np.shape(x)[i] == 1)


def batch_item(x):
    """``x.item()`` of every example: one number per example, shape ``(n,)``."""
    x = np.asarray(x)
    return x.reshape(x.shape[0], -1)[:, 0]


def batch_sum_items(x):
    """Builtin ``sum`` of every example: over the rows of an array (axis 1), over the
    items of a container (which are batched)."""
    if isinstance(x, np.ndarray):
        return np.sum(x, axis=1)
    return sum(x)


def batch_hstack(xs):
    """``np.hstack`` of every example: per-example 1-D items join on their only axis,
    others on their second."""
    nd = min(np.ndim(x) for x in xs) - 1
    return np.concatenate(list(xs), axis=1 if nd <= 1 else 2)


def batch_vstack(xs):
    """``np.vstack`` of every example: per-example 1-D items become rows."""
    items = [np.asarray(x) for x in xs]
    items = [x.reshape(x.shape[:1] + (1,) * (3 - x.ndim) + x.shape[1:]) if x.ndim < 3 else x
             for x in items]
    return np.concatenate(items, axis=1)


def batch_broadcast_to(x, shape):
    """``np.broadcast_to(x, shape)`` of every example of batched ``x``."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    x = batch_align(x, np.empty(shape, dtype=bool), False)
    return np.broadcast_to(x, x.shape[:1] + shape)


def batch_diag(v, k=0):
    """``np.diag`` of every example: a 1-D example becomes a diagonal matrix, a 2-D one
    gives its diagonal."""
    v = np.asarray(v)
    if v.ndim == 2:
        n = v.shape[1] + abs(k)
        out = np.zeros((v.shape[0], n, n), dtype=v.dtype)
        i = np.arange(v.shape[1])
        out[:, i + max(-k, 0), i + max(k, 0)] = v
        return out
    return np.diagonal(v, offset=k, axis1=1, axis2=2).copy()


def batch_tile(x, reps):
    """``np.tile(x, reps)`` of every example."""
    x = np.asarray(x)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    nd = max(x.ndim - 1, len(reps))
    x = x.reshape(x.shape[:1] + (1,) * (nd - (x.ndim - 1)) + x.shape[1:])
    return np.tile(x, (1,) + (1,) * (nd - len(reps)) + reps)


def batch_inplace(op, plain, x, y):
    """``x op= y`` on batched ``x``: in place where each example is an array (so names
    that share it see the change, as in the unbatched program), a new value where each
    example is a number (which Python never changes in place)."""
    if np.ndim(x) >= 2:
        return op(x, y)
    return plain(x, y)


def batch_snapshot(x):
    """A copy of batched ``x`` that later in-place changes of ``x`` leave alone."""
    return tree_map(lambda v: np.array(v, copy=True) if isinstance(v, np.ndarray) else v, x)


def _vjp_operands(spec, which, g, a, b):
    """``batch_contract_vjp(spec, which, g, a, b)`` as a bilinear einsum ``P,Q->R`` of two
    of its arguments: ``(subscripts, (name_P, P), (name_Q, Q), target)``."""
    ins, so = spec.split("->")
    sa, sb = ins.split(",")
    if which == 0:
        return f"{so},{sb}->{sa}", ("g", g), ("b", b), a
    return f"{sa},{so}->{sb}", ("a", a), ("g", g), b


def batch_contract_vjp_jvp(t, spec, which, g, a, b, wrt):
    """Tangent of ``batch_contract_vjp`` from argument ``wrt``'s tangent ``t`` (bilinear:
    ``t`` in that argument's place; zero for an argument it reads only for its shape)."""
    subs, (np_, p), (nq, q), target = _vjp_operands(spec, which, g, a, b)
    if wrt == np_:
        return _fit(_einsum2(subs, t, q), target)
    if wrt == nq:
        return _fit(_einsum2(subs, p, t), target)
    return np.zeros(np.shape(target))


def batch_contract_vjp_vjp(ct, spec, which, g, a, b, wrt):
    """Cotangent of argument ``wrt`` of ``batch_contract_vjp`` (the transpose of the
    bilinear form ``P,Q->R`` in that argument)."""
    subs, (np_, p), (nq, q), _ = _vjp_operands(spec, which, g, a, b)
    ins, r = subs.split("->")
    sp, sq = ins.split(",")
    if wrt == np_:
        return _fit(_einsum2(f"{r},{sq}->{sp}", ct, q), p)
    if wrt == nq:
        return _fit(_einsum2(f"{sp},{r}->{sq}", p, ct), q)
    return np.zeros(np.shape({"g": g, "a": a, "b": b}[wrt]))


# -- in-place writes as values (reverse mode's index_writes helpers) --------------------
def batch_index_set(y, index, v, y_batched, v_batched, n, copy=False):
    """``index_set(y, index, v)`` (``copy``: ``index_updated``) in every example: ``y``
    batched (broadcast first when it is the same for every example), ``index`` the same
    for every example, ``v`` aligned with the slot it fills."""
    if index is Ellipsis and not isinstance(y, np.ndarray) and not y_batched:
        return v if v_batched else batch_lift(v, n)
    if not y_batched:
        y = batch_lift(y, n)
    elif copy:
        y = np.array(y, copy=True)
    batch_setitem(y, index, v, False, v_batched)
    return y


def batch_index_set_vjp_value(g, index, v, g_batched, v_batched):
    """``index_set_vjp_value`` in every example: the slots written last read from ``g``,
    summed back to the shape of each example's ``v``."""
    from .index_writes import _gather
    if not g_batched:
        g = batch_lift(g, batch_size(v))
    r = _gather(g, batch_index(g, index))
    return batch_unbroadcast(r, v, True, v_batched)


def batch_read_checked(y, index, where):
    """``read_checked`` in every example: each example's value copied when it is a number,
    the same error as unbatched when it is a view of an array written later."""
    from .index_writes import read_checked
    r = y[batch_index(y, index)]
    if isinstance(r, np.ndarray) and r.ndim > 1:
        read_checked(y[0], index, where)  # raises (an example's value is a view)
    return r.copy() if isinstance(r, np.ndarray) else r


def _depth(x):
    """How many list/tuple levels wrap the leaves of ``x`` (np.array's leading axes)."""
    d = 0
    while isinstance(x, (list, tuple)) and len(x):
        x, d = x[0], d + 1
    return d


def batch_array(fn, x, *args, **kwargs):
    """``np.array(x)`` (or ``fn``: ``np.asarray``, ``array_jvp``...) of every example of a
    batched value: nested lists of batched items give the batch on the axis after the
    list levels, moved to the front; a batched array is converted as it is."""
    d = _depth(x)
    out = np.asarray(fn(x, *args, **kwargs))
    return np.moveaxis(out, d, 0) if d else out


def batch_array_jvp(t, ans, obj, *args):
    """``array_jvp`` of every example (``t``: nested lists of batched tangents)."""
    from .jvps_arrays import array_jvp
    d = _depth(obj)
    if not d:
        return array_jvp(t, ans, obj, *args)
    out = array_jvp(t, np.moveaxis(np.asarray(ans), 0, d), obj, *args)
    return np.moveaxis(np.asarray(out), d, 0)


def batch_array_vjp(g, x):
    """``array_vjp`` of every example: the batched cotangent of ``np.array(x)`` split back
    into ``x``'s nested lists (each item batched)."""
    from .adjoint import array_vjp
    d = _depth(x)
    return array_vjp(np.moveaxis(np.asarray(g), 0, d) if d else g, x)
