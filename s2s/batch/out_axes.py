"""``in_axes``/``out_axes`` prefix trees, and placing a batched result on ``out_axes``
(``core/vmap.py``), with ``out_axes=None`` for an unmapped part of the result as JAX
allows it.

``result_tree(tr, body, atom)``: the returned atom followed back through the
tuples, lists and dicts the function builds (``make_tuple``, ``make_list``,
``make_dict`` assigned once): a prefix tree of the result with ``0`` where a part
is batched and ``None`` where it is the same for every example.  A container
with a batched item is built batched (its other items lifted, ``rules_core``'s
``container``), so an unbatched part of a batched result holds ``n`` equal rows.
"""
from __future__ import annotations

import numpy as np

from s2s_runtime import build
from s2s_runtime.tree import tree_flatten, tree_unflatten

from ..ir import nodes as ir


def leaf_axes(axes, value, what):
    """The axis (int or None) of every leaf of ``value`` from the prefix tree ``axes``."""
    if axes is None or isinstance(axes, int) and not isinstance(axes, bool):
        return [axes] * len(tree_flatten(value)[0])
    if isinstance(axes, (tuple, list, dict)) and type(axes) is type(value) or (
            isinstance(axes, dict) and isinstance(value, dict)):
        if isinstance(value, dict):
            if set(axes) != set(value):
                raise ValueError(f"vmap {what} keys {sorted(axes)} do not match the "
                                 f"value's keys {sorted(value)}")
            out = []
            for k in sorted(value):
                out += leaf_axes(axes[k], value[k], what)
            return out
        if len(axes) != len(value):
            raise ValueError(f"vmap {what} has {len(axes)} entries where the value has "
                             f"{len(value)}")
        out = []
        for a, v in zip(axes, value):
            out += leaf_axes(a, v, what)
        return out
    raise ValueError(f"vmap {what} must be an int, None, or a tuple/list/dict prefix of "
                     f"the value, got {axes!r} for a {type(value).__name__}")


def place_out(out_axes, out, out_batched, n, out_tree=None):
    """``out`` (batch on axis 0 where ``out_batched``) with its batch axis moved to
    ``out_axes``.  A part with ``out_axes`` None must be the same for every example:
    unbatched in the code (``out_tree``, from ``result_tree``), or, where the code
    cannot tell (a leaf of an argument mapped in part), equal in every example; else
    it is JAX's error."""
    leaves, tree = tree_flatten(out)
    axes = leaf_axes(out_axes, out, "out_axes")
    mapped = [out_batched] * len(leaves)
    if out_batched and out_tree is not None and None in axes:
        try:
            mapped = [k is not None for k in leaf_axes(out_tree, out, "result")]
        except ValueError:
            pass
    placed = []
    for leaf, k, m in zip(leaves, axes, mapped):
        if k is None:
            if m and not (n and np.ndim(leaf) and
                          (np.asarray(leaf) == np.asarray(leaf)[:1]).all()):
                raise ValueError("vmap has mapped output but out_axes is None")
            # an unmapped part of a batched result: its n equal rows, as one
            placed.append(leaf[0] if out_batched else leaf)
            continue
        if not out_batched:
            leaf = np.broadcast_to(np.asarray(leaf), (n,) + np.shape(leaf)).copy()
        leaf = np.asarray(leaf)
        nd = leaf.ndim
        if not -nd <= k < nd:
            raise ValueError(f"vmap out_axes {k} is out of range for an output of "
                             f"rank {nd - 1}")
        placed.append(np.moveaxis(leaf, 0, k % nd) if k % nd else leaf)
    return tree_unflatten(tree, placed)


def result_tree(tr, body, atom):
    defs = {}
    for s in ir.walk(body):
        for v in ir.stmt_defs(s):
            defs[v.name] = None if v.name in defs else s

    def tree(a, depth=0):
        if not isinstance(a, ir.Var):
            return None
        s = defs.get(a.name)
        if depth < 32 and isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and \
                not s.value.kwargs:
            fn, args = s.value.fn, s.value.args
            if fn is build.make_tuple:
                return tuple(tree(x, depth + 1) for x in args)
            if fn is build.make_list:
                return [tree(x, depth + 1) for x in args]
            if fn is build.make_dict and all(isinstance(k, ir.Const) for k in args[::2]):
                return {k.value: tree(v, depth + 1) for k, v in zip(args[::2], args[1::2])}
        return 0 if tr.is_b(a) else None

    return tree(atom)
