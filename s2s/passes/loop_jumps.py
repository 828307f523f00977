"""``break`` and ``continue`` become flags, so every loop runs its body to the end.

Contract: ``without_jumps(loop, names, temps)`` returns ``(before, loop)``
equivalent to ``loop`` (a ``For`` or ``While``) whose body holds no ``break``
or ``continue`` of its own (those of inner loops are left to them):

* ``break`` sets ``broke = True``; ``continue`` sets ``skip = True``, which
  each iteration starts ``False``; the statements after a jump, in every
  enclosing block of the iteration, run under ``if not (broke or skip)``;
* a ``for`` loop keeps iterating after a ``break`` with a body guarded by
  ``if not broke`` (the loop variable is assigned under that guard, so it
  keeps the value it had at the ``break``, unless the caller says nothing after
  the loop reads it); a ``while`` loop's test is
  ``False`` once ``broke`` is set; the ``else`` block runs ``if not broke``.

A jump may also sit in a ``try`` of the body (the rest of the ``try`` block
and the ``try``'s ``else`` then run under the guard; a jump in ``finally``,
which would discard an exception, is an ``UnsupportedSyntaxError``) or in the
``else`` block of a nested loop (it belongs to this loop).

Reverse mode needs this: an adjoint loop runs the iterations of its primal
backwards, so it must know what each one did, and flags are values the tape
records like any other.
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import List

from ..errors import unsupported
from ..ir import nodes as ir


def has_jump(stmts) -> bool:
    """A ``break`` or ``continue`` of this loop (not of a loop inside it)."""
    return next(_jumps(stmts), None) is not None


def _jumps(stmts):
    """The ``break`` and ``continue`` statements of this loop in ``stmts``."""
    for s in stmts:
        if isinstance(s, (ir.Break, ir.Continue)):
            yield s
        elif isinstance(s, (ir.For, ir.While)):
            yield from _jumps(s.orelse)  # the else block of a nested loop jumps in this one
        else:
            for b in ir.sub_blocks(s):
                yield from _jumps(b)


class _Flags:
    def __init__(self, names, temps, loc):
        self.names, self.temps, self.loc = names, temps, loc
        self.broke = ir.Var(names.fresh("broke"))
        self.skip = ir.Var(names.fresh("skip"))

    def temp(self) -> ir.Var:
        name = self.names.temp()
        self.temps.add(name)
        return ir.Var(name)

    def set(self, flag, loc) -> ir.Assign:
        return ir.Assign(flag, ir.Const(True), loc)

    def block(self, stmts) -> List:
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, ir.Break):
                out.append(self.set(self.broke, s.loc))
                return out  # what follows a jump never runs
            if isinstance(s, ir.Continue):
                out.append(self.set(self.skip, s.loc))
                return out
            if not has_jump([s]):
                out.append(s)
                continue
            if isinstance(s, ir.If):
                out.append(replace(s, body=tuple(self.block(s.body)),
                                   orelse=tuple(self.block(s.orelse))))
            elif isinstance(s, ir.Try):
                out.append(self.try_(s))
            else:  # a nested loop whose else block jumps
                out.append(replace(s, orelse=tuple(self.block(s.orelse))))
            rest = self.block(stmts[i + 1:])
            if rest:
                out += self.unless_jumped(rest)
            return out
        return out

    def unless_jumped(self, stmts) -> List:
        """``if not (broke or skip): stmts``."""
        jumped, go = self.temp(), self.temp()
        return [ir.Assign(jumped, ir.Call(operator.or_, (self.broke, self.skip)), self.loc),
                ir.Assign(go, ir.Call(operator.not_, (jumped,)), self.loc),
                ir.If(go, tuple(stmts), (), self.loc)]

    def try_(self, s: ir.Try) -> ir.Try:
        for x in _jumps(s.finalbody):
            raise unsupported(f"'{'break' if isinstance(x, ir.Break) else 'continue'}' "
                              "inside 'finally'", x.loc,
                              "it would discard an exception; jump after the try")
        orelse = self.block(s.orelse)
        if orelse and has_jump(s.body):  # a jump out of the body skips the else block
            orelse = self.unless_jumped(orelse)
        return replace(s, body=tuple(self.block(s.body)), orelse=tuple(orelse),
                       handlers=tuple(replace(h, body=tuple(self.block(h.body)))
                                      for h in s.handlers))


def without_jumps(loop, names, temps, target_read_after=True):
    """``(statements before the loop, the loop)`` without its own break/continue.  With
    ``target_read_after=False`` (no code after a ``for`` loop reads its variable), the
    variable is the loop's own, assigned in every iteration, guarded or not."""
    loc = replace(loop.loc, derived=True)
    flags = _Flags(names, temps, loc)
    body = [ir.Assign(flags.skip, ir.Const(False), loc)] + flags.block(loop.body)
    before = [ir.Assign(flags.broke, ir.Const(False), loc)]
    not_broke = flags.temp()
    check = ir.Assign(not_broke, ir.Call(operator.not_, (flags.broke,)), loc)
    orelse = (check, ir.If(not_broke, loop.orelse, (), loc)) if loop.orelse else ()
    if isinstance(loop, ir.For) and not target_read_after:
        running = flags.temp()
        guarded = [ir.Assign(running, ir.Call(operator.not_, (flags.broke,)), loc),
                   ir.If(running, tuple(body), (), loc)]
        return before, replace(loop, body=tuple(guarded), orelse=orelse)
    if isinstance(loop, ir.For):
        k = ir.Var(names.fresh("k"))
        running = flags.temp()
        guarded = [ir.Assign(running, ir.Call(operator.not_, (flags.broke,)), loc),
                   ir.If(running, (ir.Assign(loop.target, k, loc),) + tuple(body), (), loc)]
        return before, replace(loop, target=k, body=tuple(guarded), orelse=orelse)
    test = flags.temp()
    test_body = (ir.If(flags.broke, (ir.Assign(test, ir.Const(False), loc),),
                       tuple(loop.test_body) + (ir.Assign(test, loop.test, loc),), loc),)
    return before, replace(loop, test_body=test_body, test=test, body=tuple(body),
                           orelse=orelse)
