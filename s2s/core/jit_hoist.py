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

from dataclasses import replace

import s2s_runtime as rt
from s2s_runtime import build

from ..backend.llvm.derivs import jacobian_ops as J
from ..ir import nodes as ir
from ..rules.registry import having

#: calls that change a value in place: the primitives' ``in_place`` property, and the
#: tape marks of compiled Jacobians
_WRITES = having("in_place") | {J.tape_rewind, J.tape_mark}


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


def stack_forms(func: ir.Function) -> ir.Function:
    """``func`` with the tape statements that forward mode writes through temporaries put
    back in the forms ``backend/llvm/lower/stacks.py`` compiles as native stacks: ``t = (v,
    tape); tape = t`` (``t`` read nowhere else) becomes ``tape = (v, tape)``, and
    ``dtape = rt.zeros_like(tape)`` right after ``tape = ()`` becomes ``dtape = ()`` (the
    tangent of an empty tape).  Nothing else changes."""
    uses = ir.use_counts(func.body)

    def block(stmts):
        out = []
        for s in stmts:
            s = ir.with_blocks(s, [tuple(block(b)) for b in ir.sub_blocks(s)]) \
                if ir.sub_blocks(s) else s
            prev = out[-1] if out else None
            at = _push_through(out, s, uses)
            if at is not None:
                push = out.pop(at)
                out.append(ir.Assign(s.target, push.value, push.loc))
                continue
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and \
                    s.value.fn is rt.zeros_like and len(s.value.args) == 1 and \
                    isinstance(prev, ir.Assign) and prev.target == s.value.args[0] and \
                    isinstance(prev.value, ir.Const) and prev.value.value == ():
                s = ir.Assign(s.target, ir.Const(()), s.loc)
            out.append(s)
        return out

    return replace(func, body=tuple(block(func.body)))


def _push_through(out, s, uses):
    """The index in ``out`` of ``t = (v, tape)`` when ``s`` is ``tape = t``, ``t`` is read
    only there and nothing after it in ``out`` assigns ``tape`` or ``v``; else None."""
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Var)
            and uses.get(s.value.name) == 1):
        return None
    for j in range(len(out) - 1, -1, -1):
        p = out[j]
        if isinstance(p, ir.Assign) and p.target == s.value:
            ok = isinstance(p.value, ir.Call) and p.value.fn is build.make_tuple and \
                len(p.value.args) == 2 and p.value.args[1] == s.target
            later = {v.name for x in ir.walk(out[j + 1:]) for v in ir.stmt_defs(x)}
            v = p.value.args[0] if ok else None
            if ok and s.target.name not in later and \
                    not (isinstance(v, ir.Var) and v.name in later):
                return j
            return None
    return None
