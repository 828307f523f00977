"""Loop-invariant scalar arithmetic moves out of loops, before reverse mode.

Contract: ``hoist_invariants(body, scalars)`` returns ``body`` where, in
every ``for``/``while`` loop (innermost first, so a statement leaves every loop it
is invariant in), each statement ``t = a op b`` that the loop body
runs unconditionally, whose operands are constants or names the loop never
assigns (or hoisted names), whose target is assigned nowhere else, that is
real-scalar arithmetic (``scalars``) and cannot raise (``+ - *``, negation,
division by a non-zero constant) is moved to just before the loop.

The function computes the same values (the statement gave the same value at
every iteration; before a loop that runs no iteration it computes a number
nobody reads).  Reverse mode gains most: a value computed in the loop is
pushed on the tape at every iteration when the adjoint reads it (``-omega *
omega`` in an ODE step); computed once before the loop it is not recorded.
"""
from __future__ import annotations

import operator
from collections import Counter
from dataclasses import replace
from typing import List, Set

from ..ir import nodes as ir

_SAFE = {operator.add, operator.sub, operator.mul, operator.neg, operator.pos}


def hoist_invariants(body, scalars: Set[str]) -> List:
    counts = Counter(v.name for s in ir.walk(body) for v in ir.stmt_defs(s))
    return _block(list(body), scalars, counts)


def _block(stmts, scalars, counts) -> List:
    out = []
    for s in stmts:  # inner loops first: what leaves them may leave the outer loop too
        if isinstance(s, ir.If):
            s = replace(s, body=tuple(_block(s.body, scalars, counts)),
                        orelse=tuple(_block(s.orelse, scalars, counts)))
        elif isinstance(s, ir.For):
            s = replace(s, body=tuple(_block(s.body, scalars, counts)),
                        orelse=tuple(_block(s.orelse, scalars, counts)))
        elif isinstance(s, ir.While):
            s = replace(s, test_body=tuple(_block(s.test_body, scalars, counts)),
                        body=tuple(_block(s.body, scalars, counts)),
                        orelse=tuple(_block(s.orelse, scalars, counts)))
        if isinstance(s, (ir.For, ir.While)):
            hoisted, s = _hoist(s, scalars, counts)
            out += hoisted
        out.append(s)
    return out


def _hoist(loop, scalars, counts):
    blocks = ((loop.test_body,) if isinstance(loop, ir.While) else ()) + (loop.body,)
    assigned = {v.name for x in [loop, *ir.walk(ir.sub_blocks_flat(loop))]
                for v in ir.stmt_defs(x)}
    hoisted: List = []
    moved: Set[int] = set()
    changed = True
    while changed:
        changed = False
        for block in blocks:
            for s in block:
                if id(s) not in moved and _invariant(s, assigned, scalars, counts):
                    hoisted.append(s)
                    moved.add(id(s))
                    assigned.discard(s.target.name)
                    changed = True
    if not hoisted:
        return [], loop
    keep = lambda block: tuple(s for s in block if id(s) not in moved)  # noqa: E731
    if isinstance(loop, ir.While):
        loop = replace(loop, test_body=keep(loop.test_body), body=keep(loop.body))
    else:
        loop = replace(loop, body=keep(loop.body))
    return hoisted, loop


def _invariant(s, assigned, scalars, counts) -> bool:
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and not s.value.kwargs
            and s.target.name in scalars and counts[s.target.name] == 1):
        return False
    v = s.value
    safe = v.fn in _SAFE or (v.fn is operator.truediv and len(v.args) == 2 and isinstance(
        v.args[1], ir.Const) and type(v.args[1].value) in (int, float) and v.args[1].value != 0)
    return safe and all(isinstance(a, ir.Const) and type(a.value) in (int, float)
                        or isinstance(a, ir.Var) and a.name not in assigned and a.name in scalars
                        for a in v.args)
