"""Values without derivatives that change in place, read by differentiated code.

``m += 1.0``, ``np.add(m, 1.0, out=m)``, ``m.fill(0.0)`` change an array in
place.  When no derivative flows through ``m`` reverse mode lets them run as
written — but a differentiated statement that read ``m`` before the change
(``s = s + np.sum(m * x)``) has an adjoint that needs ``m``'s values as they
were, and in a loop the tape would hold the same, since-changed, object.

Contract: ``snapshot_mutated_constants(body, wrt, names)`` finds the groups of
names that share one object (plain copies, views, in-place operator results,
``out=``), the statements that may change the object in place (in-place
operators, ``out=``, methods and functions s2s cannot see, calls for effect),
and, for each
group through which no derivative flows, gives every differentiated
statement that reads its values before a possible change a copy taken just
before it (``rt.owned``), as ``index_writes.py`` does for index writes.  Groups
that carry derivatives are not touched: reverse mode refuses in-place changes
of those elsewhere.  Index writes ``y[i] = v`` are ``index_writes.py``'s.
"""
from __future__ import annotations

from typing import Dict, List, Set

import s2s_runtime as rt
from s2s_runtime import build

from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir
from ..rules import lookup
from .index_writes import activity, rewrite_writes, snapshot_exposed
from .positions import Positions
from .inplace import VIEW_OPS

#: callables without a rule that never change their arguments
_EFFECT_FREE = {print, range, len, enumerate, zip, reversed, isinstance, int, float, bool, str,
                repr, type, abs, min, max, sum, tuple, list, dict, sorted, iter, next,
                rt.read_copy, rt.read_checked, rt.owned}  # (the reads index_writes.py made)


def snapshot_mutated_constants(body, wrt, names):
    mutations: List = []
    parent: Dict[str, str] = {}

    def find(n):
        while parent.get(n, n) != n:
            n = parent[n]
        return n

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    changed: Dict[int, Set[str]] = {}  # statement -> the names it may change
    for s in ir.walk(body):
        v = getattr(s, "value", None)
        if not isinstance(v, ir.Call):
            if isinstance(s, ir.Assign) and isinstance(v, ir.Var):
                union(s.target.name, v.name)
            continue
        if v.fn in (build.make_tuple, build.make_list) and isinstance(s, ir.Assign):
            for a in v.operands():  # the container holds its items; it changes none
                if isinstance(a, ir.Var):
                    union(s.target.name, a.name)
            continue
        names_changed = set()
        if v.fn in PLAIN_OF_INPLACE and v.args and isinstance(v.args[0], ir.Var):
            names_changed.add(v.args[0].name)
        out = dict(v.kwargs).get("out")
        if isinstance(out, ir.Var):
            names_changed.add(out.name)
        if v.fn is build.call_method and isinstance(v.args[0], ir.Var):
            names_changed.add(v.args[0].name)
        if v.fn not in _EFFECT_FREE and (isinstance(s, ir.ExprStmt) or lookup(v.fn) is None):
            # called for its effect, or code s2s cannot see: it may change what it is given
            names_changed |= {a.name for a in v.operands() if isinstance(a, ir.Var)}
        if isinstance(s, ir.Assign):
            for n in names_changed:  # the result is the changed object itself
                union(s.target.name, n)
            if v.fn in VIEW_OPS and v.args and isinstance(v.args[0], ir.Var):
                union(s.target.name, v.args[0].name)
        if names_changed:
            changed[id(s)] = names_changed
            mutations.append(s)
    if not mutations:
        return body
    active = activity(body, set(wrt))
    groups: Dict[str, Set[str]] = {}
    for s in ir.walk(body):
        for v in ir.stmt_defs(s) + tuple(a for a in ir.stmt_uses(s) if isinstance(a, ir.Var)):
            groups.setdefault(find(v.name), set()).add(v.name)
    pos = Positions(body)
    table: Dict[int, List] = {}
    for root, members in sorted(groups.items()):
        sites = [s for s in mutations if {find(n) for n in changed[id(s)]} & {root}]
        if sites and not (members & active):
            snapshot_exposed(body, members, sites, pos, active, table, names)
    return rewrite_writes(body, table) if table else body
