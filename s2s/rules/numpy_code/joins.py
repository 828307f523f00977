"""Joining arrays (``np.concatenate``, ``np.stack``, ``np.hstack``, ``np.vstack``,
``np.column_stack``, ``np.dstack``) and splitting one (``np.split``, ``np.hsplit``,
``np.vsplit``, ``np.dsplit``; for the jit only, ``np.array_split`` and ``np.unstack``) as
plain Python the jit compiles and vmap batches.  The arrays are a tuple or list of arrays
of one dtype and rank.
(Their cotangents, a tuple of pieces, are a lowering: ``backend/llvm/derivs/pieces.py``;
the cotangent of a split into a list of pieces, ``split_vjp``, and the transpose of
``np.concatenate``'s cotangent are here, for the jit.)"""
import numpy as np

import s2s_runtime as rt

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


def column_stack(tup):
    """1-D arrays as the columns of a matrix; arrays of 2 or more dimensions joined along
    their second axis (the arrays of one rank)."""
    if tup[0].ndim == 1:
        return np.stack(tup, axis=1)
    return _joined(tup, 1)


def dstack(tup):
    """The arrays, each at least 3-D (``(N,)`` as ``(1, N, 1)``, ``(M, N)`` as ``(M, N,
    1)``), joined along the third axis."""
    if tup[0].ndim == 1:
        return np.stack(tup, axis=1).reshape((1, tup[0].shape[0], len(tup)))
    if tup[0].ndim == 2:
        return np.stack(tup, axis=2)
    return _joined(tup, 2)


def split(ary, indices_or_sections, axis=0):
    """``ary`` cut along ``axis`` into ``indices_or_sections`` equal parts (an integer;
    numpy's ``ValueError`` when they cannot be equal) or at the given indices (a tuple or
    list of integers), as a list of views."""
    moved = np.moveaxis(ary, axis, 0)  # numpy's AxisError for an axis out of range
    n = moved.shape[0]
    parts = []
    if isinstance(indices_or_sections, int):
        if indices_or_sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if n % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
        size = n // indices_or_sections
        for k in range(indices_or_sections):
            parts.append(np.moveaxis(moved[k * size:(k + 1) * size], 0, axis))
        return parts
    start = 0
    for k in range(len(indices_or_sections)):
        stop = indices_or_sections[k]
        parts.append(np.moveaxis(moved[start:stop], 0, axis))
        start = stop
    parts.append(np.moveaxis(moved[start:], 0, axis))
    return parts


def array_split(ary, indices_or_sections, axis=0):
    """``ary`` cut along ``axis`` into ``indices_or_sections`` parts of equal length (an
    integer; numpy's ``ValueError`` for fewer than one) or at the given indices (a tuple
    or list of integers: ``np.split``), as a list of views.  A compiled list holds arrays
    of one shape, so an integer that does not divide the length (numpy makes the first
    ``n % sections`` parts one longer) raises ``NotImplementedError``."""
    if not isinstance(indices_or_sections, (int, np.integer)):
        return np.split(ary, indices_or_sections, axis)
    if axis < -np.ndim(ary) or axis >= np.ndim(ary):
        raise IndexError("tuple index out of range")
    moved = np.moveaxis(ary, axis, 0)
    n = moved.shape[0]
    if indices_or_sections <= 0:
        raise ValueError("number sections must be larger than 0.")
    if n % indices_or_sections:
        raise NotImplementedError("s2s.jit: np.array_split into parts of unequal lengths (a "
                                  "compiled list holds arrays of one shape)")
    size = n // indices_or_sections
    parts = []
    for k in range(indices_or_sections):
        parts.append(np.moveaxis(moved[k * size:(k + 1) * size], 0, axis))
    return parts


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, in order, as new arrays (numpy's ``ValueError``
    for a number, its ``AxisError`` for an axis out of range).  numpy returns a tuple; the
    jit returns a list of them: their number is ``x``'s length along ``axis``, known only
    at run time, and a compiled tuple's length is part of its type."""
    if np.ndim(x) == 0:
        raise ValueError("Input array must be at least 1-d.")
    moved = np.moveaxis(x, axis, 0)  # numpy's AxisError for an axis out of range
    parts = []
    for k in range(moved.shape[0]):
        parts.append(np.copy(moved[k]))
    return parts


def hsplit(ary, indices_or_sections):
    """``np.split`` along the second axis (the first of a 1-D array)."""
    if np.ndim(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    if np.ndim(ary) > 1:
        return np.split(ary, indices_or_sections, 1)
    return np.split(ary, indices_or_sections, 0)


def vsplit(ary, indices_or_sections):
    """``np.split`` along the first axis of an array of 2 or more axes."""
    if np.ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return np.split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """``np.split`` along the third axis of an array of 3 or more axes."""
    if np.ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return np.split(ary, indices_or_sections, 2)


def split_vjp(gs, x, indices_or_sections, axis=0):
    """The cotangent of ``x`` for ``np.split(x, ...)`` given the pieces' cotangents ``gs``
    (a list, each piece's zeros filled in by ``unpack_vjp``): them joined back along
    ``axis``."""
    return np.concatenate(gs, axis=axis)


def concatenate_vjp_transpose(ct, g, xs, axis=0):
    """The transpose of splitting ``g`` into pieces shaped like ``xs`` (``np.concatenate``'s
    cotangent): the pieces ``ct`` joined back along ``axis`` (flat for None), shaped like
    ``g``."""
    return np.reshape(np.concatenate(ct, axis=axis), np.shape(g))


def append(arr, values, axis=None):
    """``arr`` and ``values`` joined along ``axis`` (both flattened for None)."""
    if axis is None:
        return np.concatenate((np.ravel(arr), np.ravel(values)))
    return np.concatenate((arr, values), axis=axis)


for _fn, _code in ((np.concatenate, concatenate), (np.stack, stack), (np.vstack, vstack),
                   (np.hstack, hstack), (np.column_stack, column_stack), (np.dstack, dstack),
                   (np.split, split), (np.append, append)):
    definline(_fn, code=_code, modes=("jit", "vmap"))
if hasattr(np, "row_stack"):  # numpy < 2.4: an alias of vstack
    definline(np.row_stack, code=vstack, modes=("jit", "vmap"))
definline(_joined, _joined_flat, modes=("jit", "vmap"))
for _fn, _code in ((np.hsplit, hsplit), (np.vsplit, vsplit), (np.dsplit, dsplit)):
    definline(_fn, code=_code, modes=("jit", "vmap"))
# the jit only: vmap batches them with rules of their own
definline(np.array_split, code=array_split, modes=("jit",))
definline(rt.split_vjp, code=split_vjp, modes=("jit",))
definline(rt.concatenate_vjp_transpose, code=concatenate_vjp_transpose, modes=("jit",))
if hasattr(np, "unstack"):  # numpy >= 2.1
    definline(np.unstack, code=unstack, modes=("jit",))
