"""Which names hold one number per example (per-example rank 0), so that batched
elementwise code between them needs no alignment (``rules_core.aligned_operands``).

Flow-insensitive and conservative: a name is a per-example scalar when every
assignment to it gives one (a number constant, a parameter whose example is a
number, a name that is one, an elementwise operation of such operands, an item
``p[i]`` at an int of a parameter whose example is a vector, or the target of a
loop over such a parameter); any other assignment (a call of something else,
unpacking, another loop's target) removes it.  ``v = None`` is not counted as an
assignment: it is how a name is declared before the loop or branch that first gives it
a value (the pipeline writes such declarations before differentiation), and no
arithmetic reads a None.
"""
from __future__ import annotations

import builtins
import operator
from typing import Set

import numpy as np

from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir


def _is_number_const(a) -> bool:
    return isinstance(a, ir.Const) and type(a.value) in (int, float, bool)


def scalar_names(func: ir.Function, scalar_params: Set[str], elementwise,
                 vector_params: Set[str] = frozenset()) -> Set[str]:
    """The names of ``func`` that certainly hold one number per example.
    ``vector_params``: parameters whose example is a 1-D array of numbers, never
    reassigned: an item ``p[i]`` at an int ``i`` (a constant or a ``range`` loop's
    counter), and the target of ``for v in p``, are numbers too."""
    defs, loops = {}, {}
    bad: Set[str] = set()
    for s in ir.walk(func.body):
        if isinstance(s, ir.Assign) and _is_none(s.value):
            continue
        if isinstance(s, ir.Assign):
            defs.setdefault(s.target.name, []).append(s.value)
        elif isinstance(s, ir.For):
            loops.setdefault(s.target.name, []).append(s.iter)
        else:
            bad.update(v.name for v in ir.stmt_defs(s))
    params = {p.var.name for p in func.params}
    vectors = {n for n in vector_params & params if n not in defs and n not in loops}
    ranges = {n for n, vs in defs.items() if all(
        isinstance(v, ir.Call) and v.fn is range for v in vs)}
    counters = {n for n, its in loops.items() if n not in defs and all(
        isinstance(i, ir.Var) and i.name in ranges for i in its)}
    items = {n for n, its in loops.items() if n not in defs and all(
        isinstance(i, ir.Var) and i.name in vectors for i in its)}
    bad |= set(loops) - items
    cand = (set(defs) | items | (scalar_params & params)) - bad
    cand -= {n for n in params if n not in scalar_params}
    changed = True
    while changed:
        changed = False
        for name in list(cand):
            for v in defs.get(name, ()):
                if not _scalar_value(v, cand, elementwise) and not _vector_item(
                        v, vectors, counters):
                    cand.discard(name)
                    changed = True
                    break
    return cand


def _is_none(v) -> bool:
    return isinstance(v, ir.Const) and v.value is None


def _vector_item(v, vectors, counters) -> bool:
    """``p[i]`` of a per-example vector ``p`` at an int ``i``: one number per example."""
    if not (isinstance(v, ir.Call) and v.fn is operator.getitem and len(v.args) == 2
            and not v.kwargs and isinstance(v.args[0], ir.Var) and v.args[0].name in vectors):
        return False
    i = v.args[1]
    return isinstance(i, ir.Const) and type(i.value) is int or \
        isinstance(i, ir.Var) and i.name in counters


#: builtins whose result is a number when they are given two or more numbers
_OF_NUMBERS = (builtins.min, builtins.max)


def _scalar_value(v, cand, elementwise) -> bool:
    if isinstance(v, ir.Var):
        return v.name in cand
    if isinstance(v, ir.Const):
        return _is_number_const(v) or isinstance(v.value, np.generic) and np.ndim(v.value) == 0
    if isinstance(v, ir.Call) and (elementwise(v.fn) or v.fn in PLAIN_OF_INPLACE or (
            v.fn in _OF_NUMBERS and len(v.args) >= 2)) \
            and not v.kwargs:  # (x op= y of numbers is x op y: a number)
        return all(isinstance(a, ir.Var) and a.name in cand or _is_number_const(a)
                   for a in v.args)
    return False
