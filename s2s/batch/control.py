"""Control flow on a batched condition (``transform.py``).

``if c: A else: B`` with ``c`` batched becomes: both branches run on every
example, then each name either branch assigns takes, example by example,
the value of the branch that example would have taken::

    mask = rt.batch_mask(c)
    x_old = x                  # names assigned in a branch and defined before
    A; x_then = x; x = x_old   # the then-branch, its values kept aside
    B
    x = rt.batch_select(mask, x_then, x)

Safe only when neither branch has an effect besides assigning names and
writing into arrays (the writes are masked: ``rt.batch_setitem(..., mask)``
changes only the examples that take the branch); ``return`` in a branch is a
``BatchingError``, as is ``raise`` other than at the end of one branch
(``raising_if``).  A loop with a ``break`` or ``continue`` in such a branch runs on
flags first (``jumps_as_flags``).

``while c: body`` with ``c`` batched runs until the condition is false for
every example; an example whose condition became false keeps the values it
had then (every name the loop assigns is selected with the mask of the
examples still running)::

    active = rt.batch_lift(True, n)        # or the enclosing mask
    while True:
        (test code; names it assigns selected with `active`)
        active = active & rt.batch_mask(c)
        if not np.any(active): break
        (body; names it assigns selected with `active`)
"""
from __future__ import annotations

import operator
from typing import List

import numpy as np

import s2s_runtime as rt

from ..ir import nodes as ir
from ..passes.loop_jumps import without_jumps


def defs_of(stmts, tr=None, whole=None) -> List[str]:
    """Names assigned anywhere in ``stmts``, in order, without repeats; with ``tr``, only
    those read outside ``whole`` (the ``if`` or ``while`` statement) or not compiler
    temporaries (a temporary made and read inside needs no selecting)."""
    inner = ir.use_counts([whole]) if whole is not None else {}
    seen: List[str] = []
    for s in ir.walk(stmts):
        for v in ir.stmt_defs(s):
            if v.name in seen or (tr is not None and v.name in tr.stacks):
                continue  # a tape: one stack for the whole batch (lanes.py)
            if tr is not None and v.name in tr.fn.temps and \
                    tr.uses.get(v.name, 0) <= inner.get(v.name, 0):
                continue
            seen.append(v.name)
    return seen


def branch_locals(s: ir.If, uses, def_counts) -> set:
    """Names of a branch whose condition differs per example that need not be batched for
    being assigned there: each is assigned once in the whole function, at the top level
    of one of the branch's blocks, and read only later in that block.  Every example the
    branch runs for then reads the value this one assignment gives, so the name is batched
    only where that value is (``len(x)`` and the ``range`` over it stay numbers, and the
    loop over them one loop); nothing after the branch reads it, so nothing selects it.
    ``uses``/``def_counts``: reads and assignments of each name in the whole function."""
    kept = set()
    for block in (s.body, s.orelse):
        first_read, reads, assigned = {}, {}, {}
        for k, stmt in enumerate(block):
            for name, count in ir.use_counts([stmt]).items():
                first_read.setdefault(name, k)
                reads[name] = reads.get(name, 0) + count
            if isinstance(stmt, ir.Assign) and def_counts.get(stmt.target.name) == 1:
                assigned[stmt.target.name] = k
        kept.update(name for name, k in assigned.items()
                    if first_read.get(name, len(block)) > k
                    and reads.get(name, 0) == uses.get(name, 0))
    return kept


def _check_pure(tr, stmts, what, loop_depth=0) -> None:
    for s in stmts:
        if isinstance(s, (ir.Return, ir.Raise)):
            raise tr.error(f"'{type(s).__name__.lower()}' {what}", s.loc)
        if isinstance(s, (ir.Break, ir.Continue)) and loop_depth == 0:
            raise tr.error(f"'{type(s).__name__.lower()}' {what}", s.loc)
        inner = loop_depth + isinstance(s, (ir.For, ir.While))
        for block in ir.sub_blocks(s):
            _check_pure(tr, block, what, inner)


