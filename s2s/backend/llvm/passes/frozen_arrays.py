"""Arrays of a kernel whose elements never change after the array is made (jit).

``frozen_arrays(func, types, stacks)`` is the largest set ``F`` of array variables of
``func`` such that, for every ``a`` in ``F``:

* every assignment of ``a`` makes a new array (arithmetic, a numpy ufunc, a pure
  reduction), or a view or copy of an array in ``F`` (``y[i]``, ``b = y``), or is a pop
  of ``a`` from one of ``stacks``, or ``a = None``; a parameter has no assignment;
* every other statement naming ``a`` only reads it: an element or view taken from it
  (a view into a variable in ``F``), arithmetic or a pure reduction of it (a new value),
  its shape or length, an operand read only for its shape and dtype
  (``the records' ``shape_operands````), or a push of ``a`` on one of ``stacks``.

So no statement writes into the memory an ``a`` in ``F`` refers to, through any name:
an element ``a[i]`` read again later reads what it read the first time, as long as
``a`` is bound to the same array (``remat_pops.py`` re-reads such elements instead of
recording them).  A name of another type (an ``if`` making it a number on one path)
is not in ``F``.
"""
from __future__ import annotations

import operator

import numpy as np

import s2s_runtime as rt

from ....ir import nodes as ir
from ....rules.registry import shape_operands
from ..typing import types as T
from ..lower.stacks import is_pop, is_push

#: calls whose result is new (never a view of an operand) and which write no operand
_FRESH = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg,
          operator.pos, operator.pow, rt.sum, rt.max, rt.min, rt.sum_vjp, rt.max_vjp,
          np.sum, np.max, np.min, np.amax, np.amin, np.prod, np.mean, np.dot}
#: calls giving an element or a view of their first operand
_VIEWS = {operator.getitem, rt.read_copy, rt.read_checked}
_SHAPE = {len, np.shape}


def _fresh(fn, kwargs=()) -> bool:
    """A call of ``fn`` with these keyword arguments makes a new value, writing nothing."""
    if any(k == "out" for k, _ in kwargs):
        return False
    return fn in _FRESH or isinstance(fn, np.ufunc)


def frozen_arrays(func, types, stacks) -> frozenset:
    stacks = set(stacks)
    arrays = {n for n, t in types.items() if isinstance(t, T.Array)}
    statements = {}  # name -> the statements naming it
    for s in ir.walk(func.body):
        if ir.sub_blocks(s):
            for v in ir.stmt_uses(s):  # a loop over an array, an if on one: not frozen
                arrays.discard(getattr(v, "name", None))
            continue
        for v in set(ir.stmt_uses(s)) | set(ir.stmt_defs(s)):
            if getattr(v, "name", None) in arrays:
                statements.setdefault(v.name, []).append(s)
    out = set(arrays)

    def ok(name, s) -> bool:
        if is_pop(s, stacks) and s.targets[0].name == name:
            return True
        if isinstance(s, ir.Assign) and s.target.name in stacks and is_push(s, s.target.name):
            return s.value.args[0] == ir.Var(name)
        if not isinstance(s, ir.Assign):
            return False
        v = s.value
        if s.target.name == name:  # an assignment of ``name``
            if isinstance(v, ir.Const):
                return v.value is None
            if isinstance(v, ir.Var):
                return v.name in out
            if not isinstance(v, ir.Call):
                return False
            if _fresh(v.fn, v.kwargs):
                return True
            if v.kwargs:
                return False
            return v.fn in _VIEWS and isinstance(v.args[0], ir.Var) and v.args[0].name in out
        # a read of ``name``
        if isinstance(v, ir.Var):
            return s.target.name in out  # another name for the same array
        if not isinstance(v, ir.Call):
            return False
        if _fresh(v.fn, v.kwargs) or v.fn in _SHAPE and not v.kwargs:
            return True
        if v.kwargs:
            return False
        mine = [k for k, a in enumerate(v.args) if a == ir.Var(name)]
        if v.fn in _VIEWS and mine == [0]:
            return isinstance(types.get(s.target.name), T.Scalar) or s.target.name in out
        where = shape_operands(v.fn)
        return all(k in where for k in mine)

    changed = True
    while changed:
        changed = False
        for name in sorted(out):
            if not all(ok(name, s) for s in statements.get(name, ())):
                out.discard(name)
                changed = True
    return frozenset(out)
