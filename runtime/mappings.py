"""Dicts as values: what ``d[k] = v``, ``d.get``, ``d.update``, ``d.pop``,
``d.items()`` and dict comprehensions become in generated code.

Like ``containers.py`` for lists: the in-place methods of a dict the function
made itself, and that nothing else refers to, become functions returning a
new dict (``d = rt.dict_set(d, k, v, old)``; one copy of the dict each).  The
reading methods (``get``, ``items``, ``values``, ``keys``) become functions
with derivative rules for any dict.

Cotangents and tangents of a dict are dicts with the same keys (their order
does not matter: entries are always looked up by key).  ``old`` arguments are
the entry a write replaces, or ``MISSING`` where there was none: the rules
shape the zero cotangent of the replaced entry like it, or drop the key.

Plain Python and numpy; this package never imports ``s2s``.
"""
from __future__ import annotations

from .adjoint import zeros_like


class _Missing:
    """The entry of a key a dict does not have (``old_item``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "rt.MISSING"

    def __reduce__(self):
        return "MISSING"


MISSING = _Missing()


def old_item(c, k):
    """``c[k]``, or ``MISSING`` where a dict ``c`` has no key ``k``."""
    if isinstance(c, dict):
        return c.get(k, MISSING)
    return c[k]


# -- writes (each returns a new dict) -------------------------------------------------
def dict_set(d, k, v, old):
    """``d[k] = v``; ``old`` is ``old_item(d, k)``."""
    out = dict(d)
    out[k] = v
    return out


def dict_remove(d, k, old):
    """``d`` without key ``k`` (``d.pop(k)``); nothing to remove when ``old`` is
    ``MISSING``."""
    out = dict(d)
    out.pop(k, None)
    return out


def dict_update(d, other):
    """``d.update(other)`` and ``d |= other`` (``other`` a dict)."""
    out = dict(d)
    out.update(_as_dict(other))
    return out


def _as_dict(other):
    if isinstance(other, dict):
        return other
    raise TypeError(f"s2s differentiates dict.update() with a dict, not a "
                    f"{type(other).__name__}")


# -- reads --------------------------------------------------------------------------
def dict_get(d, k, default=None):
    """``d.get(k, default)``."""
    return d.get(k, default)


def dict_keys(d):
    """``list(d.keys())``: keys carry no derivative."""
    return list(d.keys())


def dict_values(d):
    """``list(d.values())``."""
    return list(d.values())


def dict_items(d):
    """``list(d.items())``: ``(key, value)`` pairs."""
    return list(d.items())


# -- cotangents and tangents (all linear in their first argument) -----------------------
def dict_reset(g, k, old):
    """Cotangent of ``d`` for ``dict_set(d, k, v, old)``: ``g`` with the entry ``k``
    zero (like ``old``), or without it where ``d`` had none."""
    out = dict(g)
    if old is MISSING:
        out.pop(k, None)
    else:
        out[k] = zeros_like(old)
    return out


def dict_restore(g, k, old):
    """Cotangent of ``d`` for ``dict_remove(d, k, old)``: ``g`` with a zero entry ``k``
    shaped like ``old`` (none where ``d`` had none)."""
    out = dict(g)
    if old is not MISSING:
        out[k] = zeros_like(old)
    return out


def _checked(d):
    if type(d) is not dict:
        raise TypeError(f"s2s differentiates .get/.items/.values of dicts, not of a "
                        f"{type(d).__name__}")
    return d


def dict_get_ct(g, d, k):
    """Cotangent of ``d`` for ``d.get(k, default)``: zeros like ``d``, ``g`` at ``k``."""
    out = zeros_like(_checked(d))
    if k in d:
        out[k] = g
    return out


def dict_default_ct(g, d, k, default):
    """Cotangent of ``default`` for ``d.get(k, default)``: ``g`` where ``d`` has no
    key ``k``, else zeros like ``default``."""
    return zeros_like(default) if k in _checked(d) else g


def dict_update_ct(g, d, other):
    """Cotangent of ``d`` for ``dict_update(d, other)``: ``g``'s entries of the keys
    ``other`` does not overwrite, zeros at those it does."""
    other = _as_dict(other)
    return {k: (zeros_like(v) if k in other else g[k]) for k, v in d.items()}


def dict_subset(g, other):
    """``g``'s entries at the keys of ``other``: the cotangent of ``other`` for
    ``dict_update(d, other)``."""
    return {k: g[k] for k in _as_dict(other)}


def dict_values_ct(g, d):
    """Cotangent of ``d`` for ``dict_values(d)``: ``g``'s items, keyed by ``d``'s keys."""
    return dict(zip(_checked(d), g))


def dict_values_of(t, d):
    """``t``'s entries in the order of ``d``'s keys: the tangent of ``dict_values(d)``."""
    return [t[k] for k in _checked(d)]


def dict_items_ct(g, d):
    """Cotangent of ``d`` for ``dict_items(d)``: the value parts of ``g``'s pairs."""
    return {k: (zeros_like(d[k]) if pair is None else pair[1])
            for k, pair in zip(_checked(d), g)}


def dict_items_of(t, d):
    """``(zero of the key, t[key])`` in the order of ``d``'s keys: the tangent of
    ``dict_items(d)``."""
    return [(zeros_like(k), t[k]) for k in _checked(d)]
