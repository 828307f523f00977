"""Which parts of a batched function's result depend on the batch (``out_axes=None`` for
an unmapped output, as JAX allows it).

``result_tree(tr, body, atom)``: the returned atom followed back through the
tuples, lists and dicts the function builds (``make_tuple``, ``make_list``,
``make_dict`` assigned once): a prefix tree of the result with ``0`` where a part
is batched and ``None`` where it is the same for every example.  A container
with a batched item is built batched (its other items lifted, ``rules_core``'s
``container``), so an unbatched part of a batched result holds ``n`` equal rows.
"""
from __future__ import annotations

from s2s_runtime import build

from ..ir import nodes as ir


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
