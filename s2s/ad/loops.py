"""Reverse mode through ``for`` and ``while`` loops: the tape.

The primal loop runs as written, with a push onto a tape before every
assignment in its body whose old value the adjoint reads.  The adjoint loop
runs the iterations backwards — ``for i in rt.reversed_range(r)`` (that is
``r[::-1]``) for a loop ``for i in r`` over a range, ``for _ in range(n)``
for a ``while`` loop whose trip count ``n`` the primal counted — and after
the adjoint of each assignment pops the value that assignment overwrote.  So at the adjoint of
every statement all variables hold what they held right after it ran in the
primal: the invariant SSA gives straight-line code for free.  Two rewrites
make it hold:

* an assignment that reads its own target (``s = s * x``) becomes
  ``t = s * x; s = t``, so the adjoint, which runs before the pop, sees the
  operand's old value;
* an ``if`` whose branches assign its own test variable (``r = a; if r: r = b``,
  what ``a and b`` and ``a < b < c`` desugar to, or user code) tests a fresh
  copy instead (``t = r; if t: r = b``): the adjoint ``if`` runs on the test's
  value after the statement, and must take the branch the primal took, so
  its pops match its pushes;
* a ``for`` over an array, list, tuple, ``zip``, ``enumerate`` or
  ``reversed`` becomes a ``for`` over a range that indexes the sequence
  (``passes/loop_ranges.py``).

To-be-recorded analysis (``tape_recording.py``): once the adjoint is built, only the
pushes of variables the adjoint code reads are kept (with their pops); a program whose
loops need nothing has no tape at all.  A tape is a chain of pairs: a push
is ``tape = (x, tape)``, a pop ``x, tape = tape``.  Popping rebinds a name
and changes nothing, so a ``vjp`` closure can run the adjoint many times, and
both are tuple operations, which the transforms differentiate again (second
order through loops).  Values that carry derivatives go on ``tape``, the
others (branch decisions, ranges, counts) on ``ctrl``, so a transform of the
generated code sees that those carry none.

Adjoints that cross iterations (of loop-carried variables and of variables
read in the loop) are concrete values at every iteration boundary: made
``zeros_like`` before the adjoint loop if nothing contributed yet,
consumed (and renewed) at the variable's assignment.  Adjoints of values
that live within one iteration stay symbolic.

``break`` and ``continue`` become flags first (``passes/loop_jumps.py``), and
so do returns inside a loop (``passes/single_exit.py``); a ``try`` inside a
loop records the path of each iteration (``ad/tries.py``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Set

import s2s_runtime as rt
from s2s_runtime import build

from ..errors import unsupported
from .common import is_in
from ..ir import nodes as ir
from ..passes.loop_jumps import has_jump, without_jumps
from ..passes.argument_loops import argument_loops
from ..passes.loop_ranges import is_range, range_loops, single_defs
from .tape_recording import LOOPS, TapeRecording, loop_stmts, read_first


def _in_place_write(s) -> bool:
    """``y = index_set(y, i, v)`` with an index other than ``...`` (which may rebind a
    number): after it ``y`` holds the object it held."""
    v = s.value
    return isinstance(s, ir.Assign) and isinstance(v, ir.Call) and v.fn is rt.index_set \
        and v.args[0] == s.target \
        and not (isinstance(v.args[1], ir.Const) and v.args[1].value is Ellipsis)


def _defs(stmts) -> Set[str]:
    return {v.name for x in ir.walk(stmts) for v in ir.stmt_defs(x)}


def _uses(stmts) -> Set[str]:
    return {a.name for x in ir.walk(stmts) for a in ir.stmt_uses(x) if isinstance(a, ir.Var)}


class LoopAdjoints(TapeRecording):
    """Mixin of ``Reverse``: loops in reverse mode (see the module docstring)."""

    # -- before activity analysis: loops the tape can handle ------------------------------
    def prepare_loops(self, body: List) -> List:
        indexable = {p for p, i in self.info.items() if not i.is_dict}
        #: names pushed after their assignment, not before (see ad/tries.py)
        self.pushed_after: Set[str] = set()
        #: adjoint temporaries ``t = handler == i`` / ``done_j = steps_done >= j``
        self.guard_tests: Set[str] = set()
        #: ids of the for loops of a try body that catch what their body raises, and of
        #: the tries in a try body that no exception leaves (ad/tries.py)
        self.wrapped_loops: Set[int] = set()
        self.contained: Set[int] = set()
        #: ``t`` of ``t = index_set(y, i, v); y = t``: ``y = t`` keeps ``y``'s object
        self.write_results: Dict[str, str] = {}
        body = range_loops(argument_loops(body, self.names, set()),  # for v in row: indexed
                           self.names, self.temps, indexable)
        self.single_defs = single_defs(body)
        self.reads = ir.use_counts(body)  # (is a loop's variable read after it)
        return self._prepare_block(body, in_loop=False)

    def _prepare_block(self, stmts, in_loop) -> List:
        out = []
        for s in stmts:
            if isinstance(s, LOOPS) and has_jump(loop_stmts(s)):
                target = getattr(s, "target", None)
                after = target is not None and self.reads.get(target.name, 0) > \
                    ir.use_counts(s.body).get(target.name, 0)
                before, s = without_jumps(s, self.names, self.temps, target_read_after=after)
                out += before
            if isinstance(s, ir.For):
                s = replace(s, body=tuple(self._prepare_block(s.body, True)),
                            orelse=tuple(self._prepare_block(s.orelse, True)))
            elif isinstance(s, ir.While):
                s = replace(s, test_body=tuple(self._prepare_block(s.test_body, True)),
                            body=tuple(self._prepare_block(s.body, True)),
                            orelse=tuple(self._prepare_block(s.orelse, True)))
            elif isinstance(s, ir.If):
                if in_loop and isinstance(s.test, ir.Var) \
                        and s.test.name in _defs(ir.sub_blocks_flat(s)):
                    t = self.temp()  # if r: r = b  ->  t = r; if t: r = b
                    out.append(ir.Assign(t, s.test, s.loc))
                    s = replace(s, test=t)
                s = replace(s, body=tuple(self._prepare_block(s.body, in_loop)),
                            orelse=tuple(self._prepare_block(s.orelse, in_loop)))
            elif isinstance(s, ir.Try):
                out += self.prepare_try(s, in_loop)  # the try and what records its path
                continue
            elif in_loop and isinstance(s, (ir.Assign, ir.Unpack)):
                targets = {v.name for v in ir.stmt_defs(s)}
                if targets & {a.name for a in ir.stmt_uses(s) if isinstance(a, ir.Var)}:
                    t = self.temp()  # s = s * x  ->  t = s * x; s = t
                    out.append(ir.Assign(t, s.value, s.loc))
                    if _in_place_write(s):
                        self.write_results[t.name] = s.target.name
                    s = replace(s, value=t)
            out.append(s)
        return out

    # -- activity: which loops reverse mode can take ------------------------------------
    def check_loop(self, s, active: Set[str]) -> None:
        inner = list(ir.walk(ir.sub_blocks_flat(s)))
        if not ({v.name for x in [s, *inner] for v in ir.stmt_defs(x)} & active):
            return
        for x in inner:
            if isinstance(x, ir.Return):  # single_exit takes them out of loops
                raise unsupported("'return' inside a loop over differentiated values", x.loc)
        if isinstance(s, ir.For) and is_in(s.iter, active) \
                and not is_range(s.iter, self.single_defs):
            raise unsupported("'for' loop over differentiated values whose sequence s2s "
                              "cannot index", s.loc, "reverse mode differentiates loops over "
                              "range(...), arrays, lists, tuples, zip, enumerate and reversed")
        test_defs = set(_defs(s.test_body) if isinstance(s, ir.While) else ()) & active
        if test_defs:
            # values computed for the test alone (``while abs(r * r - a) > tol``) need no
            # adjoint: the test is not differentiated; a value used past the test would
            everywhere, in_test = ir.use_counts(self.fn.body), ir.use_counts(s.test_body)
            if isinstance(s.test, ir.Var):  # read by the loop itself
                in_test[s.test.name] = in_test.get(s.test.name, 0) + 1
            if any(everywhere.get(n, 0) > in_test.get(n, 0) for n in test_defs):
                raise unsupported("a 'while' test that computes differentiated values used "
                                  "after the test", s.loc)

    # -- the adjoint loop ----------------------------------------------------------------
    def adjoint_loop(self, s, have: Set[str], out: List, loc) -> None:
        stmts = loop_stmts(s)
        defs = _defs(stmts) | ({s.target.name} if isinstance(s, ir.For) else set())
        if not self.loop_stack and not (defs & self.relevant):
            return  # a loop no derivative flows through (its values are final)
        self.loops_with_adjoint.add(id(s))
        local = self._iteration_local(s, defs)
        carried = sorted(self.relevant & (defs | _uses(stmts)) - local)
        # their adjoints are made zeros_like(value) after the loop: a loop that never ran
        # leaves the value unassigned unless it was surely assigned before
        self.unassigned.update(set(carried) & defs - self._defined_before[id(s)][1])
        self.loop_stack.append(set(carried))
        self.scope_kinds.append("loop")
        # the else block runs once after the last iteration; its assignments are
        # recorded like the loop's, so the adjoint loop starts from the loop's final values
        out += self.adjoint_block(list(s.orelse), have)
        for m in carried:
            if m not in have:
                out.append(ir.Assign(self.bar_of(m), ir.Call(rt.zeros_like, (ir.Var(m),)), loc))
                have.add(m)
        have -= local  # each iteration starts with no adjoint for its own values
        inner_have = set(have)
        body = self.adjoint_block(list(s.body), inner_have)
        for m in carried:  # concrete again for the iteration before
            if m not in inner_have:
                body.append(ir.Assign(self.bar_of(m), ir.Call(rt.zeros_like, (ir.Var(m),)), loc))
        self.loop_stack.pop()
        self.scope_kinds.pop()
        if isinstance(s, ir.For):
            items = s.iter
            if not is_range(s.iter, self.single_defs):  # kept by the primal to run backwards
                items = self.loop_items[id(s)] = self.temp()
            backwards = self.temp()
            out.append(ir.Assign(backwards, ir.Call(build.reversed_range, (items,)), loc))
            out.append(ir.For(s.target, backwards, tuple(body), (), loc))
            if items is not s.iter and "loop" in self.scope_kinds:  # set in each outer iteration
                out.append(self.pop(items, s.loc))
            return
        count = ir.Var(self.names.fresh("n_iter"))
        self.while_counts[id(s)] = count
        undo_test = self.pops(s.test_body)
        out += undo_test  # the last test, which ended the loop
        trips = self.temp()
        out.append(ir.Assign(trips, ir.Call(range, (count,)), loc))
        out.append(ir.For(ir.Var(self.names.fresh("_")), trips, tuple(body + undo_test), (), loc))
        if "loop" in self.scope_kinds:  # the counter is set afresh in each outer iteration
            out.append(self.pop(count, s.loc))

    def _iteration_local(self, s, defs: Set[str]) -> Set[str]:
        """Variables of the loop assigned before any read in every iteration and not
        read after it: their adjoints live within one iteration."""
        inside = ir.use_counts([s])
        # (only the loop's own definitions can be in the answer: look at those, not at
        # every variable of the function once per loop)
        outside = {n for n in defs if self.use_counts.get(n, 0) > inside.get(n, 0)}
        outside |= self.returned  # read by the return, which the body no longer holds
        target = {s.target.name} if isinstance(s, ir.For) else set()
        return defs - read_first(loop_stmts(s)) - outside - target

    def pops(self, stmts) -> List:
        """Pops restoring what the assignments of ``stmts`` (straight-line) overwrote."""
        scope = "loop" if "loop" in self.scope_kinds else "try"
        out = []
        for x in reversed(list(stmts)):
            for v in reversed(list(ir.stmt_defs(x))):
                if self.needs_record(v.name, scope) and not self.keeps_object(x):
                    out.append(self.pop(v, x.loc))
        return out

    def keeps_object(self, x) -> bool:
        """Whether ``x`` rebinds its target to the object it already holds (``y = t``
        after ``t = index_set(y, i, v)``, a write in place): restoring the name after
        its adjoint would change nothing, so it is neither pushed nor popped."""
        return isinstance(x, ir.Assign) and isinstance(x.value, ir.Var) \
            and self.write_results.get(x.value.name) == x.target.name

    def needs_record(self, name: str, scope) -> bool:
        """In a loop every assignment may overwrite a value the adjoint needs; in a
        ``try`` (run once) only a name assigned more than once can."""
        return scope != "try" or self.def_counts[name] > 1

    def pop(self, v: ir.Var, loc) -> ir.Unpack:
        """``v, tape = tape``: the tape is a chain of pairs ``(value, rest)``, so pushes
        and pops are tuple operations that both modes differentiate (higher order)
        and reading it back never changes it."""
        tape = self.tape_for(v.name)
        return ir.Unpack((v, tape), tape, replace(loc, derived=True))

    def tape_for(self, name: str) -> ir.Var:
        """Values that carry derivatives go on ``tape``; the others (branch decisions,
        ranges, counts, values independent of the inputs) on ``ctrl``, which a
        transform of the generated code sees as holding no derivatives."""
        return self.tape if name in self.active_vars else self.ctrl
