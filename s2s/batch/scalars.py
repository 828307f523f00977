"""Which names hold one number per example (per-example rank 0), so that batched
elementwise code between them needs no alignment (``rules_core.aligned_operands``).

Flow-insensitive and conservative: a name is a per-example scalar when every
assignment to it gives one (a number constant, a parameter whose example is a
number, a name that is one, or an elementwise operation of such operands); any
other assignment (a call of something else, unpacking, a loop target) removes it.
"""
from __future__ import annotations

from typing import Set

import numpy as np

from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir


def _is_number_const(a) -> bool:
    return isinstance(a, ir.Const) and type(a.value) in (int, float, bool)


def scalar_names(func: ir.Function, scalar_params: Set[str], elementwise) -> Set[str]:
    """The names of ``func`` that certainly hold one number per example."""
    defs = {}
    bad: Set[str] = set()
    for s in ir.walk(func.body):
        if isinstance(s, ir.Assign):
            defs.setdefault(s.target.name, []).append(s.value)
        else:
            bad.update(v.name for v in ir.stmt_defs(s))
    params = {p.var.name for p in func.params}
    cand = (set(defs) | (scalar_params & params)) - bad
    cand -= {n for n in params if n not in scalar_params}
    changed = True
    while changed:
        changed = False
        for name in list(cand):
            for v in defs.get(name, ()):
                if not _scalar_value(v, cand, elementwise):
                    cand.discard(name)
                    changed = True
                    break
    return cand


def _scalar_value(v, cand, elementwise) -> bool:
    if isinstance(v, ir.Var):
        return v.name in cand
    if isinstance(v, ir.Const):
        return _is_number_const(v) or isinstance(v.value, np.generic) and np.ndim(v.value) == 0
    if isinstance(v, ir.Call) and (elementwise(v.fn) or v.fn in PLAIN_OF_INPLACE) \
            and not v.kwargs:  # (x op= y of numbers is x op y: a number)
        return all(isinstance(a, ir.Var) and a.name in cand or _is_number_const(a)
                   for a in v.args)
    return False
