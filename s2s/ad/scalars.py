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
``abs``/``min``/``max`` of real scalars and of powers ``x ** y`` of real scalars
(numbers that may be complex: see ``templates.is_real_scalar_op``),
items of parameters known to be real scalars, ``range`` loop counters, the
items of tuples built from real scalars, and items ``v[i]`` (``i`` an integer)
of *real vectors*: 1-D real arrays passed in, and the arrays the function
makes from them or from a length (``np.copy``/``x.copy()``, ``rt.owned``,
copies, ``index_set``/``index_updated`` of one, ``np.zeros/ones/empty(n)``).
An in-place write keeps an array's dtype and shape, so a vector stays one.
All three sets come from one greatest fixed point.
"""
from __future__ import annotations

import operator
from typing import Dict, List, Set

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build

from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir
from ..rules.templates import is_real_power, is_real_scalar_op


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
    vecs = set(defs) | set(vectors)

    def integer(i) -> bool:
        return (isinstance(i, ir.Const) and type(i.value) is int) or (
            isinstance(i, ir.Var) and i.name in current)

    def vector_def(s) -> bool:
        if not isinstance(s, ir.Assign) or (isinstance(s.value, ir.Call) and s.value.kwargs):
            return False
        v = s.value
        if isinstance(v, ir.Var):
            return v.name in vecs
        if not isinstance(v, ir.Call) or not v.args:
            return False
        if v.fn in _VECTOR_COPIES and len(v.args) == 1 or v.fn in _VECTOR_WRITES:
            return isinstance(v.args[0], ir.Var) and v.args[0].name in vecs
        return v.fn in _FILLED and len(v.args) == 1 and integer(v.args[0])

    def scalar_def(s, name) -> bool:
        if isinstance(s, ir.Assign):
            v = s.value
            if isinstance(v, ir.Const):
                return type(v.value) in (int, float)
            if isinstance(v, ir.Var):
                return v.name in current
            if v.fn in PLAIN_OF_INPLACE:  # x += y of numbers rebinds x: x = x + y
                v = ir.Call(PLAIN_OF_INPLACE[v.fn], v.args, v.kwargs)
            if v.fn in _ITEM_READS and len(v.args) == _ITEM_READS[v.fn] and not v.kwargs \
                    and isinstance(v.args[0], ir.Var) and v.args[0].name in vecs:
                return integer(v.args[1])
            return is_real_scalar_op(v, current, powers) or scalar_item(v)
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

    def power_def(s) -> bool:
        return isinstance(s, ir.Assign) and is_real_power(s.value, current)

    powers = set(defs)  # names holding x ** y of real scalars: numbers, maybe complex
    # A worklist reaches the same greatest fixed point as rounds over every name (the
    # three tests only grow with the sets), rechecking a name only when a name its
    # assignments read has left a set: linear, where rounds were quadratic in a chain.
    readers = _readers(defs, tuples)
    fixed_scalars, fixed_vectors = set(seeds), set(vectors)
    work = list(defs)
    queued = set(work)
    while work:
        n = work.pop()
        queued.discard(n)
        ds = defs.get(n, ())
        dropped = False
        if n in current and n not in fixed_scalars and not all(scalar_def(s, n) for s in ds):
            current.discard(n)
            dropped = True
        if n in vecs and n not in fixed_vectors and not all(map(vector_def, ds)):
            vecs.discard(n)
            dropped = True
        if n in powers and not all(map(power_def, ds)):
            powers.discard(n)
            dropped = True
        if dropped:
            for r in readers.get(n, ()):
                if r not in queued:
                    queued.add(r)
                    work.append(r)
    return current - {n for n in current if n not in defs and n not in seeds}


def _readers(defs, tuples) -> Dict[str, Set[str]]:
    """name -> the assigned names one of whose assignments reads it (its operands, and
    the items of a tuple literal it unpacks)."""
    out: Dict[str, Set[str]] = {}
    for name, ds in defs.items():
        for s in ds:
            reads = [a.name for a in ir.stmt_uses(s) if isinstance(a, ir.Var)]
            if isinstance(s, ir.Unpack) and isinstance(s.value, ir.Var):
                reads += [a.name for a in tuples.get(s.value.name, ()) if isinstance(a, ir.Var)]
            for r in reads:
                out.setdefault(r, set()).add(name)
    return out


#: calls reading one item ``v[i]`` -> their number of arguments
_ITEM_READS = {operator.getitem: 2, rt.read_copy: 2, rt.read_checked: 3}
#: calls giving an array of their first argument's dtype and shape
_VECTOR_COPIES = (np.copy, rt.owned)
_VECTOR_WRITES = (rt.index_set, rt.index_updated)
#: ``np.zeros(n)`` and the like: a float64 vector
_FILLED = (np.zeros, np.ones, np.empty)


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
