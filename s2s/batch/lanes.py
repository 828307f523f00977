"""Batching reverse-mode code whose control flow differs per example (``vmap(grad(f))``
where ``f`` has a data-dependent ``while``, a ``for`` over a per-example range, or a
branch on a batched value inside a loop).

Reverse mode records on *tapes*: names used only as stacks of cons cells
(``tape = ()`` once, then ``tape = (v, tape)`` to push and ``v, tape = tape`` to
pop; ``ctrl`` likewise for branch decisions and trip counts).  Batched, a tape
stays *one* stack for the whole batch: every push and pop runs for every example
(inactive examples push and pop values nobody reads), and a tape is never
selected per example.  It stays consistent because the batched adjoint performs
the batched primal's pushes exactly in reverse:

* a ``while`` or ``for`` over a per-example range runs ``M`` batch iterations
  (the most trips among the examples that reach it), each example active in its
  own trips; a loop that pushes is left-aligned (example ``k`` active in batch
  iterations ``0 .. n_k - 1``), a loop that pops (``for _ in range(n_iter)``, ``for
  i in rt.reversed_range(r)``) is right-aligned (``M - n_k .. M - 1``), so batch
  iteration ``j`` of the adjoint replays batch iteration ``M - 1 - j`` of the
  primal: the same entries, the same active examples
  (``s2s_runtime.batching_lanes``);
* a branch on a batched condition runs both branches; where both push onto a
  tape the then-branch runs first, where both pop the else-branch runs first
  (its entries are on top).

A loop or pair of branches that both pushes and pops a tape (reverse over
reverse inside per-example control flow), a ``while`` on a batched condition
that pops, and a ``while`` whose condition code pushes are ``BatchingError``\\ s
(``fallback="loop"`` runs them once per example).
"""
from __future__ import annotations

import builtins
from typing import List, Set, Tuple

import s2s_runtime as rt
from s2s_runtime import build

from ..ir import nodes as ir


# -- tapes -----------------------------------------------------------------------------
def _push_of(s):
    """The stack name ``s`` pushes onto (``X = (v, X)``), or None."""
    if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and \
            s.value.fn is build.make_tuple and len(s.value.args) == 2 and \
            not s.value.kwargs and s.value.args[1] == s.target:
        return s.target.name
    return None


def _pop_of(s):
    """The stack name ``s`` pops (``v, X = X``), or None."""
    if isinstance(s, ir.Unpack) and len(s.targets) == 2 and s.targets[1] == s.value:
        return s.value.name
    return None


def _entry_use(s, name, stacks) -> bool:
    """Whether ``s`` pushes the value of ``name`` onto a tape."""
    return _push_of(s) in stacks and s.value.args[0] == ir.Var(name)


def _entry_def(s, name, stacks) -> bool:
    """Whether ``s`` pops a tape's entry into ``name``."""
    return _pop_of(s) in stacks and s.targets[0].name == name


def _uniform(body, loops=()):
    """``(statement, the for loops around it)`` for the statements of ``body`` at its top
    level or inside ``for`` loops only (no branch, ``while`` or ``try`` around them)."""
    for s in body:
        yield s, loops
        if isinstance(s, ir.For):
            yield from _uniform(s.body, loops + (s,))


def tape_stacks(body) -> Set[str]:
    """The names used only as stacks (see the module docstring): initialised to ``()``
    once, at the top level of ``body`` or inside ``for`` loops only (the reverse code
    of a site inlined in a loop: ``jacrev``'s loop over the output entries), then only
    pushed and popped (and themselves pushed onto and popped from other tapes, as
    reverse over reverse records them).  The loops around an initialisation must run
    the same trips for every example (``stack_loops``)."""
    inits = {id(s) for s, _ in _uniform(body)}
    stacks = {s.target.name for s in ir.walk(body) if id(s) in inits
              and isinstance(s, ir.Assign) and isinstance(s.value, ir.Const)
              and s.value.value == ()}
    while True:
        bad: Set[str] = set()
        seen_init: Set[str] = set()
        for s in ir.walk(body):
            push, pop = _push_of(s), _pop_of(s)
            for v in ir.stmt_defs(s):
                if v.name in (push, pop) or _entry_def(s, v.name, stacks):
                    continue
                if v.name not in seen_init and id(s) in inits:
                    seen_init.add(v.name)
                    continue
                bad.add(v.name)
            for a in ir.stmt_uses(s):
                if isinstance(a, ir.Var) and a.name not in (push, pop) and \
                        not _entry_use(s, a.name, stacks):
                    bad.add(a.name)
        if not bad & stacks:
            return stacks
        stacks -= bad


