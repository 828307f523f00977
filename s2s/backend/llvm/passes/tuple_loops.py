"""Loops whose counter indexes a tuple of items of different types, or whose variables
change type from one iteration to the next, unrolled (jit only).

Compiled code holds a tuple as a struct, one type per item, so ``t[k]`` of a run-time
``k`` has one type only where every item has the same (``ops/calls.py``).  The loops
the frontend makes of ``for v in t``, ``for k, v in d.items()``, ``for k in d`` and
``enumerate``/``zip`` of tuples count over ``range(len(t))``, a range known when
compiling; typing (``typing/infer.py``) meets the read of a mixed tuple at the counter
and has such a loop unrolled, then types the copies, each reading its item at a
constant (a dict's key at a constant is a compile-time string).  So does a loop over a
compile-time range whose body gives a variable values of two types (``acc.append((w,
b))`` makes a longer list display each time): typing renames the copies' assignments
apart (``type_versions.renamed``), each version with its type.

Contract: ``unrolled(func, loop, trip)`` returns ``func`` with the ``For`` statement
``loop`` replaced by one copy of its body per value ``j`` of the range ``trip``
(``passes/unroll.py``: names an iteration assigns before reading them are the copy's
own), each reading the constant ``j`` where the body reads the counter.  Where the body
writes a dict, the result is renamed by ``type_versions.versioned`` (each write of a
new key makes a dict of a new type).  The same values are computed in the same order.
"""
from __future__ import annotations

from ....ir import nodes as ir
from ....passes import unroll
from ..typing.statics import with_statics
from .type_versions import versioned, writes_dict

#: longest range a loop over a mixed tuple is unrolled for
MAX_UNROLL = 64


def unrollable(loop: ir.For, trip) -> bool:
    """Whether ``unrolled`` takes ``loop`` over the range ``trip``."""
    return type(trip) is range and len(trip) <= MAX_UNROLL


def _folded(func: ir.Function) -> ir.Function:
    """``with_statics`` until no read of a name assigned a constant once is left (a copy
    ``v = k_j`` of a counter becomes a constant in the second round)."""
    for _ in range(4):
        out = with_statics(func, {})
        if out.body == func.body:
            return out
        func = out
    return func


def unrolled(func: ir.Function, loop: ir.For, trip: range) -> ir.Function:
    heads = [lambda target, name, names, j=j: [ir.Assign(target, ir.Const(j), loop.loc)]
             for j in trip]
    out = unroll.unrolled(func, loop, heads)
    out = _folded(out)  # each copy's counter, assigned once, read as its constant
    # a dict the copies write (new keys: a new type each time) gets a variable per version
    return versioned(out) if writes_dict(loop.body) else out