def _and(tr, out, a, b, loc) -> ir.Var:
    if a is None:
        return b
    t = tr.temp()
    tr.batched.add(t.name)
    out.append(ir.Assign(t, ir.Call(np.logical_and, (a, b)), loc))
    return t


def mutated_names(stmts) -> set:
    """Names changed in place by an operator in ``stmts`` (``x += v``; writes
    ``x[i] = v`` are masked where they happen and need no selecting)."""
    from ..frontend.desugar import PLAIN_OF_INPLACE
    out = set()
    for x in ir.walk(stmts):
        v = getattr(x, "value", None)
        if isinstance(x, ir.Assign) and isinstance(v, ir.Call) and v.fn in PLAIN_OF_INPLACE \
                and v.args and isinstance(v.args[0], ir.Var):
            out.add(v.args[0].name)
    return out


def save_values(tr, name, mutated, loc) -> ir.Assign:
    """``saved = name``: a copy when ``name`` is changed in place before it is selected."""
    t = tr.temp()
    value = ir.Call(rt.batch_snapshot, (ir.Var(name),)) if name in mutated else ir.Var(name)
    return t, ir.Assign(t, value, loc)


def _needs_mask(stmts) -> bool:
    """Whether a block has a loop, an in-place write, a read ``x[i]`` (which read the
    mask of the examples running it: reads check their index in those examples only) or
    reverse mode's ``index_set`` (under a mask it copies first: both branches run, so
    the other one must still see the array unwritten)."""
    return any(isinstance(x, (ir.While, ir.For, ir.ExprStmt)) or (
        isinstance(x, ir.Assign) and isinstance(x.value, ir.Call)
        and x.value.fn in (operator.getitem, rt.index_set)) for x in ir.walk(stmts))


def select_values(tr, mask, a, b, loc, name=None) -> ir.Call:
    """``name`` (the name selected) replayed from a tape: its None selects the other."""
    if name in tr.replayed:
        return ir.Call(rt.batch_select_replayed, (mask, a, b))
    return ir.Call(rt.batch_select, (mask, a, b))


def _raises(block) -> bool:
    """Whether a branch ends in ``raise`` (``if c: raise E(...)``)."""
    return bool(block) and isinstance(block[-1], ir.Raise)


def raising_if(tr, s: ir.If, loc) -> List:
    """``if c: A; raise e`` (or the ``else`` branch raising) with ``c`` batched, ``A``
    free of jumps.  As a loop over the examples would, the batched code raises when
    any example running it takes the raising branch, with the values of the first
    such example; past it every example took the other branch, which then runs
    unmasked (under the enclosing mask)::

        taken = rt.batch_mask(c) & mask
        if np.any(taken):
            k = np.argmax(taken)
            x = rt.batch_example(x, k)     # each batched name A or e reads
            A (as written: one example's values)
            raise e

    Inside a ``try`` of the same function the handler could catch ``e`` for every
    example, the wrong thing for those that did not raise: there the batched code
    raises an ``rt.BatchingRuntimeError`` instead, which a handler put first in each
    enclosing ``try`` raises on past the user's (``Batch.block``);
    ``vmap(..., fallback="loop")`` then runs the examples one by one."""
    raising, other, test = s.body, s.orelse, s.test
    out: List = []
    mask = tr.temp()
    tr.batched.add(mask.name)
    out.append(ir.Assign(mask, ir.Call(rt.batch_mask, (test,)), loc))
    if not _raises(s.body):  # the else branch raises: its examples are those with not c
        raising, other = s.orelse, s.body
        inv = tr.temp()
        tr.batched.add(inv.name)
        out.append(ir.Assign(inv, ir.Call(np.logical_not, (mask,)), loc))
        mask = inv
    _check_pure(tr, raising[:-1], "before a 'raise' under a condition that differs per "
                "example")
    outer = tr.mask
    taken = _and(tr, out, outer, mask, loc)
    hit = tr.temp()
    out.append(ir.Assign(hit, ir.Call(np.any, (taken,)), loc))
    stop = raising[-1]
    inner: List = []
    if not tr.try_raises:  # the branch as the first example taking it runs it
        k = tr.temp()
        inner.append(ir.Assign(k, ir.Call(np.argmax, (taken,)), loc))
        read = {a.name for x in ir.walk(raising) for a in ir.stmt_uses(x)
                if isinstance(a, ir.Var)}
        for n in sorted(read & tr.batched & tr.defined - tr.stacks):
            inner.append(ir.Assign(ir.Var(n), ir.Call(rt.batch_example, (ir.Var(n), k)), loc))
        inner += raising[:-1]
    else:  # a constant (what jit compiles), raised past every handler (Batch.block)
        line = f" (line {stop.loc.line})" if getattr(stop.loc, "line", None) else ""
        err = ir.Const(rt.BatchingRuntimeError(
            f"vmap: an example took a 'raise'{line} under a condition that differs per "
            "example, inside a 'try' that may catch it for the examples that did not; "
            "per-example exception handling is not batched: use vmap(..., "
            "fallback='loop')"))
        tr.try_raises[-1].append(err)
        stop = ir.Raise(err, stop.loc)
    out.append(ir.If(hit, tuple(inner) + (stop,), (), s.loc))
    return out + tr.block(list(other))


