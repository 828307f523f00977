"""Lists as values: what ``l.append(v)``, ``l[i] = v``, comprehensions and loops
over lists become in generated code.

The frontend (``s2s/passes/containers.py``) rewrites the in-place methods of a
list the function made itself, and that nothing else refers to, into
functions that return a *new* list: ``out.append(y)`` becomes
``out = rt.list_append(out, y)``.  Each state of the list is then a value of
its own, which SSA, loops and the tape handle like a number.

Cost: each operation copies the list (a copy of ``len(l)`` references, done
by C code), so building a list of ``n`` items with ``append`` copies
``n**2 / 2`` references in all.  The derivative rules read only the cotangent
and the item, never the old list, so a loop that appends records nothing on
the tape for the list.

Cotangents and tangents of a list are lists of the same length (dense: the
zero of an item is an array of its shape), so the rules never need the
primal list.  Positions ``p`` are normalised (``0 <= p``) by ``item_index``
and ``insert_index`` before the list changes.

Plain Python and numpy; this package never imports ``s2s``.
"""
from __future__ import annotations

import operator

import numpy as np

from .adjoint import add, zeros_like


# -- positions ---------------------------------------------------------------------
def item_index(l, i):
    """``i`` as a position ``0 <= p < len(l)`` (Python's rules for ``l[i]``)."""
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
        raise TypeError(f"list indices must be integers, not {type(i).__name__} "
                        "(s2s differentiates list writes at one integer position)")
    n = len(l)
    p = int(i) + n if i < 0 else int(i)
    if not 0 <= p < n:
        raise IndexError("list index out of range")
    return p


def insert_index(l, i):
    """Where ``l.insert(i, v)`` puts ``v``: ``0 <= p <= len(l)`` (clamped, as Python)."""
    n = len(l)
    p = int(i) + n if i < 0 else int(i)
    return min(max(p, 0), n)


# -- the operations (each returns a new list) ----------------------------------------
def list_append(l, v):
    """``l.append(v)``: ``l`` with ``v`` at the end."""
    out = list(l)
    out.append(v)
    return out


def list_extend(l, w):
    """``l.extend(w)`` and ``l += w``: ``l`` followed by the items of ``w``."""
    out = list(l)
    out.extend(w)
    return out


def list_insert(l, p, v):
    """``l.insert(p, v)`` at a normalised position ``p``."""
    out = list(l)
    out.insert(p, v)
    return out


def list_remove(l, p, item):
    """``l`` without its item at position ``p`` (``l.pop(p)``), which is ``item``:
    the derivative rules shape the zero cotangent of the removed slot like it."""
    out = list(l)
    del out[p]
    return out


def list_set(l, p, v, old):
    """``l[p] = v`` at a normalised position ``p``; ``old`` is the item it replaces
    (the derivative rules shape the zero cotangent of the old item like it)."""
    out = list(l)
    out[p] = v
    return out


# -- + and * of lists and tuples (new objects, whatever the function shares) ------------
def seq_concat(a, b):
    """``a + b`` of two lists or two tuples (the frontend knows they are)."""
    return a + b


def seq_repeat(a, n):
    """``a * n`` of a list or tuple and an integer."""
    return a * operator.index(n)


def seq_repeat_ct(g, a):
    """Cotangent of ``a`` for ``seq_repeat(a, n)``: the sum of ``g``'s copies of it."""
    m = len(a)
    if not m or not len(g):
        return zeros_like(a)
    out = list(g[:m])
    for j in range(m, len(g), m):
        out = [add(x, y) for x, y in zip(out, g[j:j + m])]
    return seq_cast(out, a)


def seq_tile(c, g):
    """``c`` repeated to ``g``'s length, in ``g``'s structure: the transpose of
    ``seq_repeat_ct`` (and the tangent of ``seq_repeat``'s copies)."""
    n = len(g) // len(c) if len(c) else 0
    return seq_cast(list(c) * n, g)


# -- iterating, converting ------------------------------------------------------------
def is_sequence(x) -> bool:
    """A list, tuple or array: iterating it gives its items, which carry derivatives."""
    return isinstance(x, (list, tuple, np.ndarray))


