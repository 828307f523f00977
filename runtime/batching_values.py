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


def batch_gathered_value(r, message):
    """Batched read ``r`` gathered at an index that differs per example (a new array),
    from an array written in place while ``r`` is used: ``r`` itself when each example
    read a number (a value, as in numpy); raises ``BatchingRuntimeError(message)`` when
    each example read an array, which numpy would give as a view of the example's array
    and a gather cannot."""
    if isinstance(r, np.ndarray) and r.ndim >= 2:
        from .batching import BatchingRuntimeError
        raise BatchingRuntimeError(message)
    return r
