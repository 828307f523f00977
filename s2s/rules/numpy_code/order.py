"""Order statistics and searches (``np.sort``, ``np.argsort``, ``np.argmax``/``argmin``,
``np.searchsorted``...) and the sort's derivative helpers, as plain Python the jit compiles."""
import numpy as np

import s2s_runtime as rt

from ..registry import definline
from .rows import rows, unrows


def _arg_best(a, axis, largest):
    """The index of the first largest (smallest) element along ``axis``: NaN counts as
    the extreme, as in numpy."""
    x = rows(a, axis)
    if x.shape[1] == 0:
        raise ValueError("attempt to get argmax of an empty sequence")
    res = np.zeros(x.shape[0], dtype=np.int64)
    for j in range(x.shape[0]):
        best = x[j, 0]
        at = 0
        for i in range(1, x.shape[1]):
            v = x[j, i]
            if best == best and (v != v or ((v > best) if largest else (v < best))):
                best = v
                at = i
        res[j] = at
    if axis is None:
        return res[0]
    return res.reshape(np.moveaxis(a, axis, -1).shape[:-1])


def _kept_axes(r, a, axis, keepdims):
    """``r``, the result of a reduction of ``a`` along ``axis``, with ``keepdims``: the
    reduced axes kept with length 1."""
    if not keepdims:
        return r
    if axis is None:
        return np.reshape(np.asarray(r), (1,) * np.ndim(a))
    return np.expand_dims(r, axis)


