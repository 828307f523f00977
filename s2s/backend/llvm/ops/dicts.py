"""Dicts with constant keys under jit: handlers of ``calls.TABLE``.

A dict is a ``types.Dict``: its keys are part of its type (a dict argument's
keys are part of the signature), its values a struct.  Every operation is
resolved at compile time by key, so a dict costs what its values cost.  Maths
(``s2s_runtime.mappings`` and ``adjoint``, the same semantics):

* ``{k: v, ...}`` (``make_dict``), ``d[k]``, ``d.get(k, default)``, ``len(d)``, ``k in d``
  (a compile-time flag),
  ``d[k] = v`` (``dict_set``: a new key is appended, an old one replaced),
  ``d.pop(k)`` (``dict_remove``), ``d.update(e)``, ``list(d.values())`` (a tuple);
* cotangents are dicts: ``getitem_vjp(g, d, k)`` = zeros like ``d`` with ``g`` at
  ``k``; ``add_at(acc, g, d, k)`` = ``acc`` with ``g`` added at ``k``;
  ``zeros_like``, ``add`` (entry by entry, a key missing on one side taken from the
  other), ``densify``; ``dict_reset``/``dict_restore`` (the entry ``k`` zero like
  ``old``, or dropped where ``old`` is ``MISSING``), ``dict_get_ct``,
  ``dict_default_ct``, ``dict_update_ct``, ``dict_subset``; ``dict_values_ct(g, d)`` /
  ``dict_items_ct(g, d)`` the dict of ``g``'s items (of their value parts; a pair no
  cotangent reached: zeros) at ``d``'s keys, ``dict_values_of``/``dict_items_of(t, d)``
  the tuple of ``t``'s entries in ``d``'s key order (the key's tangent ``None``).

A key that is not a constant ``str``/``int``, or a key the dict does not have
(where Python would raise ``KeyError``), is refused at compile time naming the
key and the dict's type.
"""
from __future__ import annotations

import operator

from llvmlite import ir as ll

import s2s_runtime as rt

from ....errors import UnsupportedSyntaxError
from ....rules.containers import contains, not_contains
from ..values import scalars as S
from ..typing import types as T
from .calls import TABLE, overload, register

MISSING_T = T.Static(rt.MISSING)


def _key(atom, loc):
    k = getattr(atom, "value", None)
    if type(k) not in (str, int):
        raise UnsupportedSyntaxError(
            "jit: a dict key that is not a constant string or integer", loc)
    return k


class Ctx:
    """Typing (``L`` None: values are None) or lowering (``L`` a FunctionLowering)."""

    def __init__(self, L, loc):
        self.L, self.loc = L, loc

    def entries(self, d):
        v, t = d
        return [(k, None if self.L is None else self.L.b.extract_value(v, i), it)
                for i, (k, it) in enumerate(zip(t.keys, t.items))]

    def build(self, entries):
        """A dict value from ``(key, value, type)`` entries (later keys win)."""
        merged = {}
        for k, v, t in entries:
            merged[k] = (v, t)
        rtype = T.Dict(tuple(t for _, t in merged.values()), tuple(merged))
        if self.L is None:
            return None, rtype
        out = ll.Constant(rtype.llvm(), None)
        for i, (v, t) in enumerate(merged.values()):
            out = self.L.b.insert_value(out, ll.Constant(t.llvm(), None) if v is None else v, i)
        return out, rtype

    def call(self, fn, args):
        """``fn(*args)`` through the call table (dict entries may be dicts again)."""
        handler = TABLE[fn]
        types = [t for _, t in args]
        rtype = handler.type(fn, types, {}, self.loc, *(((None,) * len(args), {})
                                                        if getattr(handler, "wants_atoms", False)
                                                        else ()))
        if rtype is None:
            raise UnsupportedSyntaxError(
                f"jit: combining dict entries of types {', '.join(str(t) for _, t in args)}",
                self.loc)
        if self.L is None:
            return None, rtype
        return handler.lower(self.L, fn, args, {}, rtype), rtype

    def zeros(self, x):
        return self.call(rt.zeros_like, [x])

    def add(self, a, c):
        return self.call(rt.add, [a, c])

    def item(self, d, k):
        for key, v, t in self.entries(d):
            if key == k:
                return v, t
        raise UnsupportedSyntaxError(f"jit: the key {k!r} is not in the dict {d[1]}", self.loc)


