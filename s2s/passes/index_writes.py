"""Index writes as values, before reverse mode's SSA.

Contract: ``writes_as_values(fn)`` returns ``fn`` with every statement
``y[index] = v`` whose ``y`` is a local name (``ExprStmt(setitem(y, index,
v))``) rewritten to ``y = index_set(y, index, v)``.  ``index_set`` still
writes in place and returns the same object, so the function computes
exactly what it did; but each state of ``y`` now has its own definition,
which SSA versions and loop tapes track like any value.  Whether a write is
differentiable as such (``y`` made by the function, no view of it used across
the write...) is decided after SSA, by ``ad/index_writes.py``.
"""
from __future__ import annotations

import operator

import s2s_runtime as rt

from ..ir import nodes as ir


def writes_as_values(fn: ir.Function) -> ir.Function:
    return fn.with_body(_block(fn.body))


def _block(stmts):
    return tuple(_stmt(s) for s in stmts)


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
