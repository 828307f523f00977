"""``rt.batch_value`` in LLVM IR, for ``jit(vmap(f))`` (``s2s/batch/value_reads.py``).

``batch_value(r, source[, index])`` of a batched read of an array ``source``: an
``r`` of rank 1 (one number per example, a view of the batched array it was read
from) becomes a new array holding a copy, so a later in-place write to that array
leaves it alone, as numpy's per-example read of a number is a value; an ``r`` of
higher rank (each example an array: a view unbatched too), a number and an item of
a tuple or list are returned as they are.

``batch_gathered_value(r, message[, index])`` of a gathered read (a new array): ``r``
itself where each example read a number or read with an integer array in its index (a
copy in numpy too); where each example read an array with integers and slices only (a
view in numpy, which a gather cannot be) the call is refused when the kernel is typed,
with the batching transform's ``message`` (file:line, the line, a caret).
"""
from __future__ import annotations

import s2s_runtime as rt

from ....errors import UnsupportedSyntaxError
from ..values import arrays as A
from ..typing import types as T
from ..ops.calls import register


class BatchValue:
    def type(self, fn, types, kw, loc):
        return types[0] if not kw and len(types) in (2, 3) else None

    def lower(self, L, fn, vals, kw, rtype):  # (compiled indices hold no ``...``)
        (r, r_t), (_, source_t) = vals[:2]
        if isinstance(r_t, T.Array) and r_t.ndim == 1 and isinstance(source_t, T.Array):
            return A.copy(L, r, r_t)
        return r


class BatchGatheredValue:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) not in (2, 3) or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        if isinstance(types[0], T.Array) and types[0].ndim >= 2 and \
                not (len(types) == 3 and self._advanced(types[2])):
            raise UnsupportedSyntaxError(str(getattr(atoms[1], "value", "")))
        return types[0]

    @staticmethod
    def _advanced(index_t) -> bool:
        """Whether a batched index holds an integer array per example (an array of two
        axes or more: the batch, then the example's) or a mask: a copy in numpy."""
        items = index_t.items if type(index_t) is T.Tuple else (index_t,)
        return any(isinstance(t, T.Array) and (t.ndim >= 2 or t.dtype == "b1") for t in items)

    def lower(self, L, fn, vals, kw, rtype):
        return vals[0][0]


register(BatchValue(), rt.batch_value)
register(BatchGatheredValue(), rt.batch_gathered_value)
