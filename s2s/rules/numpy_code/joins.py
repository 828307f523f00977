"""Joining arrays (``np.concatenate``, ``np.stack``, ``np.hstack``, ``np.vstack``) as plain
Python the jit compiles.  The arrays are a tuple or list of arrays of one dtype and rank.
(Their cotangents, a tuple of pieces, are a lowering: ``backend/llvm/derivs/pieces.py``.)"""
import numpy as np

from ..registry import definline


def _joined(arrays, axis):
    """``np.concatenate(arrays, axis)`` for a constant ``axis``: each array's slab
    written into the result moved so that ``axis`` comes first."""
    first = np.moveaxis(arrays[0], axis, 0)  # numpy's AxisError for an axis out of range
    total = 0
    for k in range(len(arrays)):
        moved = np.moveaxis(arrays[k], axis, 0)
        if moved.shape[1:] != first.shape[1:]:
            raise ValueError("all the input array dimensions except for the concatenation "
                             "axis must match exactly")
        total += moved.shape[0]
    res = np.empty((total,) + first.shape[1:], dtype=first.dtype)
    at = 0
    for k in range(len(arrays)):
        moved = np.moveaxis(arrays[k], axis, 0)
        res[at:at + moved.shape[0]] = moved
        at += moved.shape[0]
    return np.moveaxis(res, 0, axis)


def _joined_flat(arrays):
    """``np.concatenate(arrays, axis=None)``: the flattened arrays one after another."""
    total = 0
    for k in range(len(arrays)):
        total += arrays[k].size
    res = np.empty(total, dtype=arrays[0].dtype)
    at = 0
    for k in range(len(arrays)):
        res[at:at + arrays[k].size] = np.ravel(arrays[k])
        at += arrays[k].size
    return res


def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """The arrays joined along ``axis`` (flattened first for None)."""
    if axis is None:
        return _joined_flat(arrays)
    return _joined(arrays, axis)

def stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """The arrays (of one shape) stacked along a new ``axis`` of the result."""
    first = arrays[0]
    res = np.empty((len(arrays),) + first.shape, dtype=first.dtype)
    for k in range(len(arrays)):
        if arrays[k].shape != first.shape:
            raise ValueError("all input arrays must have the same shape")
        res[k] = arrays[k]
    return np.moveaxis(res, 0, axis)  # numpy's AxisError for an axis out of range


def vstack(tup, dtype=None, casting="same_kind"):
    """The arrays, each at least 2-D (a 1-D one as a row), joined along the first axis."""
    first = np.atleast_2d(tup[0])
    total = 0
    for k in range(len(tup)):
        x = np.atleast_2d(tup[k])
        if x.shape[1:] != first.shape[1:]:
            raise ValueError("all the input array dimensions except for the concatenation "
                             "axis must match exactly")
        total += x.shape[0]
    res = np.empty((total,) + first.shape[1:], dtype=first.dtype)
    at = 0
    for k in range(len(tup)):
        x = np.atleast_2d(tup[k])
        res[at:at + x.shape[0]] = x
        at += x.shape[0]
    return res


def hstack(tup, dtype=None, casting="same_kind"):
    """The arrays joined along their second axis (the first for 1-D arrays).  Arrays of
    1 or 2 dimensions (their last axis); 3 or more raise ``NotImplementedError``."""
    if tup[0].ndim > 2:
        raise NotImplementedError("s2s.jit: np.hstack of arrays with 3 or more dimensions")
    return _joined(tup, -1)


for _fn, _code in ((np.concatenate, concatenate), (np.stack, stack), (np.vstack, vstack),
                   (np.hstack, hstack)):
    definline(_fn, code=_code, modes=("jit",))
definline(_joined, _joined_flat, modes=("jit",))