def select_if(tr, s: ir.If, loc, ordered=False) -> List:
    what = "in a branch whose condition differs per example"
    if _raises(s.body) != _raises(s.orelse):
        return raising_if(tr, s, loc)
    _check_pure(tr, s.body, what)
    _check_pure(tr, s.orelse, what)
    out: List = []
    from .lanes import else_first
    if not ordered and s.orelse and else_first(tr, s, loc):  # both replay a tape: else first
        mask, inv = tr.temp(), tr.temp()
        tr.batched.update((mask.name, inv.name))
        out.append(ir.Assign(mask, ir.Call(rt.batch_mask, (s.test,)), loc))
        out.append(ir.Assign(inv, ir.Call(np.logical_not, (mask,)), loc))
        return out + select_if(tr, ir.If(inv, s.orelse, s.body, s.loc), loc, ordered=True)
    mask = tr.temp()
    tr.batched.add(mask.name)
    out.append(ir.Assign(mask, ir.Call(rt.batch_mask, (s.test,)), loc))
    then_defs, else_defs = defs_of(s.body, tr, s), defs_of(s.orelse, tr, s)
    names = then_defs + [n for n in else_defs if n not in then_defs]
    before = set(tr.defined)
    saved = {}
    mutated = mutated_names(s.body + s.orelse)
    for n in names:
        if n in before:
            saved[n], stmt = save_values(tr, n, mutated, loc)
            out.append(stmt)
    outer = tr.mask
    if _needs_mask(s.body):
        tr.mask = _and(tr, out, outer, mask, loc)
    out += tr.block(s.body)
    then_vals = {}
    for n in then_defs:
        then_vals[n] = tr.temp()
        out.append(ir.Assign(then_vals[n], ir.Var(n), loc))
        if n in saved:
            out.append(ir.Assign(ir.Var(n), saved[n], loc))
    tr.mask = outer
    if s.orelse and _needs_mask(s.orelse):
        inv = tr.temp()
        tr.batched.add(inv.name)
        out.append(ir.Assign(inv, ir.Call(np.logical_not, (mask,)), loc))
        tr.mask = _and(tr, out, outer, inv, loc)
    if s.orelse:
        out += tr.block(s.orelse)
    tr.mask = outer
    for n in names:
        var = ir.Var(n)
        if n in then_defs:
            other = var if (n in else_defs or n in saved) else None
            value = select_values(tr, mask, then_vals[n], other, loc, n) if other is not None \
                else then_vals[n]
        elif n in saved:  # assigned in the else branch only
            value = select_values(tr, mask, saved[n], var, loc, n)
        else:
            continue
        out.append(ir.Assign(var, value, loc))
        tr.batched.add(n)
        tr.defined.add(n)
    return out


