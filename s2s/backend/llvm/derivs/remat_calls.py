"""The helpers of checkpointed loops (``s2s_runtime.markers``) compiled.

* ``checkpoint_loop(r, levels)``: ``r`` itself, for a ``range`` ``r`` and a constant
  ``levels`` (an int >= 1 or ``"log"``); anything else is the ``TypeError``/``ValueError``
  Python raises, when the function is compiled for those types.
* ``range_bounds(r, levels)``: ``(start, stop, step, levels)`` of the range, for a
  constant int ``levels`` (``"log"`` is not compiled here: a clear error).
"""
from __future__ import annotations

from llvmlite import ir as ll

from s2s_runtime.markers import checkpoint_loop, range_bounds
from ..typing import types as T
from ..ops.calls import register


def _levels(atoms, kw_atoms=None):
    """The constant ``levels`` of the call (2 when not passed)."""
    if len(atoms) < 2 and "levels" not in (kw_atoms or {}):
        return 2
    value = getattr(atoms[1] if len(atoms) > 1 else kw_atoms["levels"], "value", None)
    if isinstance(value, bool) or not (value == "log" or (type(value) is int and value >= 1)):
        raise ValueError(f"checkpoint_loop: levels must be a constant int >= 1 or 'log', got "
                         f"{value!r}")
    return value


class CheckpointLoop:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if set(kw) - {"levels"} or not 1 <= len(types) + len(kw) <= 2:
            return None
        if not isinstance(types[0], T.Range):
            raise TypeError(f"checkpoint_loop runs over a range, got {types[0]}")
        _levels(atoms, kw_atoms)
        return types[0]

    def lower(self, L, fn, vals, kw, rtype):
        return vals[0][0]


class RangeBounds(CheckpointLoop):
    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        r = super().type(fn, types, kw, loc, atoms, kw_atoms)
        if r is None or _levels(atoms, kw_atoms) == "log":
            return None
        return T.Tuple((T.INT, T.INT, T.INT, T.INT))

    def lower(self, L, fn, vals, kw, rtype):
        r = vals[0][0]
        out = ll.Constant(rtype.llvm(), None)
        for k in range(3):
            out = L.b.insert_value(out, L.b.extract_value(r, k), k)
        levels = _levels(*L.call_atoms)
        return L.b.insert_value(out, ll.Constant(T.I64, levels), 3)


register(CheckpointLoop(), checkpoint_loop)
register(RangeBounds(), range_bounds)
