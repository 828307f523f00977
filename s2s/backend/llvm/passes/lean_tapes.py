"""Tapes that record only what the adjoint reads, decided with the jit's types.

Reverse mode (``ad/loops.py``) keeps the push of every value the adjoint code
names.  Some of those names are read only as *references*: the run-time
helpers below look at the operand's type and shape, never at its value (their
records' shape operands, ``rules.registry.shape_operands``).

==============================  ==============================================
``unbroadcast(g, x)``           ``x``: the shape and dtype ``g`` is summed to
``zeros_like(x)``               ``x``: the shape and dtype of the zeros
``index_set_vjp_value(g, i, v)`` ``v``: the shape and dtype of the value written
``densify(ct, like)``           ``like``: the structure, shape and dtype
``getitem_vjp(g, x, i)``        ``x``: the shape of the zeros ``g`` goes into
``add_at(acc, g, x, i)``        ``x``: the shape of the zeros ``g`` goes into
==============================  ==============================================

With the types of the LLVM backend that is decidable: a *scalar* in such a
position is replaced by a constant of exactly its type (``0.0`` for a weak
float64, ``np.float32(0)`` for a float32, ...), which the helper treats the
same way (a scalar has no shape).  Then every name popped from a tape the
kernel builds itself and read after none of its pops
(``ad/tape_reads.unneeded_pops``) loses all its pushes and pops; a tape left
with no push loses its resets too.

Balance: reverse mode pushes a name before each assignment of it and pops the
same name after the adjoint of that assignment, so the pushes and pops of one
name pair up on every path (``break``/``continue``/``return`` become flags
before the tape is made, ``try`` records its path).  Dropping *all* of one
name's pushes and pops leaves every other pair, and the order of the rest,
as it was.  Tapes handed in by Python (a ``vjp`` closure's residuals) are
left alone: their pushes ran in Python.

Before that, ``remat_pops.py`` makes the adjoint recompute what is cheaper to recompute
than to record, and ``split_records.py`` records an index tuple by its parts the
adjoint cannot rebuild.

Contract: ``lean_tapes(func, types) -> func`` (the same object when nothing
changes); ``types`` is ``infer.infer``'s map for ``func``.
"""
from __future__ import annotations

from dataclasses import replace


from ....ad.tape_reads import unneeded_pops
from ....ir import nodes as ir
from ....rules.registry import shape_operands
from ..typing import types as T
from .remat_pops import rematerialise
from .split_records import split_records
from ..lower.stacks import find_stacks, is_pop

def scalar_stand_in(t):
    """A constant of exactly the scalar type ``t`` (None when there is none)."""
    if not isinstance(t, T.Scalar):
        return None
    kind = (T._PY if t.weak else T._NP).get(t.dtype)
    if kind is None:
        return None
    value = kind(0)
    return ir.Const(value) if T.value_type(value) == t else None


def without_scalar_references(func, types):
    """``func`` with the scalar operands in reference positions made constants."""
    changed = []

    def rewrite(s):
        v = getattr(s, "value", None)
        if not isinstance(s, (ir.Assign, ir.ExprStmt)) or not isinstance(v, ir.Call):
            return s
        positions = shape_operands(v.fn)
        if not positions or v.kwargs:
            return s
        args = list(v.args)
        for k in positions:
            if k < len(args) and isinstance(args[k], ir.Var):
                const = scalar_stand_in(types.get(args[k].name))
                if const is not None:
                    args[k] = const
        if args == list(v.args):
            return s
        changed.append(s)
        return replace(s, value=replace(v, args=tuple(args)))

    body = ir.map_stmts(func.body, rewrite)
    return replace(func, body=body) if changed else func


def _push_of(s, stacks):
    """``(tape, name)`` of a push ``tape = (name, tape)`` onto one of ``stacks``."""
    if isinstance(s, ir.Assign) and s.target.name in stacks and isinstance(s.value, ir.Call) \
            and len(s.value.args) == 2 and s.value.args[1] == s.target \
            and isinstance(s.value.args[0], ir.Var):
        return s.target.name, s.value.args[0].name
    return None


def without_unread_records(func, types):
    """``func`` without the pushes and pops of names no one reads after a pop."""
    own = own_stacks(func, types)
    if not own:
        return func
    tapes = tuple(ir.Var(n) for n in own)
    dead = unneeded_pops(list(func.body), tapes)
    if not dead:
        return func

    def keep(s):
        if is_pop(s, set(own)) and s.targets[0].name in dead:
            return None
        push = _push_of(s, set(own))
        if push is not None and push[1] in dead:
            return None
        return s

    body = ir.map_stmts(func.body, keep)
    still = {p[0] for s in ir.walk(body) for p in [_push_of(s, set(own))] if p}
    gone = set(own) - still
    if any(is_pop(s, gone) for s in ir.walk(body)):
        return func  # pops with no push left: not reverse mode's pairing, keep it all

    def no_reset(s):
        if isinstance(s, ir.Assign) and s.target.name in gone:
            return None
        return s

    return replace(func, body=ir.map_stmts(body, no_reset) if gone else body)


def own_stacks(func, types):
    """The tapes the kernel builds itself (not handed in by Python) whose pushes and pops
    pair up by name: the names pushed are the names popped.  A tape whose pops take
    other names (a kernel that inlines an adjoint renamed apart, ``core/jit_jacobian.py``)
    is left as it is: dropping one name's records would unbalance it."""
    params = {p.var.name for p in func.params}
    pushed, popped = {}, {}
    for s in ir.walk(func.body):
        push = _push_of(s, _ANY)
        if push is not None:
            pushed.setdefault(push[0], set()).add(push[1])
        elif isinstance(s, ir.Unpack) and isinstance(s.value, ir.Var) and len(s.targets) == 2 \
                and s.targets[1] == s.value:
            popped.setdefault(s.value.name, set()).add(s.targets[0].name)
    return sorted(n for n in find_stacks(func)
                  if isinstance(types.get(n), T.Stack) and not types[n].tagged
                  and n not in params and pushed.get(n, set()) == popped.get(n, set()))


class _Anything:
    """A container holding every name (``_push_of`` of any tape)."""

    def __contains__(self, name):
        return True


_ANY = _Anything()


def lean_tapes(func, types):
    func = without_scalar_references(func, types)
    func = rematerialise(func, own_stacks(func, types), types)
    func = split_records(func, own_stacks(func, types), types)  # (after: remat reads
    return without_unread_records(func, types)  # the index tuple v before its pop)
