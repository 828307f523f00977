"""Rearranging and masking (``np.flip``, ``np.roll``, ``np.triu``/``tril``), counting and
rounding, as plain Python the jit compiles."""
import numpy as np

import s2s_runtime as rt

from ..registry import definline
from .rows import rows, unrows


def flip(m, axis=None):
    """``m`` reversed along ``axis`` (every axis for None: the reversed flat order)."""
    if axis is None:
        return np.ravel(m)[::-1].reshape(m.shape)
    return np.moveaxis(np.moveaxis(m, axis, 0)[::-1], 0, axis)


def roll(a, shift, axis=None):
    """``a`` shifted by ``shift`` along ``axis`` with wrap-around (flat for None)."""
    x = rows(a, axis)
    res = np.empty_like(x)
    n = x.shape[1]
    for j in range(x.shape[0]):
        for i in range(n):
            res[j, (i + shift) % n] = x[j, i]
    if axis is None:
        return res.reshape(a.shape)
    return np.moveaxis(res.reshape(np.moveaxis(a, axis, -1).shape), -1, axis)


def _band(m, k, upper):
    """``m`` with the elements below (``upper``) or above diagonal ``k`` of its last two
    axes zeroed."""
    x = np.copy(m).reshape(-1, m.shape[-2], m.shape[-1])
    for b in range(x.shape[0]):
        for i in range(x.shape[1]):
            for j in range(x.shape[2]):
                if (j - i < k) if upper else (j - i > k):
                    x[b, i, j] = 0
    return x.reshape(m.shape)


def triu(m, k=0):
    """The upper triangle of ``m`` (last two axes), from diagonal ``k`` on."""
    return _band(m, k, True)


def tril(m, k=0):
    """The lower triangle of ``m`` (last two axes), up to diagonal ``k``."""
    return _band(m, k, False)


def count_nonzero(a, axis=None, keepdims=False):
    """How many elements of ``a`` are not zero (along ``axis``)."""
    return np.sum(a != 0, axis=axis)


def around(a, decimals=0, out=None):
    """``a`` rounded half to even at ``decimals`` decimals, as numpy computes it
    (``rint(a * 10**decimals) / 10**decimals``; negative ``decimals`` divide first)."""
    if decimals >= 0:
        scale = 10.0 ** decimals
        return np.rint(a * scale) / scale
    scale = 10.0 ** (-decimals)
    return np.rint(a / scale) * scale


def repeat(a, repeats, axis=None):
    """Each element repeated ``repeats`` times along ``axis`` (of the flat array for
    None); ``repeats`` one integer."""
    if repeats < 0:
        raise ValueError("negative dimensions are not allowed")
    x = rows(a, axis)
    n = x.shape[1]
    res = np.empty((x.shape[0], n * repeats), dtype=x.dtype)
    for j in range(x.shape[0]):
        for i in range(n):
            for t in range(repeats):
                res[j, i * repeats + t] = x[j, i]
    if axis is None:
        return res.reshape(-1)
    moved = np.moveaxis(a, axis, -1)
    return np.moveaxis(res.reshape(moved.shape[:-1] + (n * repeats,)), -1, axis)


def repeat_vjp(g, a, repeats, axis=None):
    """``a_bar_i`` = the sum of ``g`` over the ``repeats`` copies of ``a_i``."""
    x = rows(a, axis)
    gg = rows(g, axis)
    res = np.zeros((x.shape[0], x.shape[1]))
    for j in range(x.shape[0]):
        for i in range(x.shape[1]):
            for t in range(repeats):
                res[j, i] += gg[j, i * repeats + t]
    if axis is None:
        return res.reshape(a.shape)
    return unrows(res, a, axis)


def broadcast_to(array, shape, subok=False):
    """``array`` broadcast to ``shape`` (a tuple), as a new array (numpy returns a
    read-only view: the values are the same)."""
    res = np.zeros(shape, dtype=array.dtype) + array
    if res.shape != shape:
        raise ValueError("operands could not be broadcast together with the requested shape")
    return res


def nonzero(a):
    """The indices of the nonzero elements, as a tuple of one index array (1-D arrays;
    other ranks raise ``NotImplementedError``)."""
    if a.ndim != 1:
        raise NotImplementedError("s2s.jit: np.nonzero of an array that is not 1-D")
    flat = np.ravel(a)  # (typed for every rank: the check above refuses the others)
    count = 0
    for i in range(flat.shape[0]):
        if flat[i] != 0:
            count += 1
    idx = np.empty(count, dtype=np.int64)
    k = 0
    for i in range(flat.shape[0]):
        if flat[i] != 0:
            idx[k] = i
            k += 1
    return (idx,)


for _fn, _code in ((np.repeat, repeat), (rt.repeat_vjp, repeat_vjp),
                   (np.broadcast_to, broadcast_to), (np.nonzero, nonzero), (np.flip, flip), (np.roll, roll), (np.triu, triu), (np.tril, tril),
                   (np.count_nonzero, count_nonzero), (np.around, around), (np.round, around)):
    definline(_fn, code=_code, modes=("jit",))
definline(_band, modes=("jit",))
