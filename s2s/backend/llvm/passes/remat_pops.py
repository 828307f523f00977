"""Recomputing, instead of recording, values made from loop counters and inputs (jit).

Reverse mode records a loop's value ``v`` when its adjoint reads it, even when
``v`` is cheap to make again from what the adjoint loop has at hand: an index
``t9 = i + 1``, an index tuple ``t8 = (r, q)``, an item ``wh[t8]`` of an input
no one writes.  ``rematerialise(func)`` makes the adjoint compute such a ``v``
afresh (into new temporaries) right before its first read, so it no longer
reads the recorded value and ``lean_tapes`` drops the pushes and pops of ``v``.

``v`` is recomputed only when all of this holds (else it stays recorded):

* ``v`` is popped once, from a tape the kernel builds, in block ``B`` (an
  adjoint loop's body), and assigned by one statement ``S`` besides (and
  ``v = None`` starts);
* ``S`` computes ``v`` with a pure operation (integer/float arithmetic, a tuple,
  a read ``x[i]``, ``rt.owned`` of a number, a ``range``) from constants, loop counters,
  inputs no statement writes or reassigns (numbers passed in and never
  reassigned), numbers and arrays whose elements never change
  (``frozen_arrays.py``) assigned once outside all loops and branches,
  temporaries assigned once, earlier in ``S``'s block or before the statement
  holding it in an enclosing block, the same way (recursively; a step making a
  new array is never recomputed: it costs what recording it saves), and *held*
  values: a number, tuple or frozen array ``a`` assigned once, before the
  statement reading it, and popped once, in the adjoint block ``B`` after the
  first read of ``v`` or in a block enclosing ``B`` after the statement holding
  ``B`` -- before its pop the adjoint sees the value ``a`` had when ``S`` ran
  (reverse mode pushes ``a`` before its assignment and pops it after that
  assignment's adjoint), so ``xc[i]`` or ``l[t20]`` is read again, not recorded;
* every loop counter ``o`` it uses is the target of a ``for`` around ``S``
  whose adjoint loop is around ``B`` (``for o in rt.reversed_range(r)`` over the
  same range variable ``r``), and nothing in ``B`` reassigns ``o``: so when
  ``B`` runs for an iteration ``o`` holds what it held when ``S`` ran;
* the adjoint reads ``v`` only in top-level statements of ``B`` before the pop
  (the value of that iteration); any other read outside ``S``'s block
  (a read of the value the pop restores) keeps ``v`` recorded.
"""
from __future__ import annotations

import operator
from dataclasses import replace

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build

from ....ir import nodes as ir
from ....rules.registry import shape_operands
from ....ir.names import NameGen
from ..typing import types as T
from ..lower.stacks import is_pop
from .frozen_arrays import frozen_arrays

#: operations recomputed (pure: the same operands give the same value)
_PURE = {operator.add, operator.sub, operator.mul, operator.neg, operator.pos, range, slice,
         operator.getitem, rt.read_copy, rt.read_checked, build.make_tuple, rt.owned}
#: operations whose result may be a view of (or an element of) their first operand
_VIEW = {operator.getitem, rt.read_copy, rt.read_checked}
#: calls that only read their first operand (an input stays unwritten)
_READS_ONLY = {operator.getitem, rt.read_copy, rt.read_checked, len, np.shape}
_RENAMEABLE = (ir.Assign, ir.ExprStmt, ir.Unpack, ir.Return)
#: operations whose result is a new array (never a view of an operand)
_NEW_ARRAY = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg}


def statement_index(top):
    """``(where, defs)``: per statement id ``(block, position, enclosing fors)``, and
    per name the statements assigning it, in the block ``top`` (a function's body)."""
    where, defs = {}, {}

    def scan(block, fors):
        for k, s in enumerate(block):
            where[id(s)] = (block, k, fors)
            for v in ir.stmt_defs(s):
                defs.setdefault(v.name, []).append(s)
            inner = fors + (s,) if isinstance(s, ir.For) else fors
            for b in ir.sub_blocks(s):
                scan(b, inner)

    scan(top, ())
    return where, defs


