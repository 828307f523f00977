"""Batched in-place operators and reverse mode's in-place-write helpers (``s2s.vmap``;
see ``batching.py``): ``x op= y`` in place where each example is an array, snapshots,
and ``index_set``/``index_set_vjp_value``/``read_checked`` in every example.
"""
from __future__ import annotations

import numpy as np

from .batching import batch_index, batch_lift, batch_setitem, batch_size, batch_unbroadcast
from .tree import tree_map


def batch_inplace(op, plain, x, y):
    """``x op= y`` on batched ``x``: in place where each example is an array (so names
    that share it see the change, as in the unbatched program), a new value where each
    example is a number (which Python never changes in place)."""
    if np.ndim(x) >= 2:
        return op(x, y)
    return plain(x, y)


def batch_snapshot(x):
    """A copy of batched ``x`` that later in-place changes of ``x`` leave alone."""
    return tree_map(lambda v: np.array(v, copy=True) if isinstance(v, np.ndarray) else v, x)


# -- in-place writes as values (reverse mode's index_writes helpers) --------------------
def batch_index_set(y, index, v, y_batched, v_batched, n, copy=False):
    """``index_set(y, index, v)`` (``copy``: ``index_updated``) in every example: ``y``
    batched (broadcast first when it is the same for every example), ``index`` the same
    for every example, ``v`` aligned with the slot it fills."""
    if index is Ellipsis and not isinstance(y, np.ndarray) and not y_batched:
        return v if v_batched else batch_lift(v, n)
    if not y_batched:
        y = batch_lift(y, n)
    elif copy:
        y = np.array(y, copy=True)
    batch_setitem(y, index, v, False, v_batched)
    return y


def batch_index_set_vjp_value(g, index, v, g_batched, v_batched):
    """``index_set_vjp_value`` in every example: the slots written last read from ``g``,
    summed back to the shape of each example's ``v``."""
    from .index_writes import _gather
    if not g_batched:
        g = batch_lift(g, batch_size(v))
    r = _gather(g, batch_index(g, index))
    return batch_unbroadcast(r, v, True, v_batched)


def batch_read_checked(y, index, where):
    """``read_checked`` in every example: each example's value copied when it is a number,
    the same error as unbatched when it is a view of an array written later."""
    from .index_writes import read_checked
    r = y[batch_index(y, index)]
    if isinstance(r, np.ndarray) and r.ndim > 1:
        read_checked(y[0], index, where)  # raises (an example's value is a view)
    return r.copy() if isinstance(r, np.ndarray) else r
