"""Index writes as values, before reverse mode's SSA.

Contract: ``writes_as_values(fn)`` returns ``fn`` with every statement
``y[index] = v`` whose ``y`` is a local name (``ExprStmt(setitem(y, index,
v))``) rewritten to ``y = index_set(y, index, v)``.  ``index_set`` still
writes in place and returns the same object, so the function computes
exactly what it did; but each state of ``y`` now has its own definition,
which SSA versions and loop tapes track like any value.  Whether a write is
differentiable as such (``y`` made by the function, no view of it used across
the write...) is decided after SSA, by ``ad/index_writes.py``.

Contract: ``batched_inplace_as_operators(fn)`` returns ``fn`` with every
``t = rt.batch_inplace(op, plain, x, y)`` (vmap's ``x op= y``: in place where
each example of ``x`` is an array, a new value where it is a number) made
``t = op(x, y)`` where no other name holds ``x``'s batch (no copy ``x = z`` or
``z = x`` run before the write links it to another name; a copy of the result
made after it, as inlining a return makes, does not).  Both give the same values there; the
differentiation decides the rest (``ad/inplace.py`` makes ``op`` the plain
operator where nothing else refers to ``x``), instead of by a branch on each
example's rank that it cannot fold.  Where another name holds the batch, the call
is left as it is: its examples may be numbers (``acc = s; acc += 1`` of per-example
numbers, lifted into one batch both names hold), which Python never changes in place,
so only the run-time branch gives the values; undifferentiated, it runs as it is,
and differentiated, it has no rule and is refused by name.  Derivative code only
(``core/pipeline.py``).
"""
from __future__ import annotations

import operator

import s2s_runtime as rt

from ..ir import nodes as ir


def writes_as_values(fn: ir.Function) -> ir.Function:
    return fn.with_body(_block(fn.body))


def _block(stmts):
    return tuple(_stmt(s) for s in stmts)


def _copies_in(blocks, linked: set) -> None:
    """Add to ``linked`` both names of every copy ``a = b`` in ``blocks`` (nested too)."""
    for s in (s for b in blocks for s in ir.walk(b)):
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) \
                and s.value.name != s.target.name:
            linked.update((s.target.name, s.value.name))


def _is_batch_inplace(s) -> bool:
    return isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) \
        and s.value.fn is rt.batch_inplace and len(s.value.args) == 4 \
        and isinstance(s.value.args[0], ir.Const) and not s.value.kwargs


def batched_inplace_as_operators(fn: ir.Function) -> ir.Function:
    linked: set = set()  # names a copy run before the statement at hand links to another

    def block(stmts):
        out = []
        for s in stmts:
            if _is_batch_inplace(s) and not (isinstance(s.value.args[2], ir.Var)
                                             and s.value.args[2].name in linked):
                op, _plain, x, y = s.value.args
                s = ir.Assign(s.target, ir.Call(op.value, (x, y)), s.loc)
            blocks = ir.sub_blocks(s)
            if isinstance(s, (ir.For, ir.While)):
                _copies_in(blocks, linked)  # (a copy late in the body precedes the next trip)
            if blocks:
                s = ir.with_blocks(s, [block(b) for b in blocks])
            elif isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) \
                    and s.value.name != s.target.name:
                linked.update((s.target.name, s.value.name))
            out.append(s)
        return tuple(out)

    if not any(isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
               and s.value.fn is rt.batch_inplace for s in ir.walk(fn.body)):
        return fn
    return fn.with_body(block(fn.body))


def _stmt(s):
    if isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call) \
            and s.value.fn is operator.setitem and not s.value.kwargs \
            and len(s.value.args) == 3 and isinstance(s.value.args[0], ir.Var):
        base = s.value.args[0]
        return ir.Assign(base, ir.Call(rt.index_set, s.value.args), s.loc)
    if isinstance(s, ir.If):
        return ir.If(s.test, _block(s.body), _block(s.orelse), s.loc)
    if isinstance(s, ir.For):
        return ir.For(s.target, s.iter, _block(s.body), _block(s.orelse), s.loc)
    if isinstance(s, ir.While):
        return ir.While(_block(s.test_body), s.test, _block(s.body), _block(s.orelse), s.loc)
    if isinstance(s, ir.Try):
        handlers = tuple(ir.Handler(h.type, h.name, _block(h.body)) for h in s.handlers)
        return ir.Try(_block(s.body), handlers, _block(s.orelse), _block(s.finalbody), s.loc)
    return s
