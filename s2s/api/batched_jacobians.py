"""``jacfwd`` and ``jacrev`` as one batched call (the cookbook's construction).

``jacrev``: the VJP function of ``fun`` applied by ``vmap`` to the whole
standard basis of the output space at once (one cotangent per output entry,
stacked), so the adjoint code runs once on a batch instead of once per
entry.  ``jacfwd``: the linearized JVP function applied by ``vmap`` to the
standard basis of the differentiated inputs.  Both return ``None`` when the
function cannot be batched (a primitive without a batching rule, control
flow that differs per basis vector in a way that cannot be masked), and the
caller then pushes the basis vectors one at a time.  Layout as JAX: for each
output leaf, ``out.shape + in.shape`` per input leaf.
"""
from __future__ import annotations

import numpy as np

from s2s_runtime.tree import tree_flatten, tree_map, tree_unflatten

from ..errors import S2SError
from ..ir.kinds import is_inexact_leaf


def _dtype(v):
    return np.result_type(v) if np.issubdtype(np.result_type(v), np.inexact) else np.float64


#: basis vectors pushed through in one batched call (bounds the memory of the basis)
CHUNK = 1024


def _identity_blocks(leaves, keep, rows=None):
    """For ``leaves`` (``keep[i]``: whether leaf ``i`` gets basis vectors) the batched
    standard basis, rows ``rows = (r0, r1)`` of it (all by default): leaf ``i`` of shape
    ``(r1 - r0,) + shape_i``, ones where a row is one of its own entries; and the row
    offset of each leaf and the number of rows in all."""
    sizes = [int(np.size(v)) if k else 0 for v, k in zip(leaves, keep)]
    total = sum(sizes)
    r0, r1 = rows or (0, total)
    blocks, offsets, at = [], [], 0
    for v, k, s in zip(leaves, keep, sizes):
        if not k:
            blocks.append(np.zeros((r1 - r0,) + np.shape(v), dtype=_dtype(v)))
            offsets.append(at)
            continue
        e = np.zeros((r1 - r0, s), dtype=_dtype(v))
        lo, hi = max(r0, at), min(r1, at + s)
        if hi > lo:
            e[np.arange(lo, hi) - r0, np.arange(lo, hi) - at] = 1
        blocks.append(e.reshape((r1 - r0,) + np.shape(v)))
        offsets.append(at)
        at += s
    return blocks, offsets, total


def _chunked(total, run):
    """``run(r0, r1)`` over the basis rows in chunks of ``CHUNK``, joined on axis 0."""
    if total <= CHUNK:
        return run(0, total)
    parts = [run(r0, min(r0 + CHUNK, total)) for r0 in range(0, total, CHUNK)]
    return tree_map(lambda *xs: np.concatenate([np.asarray(x) for x in xs]), *parts)


def jacrev_batched(fun, args, nums, single, check_out=None):
    """The Jacobian by one batched VJP, or None when it cannot be batched.  ``check_out``
    is called with the function's output first (it raises for outputs ``jacrev`` refuses)."""
    from .pullbacks import vjp
    from .batching import vmap

    out, pull = vjp(fun, *args)
    if check_out is not None:
        check_out(out)
    out_leaves, out_tree = tree_flatten(out)
    keep = [True] * len(out_leaves)
    _, offsets, total = _identity_blocks(out_leaves, keep, (0, 0))
    if total == 0:
        return None
    batched = vmap(pull)
    try:
        cts = _chunked(total, lambda r0, r1: batched(tree_unflatten(
            out_tree, _identity_blocks(out_leaves, keep, (r0, r1))[0])))
    except S2SError:
        return None
    jac = []
    for o, ol in enumerate(out_leaves):
        rows = slice(offsets[o], offsets[o] + int(np.size(ol)))
        per_arg = []
        for n in nums:
            blocks = []
            for v, g in zip(tree_flatten(args[n])[0], tree_flatten(cts[n])[0]):
                block = np.zeros(np.shape(ol) + np.shape(v),
                                 dtype=np.result_type(_dtype(ol), _dtype(v)))
                if is_inexact_leaf(v):
                    block[...] = np.reshape(np.asarray(g)[rows], block.shape)
                blocks.append(block)
            per_arg.append(tree_unflatten(tree_flatten(args[n])[1], blocks))
        jac.append(per_arg[0] if single else tuple(per_arg))
    return tree_unflatten(out_tree, jac)