def _missing(t):
    return isinstance(t, T.Static) and t.value is rt.MISSING


def _without(c, d, k):
    return [e for e in c.entries(d) if e[0] != k]


# -- the operations: f(c, args, keys) -> (value, type); args are (value, type) pairs ------
def getitem(c, a, k):
    return c.item(a[0], k[1])


def make_dict(c, a, k):
    return c.build([(k[2 * i], v, t) for i, (v, t) in enumerate(a[1::2])])


def dict_get(c, a, k):
    d, key = a[0], k[1]
    if key in d[1].keys:
        return c.item(d, key)
    return a[2] if len(a) > 2 else (None, T.NONE)


def dict_set(c, a, k):
    return c.build(c.entries(a[0]) + [(k[1], *a[2])])


def old_item(c, a, k):
    return c.item(a[0], k[1]) if k[1] in a[0][1].keys else (None, MISSING_T)


def dict_remove(c, a, k):
    return c.build(_without(c, a[0], k[1]))


def dict_reset(c, a, k):
    if _missing(a[2][1]):
        return c.build(_without(c, a[0], k[1]))
    return c.build(c.entries(a[0]) + [(k[1], *c.zeros(a[2]))])  # a key keeps its place


def dict_restore(c, a, k):
    return a[0] if _missing(a[2][1]) else c.build(c.entries(a[0]) + [(k[1], *c.zeros(a[2]))])


def dict_update(c, a, k):
    return c.build(c.entries(a[0]) + c.entries(a[1]))


def dict_values(c, a, k):
    items = c.entries(a[0])
    t = T.Tuple(tuple(t for _, _, t in items))
    if c.L is None:
        return None, t
    out = ll.Constant(t.llvm(), None)
    for i, (_, v, _) in enumerate(items):
        out = c.L.b.insert_value(out, v, i)
    return out, t


def _tuple(c, parts):
    """``(value, type)`` of the tuple of ``(value, type)`` parts (a None value: unset)."""
    t = T.Tuple(tuple(pt for _, pt in parts))
    if c.L is None:
        return None, t
    out = ll.Constant(t.llvm(), None)
    for i, (v, _) in enumerate(parts):
        if v is not None:
            out = c.L.b.insert_value(out, v, i)
    return out, t


def dict_keys(c, a, k):
    return _tuple(c, [(None, T.Static(kk)) for kk in a[0][1].keys])


def dict_items(c, a, k):
    return _tuple(c, [_tuple(c, [(None, T.Static(kk)), (v, t)]) for kk, v, t in c.entries(a[0])])


def _parts(c, g, n):
    """The ``n`` items of the tuple (or list display) ``g`` as ``(value, type)`` pairs."""
    v, t = g
    if not isinstance(t, T.Tuple) or isinstance(t, T.Dict) or len(t.items) != n:
        raise UnsupportedSyntaxError(f"jit: a cotangent {t} of the {n} items of a dict", c.loc)
    return [(None if c.L is None else c.L.b.extract_value(v, i), it)
            for i, it in enumerate(t.items)]


def dict_values_ct(c, a, k):
    entries = c.entries(a[1])
    return c.build([(kk, *part) for (kk, _, _), part in zip(entries, _parts(c, a[0],
                                                                              len(entries)))])


def dict_items_ct(c, a, k):
    entries = c.entries(a[1])
    out = []
    for (kk, v, t), (pv, pt) in zip(entries, _parts(c, a[0], len(entries))):
        if isinstance(pt, T.NoneType):  # no cotangent reached the pair
            out.append((kk, *c.zeros((v, t))))
        else:
            out.append((kk, *_parts(c, (pv, pt), 2)[1]))
    return c.build(out)