def masked_while(tr, s: ir.While, loc) -> List:
    what = "in a 'while' loop whose condition differs per example"
    check_jumps(tr, s.test_body + s.body, what)
    out: List = []
    loop_defs = defs_of(s.test_body + s.body, tr, s)
    for n in loop_defs:
        if n not in tr.defined:  # first assigned in the loop: no value before it
            out.append(ir.Assign(ir.Var(n), ir.Const(None), loc))
            tr.defined.add(n)
    active = tr.temp()
    tr.batched.add(active.name)
    start = ir.Call(rt.batch_lift, (ir.Const(True), tr.size_var())) if tr.mask is None \
        else ir.Call(np.copy, (tr.mask,))
    out.append(ir.Assign(active, start, loc))
    outer = tr.mask
    head: List = []
    mutated = {n for n in mutated_names(s.test_body + s.body) if n in tr.defined}
    test_defs = defs_of(s.test_body, tr, s)
    test_defs += sorted(n for n in mutated & mutated_names(s.test_body) if n not in test_defs)
    saved = {}
    for n in test_defs:
        saved[n], stmt = save_values(tr, n, mutated, loc)
        head.append(stmt)
    tr.mask = active
    head += tr.block(s.test_body)
    head += [ir.Assign(ir.Var(n), select_values(tr, active, ir.Var(n), saved[n], loc, n), loc)
             for n in test_defs]
    cond = tr.temp()
    tr.batched.add(cond.name)
    head.append(ir.Assign(cond, ir.Call(rt.batch_mask, (s.test,)), loc))
    head.append(ir.Assign(active, ir.Call(np.logical_and, (active, cond)), loc))
    going = tr.temp()
    head.append(ir.Assign(going, ir.Call(np.any, (active,)), loc))
    body_defs = defs_of(s.body, tr, s)
    body_defs += sorted(n for n in mutated & mutated_names(s.body) if n not in body_defs)
    saved, body = {}, []
    for n in body_defs:
        saved[n], stmt = save_values(tr, n, mutated, loc)
        body.append(stmt)
    body += tr.block(s.body)
    body += [ir.Assign(ir.Var(n), select_values(tr, active, ir.Var(n), saved[n], loc, n), loc)
             for n in body_defs]
    tr.mask = outer
    out.append(ir.While(tuple(head), going, tuple(body), (), s.loc))
    out += tr.block(s.orelse)
    return out


def jumps_as_flags(tr, body):
    """``(body, changed)``: ``body`` where every loop with a ``break``/``continue`` (or an
    ``else``) under a condition that differs per example runs on flags instead
    (``passes/loop_jumps.py``: the flags are then values per example, and the rest of an
    iteration after a jump a branch on them, masked like any other)."""
    changed = [False]

    def jumps_under_batched(stmts, under=False) -> bool:
        for s in stmts:
            if isinstance(s, (ir.Break, ir.Continue)) and under:
                return True
            if isinstance(s, ir.If):
                inner = under or tr.is_b(s.test)
                if jumps_under_batched(s.body, inner) or jumps_under_batched(s.orelse, inner):
                    return True
            elif isinstance(s, (ir.For, ir.While)):
                if jumps_under_batched(s.orelse, under):  # (a nested loop's else jumps here)
                    return True
            elif any(jumps_under_batched(b, under) for b in ir.sub_blocks(s)):
                return True
        return False

    assigned = {p.var.name for p in tr.fn.params}
    uses = ir.use_counts(body)

    def block(stmts):
        out = []
        for s in stmts:
            blocks = ir.sub_blocks(s)
            if isinstance(s, (ir.For, ir.While)) and jumps_under_batched(s.body):
                # a name first assigned in the loop starts None, so that an example that
                # stopped keeps its value (selected like one defined before the loop)
                first = [n for n in defs_of((s,)) if n not in assigned]
                out += [ir.Assign(ir.Var(n), ir.Const(None), s.loc) for n in first]
                assigned.update(first)
                s = ir.with_blocks(s, [block(b) for b in blocks])
                # a loop variable nothing after the loop reads stays common to the examples
                target = s.target.name if isinstance(s, ir.For) else None
                after = target is not None and \
                    uses.get(target, 0) > ir.use_counts(s.body).get(target, 0)
                before, s = without_jumps(s, tr.names, tr.temps, target_read_after=after)
                out += before
                changed[0] = True
            elif blocks:
                s = ir.with_blocks(s, [block(b) for b in blocks])
            assigned.update(v.name for x in ir.walk([s]) for v in ir.stmt_defs(x))
            out.append(s)
        return out

    out = block(body)
    return out, changed[0]


