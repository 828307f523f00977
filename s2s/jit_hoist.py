"""Moving loop-invariant statements out of a loop (for the Jacobian kernels).

Contract: ``hoist_invariants(loop) -> (before, loop)``: ``before`` are statements of
the top level of ``loop.body`` that compute the same value at every iteration, in
their order, and ``loop`` is the loop without them.  The caller places ``before``
right before the loop, which must run at least once (the statements ran in its
first iteration anyway).

A statement moves when it is an assignment ``v = expr`` at the loop body's top
level such that

* ``v`` is assigned nowhere else in the body, is not the loop variable, and is not
  read in the body before this statement (so every read of ``v`` saw this value);
* every variable ``expr`` reads is assigned nowhere in the body, or by a statement
  that moved;
* ``expr`` is a variable, a constant or a call without side effects: nothing moves
  out of a loop whose body writes into an array anywhere (``y[i] = v``,
  ``index_set``, augmented operators) or pushes, pops or rewinds a tape, since a
  moved array could be the one written.  ``jacobian_store`` writes only into the
  Jacobian, which its kernel assigns in a branch (never moved).
"""
from __future__ import annotations

import operator
from dataclasses import replace

import s2s_runtime as rt
from s2s_runtime import build

from .backend.llvm import jacobian_ops as J
from .ir import nodes as ir

_WRITES = {operator.setitem, operator.delitem, rt.index_set, J.tape_rewind, J.tape_mark} | {getattr(operator, "i" + n) for n in (
               "add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "and",
               "or", "xor", "lshift", "rshift", "concat")}


def _writes(body) -> bool:
    for s in ir.walk(body):
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call) and (v.fn in _WRITES or not _hashable(v.fn)):
            return True
        pop = isinstance(s, ir.Unpack) and len(s.targets) == 2 and s.targets[1] == s.value
        push = isinstance(s, ir.Assign) and isinstance(v, ir.Call) and \
            v.fn is build.make_tuple and len(v.args) == 2 and v.args[1] == s.target
        if pop or push:
            return True
    return False


def _hashable(fn) -> bool:
    try:
        hash(fn)
    except TypeError:
        return False
    return True


def hoist_invariants(loop: ir.For):
    body = loop.body
    if _writes(body):
        return [], loop
    defs = {}
    for s in ir.walk(body):
        for v in ir.stmt_defs(s):
            defs[v.name] = defs.get(v.name, 0) + 1
    defs[loop.target.name] = defs.get(loop.target.name, 0) + 2
    moved, kept, invariant, read = [], [], set(), set()
    for s in body:
        uses = {a.name for x in ir.walk([s]) for a in ir.stmt_uses(x) if isinstance(a, ir.Var)}
        if (isinstance(s, ir.Assign) and defs.get(s.target.name) == 1
                and s.target.name not in read
                and all(u not in defs or u in invariant for u in uses)):
            moved.append(s)
            invariant.add(s.target.name)
        else:
            kept.append(s)
        read |= uses
    return moved, replace(loop, body=tuple(kept))