def dict_values_of(c, a, k):
    return _tuple(c, [c.item(a[0], kk) for kk in a[1][1].keys])


def dict_items_of(c, a, k):
    return _tuple(c, [_tuple(c, [(None, T.NONE), c.item(a[0], kk)]) for kk in a[1][1].keys])


def has_key(c, a, k):
    """``key in d`` (``contains(d, key)``): known when compiling, the keys being so."""
    return None, T.Static(k[1] in a[0][1].keys)


def lacks_key(c, a, k):
    return None, T.Static(k[1] not in a[0][1].keys)


def dict_copy(c, a, k):
    """``dict(d)``: a new dict of the same entries (their values themselves, as Python's
    shallow copy holds them)."""
    return c.build(c.entries(a[0]))


def dict_length(c, a, k):
    return (None if c.L is None else ll.Constant(T.I64, len(a[0][1].keys))), T.INT


def getitem_vjp(c, a, k):
    g, d, key = a[0], a[1], k[2]
    c.item(d, key)
    return c.build([(kk, *c.zeros((v, t))) for kk, v, t in c.entries(d)] + [(key, *g)])


def add_at(c, a, k):
    acc, g, key = a[0], a[1], k[3]
    if isinstance(acc[1], T.NoneType):
        return getitem_vjp(c, a[1:], k[1:])
    if key not in acc[1].keys:
        return c.build(c.entries(acc) + [(key, *g)])
    return c.build(c.entries(acc) + [(key, *c.add(c.item(acc, key), g))])


def zeros_like(c, a, k):
    return c.build([(kk, *c.zeros((v, t))) for kk, v, t in c.entries(a[0])])


def add(c, a, k):
    (x, xt), (y, yt) = a
    if isinstance(xt, T.NoneType) or isinstance(yt, T.NoneType):
        return a[1] if isinstance(xt, T.NoneType) else a[0]
    if not (isinstance(xt, T.Dict) and isinstance(yt, T.Dict)):
        raise UnsupportedSyntaxError(f"jit: adding a {xt} and a {yt}", c.loc)
    other = {kk: (v, t) for kk, v, t in c.entries(a[1])}
    out = [(kk, *(c.add((v, t), other.pop(kk)) if kk in other else (v, t)))
           for kk, v, t in c.entries(a[0])]
    return c.build(out + [(kk, *vt) for kk, vt in other.items()])


def densify(c, a, k):
    (ct, ctt), like = a
    have = {kk: (v, t) for kk, v, t in c.entries(a[0])} if isinstance(ctt, T.Dict) else {}
    return c.build([(kk, *c.call(rt.densify, [have.get(kk, (None, T.NONE)), (v, t)]))
                    for kk, v, t in c.entries(like)])


def dict_get_ct(c, a, k):
    g, d, key = a[0], a[1], k[2]
    zeros = [(kk, *c.zeros((v, t))) for kk, v, t in c.entries(d)]
    return c.build(zeros + ([(key, *g)] if key in d[1].keys else []))


def dict_default_ct(c, a, k):
    return c.zeros(a[3]) if k[2] in a[1][1].keys else a[0]


def dict_update_ct(c, a, k):
    g, d, other = a
    return c.build([(kk, *(c.zeros((v, t)) if kk in other[1].keys else c.item(g, kk)))
                    for kk, v, t in c.entries(d)])


def dict_subset(c, a, k):
    return c.build([(kk, *c.item(a[0], kk)) for kk in a[1][1].keys])


