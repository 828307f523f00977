"""Loops over container arguments and over items, made indexable.

Contract: ``argument_loops(body, names, params)`` returns ``body`` where every
``for`` over one of ``params`` (arguments that are lists, tuples, dicts or
other pytrees), or over an *item* (a name a ``for`` loop or an unpacking
binds: ``for row in m: for v in row``) — directly, or through a
``zip``/``enumerate``/``reversed`` made right before the loop — iterates
``rt.sequence(p)`` instead: the value itself when it is a list, tuple or
array, a dict's keys (a generator's items) as a list.  ``loop_ranges`` can
then index the loop, so both modes follow the items' derivatives.  A loop
whose body changes that value (or another name for it) in place is left as it
is.  Run by the transforms, after the inliner has unrolled loops over
functions and objects.
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import List, Set

import s2s_runtime as rt
from s2s_runtime import build

from ..ir import nodes as ir
from .container_aliases import PLAIN_INPLACE

_LAZY = (zip, enumerate, reversed)


def argument_loops(body, names, params: Set[str]) -> List:
    items = {t.name for x in ir.walk(body) for t in (
        (x.target,) if isinstance(x, ir.For) else x.targets if isinstance(x, ir.Unpack) else ())}
    wrapped = set(params) | items
    aliases = wrapped | {x.target.name for x in ir.walk(body) if isinstance(x, ir.Assign)
                         and isinstance(x.value, ir.Var) and x.value.name in wrapped}
    return _Loops(names, wrapped, aliases).block(list(body))


class _Loops:
    def __init__(self, names, params, aliases):
        self.names, self.params, self.aliases = names, params, aliases

    def block(self, stmts) -> List:
        out: List = []
        for s in stmts:
            if isinstance(s, ir.For):
                if not _changes(s.body, self.aliases):
                    s = self.wrap(s, out)
                s = replace(s, body=tuple(self.block(s.body)), orelse=tuple(self.block(s.orelse)))
            elif isinstance(s, ir.If):
                s = replace(s, body=tuple(self.block(s.body)), orelse=tuple(self.block(s.orelse)))
            elif isinstance(s, ir.While):
                s = replace(s, test_body=tuple(self.block(s.test_body)),
                            body=tuple(self.block(s.body)), orelse=tuple(self.block(s.orelse)))
            out.append(s)
        return out

    def wrap(self, s: ir.For, out: List) -> ir.For:
        """The loop iterating ``rt.sequence`` of the arguments it reads; the statements
        it needs go on ``out`` (where its ``zip``/``enumerate`` call may be rewritten)."""
        last = out[-1] if out else None
        lazy = last if isinstance(last, ir.Assign) and last.target == s.iter \
            and isinstance(last.value, ir.Call) and last.value.fn in _LAZY \
            and not last.value.kwargs else None
        args = list(lazy.value.args) if lazy is not None else [s.iter]
        pre = []
        for i, a in enumerate(args):
            if isinstance(a, ir.Var) and a.name in self.params and (
                    lazy is None or lazy.value.fn is zip or i == 0):
                items = ir.Var(self.names.fresh(f"{a.name}_items"))
                pre.append(ir.Assign(items, ir.Call(rt.sequence, (a,)),
                                     replace(s.loc, derived=True)))
                args[i] = items
        if not pre:
            return s
        if lazy is None:
            out += pre
            return replace(s, iter=args[0])
        out[-1:] = pre + [replace(lazy, value=replace(lazy.value, args=tuple(args)))]
        return s


def _changes(stmts, aliases) -> bool:
    """Whether ``stmts`` may change one of ``aliases`` in place."""
    for x in ir.walk(list(stmts)):
        v = getattr(x, "value", None)
        if not isinstance(v, ir.Call) or not v.args or not isinstance(v.args[0], ir.Var) \
                or v.args[0].name not in aliases:
            continue
        if v.fn in (build.call_method, operator.setitem, setattr) or (
                isinstance(x, ir.Assign) and v.fn in PLAIN_INPLACE):
            return True
    return False