def argmax(a, axis=None, out=None, keepdims=False):
    """The index of the first maximum along ``axis`` (of the flat array for None)."""
    return _kept_axes(_arg_best(a, axis, True), a, axis, keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    """The index of the first minimum along ``axis`` (of the flat array for None)."""
    return _kept_axes(_arg_best(a, axis, False), a, axis, keepdims)


def searchsorted(a, v, side="left", sorter=None):
    """Where ``v``'s elements go in the sorted 1-D ``a`` (first such place for
    ``side="left"``, last for ``"right"``): a binary search per element."""
    if side != "left" and side != "right":
        raise ValueError("side must be 'left' or 'right'")
    if np.ndim(v) == 0:  # a number: numpy's integer
        return _insertion_point(a, v, side == "left")
    vv = np.ravel(v)
    res = np.empty(vv.shape[0], dtype=np.int64)
    for j in range(vv.shape[0]):
        res[j] = _insertion_point(a, vv[j], side == "left")
    return res.reshape(v.shape)


def digitize(x, bins, right=False):
    """The bin of each ``x``: ``searchsorted`` of the monotonic ``bins`` (numpy's
    ``ValueError`` for bins that are neither increasing nor decreasing; decreasing bins
    count from the end)."""
    up = True
    down = True
    for i in range(1, bins.shape[0]):
        if bins[i] < bins[i - 1]:
            up = False
        if bins[i] > bins[i - 1]:
            down = False
    if not up and not down:
        raise ValueError("bins must be monotonically increasing or decreasing")
    if up:
        if right:
            return np.searchsorted(bins, x, side="left")
        return np.searchsorted(bins, x, side="right")
    if right:
        return bins.shape[0] - np.searchsorted(bins[::-1], x, side="left")
    return bins.shape[0] - np.searchsorted(bins[::-1], x, side="right")


def isin(element, test_elements, assume_unique=False, invert=False, kind=None):
    """Whether each element of ``element`` equals one of ``test_elements`` (negated
    where ``invert``), in ``element``'s shape."""
    found = np.any(np.expand_dims(element, -1) == np.ravel(test_elements), axis=-1)
    if invert:
        return ~found
    return found


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have one shape and equal elements (NaNs equal where
    ``equal_nan``), as a Python bool."""
    if np.shape(a1) != np.shape(a2):
        return False
    if equal_nan:
        return bool(np.all((a1 == a2) | ((a1 != a1) & (a2 != a2))))
    return bool(np.all(a1 == a2))


def _insertion_point(a, x, left):
    """The first index of the sorted 1-D ``a`` where ``x`` may go (``left``: before equal
    elements, else after them): a binary search."""
    lo = 0
    hi = a.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if (a[mid] < x) if left else (a[mid] <= x):
            lo = mid + 1
        else:
            hi = mid
    return lo


def _order(x):
    """The stable ascending sort permutation of each row of the 2-D ``x`` (NaN last, as
    numpy sorts): a bottom-up merge sort."""
    m = x.shape[0]
    n = x.shape[1]
    perm = np.empty((m, n), dtype=np.int64)
    tmp = np.empty(n, dtype=np.int64)
    for j in range(m):
        for i in range(n):
            perm[j, i] = i
        width = 1
        while width < n:
            lo = 0
            while lo < n:
                mid = min(lo + width, n)
                hi = min(lo + 2 * width, n)
                p = lo
                q = mid
                for k in range(lo, hi):
                    take_left = q >= hi
                    if p < mid and q < hi:
                        u = x[j, perm[j, p]]
                        v = x[j, perm[j, q]]
                        # v < u, NaN largest: the right element goes first only then
                        take_left = not ((v < u) or (u != u and v == v))
                    if p < mid and take_left:
                        tmp[k] = perm[j, p]
                        p += 1
                    else:
                        tmp[k] = perm[j, q]
                        q += 1
                lo = hi
            for k in range(n):
                perm[j, k] = tmp[k]
            width = 2 * width
    return perm


def argsort(a, axis=-1, kind=None, order=None, stable=None):
    """The indices that sort ``a`` along ``axis`` (flat for None); stable (ties keep
    their order: what ``kind="stable"`` gives)."""
    return unrows(_order(rows(a, axis)), a, axis)


def sort(a, axis=-1, kind=None, order=None, stable=None):
    """``a`` sorted along ``axis`` (flat for None), NaN last."""
    x = rows(a, axis)
    perm = _order(x)
    res = np.empty_like(x)
    for j in range(x.shape[0]):
        for i in range(x.shape[1]):
            res[j, i] = x[j, perm[j, i]]
    return unrows(res, a, axis)


def sort_vjp(g, a, axis=-1):
    """``a_bar[perm[i]] = g[i]`` along ``axis``, ``perm`` the stable sort permutation."""
    x = rows(a, axis)
    perm = _order(x)
    gg = rows(g, axis)
    res = np.empty_like(x)
    for j in range(x.shape[0]):
        for i in range(x.shape[1]):
            res[j, perm[j, i]] = gg[j, i]
    if axis is None:
        return res.reshape(a.shape)
    return unrows(res, a, axis)


def sort_jvp(t, a, axis=-1):
    """``t`` moved by the stable sort permutation of ``a`` along ``axis``."""
    x = rows(a, axis)
    perm = _order(x)
    tt = rows(t, axis)
    res = np.empty_like(tt)
    for j in range(x.shape[0]):
        for i in range(x.shape[1]):
            res[j, i] = tt[j, perm[j, i]]
    return unrows(res, a, axis)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The middle of the sorted values along ``axis`` (all values for None), the mean of
    the two middle ones for an even count; NaN where a NaN is among them."""
    s = np.sort(a, axis=axis)  # NaN last
    x = rows(s, axis)
    n = x.shape[1]
    if n == 0:
        raise ValueError("s2s.jit: the median of an empty array")
    res = np.empty(x.shape[0])
    for j in range(x.shape[0]):
        if x[j, n - 1] != x[j, n - 1]:
            res[j] = x[j, n - 1]
        elif n % 2 == 1:
            res[j] = x[j, n // 2]
        else:
            res[j] = 0.5 * (x[j, n // 2 - 1] + x[j, n // 2])
    if axis is None:
        return res[0]
    return res.reshape(np.moveaxis(a, axis, -1).shape[:-1])


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           equal_nan=True):
    """The sorted distinct values of the flattened ``ar`` (NaNs as one)."""
    s = np.sort(ar, axis=None)
    n = s.shape[0]
    count = 0
    for i in range(n):
        if i == 0 or (s[i] != s[i - 1] and not (s[i] != s[i] and s[i - 1] != s[i - 1])):
            count += 1
    res = np.empty(count, dtype=s.dtype)
    k = 0
    for i in range(n):
        if i == 0 or (s[i] != s[i - 1] and not (s[i] != s[i] and s[i - 1] != s[i - 1])):
            res[k] = s[i]
            k += 1
    return res


for _fn, _code in ((np.median, median), (np.unique, unique), (np.argmax, argmax), (np.argmin, argmin), (np.searchsorted, searchsorted),
                   (np.sort, sort), (np.argsort, argsort), (rt.sort_vjp, sort_vjp),
                   (rt.sort_jvp, sort_jvp), (np.digitize, digitize), (np.isin, isin),
                   (np.array_equal, array_equal)):
    definline(_fn, code=_code, modes=("jit", "vmap"))
definline(_arg_best, _kept_axes, _order, _insertion_point, modes=("jit", "vmap"))