def _unwritten_inputs(func, defs, types):
    """Parameters never reassigned, written or aliased: every statement naming one reads
    a number from it (``x[i, j]``), its shape, makes a new array of it (arithmetic)
    or takes it as a shape reference (``rt.add_at``'s ``x``, ...)."""
    out = set()
    for p in func.params:
        n = p.var.name
        if n in defs:
            continue
        ok = True
        for s in ir.walk(func.body):
            if p.var not in ir.stmt_uses(s):
                continue
            v = getattr(s, "value", None)
            if not isinstance(s, ir.Assign) or not isinstance(v, ir.Call) or v.kwargs:
                ok = False
            elif v.fn in _READS_ONLY and v.args[0] == p.var and p.var not in v.args[1:]:
                ok = v.fn in (len, np.shape) or isinstance(types.get(s.target.name), T.Scalar)
            elif v.fn in _NEW_ARRAY:
                ok = True
            else:
                where = shape_operands(v.fn)
                ok = all(k in where for k, a in enumerate(v.args) if a == p.var)
            if not ok:
                break
        if ok:
            out.add(n)
    return out


class RecomputePlan:
    """What the adjoint of one function may recompute instead of popping: the statements
    by position (``statement_index``), the tape stacks, the value types and the arrays no
    statement writes (``frozen_arrays``)."""

    def __init__(self, func, top, where, defs, stacks, types):
        self.where, self.defs, self.stacks, self.top = where, defs, stacks, top
        self.types = types
        self.frozen = frozen_arrays(func, types, stacks)
        # inputs no one writes, and numbers and frozen arrays assigned once, outside
        # every loop and branch
        self.inputs = _unwritten_inputs(func, defs, types) | {
            n for n, ds in defs.items() if len(ds) == 1
            and isinstance(ds[0], (ir.Assign, ir.Unpack))
            and where[id(ds[0])][0] is top
            and (isinstance(types.get(n), T.Scalar) or n in self.frozen)} | {
            p.var.name for p in func.params  # passed in and never reassigned
            if p.var.name not in defs and (isinstance(types.get(p.var.name), T.Scalar)
                                           or p.var.name in self.frozen)}
        self.pops = {}  # name -> its pops
        for x in ir.walk(top):
            if is_pop(x, stacks):
                self.pops.setdefault(x.targets[0].name, []).append(x)
        self.parent = {}  # id(block) -> (the block holding its statement, its position)
        for x in ir.walk(top):
            for b in ir.sub_blocks(x):
                xb, xpos, _ = where[id(x)]
                self.parent[id(b)] = (xb, xpos)
        self.counters = {n for n, ds in defs.items()
                         if all(isinstance(d, ir.For) and d.target.name == n for d in ds)}

    def encloses(self, outer, pos, block) -> bool:
        """``block`` lies inside a statement of the block ``outer`` after position ``pos``
        (a temporary assigned there, once, before a loop, holds its value in the loop)."""
        while id(block) in self.parent:
            up, k = self.parent[id(block)]
            if up is outer:
                return k > pos
            block = up
        return False

    def only_def(self, name):
        ds = [d for d in self.defs.get(name, ()) if not is_pop(d, self.stacks)
              and not (isinstance(d, ir.Assign) and d.value == ir.Const(None)
                       and self.where[id(d)][0] is self.top)]
        return ds[0] if len(ds) == 1 and isinstance(ds[0], ir.Assign) else None

    def before(self, outer, pos, block) -> bool:
        """``block`` is ``outer`` or lies inside a statement of ``outer`` before ``pos``."""
        while block is not outer:
            if id(block) not in self.parent:
                return False
            up, k = self.parent[id(block)]
            if up is outer:
                return k < pos
            block = up
        return True

    def holdable(self, name) -> bool:
        """A value the adjoint may read again before its one pop (numbers, tuples of
        them, frozen arrays: nothing changes them in place)."""
        t = self.types.get(name)
        simple = isinstance(t, T.Scalar) or isinstance(t, T.Tuple) and all(
            isinstance(x, T.Scalar) for x in t.items)
        return len(self.pops.get(name, ())) == 1 and (simple or name in self.frozen)

    def recipe(self, s, block, pos, out, counters, held):
        """Append to ``out`` the statements recomputing ``s``'s value, to ``held`` the
        pops of the held values they read; False if not."""
        v = s.value
        if isinstance(v, ir.Call):
            if v.fn not in _PURE or v.kwargs:
                return False
            if isinstance(self.types.get(s.target.name), T.Array) and v.fn not in _VIEW:
                return False  # a new array: recomputing it costs what recording saves
            operands = v.args
        elif isinstance(v, ir.Var):
            operands = (v,)
        else:
            return False
        for a in operands:
            if isinstance(a, ir.Const) or a.name in self.inputs:
                continue
            if a.name in self.counters:
                counters.add(a.name)
                continue
            d = self.only_def(a.name)
            if d is None or id(d) not in self.where:
                pops = self.restored(a.name, block, pos)
                if pops is None:
                    return False
                held.append((pops, "restored"))
                continue
            dblock, dpos, _ = self.where[id(d)]
            if not (dpos < pos if dblock is block else self.encloses(dblock, dpos, block)):
                return False
            mark, marked = len(out), set(counters)
            if self.recipe(d, dblock, dpos, out, counters, held):
                continue
            del out[mark:]
            counters.intersection_update(marked)
            if not self.holdable(a.name):
                return False
            held.append((self.pops[a.name], "held"))
        out.append(s)
        return True

    def restored(self, name, block, pos):
        """The pop that restores ``name`` to the value the statement at ``pos`` of
        ``block`` read, among ``name``'s pops (the one in that block's adjoint block):
        ``name`` (a number or a tuple of them) is assigned in ``block`` once, after
        ``pos``, and nowhere else inside ``block`` (None: not so)."""
        t = self.types.get(name)
        if not (isinstance(t, T.Scalar) or isinstance(t, T.Tuple) and all(
                isinstance(x, T.Scalar) for x in t.items)) or not self.pops.get(name):
            return None
        inside = [d for d in self.defs.get(name, ()) if not is_pop(d, self.stacks)
                  and (self.where[id(d)][0] is block or self.encloses(block, -1,
                                                                      self.where[id(d)][0]))]
        if len(inside) != 1 or self.where[id(inside[0])][0] is not block \
                or self.where[id(inside[0])][1] <= pos:
            return None
        return tuple(self.pops[name])