def check_jumps(tr, stmts, what, loop_depth=0) -> None:
    """No ``break``/``continue`` of this loop, ``return`` or ``raise`` inside it."""
    for s in stmts:
        if isinstance(s, (ir.Return, ir.Raise)) or (
                isinstance(s, (ir.Break, ir.Continue)) and loop_depth == 0):
            raise tr.error(f"'{type(s).__name__.lower()}' {what}", s.loc)
        inner = loop_depth + isinstance(s, (ir.For, ir.While))
        for block in ir.sub_blocks(s):
            check_jumps(tr, block, what, inner)


def ranges_as_whiles(body, is_batched_range, fresh):
    """``for i in range(a, b, c)`` whose bounds differ per example, as the ``while`` loop
    it means (then masked like any ``while`` on a batched condition)::

        i_next = a
        while i_next < b:        (> for a negative constant step)
            i = i_next
            body
            i_next = i_next + c

    ``is_batched_range(stmt)`` tells the ``range`` assignments to rewrite (those with a
    constant step: the direction of the test must be known; a step that is a variable
    stays a range, batched as a ``BatchedRange``, ``lanes.py``); other statements are
    kept (their nested blocks rewritten too)."""
    import builtins
    defs = {}
    for s in ir.walk(body):
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and \
                s.value.fn is builtins.range and not s.value.kwargs and is_batched_range(s) \
                and (len(s.value.args) < 3 or isinstance(s.value.args[2], ir.Const)):
            defs[s.target.name] = s
    if not defs:
        return body, set()
    uses = ir.use_counts(body)
    out_names = set()

    def rewrite(block):
        out = []
        for s in block:
            s = ir.with_blocks(s, [rewrite(b) for b in ir.sub_blocks(s)])
            if isinstance(s, ir.Assign) and s.target.name in defs and uses.get(s.target.name) == 1:
                continue  # the range object itself: only the loop read it
            if isinstance(s, ir.For) and isinstance(s.iter, ir.Var) and s.iter.name in defs:
                args = defs[s.iter.name].value.args
                start, stop, step = (ir.Const(0), args[0], ir.Const(1)) if len(args) == 1 else \
                    (args[0], args[1], args[2] if len(args) > 2 else ir.Const(1))
                k = ir.Var(fresh(f"{s.target.name}_next"))
                c = ir.Var(fresh(f"{s.target.name}_going"))
                out_names.update((k.name, c.name))
                cmp = operator.lt if step.value > 0 else operator.gt
                out.append(ir.Assign(k, start, s.loc))
                out.append(ir.While((ir.Assign(c, ir.Call(cmp, (k, stop)), s.loc),), c,
                                    (ir.Assign(s.target, k, s.loc),) + tuple(s.body) +
                                    (ir.Assign(k, ir.Call(operator.add, (k, step)), s.loc),),
                                    s.orelse, s.loc))
                continue
            out.append(s)
        return tuple(out)

    return list(rewrite(body)), out_names
