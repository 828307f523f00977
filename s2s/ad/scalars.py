"""Which variables certainly hold real scalars (Python or numpy real numbers).

Reverse mode uses the answer to write scalar code as a person would:
``unbroadcast(g, x)`` of a real scalar onto a real scalar is ``g``, adjoints
accumulate with ``+``, a tuple of scalars unpacks without a helper.  So the
answer must be sure: a name counts only if *every* assignment to it gives a
real scalar.

The analysis is a greatest fixed point, so that a loop-carried variable
(``x = x + h * k`` in a loop) is found scalar: start from every assigned name
and drop, until nothing changes, each name one of whose assignments is not
certainly a real scalar given the names still in the set.  Real scalars are
number constants, parameters known to be real scalars (``seeds``), copies,
arithmetic and ``math`` functions of real scalars (``templates.SCALAR_OPS``),
items of parameters known to be real scalars, ``range`` loop counters and
the items of tuples built from real scalars.
"""
from __future__ import annotations

import operator
from typing import Dict, List, Set

from s2s_runtime import build

from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir
from ..rules.templates import is_real_scalar_op


def real_scalars(body, seeds: Set[str], scalar_item, vectors=frozenset(),
                 items_all_scalar=frozenset()) -> Set[str]:
    """The names of ``body`` that certainly hold real scalars.

    ``seeds``: parameters known to be real scalars; ``scalar_item(call)``: whether
    a call is an item of a parameter known to be a real scalar (``p[0]``);
    ``vectors``: parameters that are 1-D arrays of real numbers (``p[i]`` with a
    number ``i``, and ``a, b = p``, are real scalars); ``items_all_scalar``:
    tuple/list parameters of real scalars only (``a, b = p``)."""
    defs: Dict[str, List] = {}
    for s in ir.walk(body):
        for t in ir.stmt_defs(s):
            defs.setdefault(t.name, []).append(s)
    tuples = _tuple_items(body, defs)
    ranges = {n for n, ds in defs.items() if all(
        isinstance(d, ir.Assign) and isinstance(d.value, ir.Call) and d.value.fn is range
        for d in ds)}
    current = set(defs) | set(seeds)

    def scalar_def(s, name) -> bool:
        if isinstance(s, ir.Assign):
            v = s.value
            if isinstance(v, ir.Const):
                return type(v.value) in (int, float)
            if isinstance(v, ir.Var):
                return v.name in current
            if v.fn in PLAIN_OF_INPLACE:  # x += y of numbers rebinds x: x = x + y
                v = ir.Call(PLAIN_OF_INPLACE[v.fn], v.args, v.kwargs)
            if v.fn is operator.getitem and len(v.args) == 2 and not v.kwargs \
                    and isinstance(v.args[0], ir.Var) and v.args[0].name in vectors:
                i = v.args[1]
                return (isinstance(i, ir.Const) and type(i.value) is int) or (
                    isinstance(i, ir.Var) and i.name in current)
            return is_real_scalar_op(v, current) or scalar_item(v)
        if isinstance(s, ir.Unpack) and isinstance(s.value, ir.Var) and (
                s.value.name in vectors or s.value.name in items_all_scalar):
            return True
        if isinstance(s, ir.Unpack) and isinstance(s.value, ir.Var):
            items = tuples.get(s.value.name)
            i = [t.name for t in s.targets].index(name)
            return items is not None and len(items) == len(s.targets) and (
                isinstance(items[i], ir.Const) and type(items[i].value) in (int, float)
                or isinstance(items[i], ir.Var) and items[i].name in current)
        if isinstance(s, ir.For):
            return isinstance(s.iter, ir.Var) and s.iter.name in ranges
        return False

    while True:
        dropped = {n for n in current - set(seeds)
                   if not all(scalar_def(s, n) for s in defs.get(n, ()))}
        if not dropped:
            return current - {n for n in current if n not in defs and n not in seeds}
        current -= dropped


def _tuple_items(body, defs):
    """Names every assignment of which is a tuple literal of one arity (directly or
    through copies), with the items of that literal when there is a single one."""
    out = {}
    for name, ds in defs.items():
        seen = set()
        d = ds[0] if len(ds) == 1 else None
        while isinstance(d, ir.Assign) and isinstance(d.value, ir.Var) \
                and d.value.name not in seen and len(defs.get(d.value.name, ())) == 1:
            seen.add(d.value.name)
            d = defs[d.value.name][0]
        if isinstance(d, ir.Assign) and isinstance(d.value, ir.Call) \
                and d.value.fn is build.make_tuple and not d.value.kwargs:
            out[name] = d.value.args
    return out


def scalar_tuples(body, scalars: Set[str]) -> Set[str]:
    """Names that hold a tuple literal of real scalars on every assignment."""
    defs: Dict[str, List] = {}
    for s in ir.walk(body):
        for t in ir.stmt_defs(s):
            defs.setdefault(t.name, []).append(s)
    return {n for n, items in _tuple_items(body, defs).items() if all(
        isinstance(a, ir.Const) and type(a.value) in (int, float)
        or isinstance(a, ir.Var) and a.name in scalars for a in items)}
