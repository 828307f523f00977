"""Checkpointed loops as calls of a segment function (reverse mode only).

Contract: ``checkpointed_loops(fn, marker)`` accepts an IR function after
``inline_calls``, ``single_exit`` and ``writes_as_values`` (not yet SSA) and
returns it with every loop ``for i in t:`` whose ``t = marker(r, levels=L)``
(``s2s.checkpoint_loop``, ``core/remat_loop.py``) replaced by

    lo, hi, st, levels = range_bounds(r, L)
    t9 = checkpoint_loop_f_12(lo, hi, st, levels, *state, *reads)
    s, v, acc, t10, t11 = t9         # the state, then the reads passed through

where ``checkpoint_loop_f_12`` is a ``LoopRemat`` (``core/remat_loop.py``) whose
segment function is the loop over ``range(lo, hi, st)``:

* ``state``: the names the body assigns that an iteration reads before
  assigning them, or that code outside the loop reads (each must be assigned
  before the loop); the segment copies those it writes into in place
  (``rt.owned``), so a snapshot is never changed by a later sweep;
* ``reads``: the other names the body reads (parameters, values made
  before the loop, globals passed as free variables).

Rejected with an ``UnsupportedSyntaxError`` naming the construct: ``break``,
``continue`` or ``return`` in the loop (its trip count must be its range's),
an ``else:`` block, a state variable not surely assigned before the loop, the
loop variable read after the loop, a loop that carries nothing, and anything
``passes/replay.py`` finds the recomputation could not repeat.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Dict, List, Set

import s2s_runtime as rt
from s2s_runtime import build
from s2s_runtime.markers import checkpoint_loop, range_bounds

from ..ad.analysis import defined_before
from ..ad.tape_recording import read_first
from ..errors import unsupported
from ..ir import nodes as ir
from ..ir.names import NameGen
from .replay import check_replayable

#: makes the run-time callable of one checkpointed loop, ``factory(segment, n_state, name)``:
#: ``core/remat_loop.py``'s ``LoopRemat`` (its pullback runs the transforms of the layer
#: above this one), set when that module is imported (``s2s`` imports it)
_loop_factory = None


def set_loop_factory(factory) -> None:
    """Register what ``checkpointed_loops`` makes of each loop (``core.remat_loop.LoopRemat``)."""
    global _loop_factory
    _loop_factory = factory


def checkpointed_loops(fn: ir.Function) -> ir.Function:
    marks = {s.target.name: s for s in ir.walk(fn.body) if isinstance(s, ir.Assign)
             and isinstance(s.value, ir.Call) and s.value.fn is checkpoint_loop}
    if not marks:
        return fn
    return _Extraction(fn, marks).run()


def _defs(stmts) -> Set[str]:
    return {v.name for x in ir.walk(list(stmts)) for v in ir.stmt_defs(x)}


def _uses(stmts) -> Set[str]:
    return {a.name for x in ir.walk(list(stmts)) for a in ir.stmt_uses(x)
            if isinstance(a, ir.Var)}


def _jumps(body) -> ir.Stmt:
    """A ``break`` / ``continue`` of this loop, or a ``return`` anywhere in it."""
    for s in body:
        if isinstance(s, (ir.Break, ir.Continue, ir.Return)):
            return s
        for block in ir.sub_blocks(s):
            if isinstance(s, (ir.For, ir.While)):
                hit = next((x for x in ir.walk(list(block)) if isinstance(x, ir.Return)), None)
            else:
                hit = _jumps(block)
            if hit is not None:
                return hit
    return None


def _index_written(body) -> Set[str]:
    """Names ``body`` writes into in place (``y = index_set(y, i, v)``)."""
    return {x.target.name for x in ir.walk(list(body)) if isinstance(x, ir.Assign)
            and isinstance(x.value, ir.Call) and x.value.fn is rt.index_set}


class _Extraction:
    def __init__(self, fn: ir.Function, marks: Dict[str, ir.Assign]):
        self.fn, self.marks = fn, marks
        self.names = NameGen(ir.all_names(fn))
        self.params = {p.var.name for p in fn.params}
        self.before = defined_before(list(fn.body), self.params)
        self.counts = ir.use_counts(fn.body)
        self.def_counts = Counter(v.name for x in ir.walk(fn.body) for v in ir.stmt_defs(x))

    def run(self) -> ir.Function:
        return self.fn.with_body(self.block(self.fn.body))

    def block(self, stmts) -> List:
        out = []
        for s in stmts:
            if isinstance(s, ir.Assign) and s.target.name in self.marks \
                    and self.counts.get(s.target.name) == 1:
                continue  # read by its loop alone, which becomes the call
            if isinstance(s, ir.For) and isinstance(s.iter, ir.Var) and s.iter.name in self.marks:
                out += self.extract(s, self.marks[s.iter.name])
                continue
            out.append(ir.with_blocks(s, [self.block(b) for b in ir.sub_blocks(s)])
                       if ir.sub_blocks(s) else s)
        return out

    def extract(self, s: ir.For, mark: ir.Assign) -> List:
        loc = s.loc
        what = "a checkpointed loop"
        jump = _jumps(s.body)
        if jump is not None:
            kind = type(jump).__name__.lower()
            if jump.loc.text.strip().startswith("return"):  # made a break by single_exit
                kind = "return"
            raise unsupported(f"'{kind}' inside {what}", jump.loc,
                              "its trip count must be its range's; write the test into "
                              "the body instead")
        if s.orelse:
            raise unsupported(f"'else:' on {what}", loc)
        call = mark.value
        levels = call.args[1] if len(call.args) == 2 else dict(call.kwargs).get(
            "levels", ir.Const(2))
        if not call.args or len(call.args) > 2:
            raise unsupported("checkpoint_loop(...) without its range as the first "
                              "positional argument", mark.loc)
        body = list(s.body)
        defs = _defs(body) - {s.target.name}
        inside = ir.use_counts([s])
        outside = {n for n, c in self.counts.items() if c > inside.get(n, 0)}
        state = sorted(defs & (read_first(body) | outside))
        if not state:
            raise unsupported(f"{what} that carries no value from one iteration to the "
                              "next or out of the loop", loc)
        must = self.before[id(s)][1]
        for n in state:
            if n not in must:
                raise unsupported(f"'{n}', first assigned inside {what} and read after it "
                                  "or in a later iteration", loc,
                                  f"assign '{n}' before the loop, so every segment starts "
                                  "from a value")
        if s.target.name in outside and self.def_counts[s.target.name] == 1:
            raise unsupported(f"the loop variable '{s.target.name}' of {what} read after "
                              "the loop", loc)
        written = _index_written(body)
        for n in sorted(written & set(state) & self.params):
            raise unsupported(f"in-place write into the argument '{n}' inside {what}", loc,
                              f"the caller's array would change; write {n} = {n}.copy() "
                              "before the loop")
        reads = sorted(_uses(body) - defs - {s.target.name})
        check_replayable(body, set(state), what)
        segment = self.segment(s, body, state, reads)
        return self.call(s, mark, segment, state, reads, levels)

    def segment(self, s: ir.For, body, state, reads) -> ir.Function:
        """IR ``def seg(lo, hi, st, levels, *state, *reads)``: the loop over
        ``range(lo, hi, st)`` (``levels`` is the schedule's),
        returning the state and the reads (passed through: their cotangents come in
        as the seeds of the reads' adjoints, so a schedule adds the contributions in
        the order the plain adjoint loop would)."""
        loc = replace(s.loc, derived=True)
        bounds = [ir.Var(self.names.fresh(n)) for n in ("lo", "hi", "st", "levels")]
        rng, out = ir.Var(self.names.temp()), ir.Var(self.names.temp())
        written = _index_written(body)
        stmts = [ir.Assign(ir.Var(n), ir.Call(rt.owned, (ir.Var(n),)), loc)
                 for n in state if n in written]
        stmts += [ir.Assign(rng, ir.Call(range, tuple(bounds[:3])), loc),
                  replace(s, iter=rng),
                  ir.Assign(out, ir.Call(build.make_tuple, tuple(
                      ir.Var(n) for n in state + reads)), loc),
                  ir.Return(out, loc)]
        params = tuple(ir.Param(v) for v in bounds) + tuple(
            ir.Param(ir.Var(n)) for n in state + reads)
        name = f"loop_{self.fn.name}_{s.loc.line}"
        func = ir.Function(name, params, tuple(stmts), s.loc)
        # the caller's temporaries that the segment mentions (a name the caller used as
        # a temporary elsewhere would look like one to the segment's passes)
        return replace(func, temps=frozenset(self.fn.temps & ir.all_names(func))
                       | {rng.name, out.name})

    def call(self, s, mark, segment, state, reads, levels) -> List:
        loc = s.loc
        if _loop_factory is None:
            raise RuntimeError("checkpointed loops need s2s.core.remat_loop (import s2s)")
        remat = _loop_factory(segment, len(state), segment.name)
        b, t = ir.Var(self.names.temp()), ir.Var(self.names.temp())
        bounds = [ir.Var(self.names.fresh(n)) for n in ("lo", "hi", "st", "levels")]
        return [ir.Assign(b, ir.Call(range_bounds, (mark.value.args[0], levels)), loc),
                ir.Unpack(tuple(bounds), b, loc),
                ir.Assign(t, ir.Call(remat, tuple(bounds) + tuple(
                    ir.Var(n) for n in state + reads)), loc),
                ir.Unpack(tuple(ir.Var(n) for n in state) + tuple(
                    ir.Var(self.names.temp()) for _ in reads), t, loc)]
