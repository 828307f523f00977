"""numpy functions the LLVM backend compiles from plain Python (``definline(..., code=)``).

Each function here computes what its numpy namesake computes -- values, dtype, shape
and the exception numpy raises for bad input -- with loops, indexing and the numpy
calls the jit lowers itself.  Its record says ``inline`` for the ``jit`` mode only: the
jit reads it where it has no lowering of its own (``passes/helpers.py``), so
``s2s.jit(f)`` compiles user code that calls ``np.cumsum``, and ``s2s.jit(s2s.grad(f))``
compiles the derivative templates of ``np.cumsum`` (which call ``np.cumsum`` and
``np.flip`` again) the same way.  Derivatives and batching stay the numpy function's
own rules; the Python emitter still calls numpy.

Conventions that keep the code compilable: an ``axis`` parameter is never reassigned
(the jit folds a constant parameter only while it has one value), work along an axis
happens on ``np.moveaxis(a, axis, -1)`` (a view) flattened to rows, and arrays are made
with ``np.empty``/``np.empty_like`` (the checked allocation path: numpy's
``MemoryError``/``ValueError`` for sizes it refuses).  The bodies call numpy only:
s2s reads no helper of its own package.
"""
import numpy as np

import s2s_runtime as rt

from .registry import definline


def _running(a, axis, prod):
    """Running sums (products) along ``axis``: rows of ``np.moveaxis(a, axis, -1)``."""
    x = _rows(a, axis)
    res = np.empty_like(x)
    n = x.shape[1]
    for j in range(x.shape[0]):
        if n > 0:
            res[j, 0] = x[j, 0]
        for i in range(1, n):
            if prod:
                res[j, i] = res[j, i - 1] * x[j, i]
            else:
                res[j, i] = res[j, i - 1] + x[j, i]
    if axis is None:
        return res.reshape(-1)
    return np.moveaxis(res.reshape(np.moveaxis(a, axis, -1).shape), -1, axis)


def cumsum(a, axis=None, dtype=None, out=None):
    """Running sums along ``axis`` (the flattened array for None)."""
    return _running(a, axis, False)


def cumprod(a, axis=None, dtype=None, out=None):
    """Running products along ``axis`` (the flattened array for None)."""
    return _running(a, axis, True)


def cumsum_vjp(g, a, axis=None):
    """``a_bar_i = sum_{k >= i} g_k`` along ``axis`` (flat for None), shaped like ``a``."""
    gg = _rows(g, axis)
    res = np.empty_like(gg)
    n = gg.shape[1]
    for j in range(gg.shape[0]):
        acc = 0.0
        for i in range(n - 1, -1, -1):
            acc = acc + gg[j, i]
            res[j, i] = acc
    if axis is None:
        return res.reshape(a.shape)
    return _unrows(res, a, axis)


def cumprod_vjp(g, a, axis=None):
    """``a_bar_i = sum_{k >= i} g_k prod_{j <= k, j != i} a_j = P_{i-1} R_i`` with the
    prefix product ``P_{i-1} = prod_{j < i} a_j`` and ``R_i = g_i + a_{i+1} R_{i+1}``:
    exact where ``a`` has zeros (no division)."""
    x = _rows(a, axis)
    gg = _rows(g, axis)
    res = np.empty_like(gg)
    n = x.shape[1]
    for j in range(x.shape[0]):
        r = 0.0
        for i in range(n - 1, -1, -1):
            if i + 1 < n:
                r = gg[j, i] + x[j, i + 1] * r
            else:
                r = gg[j, i]
            res[j, i] = r
        p = 1.0
        for i in range(n):
            res[j, i] = res[j, i] * p
            p = p * x[j, i]
    if axis is None:
        return res.reshape(a.shape)
    return _unrows(res, a, axis)


def cumprod_jvp(t, ans, a, axis=None):
    """The tangent of ``cumprod``: ``d_0 = t_0``, ``d_k = d_{k-1} a_k + P_{k-1} t_k``
    (``P`` the running product ``ans``)."""
    x = _rows(a, axis)
    tt = _rows(t, axis)
    p = _rows(ans, axis)
    res = np.empty_like(tt)
    n = x.shape[1]
    for j in range(x.shape[0]):
        d = 0.0
        for k in range(n):
            if k == 0:
                d = tt[j, 0]
            else:
                d = d * x[j, k] + p[j, k - 1] * tt[j, k]
            res[j, k] = d
    return _unrows(res, a, axis)