# -- registration -----------------------------------------------------------------------------
class DictOp:
    """Runs ``op`` when operand ``at`` is a dict (``at`` None: always), else defers to
    ``inner``, the callable's next handler (``calls.overload``).  ``keys``: positions of
    operands that are constant keys."""

    wants_atoms = True
    inner = None

    def __init__(self, op, at, keys):
        self.op, self.at, self.keys = op, at, keys

    def mine(self, types):
        return self.at is None or (len(types) > self.at and isinstance(types[self.at], T.Dict))

    def _keys(self, atoms, loc):
        where = range(0, len(atoms), 2) if self.keys == "even" else self.keys
        return {i: _key(atoms[i], loc) for i in where if i < len(atoms)}

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if self.mine(types) and not kw:
            return self.op(Ctx(None, loc), [(None, t) for t in types], self._keys(atoms, loc))[1]
        if self.inner is None:
            return None
        if getattr(self.inner, "wants_atoms", False):
            return self.inner.type(fn, types, kw, loc, atoms, kw_atoms)
        return self.inner.type(fn, types, kw, loc)

    def lower(self, L, fn, vals, kw, rtype):
        if self.mine([t for _, t in vals]):
            value, t = self.op(Ctx(L, L.loc), list(vals), self._keys(L.call_atoms[0], L.loc))
            if value is None:
                return ll.Constant(rtype.llvm(), None)
            return S.convert(L, value, t, rtype) if t != rtype else value
        return self.inner.lower(L, fn, vals, kw, rtype)


def _wrap(fn, op, at, keys=()):
    overload("dicts", DictOp(op, at, keys), fn)


_wrap(operator.getitem, getitem, 0, (1,))
_wrap(len, dict_length, 0)
_wrap(dict, dict_copy, 0)
_wrap(contains, has_key, 0, (1,))
_wrap(not_contains, lacks_key, 0, (1,))
_wrap(rt.getitem_vjp, getitem_vjp, 1, (2,))
_wrap(rt.add_at, add_at, 2, (3,))
_wrap(rt.zeros_like, zeros_like, 0)
_wrap(rt.densify, densify, 1)
_wrap(rt.add, add, 1)  # (None, dict) and (dict, dict)
_wrap(rt.add, add, 0)
register(DictOp(make_dict, None, "even"), rt.make_dict)
for _fn, _op, _at, _keys in [
        (rt.dict_get, dict_get, 0, (1,)), (rt.dict_set, dict_set, 0, (1,)),
        (rt.old_item, old_item, 0, (1,)), (rt.dict_remove, dict_remove, 0, (1,)),
        (rt.dict_reset, dict_reset, 0, (1,)), (rt.dict_restore, dict_restore, 0, (1,)),
        (rt.dict_update, dict_update, 0, ()), (rt.dict_values, dict_values, 0, ()),
        (rt.dict_keys, dict_keys, 0, ()), (rt.dict_items, dict_items, 0, ()),
        (rt.dict_values_ct, dict_values_ct, 1, ()), (rt.dict_items_ct, dict_items_ct, 1, ()),
        (rt.dict_values_of, dict_values_of, 1, ()), (rt.dict_items_of, dict_items_of, 1, ()),
        (rt.dict_get_ct, dict_get_ct, 1, (2,)), (rt.dict_default_ct, dict_default_ct, 1, (2,)),
        (rt.dict_update_ct, dict_update_ct, 1, ()), (rt.dict_subset, dict_subset, 0, ())]:
    _wrap(_fn, _op, _at, _keys)


def reordered(L, value, src, dst):
    """``(value, type)`` of a dict value with ``src``'s entries in ``dst``'s key order."""
    if set(src.keys) != set(dst.keys):
        raise UnsupportedSyntaxError(f"jit: a dict {src} where a dict {dst} is expected", L.loc)
    pos = {k: i for i, k in enumerate(src.keys)}
    t = T.Dict(tuple(src.items[pos[k]] for k in dst.keys), dst.keys)
    out = ll.Constant(t.llvm(), None)
    for i, k in enumerate(dst.keys):
        out = L.b.insert_value(out, L.b.extract_value(value, pos[k]), i)
    return out, t
