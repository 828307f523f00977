"""In-place index writes lowered as statements, without rebinding the array (jit).

Reverse mode keeps an in-place write ``y[i] = v`` as a value so that SSA can
version it (``ad/index_writes.py``): ``t = rt.index_set(y, i, v); y = t``.
``rt.index_set`` writes into ``y``'s memory and returns ``y`` itself, so both
assignments rebind a variable to the block it already holds.  In compiled code
each rebinding of an array variable is a reference-count increment of the new
value and a decrement (with a possible ``free``) of the old one; inside a loop
those updates run at every iteration, and because LLVM cannot tell the count
from the array's data they also keep the loop from being vectorised.

``write_statements(func)`` rewrites, in every block,

* ``t = rt.index_set(y, i, v)`` directly followed by ``y = t``, where ``t`` is
  read nowhere else and assigned nowhere else, and
* ``y = rt.index_set(y, i, v)``

into the statement ``rt.index_set(y, i, v)``: the same write, no rebinding.
The values of every variable are unchanged (``y`` held the block before and
holds it after; ``t`` is never read again).  Contract: ``func`` in, ``func``
out (the same object when nothing changes).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import s2s_runtime as rt

from ....ir import nodes as ir


def _write_of(s):
    """``(target, call)`` of ``target = rt.index_set(y, i, v)``, else None."""
    if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) \
            and s.value.fn is rt.index_set and len(s.value.args) == 3 and not s.value.kwargs \
            and isinstance(s.value.args[0], ir.Var):
        return s.target, s.value
    return None


def _block(stmts, uses, defs):
    out = []
    k = 0
    while k < len(stmts):
        s = stmts[k]
        write = _write_of(s)
        if write is not None:
            target, call = write
            y = call.args[0]
            nxt = stmts[k + 1] if k + 1 < len(stmts) else None
            if target == y:
                out.append(ir.ExprStmt(call, s.loc))
                k += 1
                continue
            if isinstance(nxt, ir.Assign) and nxt.target == y and nxt.value == target \
                    and uses[target.name] == 1 and defs[target.name] == 1:
                out.append(ir.ExprStmt(call, s.loc))
                k += 2
                continue
        blocks = ir.sub_blocks(s)
        if blocks:
            s = ir.with_blocks(s, [tuple(_block(list(b), uses, defs)) for b in blocks])
        out.append(s)
        k += 1
    return out


def write_statements(func):
    uses = ir.use_counts(func.body)
    defs = Counter(v.name for s in ir.walk(func.body) for v in ir.stmt_defs(s))
    params = {p.var.name for p in func.params}
    uses = Counter({n: c for n, c in uses.items()})
    for p in params:  # a parameter is assigned by the call: never a rewritable temporary
        defs[p] += 1
    body = tuple(_block(list(func.body), uses, defs))
    return func if body == tuple(func.body) else replace(func, body=body)
