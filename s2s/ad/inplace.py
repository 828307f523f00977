"""In-place operators (``x += v``) before reverse mode.

Contract: accepts the SSA form of a function (see ``passes/ssa.py``) and
returns it with every in-place operator call ``t = iadd(a, v)`` replaced by
the plain operator ``t = a + v`` where that cannot change what the function
computes: when ``a`` is a number (numbers are immutable, ``+=`` rebinds),
or when ``a`` holds an array the function created itself by a
value-producing operation and that nothing else refers to (no view was
taken of it, no other name that is read again or container holds it).  The remaining in-place
calls update an object others can see (a view, an alias, an argument);
reverse mode rejects them when differentiated values flow through them.
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import Set

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build

from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir
from ..rules import lookup
from ..rules.registry import having
from ..rules.templates import is_real_scalar_op

#: primitives whose result may share memory with their (first) argument: the ``view``
#: property of their records (``rules/shape.py``)
VIEW_OPS = having("view")
_CONTAINERS = (build.make_tuple, build.make_list, build.make_dict)


#: rules whose result may be one of the items of their (container) argument
_RETURNS_AN_ITEM = {rt.max_of, rt.min_of}

#: operations that give an immutable number when every operand is one
_NUMBER_OPS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, rt.power,
               operator.floordiv, operator.mod, operator.neg, operator.pos, abs, float,
               int, complex, rt.zeros_like}  # (zeros_like: a tangent's start, 0 for a number)


def _number_op(v: ir.Call, scalars) -> bool:
    if is_real_scalar_op(v, scalars):
        return True
    numeric = v.fn in _NUMBER_OPS or isinstance(v.fn, np.ufunc)  # ufunc of scalars: a scalar
    return numeric and not v.kwargs and all(
        (isinstance(a, ir.Const) and type(a.value) in (int, float, complex))
        or (isinstance(a, ir.Var) and a.name in scalars) for a in v.args)


class _State:
    def __init__(self, scalars: Set[str], info, uses):
        self.uses = uses  # how often each variable is read in the whole function
        self.scalars = set(scalars)  # immutable numbers (Python or numpy scalars)
        self.info = info  # parameter name -> ParamInfo
        self.fresh: Set[str] = set()  # arrays this function made, held by one name only
        self.tuples = {}  # name -> items, for t = (a, b, ...)
        self.shared: Set[str] = set()  # possibly referred to from elsewhere
        #: a list or tuple literal read once: its items are shared only if that read
        #: may keep them (np.concatenate([a, b]) copies them; a container may not)
        self.pending = {}

    def share(self, atoms):
        for a in atoms:
            if isinstance(a, ir.Var):
                self.shared.add(a.name)
                self.fresh.discard(a.name)
                self.share(self.pending.pop(a.name, ()))


def _block(stmts, st: "_State"):
    out = []
    for s in stmts:
        if isinstance(s, ir.Assign):
            s = _assign(s, st)
        elif isinstance(s, ir.Unpack):
            _unpack(s, st)
        elif isinstance(s, ir.ExprStmt):
            if isinstance(s.value, ir.Call):
                st.share(s.value.operands())
        elif isinstance(s, ir.Return):
            st.share((s.value,))
        blocks = ir.sub_blocks(s)
        if blocks:
            if isinstance(s, ir.If):
                s = replace(s, body=tuple(_block(s.body, st)), orelse=tuple(_block(s.orelse, st)))
            else:  # loops and try: anything inside may run again; share all it touches
                _inner_scalars(s, st)
                s = _numbers_rebind(s, st.scalars)
                for x in ir.walk(ir.sub_blocks_flat(s)):
                    st.share(ir.stmt_uses(x) + ir.stmt_defs(x))
        out.append(s)
    return out


def _inner_scalars(s, st: "_State") -> None:
    """Add to ``st.scalars`` the names that statements inside loop or try ``s`` make
    numbers (``s = 0.0`` at the top of an inner function's body inlined in a loop), by
    the rules ``_assign`` applies outside: a number constant, a number's name, an
    operation of numbers, a real scalar item of a parameter."""
    for x in ir.walk(ir.sub_blocks_flat(s)):
        if not isinstance(x, ir.Assign):
            continue
        v, t = x.value, x.target.name
        if isinstance(v, ir.Const) and type(v.value) in (int, float) or \
                isinstance(v, ir.Var) and v.name in st.scalars or \
                isinstance(v, ir.Call) and (_number_op(v, st.scalars) or
                                            scalar_item_of(v, st.info)):
            st.scalars.add(t)


def _numbers_rebind(s, scalars):
    """``s`` with every in-place operator on a number (``total -= v``, in a loop) made the
    plain operator: numbers are immutable, so it rebinds the name either way."""
    def block(stmts):
        return tuple(_numbers_rebind(x, scalars) for x in stmts)

    if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) \
            and s.value.fn in PLAIN_OF_INPLACE and isinstance(s.value.args[0], ir.Var) \
            and s.value.args[0].name in scalars:
        return replace(s, value=replace(s.value, fn=PLAIN_OF_INPLACE[s.value.fn]))
    if isinstance(s, (ir.If, ir.For)):
        return replace(s, body=block(s.body), orelse=block(s.orelse))
    if isinstance(s, ir.While):
        return replace(s, test_body=block(s.test_body), body=block(s.body), orelse=block(s.orelse))
    if isinstance(s, ir.Try):
        return replace(s, body=block(s.body), orelse=block(s.orelse), finalbody=block(s.finalbody),
                       handlers=tuple(replace(h, body=block(h.body)) for h in s.handlers))
    return s


def _unpack(s: ir.Unpack, st: "_State") -> None:
    """``a, b = src``: a target is a scalar when its item is one, else it may be shared."""
    src = s.value
    if isinstance(src, ir.Const) and isinstance(src.value, tuple):
        items = [ir.Const(v) for v in src.value]
    else:
        items = st.tuples.get(src.name) if isinstance(src, ir.Var) else None
    st.share((src,))
    for i, t in enumerate(s.targets):
        item = items[i] if items is not None and i < len(items) else None
        if isinstance(item, ir.Const) and type(item.value) in (int, float):
            st.scalars.add(t.name)
        elif isinstance(item, ir.Var) and item.name in st.scalars:
            st.scalars.add(t.name)
        else:
            st.share((t,))


def _assign(s: ir.Assign, st: _State) -> ir.Assign:
    v, t = s.value, s.target.name
    if isinstance(v, ir.Var):
        if v.name in st.scalars:
            st.scalars.add(t)
        elif v.name in st.fresh and st.uses.get(v.name) == 1:
            st.fresh.discard(v.name)  # a move: the old name is never read again
            st.fresh.add(t)
        else:
            st.share((v, s.target))
        return s
    if not isinstance(v, ir.Call):
        if isinstance(v, ir.Const) and type(v.value) in (int, float):
            st.scalars.add(t)
        return s
    if v.fn in PLAIN_OF_INPLACE and len(v.args) == 2:
        a = v.args[0]
        if isinstance(a, ir.Var) and (a.name in st.scalars or a.name in st.fresh):
            s = replace(s, value=replace(v, fn=PLAIN_OF_INPLACE[v.fn]))
            v = s.value
            st.fresh.discard(a.name)  # the old version is dead: its object is now t's
        else:
            st.share((a, s.target))
            st.share(v.args[1:])
            return s
    if _number_op(v, st.scalars) or scalar_item_of(v, st.info):
        st.scalars.add(t)
    if v.fn is build.make_tuple:
        st.tuples[t] = v.args
    rule = lookup(v.fn)
    if v.fn in _CONTAINERS and v.fn is not build.make_dict and st.uses.get(t) == 1:
        st.pending[t] = v.operands()  # decided where the literal is read
        st.shared.add(t)
        return s
    if rule is not None and not rule.container_result and v.fn not in VIEW_OPS \
            and v.fn not in _CONTAINERS and v.fn not in _RETURNS_AN_ITEM:
        for a in v.operands():  # a function of a literal: makes a new value from it
            if isinstance(a, ir.Var):
                st.pending.pop(a.name, None)
    if v.fn in VIEW_OPS or v.fn in _CONTAINERS or rule is None:
        st.share(v.operands())
        st.share((s.target,))
    elif not rule.container_result:
        st.fresh.add(t)
    return s


def scalar_item_of(v: ir.Call, info) -> bool:
    from .reverse import scalar_item_of as item  # one definition, shared with reverse mode

    return item(v, info)


def has_inplace_operators(body) -> bool:
    """Whether ``body`` calls an in-place operator (``t = iadd(a, v)``) anywhere: the
    only calls ``resolve_inplace`` rewrites."""
    return any(isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
               and s.value.fn in PLAIN_OF_INPLACE for s in ir.walk(body))


def resolve_inplace(body, scalars: Set[str], info):
    """``body`` with the in-place operators that are safe to treat as values rewritten.

    ``scalars``: variables known to hold real scalars; ``info``: the
    parameters' ``ParamInfo`` (which items of a container are real scalars).
    """
    return _block(list(body), _State(scalars, info, ir.use_counts(body)))
