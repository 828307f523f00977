"""Reverse mode through loops, after the adjoint is built: record only what it reads
(a mixin of ``loops.LoopAdjoints``; see ``loops.py`` for the tape).

Contract: ``finish_tape(primal, adjoint)`` returns both with a push before each
assignment in a loop of the primal whose old value the adjoint reads after its pop,
only those pops kept in the adjoint (``tape_reads.unneeded_pops`` drops pops read
before none of them), the while-loop counters, and the tape and ``ctrl`` chains
started before the first loop (none at all if nothing is recorded).  An in-place
write to a value the adjoint reads raises ``UnsupportedSyntaxError`` at its line.
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import List, Set

import s2s_runtime as rt
from s2s_runtime import build

from ..errors import unsupported
from ..ir import nodes as ir
from .tape_reads import unneeded_pops

LOOPS = (ir.For, ir.While)


def loop_stmts(s) -> list:
    """The statements a loop runs each iteration (its ``else`` runs once, after it)."""
    return list(s.test_body) + list(s.body) if isinstance(s, ir.While) else list(s.body)


class TapeRecording:
    """Recording what the adjoint reads; the host is ``reverse.Reverse``."""

    def finish_tape(self, primal: List, adjoint: List):
        """``(primal, adjoint)`` with pushes for the values the adjoint reads, their pops
        only, the while-loop counters and the tape itself (none if nothing is recorded)."""
        unneeded: Set[str] = set()  # popped, but read only before their pops
        while True:  # dropping pops can empty an if, whose test is then not read
            read = set()
            pops = False
            for x in ir.walk(adjoint):
                if _is_pop(x, self.tapes):
                    pops = True
                else:
                    read.update(a.name for a in ir.stmt_uses(x) if isinstance(a, ir.Var))
            read -= self.same_object  # one array throughout: restoring it changes nothing
            if pops:
                unneeded |= unneeded_pops(adjoint, self.tapes)
            read -= unneeded
            if not pops and not self.guard_tests \
                    and not any(isinstance(x, ir.COMPOUND) for x in adjoint):
                break  # straight-line code without pops: nothing to drop
            fewer = _drop_pops(adjoint, self.tapes, read, self.guard_tests)
            if len(list(ir.walk(fewer))) == len(list(ir.walk(adjoint))):
                break
            adjoint = fewer
        self.recorded: Set[str] = set()
        # zeros_like(v) for a v that some paths never assign (set in one branch or only in
        # a loop): v exists on every path if it starts as None (zeros_like(None) is None,
        # and nothing on such a path adds to that adjoint)
        surely = {v.name for x in primal for v in ir.stmt_defs(x)
                  if isinstance(x, (ir.Assign, ir.Unpack))} | {p.var.name for p in self.fn.params}
        for x in ir.walk(adjoint):
            v = getattr(x, "value", None)
            if isinstance(v, ir.Call) and v.fn is rt.zeros_like and isinstance(v.args[0], ir.Var) \
                    and v.args[0].name not in surely:
                self.unassigned.add(v.args[0].name)
        primal = self._instrument(primal, read, in_loop=False)
        primal = [ir.Assign(ir.Var(n), ir.Const(None), self.fn.loc)
                  for n in sorted(self.unassigned)] + primal
        if not self.recorded:
            return primal, adjoint
        self._check_no_inplace(primal, read)
        used = _pushed_tapes(primal, self.tapes)
        return [ir.Assign(t, ir.Const(()), self.fn.loc) for t in used] + primal, adjoint

    def _instrument(self, stmts, read: Set[str], in_loop: bool) -> List:
        out = []
        for s in stmts:
            if isinstance(s, LOOPS):
                new = self._instrument_loop(s, read, in_loop)
                if in_loop is not True:  # outermost: what the loop pushes must exist before it
                    may, must = self._defined_before.get(id(s), (set(), set()))
                    pushed = _pushed([new], self.tapes) - self.pushed_after
                    for n in sorted(pushed - must - self.unassigned):
                        if n in may:  # assigned on some paths only: set it at the start
                            self.unassigned.add(n)
                        else:
                            out.append(ir.Assign(ir.Var(n), ir.Const(None), s.loc))
                count = self.while_counts.get(id(s))
                if count is not None:
                    init = ir.Assign(count, ir.Const(0), s.loc)
                    out += self._instrument([init], read, in_loop)
                items = self.loop_items.get(id(s))
                if items is not None:
                    init = ir.Assign(items, ir.Call(build.iteration_items, (s.iter,)), s.loc)
                    out += self._instrument([init], read, in_loop)
                    new = replace(new, iter=items)
                out.append(new)
            elif isinstance(s, ir.If):
                out.append(replace(s, body=tuple(self._instrument(s.body, read, in_loop)),
                                   orelse=tuple(self._instrument(s.orelse, read, in_loop))))
            elif isinstance(s, ir.Try):
                out.append(self.instrument_try(s, read, in_loop))
            else:
                after = []
                if in_loop:
                    for v in ir.stmt_defs(s):
                        if v.name in read and self.needs_record(v.name, in_loop) \
                                and not self.keeps_object(s):
                            if in_loop == "try" and v.name not in {
                                    p.var.name for p in self.fn.params}:
                                self.unassigned.add(v.name)  # may be pushed before assigned
                            tape = self.tape_for(v.name)
                            push = ir.Assign(tape, ir.Call(build.make_tuple, (v, tape)), s.loc)
                            (after if v.name in self.pushed_after else out).append(push)
                            self.recorded.add(v.name)
                out.append(s)
                out += after
        return out

    def _instrument_loop(self, s, read, in_loop):
        count = self.while_counts.get(id(s))
        if id(s) not in self.loops_with_adjoint:
            return replace(s, orelse=tuple(self._instrument(s.orelse, read, in_loop)))
        orelse = tuple(self._instrument(s.orelse, read, True))  # popped by the adjoint
        body = self._instrument(s.body, read, True)
        if isinstance(s, ir.For):
            return replace(s, body=tuple(body), orelse=orelse)
        body.append(ir.Assign(count, ir.Call(operator.add, (count, ir.Const(1))), s.loc))
        return replace(s, test_body=tuple(self._instrument(s.test_body, read, True)),
                       body=tuple(body), orelse=orelse)

    def _check_no_inplace(self, primal, read) -> None:
        for x in ir.walk(primal):
            if isinstance(x, LOOPS) and _pushed([x], self.tapes):
                for y in ir.walk(loop_stmts(x)):
                    v = getattr(y, "value", None)
                    if isinstance(v, ir.Call) and v.args and isinstance(v.args[0], ir.Var) \
                            and v.args[0].name in read and (
                            v.fn is operator.setitem or v.fn is setattr):
                        raise unsupported("an in-place write inside a loop to an array the "
                                          "derivative reads", y.loc,
                                          "not yet in reverse mode; build a new array instead")


def _reads(x) -> Set[str]:
    return {a.name for a in ir.stmt_uses(x) if isinstance(a, ir.Var)}


def _is_pop(x, tapes) -> bool:
    return isinstance(x, ir.Unpack) and x.value in tapes and x.targets[1] == x.value


def _drop_pops(stmts, tapes, read, tests) -> List:
    """``stmts`` without the pops of names nobody reads, the tests (names in ``tests``)
    nobody reads, and the ifs and loops that leaves empty."""
    out = []
    for s in stmts:
        if _is_pop(s, tapes) and s.targets[0].name not in read:
            continue
        if isinstance(s, ir.Assign) and s.target.name in tests and s.target.name not in read:
            continue
        if isinstance(s, ir.If):
            s = replace(s, body=tuple(_drop_pops(s.body, tapes, read, tests)),
                        orelse=tuple(_drop_pops(s.orelse, tapes, read, tests)))
            if not s.body and not s.orelse:
                continue
        elif isinstance(s, ir.For):
            s = replace(s, body=tuple(_drop_pops(s.body, tapes, read, tests)))
            if not s.body:
                continue
        out.append(s)
    return out


def _pushed_tapes(stmts, tapes) -> List[ir.Var]:
    used = {x.target.name for x in ir.walk(list(stmts)) if isinstance(x, ir.Assign)
            and x.target in tapes}
    return [t for t in tapes if t.name in used]


def _pushed(stmts, tapes) -> Set[str]:
    out = set()
    for x in ir.walk(list(stmts)):
        v = getattr(x, "value", None)
        if isinstance(x, ir.Assign) and x.target in tapes and isinstance(v, ir.Call):
            out.add(v.args[0].name)
    return out


def read_first(stmts) -> Set[str]:
    """Names ``stmts`` may read before assigning them (in one run of the block)."""
    read: Set[str] = set()

    def scan(block, defined: Set[str]) -> Set[str]:
        for x in block:
            if isinstance(x, ir.If):
                read.update(_reads(x) - defined)
                both = scan(x.body, set(defined)) & scan(x.orelse, set(defined))
                defined |= both
            elif isinstance(x, ir.For):
                read.update(_reads(x) - defined)
                read.update(read_first(x.body) - defined - {x.target.name})
                scan(x.orelse, set(defined))
            elif isinstance(x, ir.While):
                read.update(read_first(list(x.test_body) + list(x.body)) - defined)
                scan(x.orelse, set(defined))
            elif isinstance(x, ir.Try):
                read.update(_reads(x) - defined)
                done = scan(x.body, set(defined))  # if it ran to its end
                scan(x.orelse, done)
                for h in x.handlers:  # the body may have stopped anywhere
                    scan(h.body, set(defined))
                scan(x.finalbody, set(defined))
            else:
                read.update(_reads(x) - defined)
                defined |= {v.name for v in ir.stmt_defs(x)}
        return defined

    scan(list(stmts), set())
    return read
