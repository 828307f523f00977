"""Recording only the parts of an index tuple the adjoint cannot rebuild (jit).

Reverse mode records an index tuple ``v = (ik, idx)`` whole: the pushes of ``v`` keep
both numbers, though ``ik`` is the counter of a loop whose adjoint loop gives it back.
``split_records(func, stacks, types)`` records only the other parts: it rewrites

* the push ``tape = (v, tape)`` into a push of a new name ``f`` per part ``c`` that is
  not a constant, a counter or an input (``tape = (f, tape)``), ``S: v = (.., c, ..)``
  into ``f = c`` followed by ``v = (.., f, ..)``;
* the pop ``v, tape = tape`` (in the adjoint block ``B``) into the pops of those
  ``f`` (the reverse order), and puts ``v = (.., f, ..)`` first in ``B``.

Why it is the same: before its pop ``f`` holds what it held when ``S`` ran (it is
pushed before its one assignment and popped after that assignment's adjoint), every
counter ``o`` in ``v`` is the target of a ``for`` around ``S`` whose adjoint loop is
around ``B`` (over ``rt.reversed_range`` of the same range) and is reassigned by nothing
in ``B``, and an input is assigned once, before every loop; so the ``v`` rebuilt first
in ``B`` is the ``v`` of that iteration.  ``v`` is split only when all of this holds,
it is assigned by ``S`` alone (and ``v = None`` at the start), pushed once (right
before ``S``) and popped once, and read in ``B`` (else it is not recorded at all), and
nowhere but in ``S``'s block and in top-level statements of ``B`` before the pop.
"""
from __future__ import annotations

from dataclasses import replace

from s2s_runtime import build

from ....ir import nodes as ir
from ....ir.names import NameGen
from ..lower.stacks import is_push
from ..typing import types as T
from .remat_pops import adjoint_plan, counter_matches


def split_records(func, stacks, types):
    """``func`` with index tuples recorded by their parts (module docstring)."""
    if not stacks:
        return func
    top, where, defs, plan, reversed_of = adjoint_plan(func, stacks, types)
    pushes = {}
    for s in ir.walk(func.body):
        if isinstance(s, ir.Assign) and s.target.name in plan.stacks \
                and is_push(s, s.target.name) and isinstance(s.value.args[0], ir.Var):
            pushes.setdefault(s.value.args[0].name, []).append(s)
    names = NameGen(ir.all_names(func))
    edits = {}  # id(statement) -> its replacement statements
    starts = {}  # id(block B) -> statements put first in it
    temps = set()
    for v in sorted(pushes):
        t = types.get(v)
        s = plan.only_def(v)
        pops = plan.pops.get(v, ())
        if not isinstance(t, T.Tuple) or s is None or len(pops) != 1 \
                or len(pushes[v]) != 1 or not isinstance(s.value, ir.Call) \
                or s.value.fn is not build.make_tuple or s.value.kwargs:
            continue
        push, pop = pushes[v][0], pops[0]
        sblock, spos, sfors = where[id(s)]
        block, ppos, bfors = where[id(pop)]
        if block is sblock or where[id(push)][0] is not sblock or where[id(push)][1] != spos - 1:
            continue
        parts, counters = [], set()
        for a in s.value.args:
            if isinstance(a, ir.Const) or a.name in plan.inputs:
                continue
            if a.name in plan.counters:
                counters.add(a.name)
            elif a not in parts:
                parts.append(a)
        if not parts or len(parts) == len(s.value.args) or not all(
                isinstance(types.get(a.name), T.Scalar) for a in parts):
            continue
        if any(not counter_matches(o, sfors, bfors, set(), reversed_of)
               and not _recomputed_range_matches(o, sfors, bfors, reversed_of, plan)
               for o in counters):
            continue
        ok, read = True, False
        for x in ir.walk(func.body):
            if ir.Var(v) not in ir.stmt_uses(x) or x is push or x is pop:
                continue
            xb, xpos, _ = where[id(x)]
            if not (xb is sblock or xb is block and xpos < ppos):
                ok = False
            read = read or xb is block
        if not ok or not read:
            continue  # (unread in the adjoint: lean_tapes drops its records whole)
        fresh = {a.name: ir.Var(names.fresh(f"{v}_part")) for a in parts}
        temps |= {f.name for f in fresh.values()}
        stack = push.target
        rebuilt = replace(s, value=replace(s.value, args=tuple(
            fresh.get(getattr(a, "name", None), a) for a in s.value.args)))
        edits[id(push)] = tuple(replace(push, value=replace(push.value, args=(f, stack)))
                                for f in fresh.values())
        edits[id(s)] = tuple(ir.Assign(f, a, s.loc) for a, f in zip(parts, fresh.values())) \
            + (rebuilt,)
        edits[id(pop)] = tuple(replace(pop, targets=(f, pop.targets[1]))
                               for f in reversed(list(fresh.values())))
        starts.setdefault(id(block), []).append(rebuilt)
    if not edits:
        return func

    def walk(stmts, bid):
        out = list(starts.get(bid, ()))
        for x in stmts:
            if id(x) in edits:
                out += edits[id(x)]
                continue
            blocks = ir.sub_blocks(x)
            out.append(ir.with_blocks(x, [walk(b, id(b)) for b in blocks]) if blocks else x)
        return tuple(out)

    return replace(func, body=walk(top, id(top)), temps=frozenset(set(func.temps) | temps))


def _recomputed_range_matches(o, sfors, bfors, reversed_of, plan) -> bool:
    """The adjoint loop of ``o`` runs over ``rt.reversed_range`` of a range recomputed
    (``remat_pops``) by the same call on constants and inputs as the primal loop's."""
    lp = next((f for f in reversed(sfors) if f.target.name == o), None)
    la = next((f for f in reversed(bfors) if f.target.name == o), None)
    if lp is None or la is None or not isinstance(la.iter, ir.Var) \
            or not isinstance(lp.iter, ir.Var) or la.iter.name not in reversed_of:
        return False
    again = reversed_of[la.iter.name]
    a, b = (plan.only_def(n.name) for n in (lp.iter, again))
    if a is None or b is None or not isinstance(a.value, ir.Call) or a.value != b.value:
        return False
    return all(isinstance(x, ir.Const) or x.name in plan.inputs
               for x in a.value.args + tuple(v for _, v in a.value.kwargs))
