"""Run-time helper that keeps numpy's value semantics of reads in batched code
(``s2s/batch/value_reads.py`` decides where it is needed).

Unbatched, ``u[i]`` of a 1-D array is a number: a *value* that a later
``u[i] = w`` leaves alone.  Batched, the same read is the column ``u[:, i]``,
a *view* of the batched array that such a write would change.  A row read
``M[i]`` of a 2-D array is a view in both worlds, so it must stay one.
"""
from __future__ import annotations

import numpy as np


def batch_value(r, source, index=None):
    """Batched read ``r`` of batched ``source`` (at the batched ``index``, when it is a
    read ``source[index]``) with numpy's per-example semantics: when ``source`` is an
    array, an ``r`` of rank 1 (one number per example) is copied out of the array it
    views, unless ``index`` holds an ``...`` (``u[0, ...]`` is a 0-d view in numpy); of
    higher rank (each example an array: a view unbatched too) it is returned as it is,
    as is an item of a list or tuple (Python's items are shared).  Mathematically the
    identity."""
    if isinstance(index, tuple) and any(p is Ellipsis for p in index):
        return r
    if isinstance(source, np.ndarray) and isinstance(r, np.ndarray) and r.ndim == 1 \
            and r.base is not None:
        return r.copy()
    return r


def batch_gathered_value(r, message, index=None):
    """Batched read ``r`` gathered at an index that differs per example (a new array),
    from an array written in place while ``r`` is used: ``r`` itself when each example
    read a number (a value, as in numpy) or read with an integer array or a mask in its
    ``index`` (numpy's advanced indexing: a copy too); raises
    ``BatchingRuntimeError(message)`` when each example read an array with integers and
    slices only, which numpy would give as a view of the example's array and a gather
    cannot.  A part of ``index`` that is an array whose first axis is the batch is one
    integer per example (``batching._gather_index``'s reading), so it is an integer
    array per example from two axes on."""
    if isinstance(r, np.ndarray) and r.ndim >= 2 and not _advanced_per_example(index, len(r)):
        from .batching import BatchingRuntimeError
        raise BatchingRuntimeError(message)
    return r


def _advanced_per_example(index, n) -> bool:
    for part in index if isinstance(index, tuple) else (index,):
        if isinstance(part, (list, np.ndarray)):
            part = np.asarray(part)
            batched = part.ndim >= 1 and part.shape[0] == n
            if part.dtype == bool or part.ndim - (1 if batched else 0) >= 1:
                return True
    return False