def stack_loops(body, stacks) -> dict:
    """Tape name -> the ``for`` loops around its initialisation (``tape_stacks``)."""
    return {s.target.name: loops for s, loops in _uniform(body)
            if isinstance(s, ir.Assign) and s.target.name in stacks
            and isinstance(s.value, ir.Const) and s.value.value == ()}


def replayed_names(body, stacks) -> Set[str]:
    """The names a tape's pops assign (``v`` in ``v, tape = tape``)."""
    return {s.targets[0].name for s in ir.walk(body) if _pop_of(s) in stacks}


def stack_ops(stmts, stacks) -> Tuple[Set[str], Set[str]]:
    """``(pushed, popped)``: the tapes ``stmts`` push onto and pop from (nested too)."""
    pushed, popped = set(), set()
    for s in ir.walk(stmts):
        push, pop = _push_of(s), _pop_of(s)
        if push in stacks:
            pushed.add(push)
        if pop in stacks:
            popped.add(pop)
    return pushed, popped


def replays(tr, stmts, what, loc) -> bool:
    """Whether ``stmts`` (a loop body with per-example trips) pop a tape; an error where
    they also push one (no alignment keeps both consistent)."""
    pushed, popped = stack_ops(stmts, tr.stacks)
    if pushed and popped:
        raise tr.error(f"{what} both records and replays a tape (reverse mode over "
                       "reverse mode); pass fallback='loop' to s2s.vmap", loc)
    return bool(popped)


def else_first(tr, s: ir.If, loc) -> bool:
    """Whether the branches of ``s`` (on a batched condition) run else-branch first: both
    pop the same tape.  An error where one tape needs each order."""
    p1, q1 = stack_ops(s.body, tr.stacks)
    p2, q2 = stack_ops(s.orelse, tr.stacks)
    both = (p1 | q1) & (p2 | q2)
    pushes, pops = both & (p1 | p2), both & (q1 | q2)
    if pushes and pops:
        raise tr.error("a branch whose condition differs per example both records and "
                       "replays a tape; pass fallback='loop' to s2s.vmap", loc)
    return bool(pops)


# -- ranges whose bounds differ per example ----------------------------------------------
def range_names(body, stacks) -> Set[str]:
    """Names only ever assigned ``range(...)``, ``rt.reversed_range`` of such a name, None
    or a tape's entry, and read only as a ``for`` loop's iterable, ``rt.reversed_range``'s
    argument or a tape's entry."""
    def ranged(v, names):
        return isinstance(v, ir.Call) and not v.kwargs and (
            v.fn is builtins.range or v.fn is build.reversed_range and len(v.args) == 1
            and isinstance(v.args[0], ir.Var) and v.args[0].name in names)

    stmts = list(ir.walk(body))
    names = {s.target.name for s in stmts if isinstance(s, ir.Assign)
             and isinstance(s.value, ir.Call) and s.value.fn in (builtins.range,
                                                                 build.reversed_range)}
    while True:
        keep = set(names)
        for s in stmts:
            for v in ir.stmt_defs(s):
                if v.name in keep and not _entry_def(s, v.name, stacks) and not (
                        isinstance(s, ir.Assign) and (ranged(s.value, names)
                                                      or s.value == ir.Const(None))):
                    keep.discard(v.name)
            ok = isinstance(s, ir.For) or (isinstance(s, ir.Assign) and isinstance(
                s.value, ir.Call) and s.value.fn is build.reversed_range)
            for a in ir.stmt_uses(s):
                if isinstance(a, ir.Var) and not ok and not _entry_use(s, a.name, stacks):
                    keep.discard(a.name)
        if keep == names:
            return names
        names = keep