def adjoint_plan(func, stacks, types):
    """``(top, where, defs, plan, reversed_of)`` for ``func``'s body ``top``: the statement
    index (``statement_index``), its ``RecomputePlan``, and per name assigned once as
    ``reversed_range(r)`` the range ``r`` it runs backwards (the adjoint loops' ranges)."""
    top = tuple(func.body)
    where, defs = statement_index(top)
    plan = RecomputePlan(func, top, where, defs, set(stacks), types)
    reversed_of = {s.target.name: s.value.args[0] for s in ir.walk(func.body)
                   if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
                   and s.value.fn is build.reversed_range and len(s.value.args) == 1
                   and len(defs.get(s.target.name, ())) == 1}
    return top, where, defs, plan, reversed_of


def rematerialise(func, stacks, types):
    """``func`` with the adjoint's reads of recomputable recorded values replaced by
    recomputations (see the module docstring); the same object if none."""
    if not stacks:
        return func
    top, where, defs, plan, reversed_of = adjoint_plan(func, stacks, types)
    names = NameGen(ir.all_names(func))
    edits = {}  # id(block) -> (block, {position: (recomputation, renames)})
    for v in sorted({s.targets[0].name for s in ir.walk(func.body) if is_pop(s, plan.stacks)}):
        pops = [d for d in defs.get(v, ()) if is_pop(d, plan.stacks)]
        s = plan.only_def(v)
        if len(pops) != 1 or s is None:
            continue
        sblock, spos, sfors = where[id(s)]
        block, ppos, bfors = where[id(pops[0])]
        steps, counters, held = [], set(), []
        if block is sblock or not plan.recipe(s, sblock, spos, steps, counters, held):
            continue
        # every read of v: in S's block (the primal), or top-level in B before the pop
        reads_b, ok = [], True
        for x in ir.walk(func.body):
            if ir.Var(v) not in ir.stmt_uses(x) or is_pop(x, plan.stacks):
                continue
            xb, xpos, _ = where[id(x)]
            if xb is sblock:
                continue
            if xb is block and xpos < ppos and isinstance(x, _RENAMEABLE):
                reads_b.append(xpos)
            else:
                ok = False
        if not ok or not reads_b:
            continue
        first = min(reads_b)
        assigned = {d.name for x in block[:first] for y in ir.walk([x])
                    if not is_pop(y, plan.stacks) for d in ir.stmt_defs(y)}
        if assigned & {p.targets[0].name for pops, _ in held for p in pops} or not all(
                _in_time([where[id(p)] for p in pops], kind, block, first, plan)
                for pops, kind in held):
            continue  # the pop of a value read does not bracket the recomputation
        before = {d.name for x in block[:ppos] for y in ir.walk([x]) for d in ir.stmt_defs(y)}
        if any(not counter_matches(o, sfors, bfors, before, reversed_of) for o in counters):
            continue
        renames = {}
        recomputed = []
        for step in steps:
            fresh = ir.Var(names.fresh(f"{step.target.name}_again"))
            recomputed.append(_renamed(replace(step, target=fresh), renames))
            renames[step.target.name] = fresh
        entry = edits.setdefault(id(block), (block, {}))[1]
        entry.setdefault(first, []).append((recomputed, {v: renames[v]}, sorted(reads_b)))
    if not edits:
        return func

    def rewrite(stmts):
        stmts = tuple(stmts)
        if id(stmts) not in edits:
            return stmts
        _, plans = edits[id(stmts)]
        out, pending = [], {}
        for k, x in enumerate(stmts):
            for recomputed, rename, positions in plans.get(k, ()):
                out += recomputed
                for p in positions:
                    pending.setdefault(p, {}).update(rename)
            out.append(_renamed(x, pending.get(k, {})))
        return tuple(out)

    def walk(stmts):
        stmts = rewrite(stmts)
        return tuple(ir.with_blocks(s, [walk(b) for b in ir.sub_blocks(s)])
                     if ir.sub_blocks(s) else s for s in stmts)

    return replace(func, body=walk(top), temps=frozenset(
        set(func.temps) | {n for _, plans in edits.values() for ps in plans.values()
                           for rec, _, _ in ps for n in (r.target.name for r in rec)}))


