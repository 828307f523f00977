"""Loops over a dict whose keys are known when transforming: one copy per key.

A dict's keys are part of the specialisation's kinds (``ir/kinds.kind_of``: a params
dict argument's keys), or of the code itself for a dict the function makes from a
display of constant keys and never changes.  Contract:
``dict_loops_unrolled(func, arguments=None)`` returns ``func`` where every ``for`` loop
over such a dict -- ``for k in d``, ``for k in d.keys()``, ``for v in d.values()``,
``for k, v in d.items()`` (the frontend's ``rt.dict_keys``/``dict_values``/
``dict_items(d)`` of a name assigned once and read by the loop alone) -- of at most
``MAX_KEYS`` keys is one copy of its body per key, in the dict's order
(``passes/unroll.py``), copy ``j`` assigning the loop's target ``K_j``, ``d[K_j]`` or
``(K_j, d[K_j])`` (where the body starts ``k, v = pair`` and reads the pair nowhere
else, ``k = K_j`` and ``v = d[K_j]``: no pair is made).  A dict is taken only where
the function reads it and nothing more (entries, views, ``len``, ``in``, loops): one
written in place, or passed on, could gain keys where the code does not show it.
``arguments`` maps parameters to the specialisation's values: a parameter the function
never assigns whose value is a dict has its keys
(``loops_over_parameters(func)`` says whether ``func`` has a loop that may be one).
Keys are constant strings and integers.

Each copy reads the dict at a constant key, as ``d['w']`` does: reverse mode records
no tape for the loop, vmap batches each entry as it is, and the jit gives each copy's
values their own types (a loop over the views of a dict of arrays of different ranks
was refused under ``jit(grad)``).  Python's view reads the dict as it is at each
step, and so does each copy.
"""
from __future__ import annotations

import operator
from collections import Counter
from dataclasses import replace

import s2s_runtime as rt
from s2s_runtime import build

from ..ir import nodes as ir
from ..rules.containers import contains, not_contains
from .loop_jumps import has_jump
from .unroll import unrolled

#: most keys a loop over a dict is unrolled for
MAX_KEYS = 64

_VIEWS = (rt.dict_keys, rt.dict_values, rt.dict_items)


def _single_defs(func):
    """``({name: value} of the names assigned exactly once, parameters never; how often
    each name is assigned)``."""
    defs = Counter(v.name for s in ir.walk(func.body) for v in ir.stmt_defs(s))
    params = {p.var.name for p in func.params}
    return {s.target.name: s.value for s in ir.walk(func.body)
            if isinstance(s, ir.Assign) and defs[s.target.name] == 1
            and s.target.name not in params}, defs


def _constant_keys(keys):
    keys = tuple(keys)
    if len(keys) <= MAX_KEYS and all(type(k) in (str, int) for k in keys):
        return keys
    return None


def loops_over_parameters(func: ir.Function) -> bool:
    """Whether a ``for`` loop of ``func`` runs over a parameter or a view of one (which
    the specialisation's values may show to be a dict)."""
    params = {p.var.name for p in func.params}
    single, _ = _single_defs(func)

    def over_parameter(a):
        if not isinstance(a, ir.Var):
            return False
        if a.name in params:
            return True
        v = single.get(a.name)
        return isinstance(v, ir.Call) and v.fn in _VIEWS and not v.kwargs \
            and isinstance(v.args[0], ir.Var) and v.args[0].name in params
    return any(isinstance(s, ir.For) and over_parameter(s.iter) for s in ir.walk(func.body))


def dict_loops_unrolled(func: ir.Function, arguments=None) -> ir.Function:
    while True:  # one loop at a time: the function changes under each
        found = _next_loop(func, arguments or {})
        if found is None:
            return func
        loop, view, d, keys = found
        pair = _unpacked_pair(func, loop) if view is rt.dict_items else None
        if pair is not None:  # for k, v in d.items(): k and v assigned, no pair made
            trimmed = replace(loop, body=loop.body[1:])
            func = func.with_body(_replaced(func.body, loop, trimmed))
            func = unrolled(func, trimmed, [_pair_head(pair, d, k, loop.loc) for k in keys],
                            assigns=[t.name for t in pair.targets], binds_target=False)
        else:
            func = unrolled(func, loop, [_head(view, d, k, loop.loc) for k in keys])
        if view is not None:  # the view itself is read no more
            func = func.with_body(_without_assignment(func.body, loop.iter.name))