def jacfwd_batched(fun, args, nums, single):
    """The Jacobian by one batched JVP, or None when it cannot be batched."""
    keep_args = []
    leaves_of = [tree_flatten(a) for a in args]
    flat_keep = []
    for i, (leaves, _) in enumerate(leaves_of):
        keep = [i in nums and is_inexact_leaf(v) for v in leaves]
        keep_args.append(keep)
        flat_keep += keep
    all_leaves = [v for leaves, _ in leaves_of for v in leaves]
    _, offsets, total = _identity_blocks(all_leaves, flat_keep, (0, 0))
    if total == 0:
        return None
    from ..core.forward import forward_of
    from ..core.varargs import adapter, wants_adapter
    from ..core.vmap import vmap_of

    try:
        f = adapter(fun, len(args), ()) if wants_adapter(fun) else fun
        transform = forward_of(f, False)
        values, kw = transform._bind(list(args), None)
        carries = transform._carries(values, len(args))
        gen, free = transform.generated(values, carries, kw)
    except (S2SError, TypeError):
        return None
    in_axes = [None] * len(values) + [0 if any(keep_args[i]) else None
                                      for i in range(len(leaves_of)) if carries[i]]
    batched = vmap_of(gen, None, tuple(in_axes))

    def run(r0, r1):
        basis = _identity_blocks(all_leaves, flat_keep, (r0, r1))[0]
        dots, k = [], 0
        for i, (leaves, tree) in enumerate(leaves_of):
            mine = basis[k:k + len(leaves)]
            k += len(leaves)
            if not carries[i]:
                continue
            if any(keep_args[i]):
                dots.append(tree_unflatten(tree, mine))
            else:
                dots.append(tree_unflatten(tree, [np.zeros(np.shape(v), dtype=_dtype(v))
                                                  for v in leaves]))
        return batched(*values, *dots, **free, **kw)[1]

    try:
        douts = _chunked(total, run)
    except S2SError:
        return None
    out = fun(*args)
    out_leaves, out_tree = tree_flatten(out)
    dout_leaves = tree_flatten(douts)[0]
    jac = []
    for ol, d in zip(out_leaves, dout_leaves):
        d = np.asarray(d)
        per_arg, k = [], 0
        for i, (leaves, tree) in enumerate(leaves_of):
            if i not in nums:
                k += len(leaves)
                continue
            blocks = []
            for v, keep in zip(leaves, keep_args[i]):
                block = np.zeros(np.shape(ol) + np.shape(v),
                                 dtype=np.result_type(_dtype(ol), _dtype(v)))
                if keep:
                    rows = d[offsets[k]:offsets[k] + int(np.size(v))]
                    rows = rows.reshape((int(np.size(v)),) + np.shape(ol))
                    block[...] = np.moveaxis(rows, 0, -1).reshape(block.shape)
                blocks.append(block)
                k += 1
            per_arg.append(tree_unflatten(tree, blocks))
        ordered = [per_arg[sorted(nums).index(n)] for n in nums] if not single else per_arg
        jac.append(ordered[0] if single else tuple(ordered))
    return tree_unflatten(out_tree, jac)


def hessian_blocks_batched(push, values, free, kwonly, out_leaves, out_tree, ins, nums):
    """The Hessian blocks of ``hessian`` (``api/jacobians.py``) by one batched call of the
    forward mode over the vjp code's cotangents (``push``): the batch runs over every pair (output
    basis vector ``e_k`` as the cotangent, input basis vector ``e_l`` as the tangent),
    ``d/dx_l (J^T e_k)``.  ``blocks[o][a][i][b][j]`` has shape
    ``out_o.shape + in(a, i).shape + in(b, j).shape``; None when the code cannot be
    batched."""
    from ..core.vmap import vmap_of

    out_basis, out_off, K = _identity_blocks(out_leaves, [True] * len(out_leaves))
    in_leaves = [v for leaves, _ in ins for v in leaves]
    keep = [is_inexact_leaf(v) for v in in_leaves]
    in_basis, in_off, L = _identity_blocks(in_leaves, keep)
    if K == 0 or L == 0 or K * L > 1 << 16:
        return None
    # pair index k * L + l: the cotangent repeats each e_k L times, the tangents tile e_l
    ct = tree_unflatten(out_tree, [np.repeat(e, L, axis=0) for e in out_basis])
    tangent_leaves = [np.tile(e, (K,) + (1,) * (e.ndim - 1)) for e in in_basis]
    try:
        example_ct = tree_unflatten(out_tree, [e[0] for e in out_basis])
        vals, kw = push._bind([*values, example_ct], {**free, **kwonly})
        carries = push._carries(vals, len(values) + 1)
        fgen, free2 = push.generated(vals, carries, kw)
    except (S2SError, TypeError):
        return None
    args, axes, dots, dot_axes, k = list(vals), [None] * len(vals), [], [], 0
    args[len(values)], axes[len(values)] = ct, 0
    by_num = {}
    for a, (leaves, tree) in enumerate(ins):
        by_num[nums[a]] = tree_unflatten(tree, tangent_leaves[k:k + len(leaves)])
        k += len(leaves)
    for p, (v, c) in enumerate(zip(vals, carries)):
        if not c:
            continue
        if p in by_num:
            dots.append(by_num[p])
            dot_axes.append(0)
        else:
            dots.append(tree_map(lambda x: np.zeros(np.shape(x), dtype=_dtype(x)), v))
            dot_axes.append(None)
    try:
        res = vmap_of(fgen, None, tuple(axes + dot_axes))(*args, *dots, **free2, **kw)
    except S2SError:
        return None
    dcts = res[1]
    blocks = []
    for o, ol in enumerate(out_leaves):
        ko = slice(out_off[o], out_off[o] + int(np.size(ol)))
        per_a = []
        for a in range(len(nums)):
            per_i = []
            for i, vi in enumerate(ins[a][0]):
                d = np.asarray(tree_flatten(dcts[a])[0][i]).reshape((K, L) + np.shape(vi))
                per_b, k = [], 0
                for b in range(len(nums)):
                    per_j = []
                    for vj in ins[b][0]:
                        shape = np.shape(ol) + np.shape(vi) + np.shape(vj)
                        block = np.zeros(shape, dtype=np.result_type(_dtype(ol), _dtype(vi),
                                                                     _dtype(vj)))
                        if keep[k] and is_inexact_leaf(vi):
                            cols = d[ko, in_off[k]:in_off[k] + int(np.size(vj))]
                            block[...] = np.moveaxis(cols, 1, -1).reshape(shape)
                        per_j.append(block)
                        k += 1
                    per_b.append(per_j)
                per_i.append(per_b)
            per_a.append(per_i)
        blocks.append(per_a)
    return blocks