def _in_time(pops_at, kind, block, first, plan) -> bool:
    """A recomputation at ``first`` in ``block`` reads the value its operand's pops
    (at ``pops_at``) bracket: a held value's one pop comes after it (in ``block`` or
    around it); a restored value's one pop in ``block`` comes before it."""
    if kind == "restored":
        mine = [p for p in pops_at if p[0] is block]
        return len(mine) == 1 and mine[0][1] < first
    (pblock, ppos, _), = pops_at
    return plan.before(pblock, ppos, block) and (pblock is not block or first < ppos)


def counter_matches(o, sfors, bfors, before, reversed_of) -> bool:
    """Whether the loop counter ``o`` of the primal loops ``sfors`` is the counter of an
    adjoint loop in ``bfors`` that runs the same range reversed (so the adjoint holds
    ``o``'s value without a pop); ``before`` are names assigned before that loop."""
    lp = next((f for f in reversed(sfors) if f.target.name == o), None)
    la = next((f for f in reversed(bfors) if f.target.name == o), None)
    if lp is None or la is None or o in before or not isinstance(la.iter, ir.Var):
        return False
    return reversed_of.get(la.iter.name) == lp.iter


def _renamed(s, renames):
    if not renames:
        return s

    def atom(a):
        return renames.get(a.name, a) if isinstance(a, ir.Var) else a

    if isinstance(s, (ir.Assign, ir.ExprStmt)):
        v = s.value
        if isinstance(v, ir.Call):
            v = replace(v, args=tuple(atom(a) for a in v.args),
                        kwargs=tuple((k, atom(a)) for k, a in v.kwargs))
        else:
            v = atom(v)
        return replace(s, value=v)
    if isinstance(s, (ir.Unpack, ir.Return)):
        return replace(s, value=atom(s.value))
    raise TypeError(s)
