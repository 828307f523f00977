"""Dataflow facts reverse mode needs: which values the output needs, which
names may be / are surely assigned when a loop starts, which may hold None."""
from __future__ import annotations

from typing import Dict, Set

import s2s_runtime as rt

from ..ir import nodes as ir
from .common import is_in


def may_be_none(stmts) -> Set[str]:
    """Names that may hold None: set to None (gradient code starts so a name some paths
    never assign), copies of them, and ``rt.zeros_like`` / ``rt.add`` of them (None is
    their zero).  Their adjoints may be None too, so they add with ``rt.add``."""
    assigns = [s for s in ir.walk(list(stmts)) if isinstance(s, ir.Assign)]
    out: Set[str] = set()
    while True:
        size = len(out)
        for s in assigns:
            v = s.value
            if (isinstance(v, ir.Const) and v.value is None) or is_in(v, out) or (
                    isinstance(v, ir.Call) and v.fn in (rt.zeros_like, rt.add)
                    and any(is_in(a, out) for a in v.args)):
                out.add(s.target.name)
        if len(out) == size:
            return out


def backward_needed(stmts, needed: Set[str], active: Set[str]) -> None:
    for s in reversed(stmts):
        if isinstance(s, ir.Assign):
            if s.target.name in needed and s.target.name in active:
                v = s.value
                ops = v.operands() if isinstance(v, ir.Call) else (v,)
                needed.update(a.name for a in ops if is_in(a, active))
        elif isinstance(s, ir.Unpack):
            if any(t.name in needed for t in s.targets) and is_in(s.value, active):
                needed.add(s.value.name)
        elif isinstance(s, ir.If):
            b, o = set(needed), set(needed)
            backward_needed(s.body, b, active)
            backward_needed(s.orelse, o, active)
            needed |= b | o
        elif isinstance(s, ir.Try):  # any block may have run, the body in part
            backward_needed(list(s.finalbody), needed, active)  # ran last, on every path
            handlers = set()  # what a handler needs, it needs after any prefix of the body
            for h in s.handlers:
                n = set(needed)
                backward_needed(list(h.body), n, active)
                handlers |= n
            needed |= handlers
            backward_needed(list(s.body) + list(s.orelse), needed, active)
        elif isinstance(s, (ir.For, ir.While)):
            backward_needed(list(s.orelse), needed, active)
            inner = list(s.test_body) + list(s.body) if isinstance(s, ir.While) else list(s.body)
            while True:  # values needed in a later iteration: to a fixed point
                before = len(needed)
                backward_needed(inner, needed, active)
                if len(needed) == before:
                    break


def defined_before(body, params) -> Dict[int, tuple]:
    """For each loop (by id): ``(may, must)``, the names that may be / are surely
    assigned when it starts (for a nested loop: in any iteration of the loops around)."""
    out: Dict[int, tuple] = {}
    may = set(params)

    def defs_of(s):
        return {v.name for x in [s, *ir.walk(ir.sub_blocks_flat(s))] for v in ir.stmt_defs(x)}

    def scan(stmts, must: Set[str], around: Set[str]) -> Set[str]:
        """``must`` (a set of the caller's own, updated in place) after ``stmts``."""
        for s in stmts:
            if isinstance(s, (ir.For, ir.While)):
                out[id(s)] = (may | around, set(must))
                inner = around | defs_of(s)
                scan(list(s.test_body) if isinstance(s, ir.While) else [], set(must), inner)
                scan(s.body, set(must), inner)
                scan(s.orelse, set(must), inner)
                may.update(defs_of(s))
            elif isinstance(s, ir.If):
                must |= scan(s.body, set(must), around) & scan(s.orelse, set(must), around)
            elif isinstance(s, ir.Try):  # loops inside a try (any block may stop early)
                for b in [s.body, *[h.body for h in s.handlers], s.orelse, s.finalbody]:
                    scan(b, set(must), around)
                may.update(defs_of(s))
            else:
                may.update(defs_of(s))
                if isinstance(s, (ir.Assign, ir.Unpack)):
                    must.update(v.name for v in ir.stmt_defs(s))
        return must

    scan(body, set(params), set())
    return out
