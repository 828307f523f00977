"""Compile-time constants among a compiled function's parameters.

Contract: ``static_values(values)`` says which argument values are constants the
compiled code is specialised on rather than run-time values: ``None``, strings and
tuples of those (Numba treats them alike), and functions.  ``with_statics(func,
statics)`` returns
``func`` with every read of such a parameter (``statics``: name -> value; the free
variables a function reads from its globals and closures are parameters here)
replaced by the constant, so the backend sees ``Const('fast')`` where the user wrote
``mode``; a parameter the body assigns to keeps its reads.  A local assigned such a
constant once (an inlined call's ``axis=None`` or ``axis=0``, ``keepdims=False``, a
slice ``shape[:-k]`` of an inlined helper), anywhere (a name assigned once has no
other value a read can see), or assigned once outside loops and branches a value that
substitution makes such a constant, is replaced the same way, and so is ``t[k]`` of a
local ``t = (..., c_k, ...)`` whose item ``k`` is a constant, assigned once there (the
``spec`` tuple a derivative passes to an inlined helper).  The parameter stays (the
calling convention does not change) with the type ``Static(value)``, which passes
nothing at run time.
"""
from __future__ import annotations

import dataclasses
import operator
import types
from collections import Counter

import numpy as np

import s2s_runtime as rt

from ....ir import nodes as ir


def is_static(value) -> bool:
    """``None``, a ``str``, or a tuple of those (nested)."""
    if value is None or type(value) is str:
        return True
    return type(value) is tuple and bool(value) and all(map(is_static, value))


def _foldable_local(value) -> bool:
    """A constant whose reads may take its place: static, a flag, an int, a slice of
    known bounds (``shape[:-k]``) or a tuple of ints (axes)."""
    if is_static(value) or type(value) in (bool, int, slice):
        return True
    return type(value) is tuple and all(type(v) is int for v in value)


def static_values(values):
    """The positions of ``values`` that are compile-time constants: ``is_static`` ones,
    and functions (a Python function, a builtin, a numpy ufunc: an argument such as
    ``activation=np.tanh``, whose calls the front end inlined for this value, as JAX's
    jit sees a default)."""
    return [k for k, v in enumerate(values) if is_static(v) or _is_function(v)]


def _is_function(value) -> bool:
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, np.ufunc))


#: fields of statements that define names (never replaced)
_DEFINITIONS = ("target", "targets", "name", "var")


def _substitute(node, consts):
    if isinstance(node, ir.Var):
        return consts.get(node.name, node)
    if isinstance(node, tuple):
        return tuple(_substitute(n, consts) for n in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, (ir.Const, ir.Loc)):
        changes = {}
        for f in dataclasses.fields(node):
            if f.name in _DEFINITIONS:
                continue
            old = getattr(node, f.name)
            new = _substitute(old, consts)
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(node, **changes) if changes else node
    return node


def with_statics(func: ir.Function, statics: dict) -> ir.Function:
    defs = Counter(v.name for s in ir.walk(func.body) for v in ir.stmt_defs(s))
    consts = {name: ir.Const(value) for name, value in statics.items() if not defs[name]}
    tuples = {}  # t = (c0, c1, ...) of constants: t[k] is c_k (an inlined helper's spec[1])
    for s in func.body:  # x = None / 'mode' once, outside loops and branches (defaults)
        if not isinstance(s, ir.Assign) or defs[s.target.name] != 1:
            continue
        v = _substitute(s.value, consts)
        if isinstance(v, ir.Const) and _foldable_local(v.value):
            consts[s.target.name] = v
        elif isinstance(v, ir.Call) and v.fn is rt.make_tuple and not v.kwargs:
            tuples[s.target.name] = v.args
        elif isinstance(v, ir.Var) and v.name in tuples:  # another name for it
            tuples[s.target.name] = tuples[v.name]
        elif isinstance(v, ir.Call) and v.fn is operator.getitem and len(v.args) == 2 and \
                isinstance(v.args[0], ir.Var) and v.args[0].name in tuples and \
                isinstance(v.args[1], ir.Const) and type(v.args[1].value) is int:
            items, k = tuples[v.args[0].name], v.args[1].value
            if -len(items) <= k < len(items) and isinstance(items[k], ir.Const) and \
                    _foldable_local(items[k].value):
                consts[s.target.name] = items[k]
    for s in ir.walk(func.body):  # a constant assigned once in a loop or a branch (the
        # body of a Jacobian kernel's loop over basis vectors): no other value reaches a read
        if isinstance(s, ir.Assign) and defs[s.target.name] == 1 and \
                isinstance(s.value, ir.Const) and _foldable_local(s.value.value):
            consts.setdefault(s.target.name, s.value)
    if not consts:
        return func
    return func.with_body(_substitute(func.body, consts))