def flip(m, axis=None):
    """``m`` reversed along ``axis`` (every axis for None: the reversed flat order)."""
    if axis is None:
        return np.ravel(m)[::-1].reshape(m.shape)
    return np.moveaxis(np.moveaxis(m, axis, 0)[::-1], 0, axis)


def roll(a, shift, axis=None):
    """``a`` shifted by ``shift`` along ``axis`` with wrap-around (flat for None)."""
    x = _rows(a, axis)
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


def _arg_best(a, axis, largest):
    """The index of the first largest (smallest) element along ``axis``: NaN counts as
    the extreme, as in numpy."""
    x = _rows(a, axis)
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


def argmax(a, axis=None, out=None, keepdims=False):
    """The index of the first maximum along ``axis`` (of the flat array for None)."""
    return _arg_best(a, axis, True)


def argmin(a, axis=None, out=None, keepdims=False):
    """The index of the first minimum along ``axis`` (of the flat array for None)."""
    return _arg_best(a, axis, False)


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


def searchsorted(a, v, side="left", sorter=None):
    """Where ``v``'s elements go in the sorted 1-D ``a`` (first such place for
    ``side="left"``, last for ``"right"``): a binary search per element."""
    if side != "left" and side != "right":
        raise ValueError("side must be 'left' or 'right'")
    vv = np.ravel(v)
    res = np.empty(vv.shape[0], dtype=np.int64)
    n = a.shape[0]
    for j in range(vv.shape[0]):
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) // 2
            if (a[mid] < vv[j]) if side == "left" else (a[mid] <= vv[j]):
                lo = mid + 1
            else:
                hi = mid
        res[j] = lo
    return res.reshape(v.shape)


def _rows(a, axis):
    """``a`` as rows along ``axis`` (``np.moveaxis(a, axis, -1)`` flattened to 2-D; the
    flat array as one row for None)."""
    if axis is None:
        return np.ravel(a).reshape(1, -1)
    x = np.moveaxis(a, axis, -1)  # numpy's AxisError for an axis out of range
    n = x.shape[-1]
    return x.reshape(a.size // n if n > 0 else 0, n)


def _unrows(res, a, axis):
    """Rows made by ``_rows(a, axis)`` back in ``a``'s layout (flat for None)."""
    if axis is None:
        return res.reshape(-1)
    return np.moveaxis(res.reshape(np.moveaxis(a, axis, -1).shape), -1, axis)


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
    return _unrows(_order(_rows(a, axis)), a, axis)


def sort(a, axis=-1, kind=None, order=None, stable=None):
    """``a`` sorted along ``axis`` (flat for None), NaN last."""
    x = _rows(a, axis)
    perm = _order(x)
    res = np.empty_like(x)
    for j in range(x.shape[0]):
        for i in range(x.shape[1]):
            res[j, i] = x[j, perm[j, i]]
    return _unrows(res, a, axis)


def sort_vjp(g, a, axis=-1):
    """``a_bar[perm[i]] = g[i]`` along ``axis``, ``perm`` the stable sort permutation."""
    x = _rows(a, axis)
    perm = _order(x)
    gg = _rows(g, axis)
    res = np.empty_like(x)
    for j in range(x.shape[0]):
        for i in range(x.shape[1]):
            res[j, perm[j, i]] = gg[j, i]
    if axis is None:
        return res.reshape(a.shape)
    return _unrows(res, a, axis)


def sort_jvp(t, a, axis=-1):
    """``t`` moved by the stable sort permutation of ``a`` along ``axis``."""
    x = _rows(a, axis)
    perm = _order(x)
    tt = _rows(t, axis)
    res = np.empty_like(tt)
    for j in range(x.shape[0]):
        for i in range(x.shape[1]):
            res[j, i] = tt[j, perm[j, i]]
    return _unrows(res, a, axis)


for _fn, _code in ((np.cumsum, cumsum), (np.cumprod, cumprod), (np.flip, flip),
                   (np.roll, roll), (np.triu, triu), (np.tril, tril), (np.argmax, argmax),
                   (np.argmin, argmin), (np.count_nonzero, count_nonzero),
                   (np.around, around), (np.round, around),
                   (np.searchsorted, searchsorted), (np.sort, sort), (np.argsort, argsort),
                   (rt.sort_vjp, sort_vjp), (rt.sort_jvp, sort_jvp),
                   (rt.cumsum_vjp, cumsum_vjp), (rt.cumprod_vjp, cumprod_vjp),
                   (rt.cumprod_jvp, cumprod_jvp)):
    definline(_fn, code=_code, modes=("jit",))

# the private parts the functions above call: read as code in turn
definline(_running, _band, _arg_best, _rows, _unrows, _order, modes=("jit",))
