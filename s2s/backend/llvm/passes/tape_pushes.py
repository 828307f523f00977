"""Tape pushes written through a temporary, made plain pushes (jit only).

Forward mode over reverse-mode code (``jvp(grad(f))``, ``jacfwd`` of a gradient, a
Hessian) writes each push of the tape and of its tangent tape through a temporary::

    t17 = (v, tape)          t18 = (dv, dtape)
    tape = t17               dtape = t18

and starts the tangent tape as ``dtape = rt.zeros_like(tape)`` right after
``tape = ()``.  The backend keeps a tape in native memory when it is used only by
plain pushes ``tape = (x, tape)``, pops and resets (``lower/stacks.py``).  Contract:
``plain_pushes(func)`` returns ``func`` where, within one block, a copy ``tape = t``
of a temporary ``t = (x, tape)`` assigned once and read only by that copy, with neither
``x`` nor ``tape`` assigned in between, is the push ``tape = (x, tape)`` (the
temporary's assignment dropped), and ``rt.zeros_like(tape)`` whose ``tape`` was last
assigned ``()`` in the same block is ``()`` (the zeros of an empty tuple); the same
values are computed.

Batched code (``vmap`` of reverse-mode code with a data-dependent loop) keeps or undoes
each iteration's pushes and pops per example: ``saved = tape`` before the iteration,
``tape = rt.batch_select(c, tape, saved)`` after it.  ``masked_tapes(func)`` returns
``func`` where, for a tape (a name pushed as ``tape = (x, tape)`` somewhere), such a
``saved`` assigned once and read only by that selection is ``saved = tape_mark(tape)``
and the selection is ``tape_select(tape, c, saved)`` (``batching/masks.py``: the tape
kept where ``c`` holds for every example, back at its mark where it holds for none, an
error otherwise, as Python's ``batch_select`` of two tapes).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import s2s_runtime as rt
from s2s_runtime import build

from ....ir import nodes as ir


def _pair(value):
    return isinstance(value, ir.Call) and value.fn is build.make_tuple and \
        len(value.args) == 2 and not value.kwargs and isinstance(value.args[1], ir.Var)


def plain_pushes(func: ir.Function) -> ir.Function:
    defs = Counter(v.name for s in ir.walk(func.body) for v in ir.stmt_defs(s))
    uses = Counter(a.name for s in ir.walk(func.body) for a in ir.stmt_uses(s)
                   if isinstance(a, ir.Var))
    changed = [False]

    def block(stmts):
        stmts = list(stmts)
        out = []
        pending = {}  # temporary -> index in out of its assignment
        empty = set()  # names whose last assignment in this block is ()
        for s in stmts:
            blocks = ir.sub_blocks(s)
            if blocks:
                s = ir.with_blocks(s, [tuple(block(b)) for b in blocks])
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and \
                    s.value.fn is rt.zeros_like and len(s.value.args) == 1 and \
                    not s.value.kwargs and isinstance(s.value.args[0], ir.Var) and \
                    s.value.args[0].name in empty:
                s = replace(s, value=ir.Const(()))
                changed[0] = True
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) and \
                    s.value.name in pending:
                k = pending.pop(s.value.name)
                t_def = out[k]
                if t_def is not None and t_def.value.args[1].name == s.target.name:
                    out[k] = None
                    s = replace(s, value=t_def.value)
                    changed[0] = True
            defined = {v.name for v in ir.stmt_defs(s)} | \
                {v.name for b in ir.sub_blocks(s) for x in ir.walk(b) for v in ir.stmt_defs(x)}
            for t, k in list(pending.items()):  # an operand reassigned: no longer movable
                if any(isinstance(a, ir.Var) and a.name in defined for a in out[k].value.args):
                    del pending[t]
            for name in defined:
                empty.discard(name)
            if isinstance(s, ir.Assign) and (s.value == ir.Const(()) or (
                    isinstance(s.value, ir.Call) and s.value.fn is build.make_tuple
                    and not s.value.args)):
                empty.add(s.target.name)
            out.append(s)
            if isinstance(s, ir.Assign) and _pair(s.value) and defs[s.target.name] == 1 \
                    and uses[s.target.name] == 1:
                pending[s.target.name] = len(out) - 1
        return [s for s in out if s is not None]

    body = block(func.body)
    return func.with_body(body) if changed[0] else func


def masked_tapes(func: ir.Function) -> ir.Function:
    from ..batching.masks import tape_select
    from ..derivs.jacobian_ops import tape_mark
    stmts = list(ir.walk(func.body))
    tapes = {s.target.name for s in stmts if isinstance(s, ir.Assign) and _pair(s.value)
             and s.value.args[1].name == s.target.name}
    defs = Counter(v.name for s in stmts for v in ir.stmt_defs(s))
    uses = Counter(a.name for s in stmts for a in ir.stmt_uses(s) if isinstance(a, ir.Var))
    saved = {s.target.name: s.value.name for s in stmts if isinstance(s, ir.Assign)
             and isinstance(s.value, ir.Var) and s.value.name in tapes
             and defs[s.target.name] == 1 and uses[s.target.name] == 1}
    selects = {}
    for s in stmts:
        v = getattr(s, "value", None)
        if isinstance(s, ir.Assign) and isinstance(v, ir.Call) and \
                v.fn in (rt.batch_select, rt.batch_select_replayed) and len(v.args) == 3 and \
                not v.kwargs and v.args[1] == s.target and isinstance(v.args[2], ir.Var) and \
                saved.get(v.args[2].name) == s.target.name:
            selects[id(s)] = v.args[2].name
    if not selects:
        return func
    marks = set(selects.values())

    def rewrite(s):
        if isinstance(s, ir.Assign) and s.target.name in marks:
            return replace(s, value=ir.Call(tape_mark, (s.value,), ()))
        if id(s) in selects:
            c = s.value.args[0]
            return ir.ExprStmt(ir.Call(tape_select, (s.target, c, ir.Var(selects[id(s)])), ()),
                               loc=s.loc)
        blocks = ir.sub_blocks(s)
        return ir.with_blocks(s, [tuple(map(rewrite, b)) for b in blocks]) if blocks else s

    return func.with_body(tuple(map(rewrite, func.body)))
