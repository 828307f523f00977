"""Adjoint arrays a loop updates in place, made sole owners once before the loop.

``inplace.py`` updates an adjoint array in place when, at that statement, its
block is held once (a reference-count check per update, with a copying slow
path).  In an adjoint loop that updates ``A`` at every iteration, those checks
and slow paths keep LLVM from keeping ``A``'s data pointer fixed.  When the
loop cannot create another reference to ``A``, one check suffices: before the
loop ``A`` is copied if its block is shared (or it has none), and inside the
loop the updates are in place unconditionally.

``owned_in_loop(L, loop)``: the float array variables ``A`` of ``loop`` (not
parameters, not tapes) every statement of which, at any depth, that names ``A``
is one of

* ``A = rt.add_at(A, g, x, i)`` (``A`` only there),
* ``A = rt.index_set_vjp_base(A, i)``,
* ``t = f(A, ...)`` with ``f`` a read (``index_set_vjp_value``, ``x[i]``,
  ``read_copy``, ``read_checked``) that gives a number,

and no loop or branch tests or iterates over ``A``: such a loop only reads
numbers out of ``A`` and writes into it, so ``A`` stays its block's only
reference.  ``make_owned(L, name)`` emits the check and copy before the loop.
Under an owned ``A`` the in-place forms still check that ``A`` has ``x``'s
shape (``rt.add_at``'s contract: ``A`` is ``x``'s adjoint) and raise an
internal error otherwise.
"""
from __future__ import annotations

import operator

import s2s_runtime as rt

from ....ir import nodes as ir
from ..values import arrays as A
from ..typing import types as T

_READS = {rt.index_set_vjp_value, operator.getitem, rt.read_copy, rt.read_checked}


def _allowed(L, s, name) -> bool:
    v = getattr(s, "value", None)
    var = ir.Var(name)
    if not isinstance(s, ir.Assign) or not isinstance(v, ir.Call) or v.kwargs:
        return False
    if s.target == var:
        if v.fn is rt.add_at and len(v.args) == 4:
            return v.args[0] == var and var not in v.args[1:]
        if v.fn is rt.index_set_vjp_base and len(v.args) == 2:
            return v.args[0] == var and v.args[1] != var
        return False
    return (v.fn in _READS and v.args[0] == var and var not in v.args[1:]
            and isinstance(L.types.get(s.target.name), T.Scalar))


def owned_in_loop(L, loop) -> list:
    params = {p.var.name for p in L.func.params}
    inner = list(ir.walk(ir.sub_blocks_flat(loop)))
    names = set()
    for s in inner:
        for a in list(ir.stmt_uses(s)) + list(ir.stmt_defs(s)):
            if isinstance(a, ir.Var):
                names.add(a.name)
    out = []
    for name in sorted(names):
        t = L.types.get(name)
        if not (isinstance(t, T.Array) and t.dtype in ("f4", "f8", "c16")) \
                or name in params or name in L.stacks or name in L.owned:
            continue
        ok = True
        for s in inner:
            mentioned = ir.Var(name) in ir.stmt_uses(s) or ir.Var(name) in ir.stmt_defs(s)
            if mentioned and (ir.sub_blocks(s) or not _allowed(L, s, name)):
                ok = False
                break
        if ok and ir.Var(name) != getattr(loop, "iter", None):
            out.append(name)
    return out


def make_owned(L, name):
    """``name`` holds a block of its own: copied when shared or when it has none."""
    from .inplace import unshared
    t = L.types[name]
    b = L.b
    value = b.load(L.slots[name])
    with b.if_then(b.not_(unshared(L, value)), likely=False):
        L.store(name, A.copy(L, value, t), t)


def check_shape(L, a, at, x, xt):
    """Raise (an internal error) unless the owned adjoint ``a`` has ``x``'s shape."""
    L.check(A.differs(L, A.shape_list(L, a, at), A.shape_list(L, x, xt)), RuntimeError,
            "s2s internal error: an adjoint array of another shape than its value")
