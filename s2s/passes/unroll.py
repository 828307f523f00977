"""A ``for`` loop replaced by straight-line copies of its body.

Contract: ``unrolled(func, loop, heads, assigns=())`` returns ``func`` with the
``For`` statement ``loop`` (found by identity) replaced by one copy of its body per
item of ``heads``, copy ``j`` starting with ``heads[j](target, name, names)``:
statements assigning what iteration ``j`` assigns the loop's target (the copy's
variable ``target``; with ``binds_target=False`` the heads leave it unassigned, and
the body does not read it) and the names ``assigns`` (as if the body assigned them
first), each written ``name(n)`` (the copy's variable for ``n``; ``names``, the
function's ``NameGen``, gives any other).
``break``/``continue``/``else``
first become flags (``loop_jumps.py``), so the copies are straight-line code.  A name
that an iteration assigns before it reads it (the target among them) gets a fresh name
in each copy, so that its values may differ in type between copies; where code
outside the loop mentions it too, it must be assigned on every path through the body,
and is assigned the last copy's value after the copies (as Python leaves it).  Every
other name is shared as in the loop.  The same values are computed in the same order.
"""
from __future__ import annotations

from dataclasses import replace

from ..ir import nodes as ir
from ..ir.names import NameGen
from .loop_jumps import has_jump, without_jumps
from .ssa import rename_all


def _names_in(stmts) -> set:
    out = set()
    for s in ir.walk(stmts):
        out.update(v.name for v in ir.stmt_defs(s))
        out.update(a.name for a in ir.stmt_uses(s) if isinstance(a, ir.Var))
    return out


def _reads(stmts) -> set:
    return {a.name for s in ir.walk(stmts) for a in ir.stmt_uses(s) if isinstance(a, ir.Var)}


def _read_before_assigned(loop: ir.For, first):
    """``(the names an iteration of loop may read before it assigns them, the names it
    surely assigns)`` (``first`` are assigned first): an ``if`` assigns what both its
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

    return early, block(loop.body, set(first))


def _pruned(stmts, loop):
    """``stmts`` without ``loop`` (nested blocks kept)."""
    out = []
    for s in stmts:
        if s is loop:
            continue
        blocks = ir.sub_blocks(s)
        out.append(ir.with_blocks(s, [_pruned(b, loop) for b in blocks]) if blocks else s)
    return out


def unrolled(func: ir.Function, loop: ir.For, heads, assigns=(), binds_target=True):
    names = NameGen(ir.all_names(func))
    temps = set(func.temps)
    found = []

    def copies(s: ir.For):
        before = []
        if s.orelse or has_jump(s.body):  # flags: straight-line copies
            before, s = without_jumps(s, names, temps)
        outside = _names_in(_pruned(func.body, loop)) | _names_in(before) \
            | _names_in(s.orelse) | {p.var.name for p in func.params}
        first = set(assigns) | ({s.target.name} if binds_target else set())
        early, surely = _read_before_assigned(s, first)
        assigned = {v.name for x in ir.walk(s.body) for v in ir.stmt_defs(x)} | first
        local = assigned - early - (outside - surely)
        out = list(before)
        env = {}
        for head in heads:
            env = {n: names.fresh(n) for n in sorted(local)}
            temps.update(env[n] for n in env if n in temps)
            out.extend(head(ir.Var(env.get(s.target.name, s.target.name)),
                            lambda n: ir.Var(env.get(n, n)), names))
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
    return replace(func, body=body, temps=frozenset(temps))
