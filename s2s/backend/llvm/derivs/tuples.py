"""``add_at(acc, g, x, k)`` and ``getitem_vjp(g, x, k)`` for a tuple ``x`` (reverse mode's
adjoint of a read ``x[k]``, accumulated or fresh), natively: handlers of ``calls.TABLE``.

Maths (``s2s_runtime.add_at``, ``getitem_vjp``): ``acc`` with ``g`` added to item ``k``,
a None item of ``acc`` (no adjoint yet) read as zeros like the item of ``x``;
``getitem_vjp`` is ``add_at`` with an ``acc`` of None items (zeros like ``x``, ``g`` at
``k``).  ``k`` is a constant, or
a variable when the tuple's items have one type (a loop over a tuple): then the item
is chosen at run time, each candidate updated only on its own branch; or a constant
slice (``x[:-1]``, whose cotangent ``g`` is a tuple): item ``j`` of ``g`` is added to
the item of ``x`` at the slice's ``j``-th position.
"""
from __future__ import annotations

from llvmlite import ir as ll

import s2s_runtime as rt

from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T
from ..ops.calls import overload
from ..ops.dicts import Ctx


def _items(c, acc, x):
    """``acc``'s items, None ones as zeros like ``x``'s: ``[(value, type)]``."""
    out = []
    for k, (at, xt) in enumerate(zip(acc[1].items, x[1].items)):
        v = None if c.L is None else c.L.b.extract_value(acc[0], k)
        xv = None if c.L is None else c.L.b.extract_value(x[0], k)
        out.append(c.zeros((xv, xt)) if isinstance(at, T.NoneType) else (v, at))
    return out


def _joined(c, items, g, k):
    """The type of every item after adding ``g`` to item ``k`` (None: every item may; a
    tuple of positions: item ``j`` of ``g`` to the item at ``k[j]``)."""
    types = [t for _, t in items]
    if isinstance(k, tuple):
        for j, at in enumerate(k):
            types[at] = c.add((None, types[at]), (None, g[1].items[j]))[1]
        return types
    for j in (range(len(items)) if k is None else [k]):
        types[j] = T.join(types[j], c.add((None, types[j]), (None, g[1]))[1])
    return types


def _slice_positions(k, n, g):
    """The positions a constant slice ``k`` reads of a tuple of ``n`` items, when ``g``
    (its cotangent) is a tuple of one item per position; else None."""
    positions = tuple(range(*k.indices(n)))
    ok = T.plain_tuple(g) and len(g.items) == len(positions)
    return positions if ok else None


class TupleAddAt:
    """Takes ``add_at`` over for a tuple ``x`` and ``acc``; else defers to ``inner``."""

    wants_atoms = True
    inner = None  # the next handler of add_at (calls.overload)

    def _mine(self, types):
        if len(types) != 4:
            return False
        acc, x = types[0], types[2]
        return T.plain_tuple(x) and T.plain_tuple(acc) and len(acc.items) == len(x.items)

    def _as_add_at(self, types, vals=None, atoms=()):
        """``(types, vals, atoms)`` of the call as ``add_at``'s operands."""
        return types, vals, atoms

    def _index(self, atom, it, n, g):
        """The constant position, "variable", a tuple of positions (a constant slice), or
        None (not compiled here)."""
        k = getattr(atom, "value", None)
        if type(k) is int and -n <= k < n:
            return k % n
        if type(k) is slice:
            return _slice_positions(k, n, g)
        return "variable" if isinstance(it, T.Scalar) and it.dtype in ("i8", "b1") else None

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if self._mine(types) and not kw:
            types, _, atoms = self._as_add_at(list(types), None, tuple(atoms))
            k = self._index(atoms[3] if len(atoms) > 3 else None, types[3], len(types[2].items),
                            types[1])
            if k is None:
                return None
            c = Ctx(None, loc)
            items = _items(c, (None, types[0]), (None, types[2]))
            out = _joined(c, items, (None, types[1]), None if k == "variable" else k)
            return None if None in out else T.same_kind(types[2], out)
        if self.inner is None:
            return None
        return self.inner.type(fn, types, kw, loc, atoms, kw_atoms) \
            if getattr(self.inner, "wants_atoms", False) else self.inner.type(fn, types, kw, loc)

    def lower(self, L, fn, vals, kw, rtype):
        if not self._mine([t for _, t in vals]):
            return self.inner.lower(L, fn, vals, kw, rtype)
        types, vals, atoms = self._as_add_at([t for _, t in vals], list(vals),
                                             tuple(L.call_atoms[0]))
        acc, g, x, (i, it) = vals
        b = L.b
        c = Ctx(L, L.loc)
        items = _items(c, acc, x)
        slot = L.entry_alloca(rtype.llvm())
        out = ll.Constant(rtype.llvm(), None)
        for j, ((v, t), rt_j) in enumerate(zip(items, rtype.items)):
            out = b.insert_value(out, S.convert(L, v, t, rt_j), j)
        b.store(out, slot)
        k = self._index(atoms[3], it, len(items), g[1])
        if isinstance(k, tuple):
            for j, at in enumerate(k):  # (a slice's positions are distinct)
                new, nt = c.add(items[at], (b.extract_value(g[0], j), g[1].items[j]))
                b.store(b.insert_value(b.load(slot), S.convert(L, new, nt, rtype.items[at]), at),
                        slot)
            return b.load(slot)
        if k == "variable":
            k_value = A.wrap_index(L, S.convert(L, i, it, T.INT), A.i64(len(items)), 0)
        for j, ((v, t), rt_j) in enumerate(zip(items, rtype.items)):
            if k != "variable" and j != k:
                continue

            def update(j=j, v=v, t=t, rt_j=rt_j):
                new, nt = c.add((v, t), g)
                b.store(b.insert_value(b.load(slot), S.convert(L, new, nt, rt_j), j), slot)

            if k == "variable":
                with b.if_then(b.icmp_signed("==", k_value, A.i64(j))):
                    update()
            else:
                update()
        return b.load(slot)


class TupleGetitemVjp(TupleAddAt):
    """Takes ``getitem_vjp(g, x, k)`` over for a tuple ``x``: ``add_at`` of an ``acc`` of
    None items; else defers to ``inner``."""

    def _mine(self, types):
        return len(types) == 3 and T.plain_tuple(types[1])

    def _as_add_at(self, types, vals=None, atoms=()):
        acc_t = T.Tuple((T.NONE,) * len(types[1].items))
        acc = None if vals is None else (ll.Constant(acc_t.llvm(), None), acc_t)
        return ([acc_t] + types, None if vals is None else [acc] + vals,
                (None,) + tuple(atoms))


overload("tuples", TupleAddAt(), rt.add_at)
overload("tuples", TupleGetitemVjp(), rt.getitem_vjp)