def sequence(x):
    """What a loop iterates over, as a sequence it can index: ``x`` itself if it is a
    list, tuple or array, else ``list(x)`` (a dict's keys, a generator's items)."""
    return x if is_sequence(x) else list(x)


def reversed_items(x):
    """``reversed(x)`` where something other than a ``for`` loop reads it (``zip(a,
    reversed(b))``): the items backwards, as a list."""
    return list(reversed(x))


def seq_cast(items, like):
    """A cotangent or tangent ``items`` (one entry per item of ``iter(like)``) in
    ``like``'s own structure: a list, a tuple or an array of ``like``'s shape.  An
    iterable that is no sequence (a dict: its keys; a generator) has no derivative
    through its items: zeros like it."""
    if isinstance(like, list):
        return list(items)
    if isinstance(like, tuple):
        return type(like)(*items) if hasattr(like, "_fields") else tuple(items)
    if isinstance(like, np.ndarray):
        if not len(items):
            return np.zeros(like.shape, dtype=_inexact(like.dtype))
        out = np.stack([np.broadcast_to(v, like.shape[1:]) for v in items])
        return out.astype(_inexact(np.result_type(like.dtype, out.dtype)), copy=False)
    return zeros_like(like)


def seq_cast_transpose(ct, items, like):
    """Transpose of ``items -> seq_cast(items, like)``: ``ct`` back in ``items``'
    structure (zeros if ``like`` is no sequence)."""
    if is_sequence(like):
        return seq_cast(ct, items)
    return zeros_like(items)


def _inexact(dtype):
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


# -- sorted ----------------------------------------------------------------------------
def sort_order(items, key=None, reverse=False) -> list:
    """The positions of ``items`` in the order ``sorted(items, key=key, reverse=reverse)``
    lists them (Python's sort is stable, so sorting the positions agrees with it)."""
    items = list(items)
    return sorted(range(len(items)), key=(lambda i: key(items[i])) if key is not None
                  else items.__getitem__, reverse=reverse)


def sorted_ct(g, items, key=None, reverse=False):
    """Cotangent of ``items`` for ``sorted(items, ...)``: ``g`` put back in place."""
    if not is_sequence(items):
        return zeros_like(items)
    out = [None] * len(items)
    for j, i in enumerate(sort_order(items, key, reverse)):
        out[i] = g[j]
    return seq_cast(out, items)


def sorted_tangent(t, items, key=None, reverse=False):
    """Tangent of ``sorted(items, ...)``: the items' tangents in sorted order."""
    if not is_sequence(items):
        return [None] * len(list(items)) if isinstance(items, dict) else zeros_like(t)
    return [t[i] for i in sort_order(items, key, reverse)]


# -- max and min of one iterable --------------------------------------------------------
def max_of(items, key=None):
    """``max(items, key=key)`` (the builtin over one iterable)."""
    return max(items, key=key)


def min_of(items, key=None):
    """``min(items, key=key)`` (the builtin over one iterable)."""
    return min(items, key=key)


def _position(items, ans) -> int:
    """Where ``max``/``min`` found ``ans``: the first item that is it (or equals it).
    The derivative goes to that item alone (Python returns the first of tied items)."""
    if isinstance(items, np.ndarray):
        return int(np.flatnonzero(items == ans)[0]) if items.ndim == 1 else \
            next(i for i, v in enumerate(items) if np.array_equal(v, ans))
    for i, v in enumerate(items):
        if v is ans:
            return i
    for i, v in enumerate(items):
        if v == ans:
            return i
    raise ValueError("s2s: max()/min() result not found among the items")


def extreme_ct(g, items, ans):
    """Cotangent of ``items`` for ``ans = max_of(items)`` (or ``min_of``): ``g`` at the
    chosen item, zeros elsewhere (zeros for an iterable that is no sequence)."""
    if not is_sequence(items):
        return zeros_like(items)
    p = _position(items, ans)
    if isinstance(items, np.ndarray):
        out = np.zeros(items.shape, dtype=_inexact(items.dtype))
        out[p] = g
        return out
    out = [zeros_like(v) for v in items]
    out[p] = g
    return seq_cast(out, items)


def extreme_tangent(t, items, ans):
    """Tangent of ``ans = max_of(items)``: the tangent of the chosen item."""
    if not is_sequence(items):
        return zeros_like(ans)
    return t[_position(items, ans)]