def range_assign(tr, s: ir.Assign, loc):
    """``r = range(...)`` / ``r = rt.reversed_range(q)`` where ``r`` is batched (bounds that
    differ per example, or a range assigned where control differs per example), as a
    ``BatchedRange`` (None when ``s`` is not one)."""
    v = s.value
    if not (isinstance(v, ir.Call) and s.target.name in tr.range_names
            and (tr.is_b(s.target) or any(tr.is_b(a) for a in v.operands()))):
        return None
    tr.lane_ranges.add(s.target.name)
    if v.fn is builtins.range:
        return [ir.Assign(s.target, ir.Call(rt.batch_range, (tr.size_var(),) + v.args), s.loc)]
    return [ir.Assign(s.target, ir.Call(rt.batch_reversed_range, v.args + (tr.size_var(),)),
                      s.loc)]


def aligned_for(tr, s: ir.For, loc) -> List:
    """``for i in r`` over a ``BatchedRange``: ``M`` batch iterations, the examples active
    in theirs (aligned as the module docstring says), every name the body assigns
    selected with the active examples."""
    from .control import check_jumps, defs_of, mutated_names, save_values, select_values
    what = "in a 'for' loop whose trip count differs per example"
    check_jumps(tr, s.body, what)
    right = replays(tr, s.body, "a 'for' loop whose trip count differs per example", loc)
    out: List = []
    body_defs = [s.target.name] + [n for n in defs_of(s.body, tr, s) if n != s.target.name]
    for n in body_defs:
        if n not in tr.defined:  # first assigned in the loop: no value before it
            out.append(ir.Assign(ir.Var(n), ir.Const(None), loc))
            tr.defined.add(n)
    tr.batched.update(body_defs)
    outer = tr.mask
    mask = () if outer is None else (outer,)
    trips, rng, j, active = tr.temp(), tr.temp(), tr.temp(), tr.temp()
    tr.batched.add(active.name)
    out.append(ir.Assign(trips, ir.Call(rt.batch_trips, (s.iter,) + mask), loc))
    out.append(ir.Assign(rng, ir.Call(builtins.range, (trips,)), loc))
    right_c = ir.Const(right)
    body: List = [ir.Assign(active, ir.Call(rt.batch_lanes_active,
                                            (s.iter, j, trips, right_c) + mask), loc)]
    mutated = {n for n in mutated_names(s.body) if n in tr.defined}
    body_defs += sorted(n for n in mutated if n not in body_defs)
    saved = {}
    for n in body_defs:
        saved[n], stmt = save_values(tr, n, mutated, loc)
        body.append(stmt)
    body.append(ir.Assign(s.target, ir.Call(rt.batch_lanes_item, (s.iter, j, trips, right_c)),
                          loc))
    tr.mask = active
    body += tr.block(s.body)
    tr.mask = outer
    body += [ir.Assign(ir.Var(n), select_values(tr, active, ir.Var(n), saved[n], loc, n), loc)
             for n in body_defs]
    out.append(ir.For(j, rng, tuple(body), (), s.loc))
    out += tr.block(s.orelse)
    return out


def check_while(tr, s: ir.While, loc) -> None:
    """A ``while`` on a batched condition may push onto a tape in its body only."""
    pushed, popped = stack_ops(s.test_body, tr.stacks)
    _, body_popped = stack_ops(s.body, tr.stacks)
    if pushed or popped or body_popped:
        raise tr.error("a 'while' loop whose condition differs per example replays a tape "
                       "or records one in its condition; pass fallback='loop' to s2s.vmap",
                       loc)


def keep_range_loop(tr, body):
    """The predicate ``ranges_as_whiles`` rewrites by: a ``range`` with batched bounds
    iterated by a loop that touches no tape (those become aligned loops)."""
    taped = set()
    for s in ir.walk(body):
        if isinstance(s, ir.For) and isinstance(s.iter, ir.Var) and \
                any(stack_ops(s.body, tr.stacks)):
            taped.add(s.iter.name)
    return lambda st: st.target.name not in taped and any(tr.is_b(a) for a in st.value.args)

