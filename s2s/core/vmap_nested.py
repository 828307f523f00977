"""Nested ``vmap`` (``core/vmap.py``): ``vmap(vmap(f, in_a, out_a), in_b, out_b)`` as one
batch over both batch axes (``f`` applies to each example independently, so
flattening the two batches into one of size ``n_outer * n_inner`` is exact)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

import s2s_runtime as rt
from s2s_runtime.tree import tree_flatten, tree_unflatten

from ..errors import UnsupportedSyntaxError
from ..ir import nodes as ir
from ..batch.out_axes import leaf_axes
from ..ir.names import NameGen


def nested_call(self, args):
    from .vmap import Vmapped

    """``vmap(vmap(f, in_a, out_a), in_b, out_b)``: ``f`` mapped once over both batch
    axes, flattened into one of size ``n_outer * n_inner`` (exact, since ``f`` is
    applied to each example independently), then split and placed."""
    inner = self.fn
    values, flags, n2 = self.prepare(args)  # outer axes in front (of every leaf of
    #                                         a batched argument)
    per_arg = []
    for i, (v, ia) in enumerate(zip(values, inner._arg_axes(args))):
        leaves, tree = tree_flatten(v)
        example = tree_unflatten(tree, [x[0] for x in leaves]) if flags[i] else v
        per_arg.append((tree, leaves, leaf_axes(ia, example, f"in_axes entry {i}")))
    sizes = set()
    moved = []
    for i, (tree, leaves, axes) in enumerate(per_arg):
        new = []
        for leaf, k in zip(leaves, axes):
            if k is not None:
                leaf = np.asarray(leaf)
                lead = 1 if flags[i] else 0
                nd = leaf.ndim - lead
                if not -nd <= k < nd:
                    raise ValueError(f"vmap (inner) cannot map axis {k} of a value of "
                                     f"rank {nd} (argument {i})")
                leaf = np.moveaxis(leaf, lead + k % nd, lead)
                sizes.add(leaf.shape[lead])
            new.append(leaf)
        moved.append(new)
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes")
    if len(sizes) > 1:
        raise ValueError(f"vmap got inconsistent sizes for the array axes to be mapped "
                         f"(inner vmap): {sorted(sizes)}")
    n1 = sizes.pop()
    merged, flat_axes = [], []
    for i, ((tree, _, axes), leaves) in enumerate(zip(per_arg, moved)):
        new, new_axes = [], []
        for leaf, k in zip(leaves, axes):
            if k is None and not flags[i]:
                new.append(leaf), new_axes.append(None)
                continue
            leaf = np.asarray(leaf)
            if k is None:  # mapped by the outer vmap only
                leaf = np.broadcast_to(leaf[:, None], (n2, n1) + leaf.shape[1:])
            elif not flags[i]:  # mapped by the inner vmap only
                leaf = np.broadcast_to(leaf, (n2,) + leaf.shape)
            new.append(np.reshape(leaf, (n2 * n1,) + leaf.shape[2:]))
            new_axes.append(0)
        merged.append(tree_unflatten(tree, new))
        flat_axes.append(tree_unflatten(tree, new_axes) if new_axes else 0)
    out = Vmapped(inner.fn, tuple(flat_axes), 0, inner.fallback or self.fallback)(*merged)
    leaves, tree = tree_flatten(out)
    split = [np.reshape(x, (n2, n1) + np.shape(x)[1:]) for x in leaves]
    inner_out = leaf_axes(inner.out_axes, tree_unflatten(tree, [x[0, 0] for x in split]),
                           "out_axes")
    placed = []
    for x, k in zip(split, inner_out):
        if k is None:
            raise ValueError("vmap has mapped output but out_axes is None")
        placed.append(np.moveaxis(x, 1, 1 + k % (x.ndim - 1)))
    return self._place_out(tree_unflatten(tree, placed), True, n2)


def with_axes(func, axes, out_axes, out_batched):
    """``func`` (batched on axis 0) taking its arguments mapped on ``axes`` and putting the
    batch of its result on ``out_axes``."""
    params = [p for p in func.params if not p.kwonly]
    body = list(func.body)
    ret = body.pop()
    loc = replace(ret.loc, derived=True)
    names = NameGen(ir.all_names(func))
    head = []
    for p, k in zip(params, axes):
        if k not in (0, None):
            head.append(ir.Assign(p.var, ir.Call(np.moveaxis, (p.var, ir.Const(k),
                                                              ir.Const(0))), loc))
    value = ret.value
    size = next((s.target for s in body if isinstance(s, ir.Assign)
                 and isinstance(s.value, ir.Call) and s.value.fn is rt.batch_size), None)
    if out_axes is None and out_batched:
        raise UnsupportedSyntaxError("vmap has mapped output but out_axes is None")
    if out_axes is not None and not out_batched:
        if size is None:
            raise UnsupportedSyntaxError("vmap inside transformed code of a function whose "
                                         "result does not depend on the batch")
        t = ir.Var(names.fresh("lifted"))
        body.append(ir.Assign(t, ir.Call(rt.batch_lift, (value, size)), loc))
        value = t
    if out_axes not in (0, None):
        t = ir.Var(names.fresh("moved"))
        body.append(ir.Assign(t, ir.Call(np.moveaxis, (value, ir.Const(0),
                                                       ir.Const(out_axes))), loc))
        value = t
    return replace(func, body=tuple(head + body) + (replace(ret, value=value),))
