"""In-place index writes ``y[index] = v`` as values, for reverse mode.

Reverse mode rewrites ``y[index] = v`` into ``y = index_set(y, index, v)``
(see ``s2s/passes/index_writes.py``): the write still happens in place, as
the user wrote it, but the new state of ``y`` is a new *name*, so SSA,
activity analysis and loop tapes see it like any other value.  Where the
adjoint needs the values of a whole state of ``y`` that a later write changes,
the statement that read it reads a snapshot instead (``owned``; ``index_updated``,
a write that copies first, is the last resort of ``s2s/ad/index_writes.py``);
reads of an array that is written later copy what they read (``read_copy``) so
a recorded slice keeps its values.

Maths (``y2 = y1`` with ``y2[index] = v``; ``g`` the cotangent of ``y2``):

* ``y1_bar = g`` with ``g[index] = 0`` (``index_set_vjp_base``);
* ``v_bar = g[index]`` summed back to ``v``'s shape (``index_set_vjp_value``);
  where an integer index array names one element twice only the last write
  counts (numpy's assignment order), so the earlier ones get zero.
"""
from __future__ import annotations

import numpy as np

from .adjoint import unbroadcast


def index_set(y, index, v):
    """``y[index] = v``, in place; returns ``y`` (the same object).

    ``y[...] = v`` of a number (``x += v`` where ``x`` turned out not to be an
    array) rebinds, as Python's in-place operators do on numbers: returns ``v``.
    """
    if index is Ellipsis and not isinstance(y, np.ndarray):
        return v
    y[index] = v
    return y


def index_updated(y, index, v):
    """A copy of ``y`` with ``[index] = v`` (``y`` itself is left as it was)."""
    if index is Ellipsis and not isinstance(y, np.ndarray):
        return v
    out = np.array(y, copy=True)
    out[index] = v
    return out


def read_copy(y, index):
    """``y[index]``, copied when it is an array (a view would change with ``y``)."""
    r = y[index]
    return r.copy() if isinstance(r, np.ndarray) else r


def read_checked(y, index, where):
    """``y[index]`` when that is a number; raises when it is an array view.

    Used where the value read is used again after a later in-place write to
    ``y``: a view would then see the write, which reverse mode cannot follow.
    ``where`` is the ``file:line`` of the read, for the message.
    """
    r = y[index]
    if isinstance(r, np.ndarray):
        raise ValueError(
            f"{where}: s2s: this reads a view of an array that is written in place later "
            "while the view is still used; reverse mode needs the view's values as they "
            "were: take a copy (y[...].copy())")
    return r


def _is_basic(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (slice, int, np.integer))
               or (isinstance(p, np.ndarray) and p.dtype == bool) for p in parts)


def _last_writes(shape, index, read_shape):
    """Mask over ``y[index]``: True where that element is the last write to its place."""
    order = np.arange(int(np.prod(read_shape, dtype=np.intp))).reshape(read_shape)
    winner = np.full(shape, -1, dtype=np.intp)
    winner[index] = order
    return winner[index] == order


def _gather(g, index):
    g = np.asarray(g)
    r = g[index]
    if _is_basic(index):
        return r
    return np.where(_last_writes(g.shape, index, np.shape(r)), r, 0)


def index_set_vjp_base(g, index):
    """Cotangent of ``y1`` for ``y2 = index_set(y1, index, v)``: ``g``, zero at ``index``."""
    out = np.array(g, copy=True)
    out[index] = 0
    return out


def index_set_vjp_value(g, index, v):
    """Cotangent of ``v`` for ``y2 = index_set(y1, index, v)``: ``g[index]`` (the last
    write to each place) summed back to ``v``'s shape."""
    return unbroadcast(_gather(g, index), v)


def index_set_vjp_value_transpose(ct, g, index, v):
    """Transpose of ``index_set_vjp_value`` in ``g``: ``ct`` broadcast over the
    places written last, scattered into zeros shaped like ``g``."""
    g = np.asarray(g)
    read_shape = np.shape(g[index])
    dtype = np.result_type(g.dtype, np.asarray(ct).dtype)
    vals = np.broadcast_to(ct, read_shape)
    if not _is_basic(index):
        vals = np.where(_last_writes(g.shape, index, read_shape), vals, 0)
    out = np.zeros(g.shape, dtype=dtype)
    out[index] = vals
    return out


def scattered_values(v, a, index):
    """``v`` broadcast to the shape of the read ``a[index]`` (the values ``np.add.at(a,
    index, v)`` adds at each place), as plain numpy that the transforms read as code
    (``rules/helper_code.py``): ``v + zeros_like(a[index])``, linear in ``v``."""
    return v + np.zeros_like(a[index])
