"""Rearranging and masking (``np.flip``, ``np.roll``, ``np.triu``/``tril``), counting and
rounding, as plain Python the jit compiles."""
import numpy as np

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


for _fn, _code in ((np.flip, flip), (np.roll, roll), (np.triu, triu), (np.tril, tril),
                   (np.count_nonzero, count_nonzero), (np.around, around), (np.round, around)):
    definline(_fn, code=_code, modes=("jit",))
definline(_band, modes=("jit",))
