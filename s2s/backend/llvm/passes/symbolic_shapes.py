"""Array shapes a kernel's variables are known to share, found before lowering (jit).

``symbolic_shapes(func, types)`` maps each array variable of ``func`` whose shape is
known symbolically to a tuple with one entry per dimension; each entry is a frozenset
of *atoms*, the sizes broadcasting combined: the dimension's value is the one size of
its atoms that is not 1, or 1 (the empty set is the constant 1).  Two variables with
equal tuples have equal shapes at every point where both hold a value, so a lowering
may skip the run-time comparison of their shapes (``fused.py``: an ``unbroadcast``
known to be the identity needs no summing path).  A variable it cannot vouch for is
absent.

Atoms are ``(name, d)``: dimension ``d`` of parameter ``name`` as the function was
called, or of the one value a variable assigned exactly once outside every loop
holds (what a call the analysis does not follow made).  Shapes flow through

* copies ``a = b`` and numbers (shape ``()``);
* callables that map elements (``calls.maps_elements``): the right-aligned broadcast
  of the operands' shapes, whose atoms are united.  Broadcasting is commutative,
  associative and idempotent on sizes that broadcast, and a statement whose operands
  do not broadcast raises, so the union names the size whenever execution goes on;
* callables whose record names the operand whose shape their result has
  (``registry.result_shape``: ``rt.unbroadcast(g, x)``, ``rt.sum_vjp(g, a, ...)``).

The analysis is flow-insensitive: a variable's shape is the one every assignment of it
gives (each evaluated with the shapes known so far, an optimistic fixed point that
starts from "no assignment seen", so loop-carried values keep their shape when every
trip preserves it), or unknown when two assignments disagree or one is not followed
(an unpacking, a tape's pop, a loop's variable, a call not listed above).  Assignments
inside a loop never make atoms of their own: another trip's value may have another
size.
"""
from __future__ import annotations

import numpy as np

from ....ir import nodes as ir
from ....rules.registry import result_shape
from ..ops.calls import maps_elements
from ..typing import types as T

#: the lattice's top: no assignment of the variable evaluated yet
_UNSEEN = object()


def symbolic_shapes(func: ir.Function, types) -> dict:
    """``{name: (frozenset of atoms, ...)}`` for the array (and number) variables whose
    shapes are known; see the module's docstring."""
    defs = {}  # name -> [(statement or None, in a loop)]
    for p in func.params:
        defs.setdefault(p.var.name, []).append((None, False))
    _collect(func.body, False, defs)
    counts = {name: len(ds) for name, ds in defs.items()}
    shapes = {name: _UNSEEN for name in defs}

    def shape_of(atom):
        if isinstance(atom, ir.Const):
            return () if isinstance(atom.value, (bool, int, float, complex, np.number)) \
                else None
        return shapes.get(atom.name)

    def evaluate(name, stmt, in_loop):
        t = types.get(name)
        if isinstance(t, T.Scalar):
            return ()
        if not isinstance(t, T.Array):
            return None
        if stmt is None:  # a parameter, as called
            return tuple(frozenset({(name, d)}) for d in range(t.ndim))
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        known = None  # (an unpacking, a loop's variable: not followed)
        if isinstance(value, ir.Var):
            known = shape_of(value)
        elif isinstance(value, ir.Call):
            known = _call_shape(value, [shape_of(a) for a in value.args])
        if known is None and counts[name] == 1 and not in_loop:  # its own sizes
            return tuple(frozenset({(name, d)}) for d in range(t.ndim))
        if known is not _UNSEEN and known is not None and len(known) != t.ndim:
            return None
        return known

    changed = True
    while changed:
        changed = False
        for name, ds in defs.items():
            if shapes[name] is None:
                continue
            result = _UNSEEN
            for stmt, in_loop in ds:
                s = evaluate(name, stmt, in_loop)
                if s is _UNSEEN:
                    continue
                if s is None or result is not _UNSEEN and s != result:
                    result = None
                    break
                result = s
            if result is not shapes[name] and result != shapes[name]:
                shapes[name] = result
                changed = True
    return {name: s for name, s in shapes.items() if s is not None and s is not _UNSEEN}


def _collect(stmts, in_loop, defs):
    """Every assignment of every variable in ``stmts``: ``(statement, in a loop)``; a
    statement that defines names otherwise than ``name = value`` (an unpacking, a loop's
    variable, an exception name) counts as one the analysis does not follow."""
    for s in stmts:
        loop = in_loop or isinstance(s, (ir.For, ir.While))
        for v in ir.stmt_defs(s):  # (a loop's variable: assigned on every trip)
            defs.setdefault(v.name, []).append(
                (s if isinstance(s, ir.Assign) else _UNFOLLOWED, loop))
        for block in ir.sub_blocks(s):
            _collect(block, loop, defs)


#: stands for a definition that is not an assignment (a loop target, an unpacking)
_UNFOLLOWED = ir.ExprStmt(ir.Const(None))


def _call_shape(call, operand_shapes):
    """The shape ``call`` gives from its operands' shapes (``_UNSEEN`` where one is not
    evaluated yet), or None where the analysis does not follow the callable."""
    fn = call.fn
    like = result_shape(fn)
    if like is not None:
        return operand_shapes[like] if like < len(operand_shapes) else None
    if call.kwargs or not maps_elements(fn):
        return None
    if any(s is None for s in operand_shapes):
        return None
    if any(s is _UNSEEN for s in operand_shapes):
        return _UNSEEN
    ndim = max((len(s) for s in operand_shapes), default=0)
    out = []
    for d in range(ndim):
        dim = frozenset()
        for s in operand_shapes:
            k = len(s) - ndim + d
            if k >= 0:
                dim |= s[k]
        out.append(dim)
    return tuple(out)
