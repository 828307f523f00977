"""Copy propagation of compiler temporaries.

Contract: accepts an IR function in the form ``to_ssa`` produces; for each
``t = v`` where ``t`` is a compiler temporary assigned exactly once and
``v`` a variable assigned at most once (or a constant), every read of ``t``
becomes a read of ``v`` and the copy is dropped.  Copies inside loops and
``try`` are left alone.  The computation is unchanged.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

from ..ir import nodes as ir
from .ssa import _rename_all


def copy_propagate(fn: ir.Function) -> ir.Function:
    defs = Counter(v.name for s in ir.walk(fn.body) for v in ir.stmt_defs(s))
    params = {p.var.name for p in fn.params}
    subst = {}

    def scan(stmts):
        for s in stmts:
            if isinstance(s, ir.Assign) and s.target.name in fn.temps \
                    and defs[s.target.name] == 1 and isinstance(s.value, ir.Var):
                src = subst.get(s.value.name, s.value.name)
                if defs[src] + (src in params) <= 1:
                    subst[s.target.name] = src
            elif isinstance(s, ir.If):
                scan(s.body)
                scan(s.orelse)

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
            out.append(_rename_all(s, subst))
        return out

    return fn.with_body(rewrite(fn.body))
