"""Nested ``vmap`` (``core/vmap.py``): ``vmap(vmap(f, in_a, out_a), in_b, out_b)`` as one
batch over both batch axes (``f`` applies to each example independently, so
flattening the two batches into one of size ``n_outer * n_inner`` is exact): called
(``nested_call``, numpy on the values) and as IR at a site in transformed code
(``nested_site``, the same steps as IR, around a site of the flat ``vmap``; also the
form a ``vmap`` called inside a batched function takes, ``Vmapped._mapped_whole``)."""
from __future__ import annotations

import operator
from dataclasses import replace

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build
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


def with_axes(func, axes, out_axes, out_batched, axis_size=None):
    """``func`` (batched on axis 0) taking its arguments mapped on ``axes`` and putting the
    batch of its result on ``out_axes``; a result that does not depend on the batch is
    repeated over it (its size that of the mapped arguments, or ``axis_size`` where
    nothing is mapped), as JAX does."""
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
        mapped = tuple(p.var for p, k in zip(params, axes) if k is not None)
        if size is None and mapped:  # (no batched value was read)
            size = ir.Var(names.fresh("batch_size"))
            body.append(ir.Assign(size, ir.Call(rt.batch_size, mapped), loc))
        elif size is None:
            if axis_size is None:
                raise UnsupportedSyntaxError("vmap must have at least one non-None value in "
                                             "in_axes (or be given axis_size)")
            size = ir.Const(axis_size)
        t = ir.Var(names.fresh("lifted"))
        body.append(ir.Assign(t, ir.Call(rt.batch_lift, (value, size)), loc))
        value = t
    if out_axes not in (0, None):
        t = ir.Var(names.fresh("moved"))
        body.append(ir.Assign(t, ir.Call(np.moveaxis, (value, ir.Const(0),
                                                       ir.Const(out_axes))), loc))
        value = t
    return replace(func, body=tuple(head + body) + (replace(ret, value=value),))


def nested_site(outer, args, values, flags):
    """``(ir, freevars)``: IR of ``vmap(vmap(f, in_a, out_a), in_b, out_b)`` for the site
    arguments ``args``, their outer batch on axis 0 (``values``/``flags``: them prepared,
    ``Vmapped.prepare``; ``with_axes`` moves the outer axes there and places the result's),
    the two batches merged into one of size ``n_outer * n_inner`` for one ``vmap`` of ``f``
    (a site, expanded here), and its result split and the inner batch put on
    ``out_a``.  Array arguments and in_axes ints or None; a result of numbers or arrays
    (one, or a tuple of them; ``f`` called once on one example to see which) with an int
    ``out_a``."""
    from .vmap import vmap_of
    inner = outer.fn
    inner_axes = inner._arg_axes(args)
    example = []
    for a, f, k in zip(values, flags, inner_axes):
        if not (k is None or isinstance(k, int)) or \
                ((k is not None or f) and not isinstance(a, np.ndarray)):
            raise UnsupportedSyntaxError("nested vmap inside transformed code: in_axes must "
                                         "be an int or None per argument (a mapped argument "
                                         "an array)")
        x = a[0] if f else a
        example.append(x if k is None else np.take(x, 0, axis=k))
    if not isinstance(inner.out_axes, int):
        raise UnsupportedSyntaxError("nested vmap inside transformed code: the inner vmap's "
                                     "out_axes must be an int")
    result = inner.fn(*example)  # the result's structure: f of one example, once
    leaves, tree = tree_flatten(result)
    if not leaves or not all(isinstance(x, (np.ndarray, np.generic, float, int, complex))
                             for x in leaves) or \
            not (len(leaves) == 1 and tree_flatten(leaves[0])[1] == tree
                 or type(result) is tuple and len(result) == len(leaves)):
        raise UnsupportedSyntaxError("nested vmap inside transformed code: a result that is "
                                     "not an array or a tuple of arrays")
    names = NameGen(())
    loc = ir.NO_LOC
    body, temps = [], set()

    def call(fn, *operands):
        target = ir.Var(names.temp())
        temps.add(target.name)
        body.append(ir.Assign(target, ir.Call(fn, tuple(operands)), loc))
        return target

    def shape_from(x, start):
        return call(operator.getitem, call(np.shape, x), ir.Const(slice(start, None)))

    def dim(x, k):
        return call(operator.getitem, call(np.shape, x), ir.Const(k))

    params = [ir.Param(ir.Var(names.fresh(f"a{i}"))) for i in range(len(values))]
    moved = []
    n_outer = n_inner = None
    for p, v, f, k in zip(params, values, flags, inner_axes):
        x, lead = p.var, 1 if f else 0
        if k is not None:
            nd = np.ndim(v) - lead
            x = call(np.moveaxis, x, ir.Const(lead + k % nd), ir.Const(lead))
            n_inner = n_inner or dim(x, lead)
        if f:
            n_outer = n_outer or dim(x, 0)
        moved.append(x)
    if n_inner is None:
        raise UnsupportedSyntaxError("vmap must have at least one non-None value in in_axes")
    both = call(operator.mul, n_outer, n_inner)
    merged, flat_axes = [], []
    for x, f, k in zip(moved, flags, inner_axes):
        if k is None and not f:
            merged.append(x), flat_axes.append(None)
            continue
        if k is None:  # mapped by the outer vmap only: the same for every inner example
            rest = shape_from(x, 1)
            x = call(np.broadcast_to, call(np.expand_dims, x, ir.Const(1)), call(
                operator.add, call(build.make_tuple, n_outer, n_inner), rest))
        elif not f:  # mapped by the inner vmap only
            rest = shape_from(x, 1)
            x = call(np.broadcast_to, x, call(operator.add, call(build.make_tuple, n_outer),
                                              call(np.shape, x)))
        else:
            rest = shape_from(x, 2)
        merged.append(call(np.reshape, x, call(operator.add, call(build.make_tuple, both), rest)))
        flat_axes.append(0)
    flat = vmap_of(inner.fn, inner.fallback or outer.fallback, in_axes=tuple(flat_axes),
                   out_axes=0)
    out = call(flat, *merged)
    many = type(result) is tuple  # a tuple of arrays (a 1-tuple too: a pullback's)
    parts = [call(operator.getitem, out, ir.Const(j)) for j in range(len(leaves))] if many \
        else [out]
    o = inner.out_axes
    placed = []
    for part in parts:
        split = call(np.reshape, part, call(operator.add, call(build.make_tuple, n_outer, n_inner),
                                            shape_from(part, 1)))
        if o != 0:
            split = call(np.moveaxis, split, ir.Const(1), ir.Const(1 + o if o >= 0 else o))
        placed.append(split)
    value = call(build.make_tuple, *placed) if many else placed[0]
    body.append(ir.Return(value, loc))
    func = ir.Function("nested_vmap", tuple(params), tuple(body),
                       temps=frozenset(temps))
    from . import pipeline
    front = pipeline.expanded(pipeline.Front(func, {}, sites=True),
                              {p.var.name: v for p, v in zip(params, values)})
    return front.func, dict(front.freevars)
