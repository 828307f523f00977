"""Run-time helpers of batched loops whose trip count differs per example
(``s2s/batch/lanes.py``).

A loop ``for i in range(a, b, c)`` whose bounds are batched runs ``M`` batch
iterations, ``M`` the largest trip count among the examples that reach it
(the enclosing ``mask``); example ``k`` with ``len_k`` trips is *active* in
``len_k`` consecutive batch iterations:

* left-aligned (a loop that records a tape, or records nothing): batch
  iterations ``0 .. len_k - 1``;
* right-aligned (a loop that replays a tape, the adjoint of a left-aligned
  loop): batch iterations ``M - len_k .. M - 1``, so that batch iteration
  ``j`` of the adjoint replays batch iteration ``M - 1 - j`` of the primal for
  every example at once, and the tape (one entry per batch iteration, the
  same for every example) is popped in the order it was pushed.

In its ``t``-th active iteration (``t = 0 .. len_k - 1``) example ``k`` sees
``start_k + t * step_k``; inactive examples see a value of their own range
(or its start when it is empty), so reads indexed by it stay in bounds.
"""
from __future__ import annotations

import numpy as np


class BatchedRange:
    """``range(start_k, ...)`` of every example ``k``: ``start``, ``step`` and ``length``
    are integer vectors over the batch (``reversed`` ranges have ``start`` at the
    last item and the step negated, as ``range(...)[::-1]``)."""

    __slots__ = ("start", "step", "length")

    def __init__(self, start, step, length):
        self.start, self.step, self.length = start, step, length

    def __iter__(self):
        raise TypeError("vmap: a range whose bounds differ per example can only be "
                        "iterated by a 'for' loop")

    def __repr__(self):
        return f"BatchedRange(start={self.start}, step={self.step}, length={self.length})"


def _ints(v, n, what):
    a = np.asarray(v)
    if a.dtype.kind not in "biu":
        raise TypeError(f"'{a.dtype}' object cannot be interpreted as an integer "
                        f"({what} of a range)")
    return np.broadcast_to(a.astype(np.int64), (n,))


def batch_range(n, *args):
    """``range(*args)`` of every example (each argument an integer per example or one
    integer for all), as a ``BatchedRange``; Python's trip count
    ``max(0, ceil((stop - start) / step))``."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}")
    if len(args) == 1:
        start, stop, step = np.zeros(n, np.int64), _ints(args[0], n, "stop"), np.ones(n, np.int64)
    else:
        start, stop = _ints(args[0], n, "start"), _ints(args[1], n, "stop")
        step = _ints(args[2], n, "step") if len(args) == 3 else np.ones(n, np.int64)
    if np.any(step == 0):
        raise ValueError("range() arg 3 must not be zero")
    span = np.where(step > 0, stop - start + step - 1, start - stop - step - 1)
    length = np.maximum(0, span // np.abs(step))
    return BatchedRange(start, step, length)


def batch_reversed_range(r, n):
    """``r[::-1]`` of every example (``r`` a ``BatchedRange``, or one ``range`` for all
    ``n`` examples): the iterations of an adjoint loop."""
    if not isinstance(r, BatchedRange):
        r = BatchedRange(np.full(n, r.start, np.int64), np.full(n, r.step, np.int64),
                         np.full(n, len(r), np.int64))
    return BatchedRange(r.start + (r.length - 1) * r.step, -r.step, r.length)


def batch_trips(r, mask=None):
    """``M``: the most trips any example in ``mask`` (all when None) makes."""
    length = r.length if mask is None else r.length[np.asarray(mask, dtype=bool)]
    return int(length.max()) if length.size else 0


def _lane_iteration(r, j, trips, right):
    return j - (trips - r.length) if right else np.full(r.length.shape, j)


def batch_lanes_active(r, j, trips, right, mask=None):
    """The examples active in batch iteration ``j`` of ``trips`` (see the module)."""
    t = _lane_iteration(r, j, trips, right)
    active = (t >= 0) & (t < r.length)
    return active if mask is None else active & np.asarray(mask, dtype=bool)


def batch_lanes_item(r, j, trips, right):
    """The loop variable of every example in batch iteration ``j`` (clamped into the
    example's own range where it is inactive)."""
    t = np.clip(_lane_iteration(r, j, trips, right), 0, np.maximum(r.length - 1, 0))
    return r.start + t * r.step
