"""Copy propagation of compiler temporaries.

Contract: accepts an IR function in the form ``to_ssa`` produces; for each
``t = v`` where ``t`` is a compiler temporary assigned exactly once and
``v`` a variable assigned at most once (or a constant), every read of ``t``
becomes a read of ``v`` and the copy is dropped.  ``t = x[i]`` where ``x`` was
assigned once from a tuple literal ``(a, b, ...)`` is such a copy of item
``i`` (tuples are immutable).  Copies inside loops and
``try`` are left alone.  The computation is unchanged.
"""
from __future__ import annotations

import operator
from collections import Counter
from dataclasses import replace

from s2s_runtime import build

from ..ir import nodes as ir
from .ssa import rename_all


def _item_of_tuple(value, tuples, subst):
    """``t[i]`` of a tuple literal ``t = (a, b, ...)`` is a copy of its item ``i``."""
    if (isinstance(value, ir.Call) and value.fn is operator.getitem and not value.kwargs
            and isinstance(value.args[0], ir.Var)
            and subst.get(value.args[0].name, value.args[0].name) in tuples
            and isinstance(value.args[1], ir.Const) and type(value.args[1].value) is int):
        items = tuples[subst.get(value.args[0].name, value.args[0].name)]
        i = value.args[1].value
        if -len(items) <= i < len(items):
            return items[i]
    return value


def copy_propagate(fn: ir.Function) -> ir.Function:
    defs = Counter(v.name for s in ir.walk(fn.body) for v in ir.stmt_defs(s))
    params = {p.var.name for p in fn.params}
    subst = {}

    tuples = {}  # name assigned once from a tuple literal -> its items

    def scan(stmts):
        for s in stmts:
            if not isinstance(s, ir.Assign) or defs[s.target.name] != 1:
                if isinstance(s, ir.If):
                    scan(s.body)
                    scan(s.orelse)
                continue
            value = s.value
            if isinstance(value, ir.Call) and value.fn is build.make_tuple:
                tuples[s.target.name] = value.args
            value = _item_of_tuple(value, tuples, subst)
            if s.target.name in fn.temps and isinstance(value, ir.Var):
                src = subst.get(value.name, value.name)
                if defs[src] + (src in params) <= 1:
                    subst[s.target.name] = src

    scan(fn.body)
    if not subst:
        return fn

    def rewrite(stmts):
        out = []
        for s in stmts:
            if isinstance(s, ir.Assign) and s.target.name in subst:
                continue
            if isinstance(s, ir.If):
                s = replace(s, body=tuple(rewrite(s.body)), orelse=tuple(rewrite(s.orelse)))
            out.append(rename_all(s, subst))
        return out

    return fn.with_body(rewrite(fn.body))


#: the constants ``constants_propagated`` substitutes (the flags and axes of calls)
_FLAG_TYPES = (type(None), bool, int, str)


def constants_propagated(fn: ir.Function) -> ir.Function:
    """``fn`` with the calls' operands that read a variable assigned exactly once, from a
    constant ``None``, bool, int or str (and not a parameter), reading the constant.

    An inlined helper binds its parameters (``axis = None``, ``keepdims = False``) by
    assignment; the backends read such flags from the call's constant operands.  Any read
    of a variable assigned once sees that one value, wherever the assignment is, so the
    substitution is exact; the assignment itself stays (dead-code elimination drops it).
    """
    defs = Counter(v.name for s in ir.walk(fn.body) for v in ir.stmt_defs(s))
    params = {p.var.name for p in fn.params}
    consts = {}
    for s in ir.walk(fn.body):
        if (isinstance(s, ir.Assign) and isinstance(s.value, ir.Const)
                and type(s.value.value) in _FLAG_TYPES and defs[s.target.name] == 1
                and s.target.name not in params):
            consts[s.target.name] = s.value

    if not consts:
        return fn

    def r(a):
        return consts.get(a.name, a) if isinstance(a, ir.Var) else a

    def stmt(s):
        if isinstance(s, (ir.Assign, ir.ExprStmt)) and isinstance(s.value, ir.Call):
            v = s.value
            new = replace(v, args=tuple(r(a) for a in v.args),
                          kwargs=tuple((k, r(x)) for k, x in v.kwargs))
            if new != v:
                return replace(s, value=new)
        return s

    return fn.with_body(ir.map_stmts(fn.body, stmt))