def _unpacked_pair(func, loop):
    """The ``k, v = pair`` that starts ``loop``'s body, where the loop has no jumps or
    ``else`` and ``pair`` (its target) is read there alone; else None."""
    first = loop.body[0] if loop.body else None
    target = loop.target.name
    if not isinstance(first, ir.Unpack) or first.value != loop.target \
            or len(first.targets) != 2 or loop.orelse or has_jump(loop.body):
        return None
    reads = sum(1 for s in ir.walk(func.body) for a in ir.stmt_uses(s)
                if isinstance(a, ir.Var) and a.name == target)
    return first if reads == 1 else None


def _pair_head(pair, d, key, loc):
    def head(target, name, names):
        k, v = pair.targets
        return [ir.Assign(name(k.name), ir.Const(key), loc),
                ir.Assign(name(v.name), ir.Call(operator.getitem, (d, ir.Const(key))), loc)]
    return head


def _replaced(stmts, old, new):
    """``stmts`` with the statement ``old`` (by identity) replaced by ``new``."""
    out = []
    for s in stmts:
        if s is old:
            out.append(new)
            continue
        blocks = ir.sub_blocks(s)
        out.append(ir.with_blocks(s, [_replaced(b, old, new) for b in blocks]) if blocks else s)
    return out


def _without_assignment(stmts, name):
    out = []
    for s in stmts:
        if isinstance(s, ir.Assign) and s.target.name == name:
            continue
        blocks = ir.sub_blocks(s)
        out.append(ir.with_blocks(s, [_without_assignment(b, name) for b in blocks])
                   if blocks else s)
    return out


def _head(view, d, key, loc):
    def head(target, name, names):
        if view in (None, rt.dict_keys):
            return [ir.Assign(target, ir.Const(key), loc)]
        read = ir.Call(operator.getitem, (d, ir.Const(key)))
        if view is rt.dict_values:
            return [ir.Assign(target, read, loc)]
        value = ir.Var(names.fresh(target.name))
        return [ir.Assign(value, read, loc),
                ir.Assign(target, ir.Call(build.make_tuple, (ir.Const(key), value)), loc)]
    return head


#: what may read a dict whose keys are taken from its display or argument: the dict
#: neither changes nor escapes where nothing else sees it (``dict(d)``: a new dict, a
#: copy of its entries now)
_READERS = (operator.getitem, rt.dict_get, len, contains, not_contains, dict) + _VIEWS


def _only_read(func, name) -> bool:
    """Whether every statement of ``func`` mentioning ``name`` reads an entry, a view or
    the length of it, or loops over it (so its keys stay those it starts with)."""
    for s in ir.walk(func.body):
        if isinstance(s, ir.For) and s.iter == ir.Var(name):
            continue
        v = getattr(s, "value", None)
        operands = [a for a in ir.stmt_uses(s) if a == ir.Var(name)]
        if not operands:
            continue
        if not (isinstance(s, ir.Assign) and isinstance(v, ir.Call) and v.fn in _READERS
                and v.args and v.args[0] == ir.Var(name) and operands == [v.args[0]]):
            return False
    return True


def _next_loop(func, arguments):
    """``(loop, view, dict variable, keys)`` of the first loop to unroll, or None."""
    single, defs = _single_defs(func)
    params = {p.var.name for p in func.params}
    uses = ir.use_counts(func.body)

    def keys_of(d):
        if not isinstance(d, ir.Var) or not _only_read(func, d.name):
            return None
        if d.name in params:
            value = arguments.get(d.name)
            return _constant_keys(value) if type(value) is dict and not defs[d.name] \
                else None
        v = single.get(d.name)
        if isinstance(v, ir.Call) and v.fn is build.make_dict and not v.kwargs \
                and all(isinstance(k, ir.Const) for k in v.args[::2]):
            keys = [k.value for k in v.args[::2]]
            return _constant_keys(keys) if len(set(keys)) == len(keys) else None
        return None

    for s in ir.walk(func.body):
        if not isinstance(s, ir.For) or not isinstance(s.iter, ir.Var):
            continue
        if s.iter.name in params:
            keys = keys_of(s.iter)
            if keys is not None:
                return s, None, s.iter, keys  # (the dict itself: its keys)
            continue
        v = single.get(s.iter.name)
        if isinstance(v, ir.Call) and v.fn in _VIEWS and not v.kwargs and len(v.args) == 1 \
                and uses.get(s.iter.name) == 1:
            keys = keys_of(v.args[0])
            if keys is not None:
                return s, v.fn, v.args[0], keys
    return None
