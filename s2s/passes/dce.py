"""Dead-code elimination.

Contract: accepts any IR function; removes assignments whose targets are
never read afterwards and whose value is pure (an atom, or a call of a
callable with a registered rule or an ``s2s_runtime`` helper, except the
helpers in ``MUTATING``), ``if`` statements left empty and ``for`` loops left
empty whose target is not read after them.  Inside ``for`` and ``while`` loops a
value is live when it is read later in the same iteration, in a later iteration
(liveness at the loop's head, to a fixed point) or after the loop; ``break``
continues with what is live after the loop, ``continue`` with what is live at its
head.  ``try`` statements are kept whole (their reads are live), as are
expression statements, ``raise`` and ``assert``.
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


class _Exits:
    """What is live where a ``break`` and a ``continue`` of the innermost loop go."""

    def __init__(self, after_loop, head):
        self.after_loop, self.head = after_loop, head


def _loop_body(body, after_loop, head_extra, exits_from_head):
    """``(new body, live at its start)`` of a loop body whose end (and ``continue``)
    goes to the loop's head: ``head(body_start) = head_extra | exits_from_head(body_start)``,
    iterated until the live set at the body's start stops growing."""
    start = set()
    while True:
        head = exits_from_head(start) | head_extra
        live = set(head)
        new = _block(list(body), live, _Exits(after_loop, head))
        if live <= start:
            return new, start
        start |= live


def _for(s, live, exits):
    after = set(live)
    else_live = set(after)
    orelse = _block(list(s.orelse), else_live, exits)
    target = s.target.name

    def head(body_start):  # next item assigned to the target, or the loop ends
        return (body_start - {target}) | else_live

    body, start = _loop_body(s.body, after, set(), head)
    live.clear()
    live |= head(start) | _uses(s)
    if not body and not orelse and target not in after:
        return None
    return replace(s, body=tuple(body), orelse=tuple(orelse))


def _while(s, live, exits):
    after = set(live)
    else_live = set(after)
    orelse = _block(list(s.orelse), else_live, exits)
    test_live = {}

    def head(body_start):  # the test's statements, then the body or the else
        at_test = body_start | else_live | _uses(s)
        test_body = _block(list(s.test_body), at_test, _Exits(after, set()))
        test_live["body"], test_live["live"] = test_body, at_test
        return at_test

    body, start = _loop_body(s.body, after, set(), head)
    head(start)
    live.clear()
    live |= test_live["live"]
    return replace(s, test_body=tuple(test_live["body"]), body=tuple(body),
                   orelse=tuple(orelse))


def _block(stmts, live, exits=None):
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
            body = _block(s.body, live_b, exits)
            orelse = _block(s.orelse, live_o, exits)
            if not body and not orelse:
                continue
            live.clear()
            live |= live_b | live_o | _uses(s)
            s = replace(s, body=tuple(body), orelse=tuple(orelse))
        elif isinstance(s, ir.For):
            s = _for(s, live, exits)
            if s is None:
                continue
        elif isinstance(s, ir.While):
            s = _while(s, live, exits)
        elif isinstance(s, ir.Break) and exits is not None:
            live.clear()
            live |= exits.after_loop
        elif isinstance(s, ir.Continue) and exits is not None:
            live.clear()
            live |= exits.head
        elif isinstance(s, ir.Try):  # kept whole; a break or continue in it may leave
            for x in [s, *ir.walk(ir.sub_blocks_flat(s))]:
                live |= _uses(x)
            if exits is not None:
                live |= exits.after_loop | exits.head
        else:
            live |= _uses(s)
        out.append(s)
    out.reverse()
    return out


def dce(fn: ir.Function) -> ir.Function:
    return fn.with_body(_block(list(fn.body), set()))
