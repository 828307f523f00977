"""Loops whose counter indexes a tuple of items of different types, unrolled (jit only).

Compiled code holds a tuple as a struct, one type per item, so ``t[k]`` of a run-time
``k`` has one type only where every item has the same (``ops/calls.py``).  The loops
the frontend makes of ``for v in t``, ``for k, v in d.items()``, ``for k in d`` and
``enumerate``/``zip`` of tuples count over ``range(len(t))``, a range known when
compiling; typing (``typing/infer.py``) meets the read of a mixed tuple at the counter
and has such a loop unrolled, then types the copies, each reading its item at a
constant (a dict's key at a constant is a compile-time string).

Contract: ``unrolled(func, loop, trip)`` returns ``func`` with the ``For`` statement
``loop`` (found by identity) replaced by one copy of its body per value ``j`` of the
range ``trip``, each reading the constant ``j`` where the body reads the counter (a
name assigned ``j`` in the copy holds it).  ``break``/``continue``/``else`` first become
flags (``passes/loop_jumps.py``), so the copies are straight-line code.  A name that an
iteration assigns before it reads it gets a fresh name in each copy, so that its values
may differ in type between copies; where code outside the loop mentions it too, it must
be assigned on every path through the body, and is assigned the last copy's value
after the copies (as Python leaves it).  Every other name is shared as in the loop.  Where the body
writes a dict, the result is renamed by ``dict_versions.versioned`` (each write of a
new key makes a dict of a new type).  The same values are computed in the same order.
"""
from __future__ import annotations

from dataclasses import replace

from ....ir import nodes as ir
from ....ir.names import NameGen
from ....passes.loop_jumps import has_jump, without_jumps
from ....passes.ssa import rename_all
from ..typing.statics import with_statics
from .dict_versions import versioned, writes_dict

#: longest range a loop over a mixed tuple is unrolled for
MAX_UNROLL = 64


def unrollable(loop: ir.For, trip) -> bool:
    """Whether ``unrolled`` takes ``loop`` over the range ``trip``."""
    return type(trip) is range and len(trip) <= MAX_UNROLL


def _names_in(stmts) -> set:
    out = set()
    for s in ir.walk(stmts):
        out.update(v.name for v in ir.stmt_defs(s))
        out.update(a.name for a in ir.stmt_uses(s) if isinstance(a, ir.Var))
    return out


def _reads(stmts) -> set:
    return {a.name for s in ir.walk(stmts) for a in ir.stmt_uses(s) if isinstance(a, ir.Var)}


def _read_before_assigned(loop: ir.For):
    """``(the names an iteration of loop may read before it assigns them, the names it
    surely assigns)`` (the counter is assigned first): an ``if`` assigns what both its
    branches assign; a nested loop or ``try`` assigns nothing for sure, and every read
    inside it counts."""
    early = set()

    def block(stmts, defined):
        for s in stmts:
            if isinstance(s, ir.If):
                early.update(_reads([ir.ExprStmt(s.test, s.loc)]) - defined)
                defined |= block(s.body, set(defined)) & block(s.orelse, set(defined))
            elif isinstance(s, ir.COMPOUND):
                early.update(_reads([s]) - defined)
            else:
                early.update(a.name for a in ir.stmt_uses(s)
                             if isinstance(a, ir.Var) and a.name not in defined)
                defined |= {v.name for v in ir.stmt_defs(s)}
        return defined

    return early, block(loop.body, {loop.target.name})


def _folded(func: ir.Function) -> ir.Function:
    """``with_statics`` until no read of a name assigned a constant once is left (a copy
    ``v = k_j`` of a counter becomes a constant in the second round)."""
    for _ in range(4):
        out = with_statics(func, {})
        if out.body == func.body:
            return out
        func = out
    return func


def unrolled(func: ir.Function, loop: ir.For, trip: range) -> ir.Function:
    names = NameGen(ir.all_names(func))
    temps = set(func.temps)
    found = []

    def copies(s: ir.For):
        before = []
        if s.orelse or has_jump(s.body):  # flags (``loop_jumps.py``): straight-line copies
            before, s = without_jumps(s, names, temps)
        outside = _names_in(_pruned(func.body, loop)) | _names_in(before) \
            | _names_in(s.orelse) | {p.var.name for p in func.params}
        counter = s.target.name
        early, surely = _read_before_assigned(s)
        assigned = {v.name for x in ir.walk(s.body) for v in ir.stmt_defs(x)} | {counter}
        # a name read after the loop too: its value is the last copy's (assigned there)
        local = assigned - early - (outside - surely)
        out = list(before)
        env = {}
        for j in trip:
            env = {n: names.fresh(n) for n in sorted(local)}
            temps.update(env[n] for n in env if n in temps)
            out.append(ir.Assign(ir.Var(env[counter]), ir.Const(j), s.loc))
            out.extend(rename_all(x, env) for x in s.body)
        out += [ir.Assign(ir.Var(n), ir.Var(env[n]), s.loc) for n in sorted(env)
                if n in outside]
        return out + list(s.orelse)

    def block(stmts):
        out = []
        for s in stmts:
            if s is loop:
                found.append(s)
                out.extend(copies(s))
                continue
            blocks = ir.sub_blocks(s)
            out.append(ir.with_blocks(s, [block(b) for b in blocks]) if blocks else s)
        return tuple(out)

    body = block(func.body)
    if not found:
        raise ValueError("unrolled: the loop is not a statement of the function")
    # each copy's counter, assigned once, read as its constant
    out = _folded(replace(func, body=body, temps=frozenset(temps)))
    # a dict the copies write (new keys: a new type each time) gets a variable per version
    return versioned(out) if writes_dict(loop.body) else out


def _pruned(stmts, loop):
    """``stmts`` without ``loop`` (nested blocks kept)."""
    out = []
    for s in stmts:
        if s is loop:
            continue
        blocks = ir.sub_blocks(s)
        out.append(ir.with_blocks(s, [_pruned(b, loop) for b in blocks]) if blocks else s)
    return out
