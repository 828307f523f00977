"""Dead-code elimination.

Contract: accepts any IR function; removes assignments whose targets are
never read afterwards and whose value is pure (an atom, or a call of a
callable with a registered rule or an ``s2s_runtime`` helper, except the
helpers in ``MUTATING``), and ``if``
statements left empty.  Loops and ``try`` are kept whole (their reads are
live), as are expression statements, ``raise`` and ``assert``.
"""
from __future__ import annotations

from dataclasses import replace

import s2s_runtime as rt

from ..ir import nodes as ir
from ..rules import lookup


#: helpers with a rule that still change an argument in place (kept even when unread)
MUTATING = {rt.index_set, rt.batch_inplace}


def is_pure(value) -> bool:
    if not isinstance(value, ir.Call):
        return True
    fn = value.fn
    if fn in MUTATING:
        return False
    if lookup(fn) is not None:
        return True
    return getattr(fn, "__module__", "") and fn.__module__.startswith("s2s_runtime")


def _uses(stmt):
    return {a.name for a in ir.stmt_uses(stmt) if isinstance(a, ir.Var)}


def _block(stmts, live):
    out = []
    for s in reversed(stmts):
        if isinstance(s, ir.Assign):
            if s.target.name not in live and is_pure(s.value):
                continue
            live.discard(s.target.name)
            live |= _uses(s)
        elif isinstance(s, ir.Unpack):
            if not any(t.name in live for t in s.targets):
                continue
            live -= {t.name for t in s.targets}
            live |= _uses(s)
        elif isinstance(s, ir.If):
            live_b, live_o = set(live), set(live)
            body = _block(s.body, live_b)
            orelse = _block(s.orelse, live_o)
            if not body and not orelse:
                continue
            live.clear()
            live |= live_b | live_o | _uses(s)
            s = replace(s, body=tuple(body), orelse=tuple(orelse))
        elif isinstance(s, (ir.For, ir.While, ir.Try)):
            for x in [s, *ir.walk(ir.sub_blocks_flat(s))]:
                live |= _uses(x)
        else:
            live |= _uses(s)
        out.append(s)
    out.reverse()
    return out


def dce(fn: ir.Function) -> ir.Function:
    return fn.with_body(_block(list(fn.body), set()))
