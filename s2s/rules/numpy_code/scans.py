"""Running sums and products (``np.cumsum``, ``np.cumprod``) and their derivative helpers,
as plain Python the jit compiles."""
import numpy as np

import s2s_runtime as rt

from ..registry import definline
from .rows import rows, unrows


def _running(a, axis, prod):
    """Running sums (products) along ``axis``: rows of ``np.moveaxis(a, axis, -1)``."""
    x = rows(a, axis)
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


def _cumulative(x, axis, include_initial, prod):
    """numpy 2's ``np.cumulative_sum`` (``prod``: ``cumulative_prod``) of an array of one
    or more axes: the running sums (products) along ``axis`` -- which only a 1-D ``x``
    may leave out -- after a leading 0 (1) where ``include_initial``."""
    if axis is None and np.ndim(x) != 1:
        raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                         "is required.")
    if axis is None:
        res = _running(x, 0, prod)
        first = np.zeros(1, dtype=res.dtype) if not prod else np.ones(1, dtype=res.dtype)
        if include_initial:
            return np.concatenate((first, res))
        return res
    res = _running(x, axis, prod)
    if not include_initial:
        return res
    if prod:
        first = np.expand_dims(np.ones_like(np.sum(res, axis=axis)), axis)
    else:
        first = np.expand_dims(np.zeros_like(np.sum(res, axis=axis)), axis)
    return np.concatenate((first, res), axis=axis)


def _cumulative_of(x, axis, dtype, include_initial, prod):
    """``_cumulative`` of ``x`` as numpy 2 reads it: a number as a 1-D array, cast to
    ``dtype`` first (numpy accumulates in ``dtype``: the same sums)."""
    a = np.atleast_1d(x)
    if dtype is not None:
        return _cumulative(np.astype(a, dtype), axis, include_initial, prod)
    return _cumulative(a, axis, include_initial, prod)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """``np.cumulative_sum``: running sums along ``axis`` in ``dtype`` (see
    ``_cumulative``)."""
    if out is not None:
        raise NotImplementedError("s2s: np.cumulative_sum with out=")
    return _cumulative_of(x, axis, dtype, include_initial, False)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """``np.cumulative_prod``: running products along ``axis`` in ``dtype`` (see
    ``_cumulative``)."""
    if out is not None:
        raise NotImplementedError("s2s: np.cumulative_prod with out=")
    return _cumulative_of(x, axis, dtype, include_initial, True)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Running sums with NaNs counted as zero (flat for ``axis=None``)."""
    return _running(np.where(a != a, 0, a), axis, False)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Running products with NaNs counted as one (flat for ``axis=None``)."""
    return _running(np.where(a != a, 1, a), axis, True)


def _kind_rank(dtype):
    """The order of numpy's dtype kinds under ``same_kind`` casting: bool 0, unsigned 1,
    signed 2, floating 3, complex 4 (a cast may go up, but not from signed to unsigned)."""
    if np.issubdtype(dtype, np.complexfloating):
        return 4
    if np.issubdtype(dtype, np.floating):
        return 3
    if np.issubdtype(dtype, np.signedinteger):
        return 2
    if np.issubdtype(dtype, np.unsignedinteger):
        return 1
    return 0


def _ends(values, dtype, which):
    """``np.ediff1d``'s ``to_begin``/``to_end`` (``which``): flattened, in ``dtype``, with
    numpy's ``TypeError`` where that is not a ``same_kind`` cast (a complex end of a
    real array, a float end of an integer one)."""
    v = np.asarray(values)
    have = _kind_rank(v.dtype)
    want = _kind_rank(dtype)
    if have > want or (have == 2 and want == 1):
        raise TypeError(f"dtype of `{which}` must be compatible with input `ary` under the "
                        "`same_kind` rule.")
    return np.ravel(np.astype(v, dtype))


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of consecutive elements of the flattened ``ary``, after
    ``to_begin`` and before ``to_end`` (each flattened, in ``ary``'s dtype)."""
    d = np.diff(np.ravel(ary))
    if to_begin is not None:
        d = np.concatenate((_ends(to_begin, d.dtype, "to_begin"), d))
    if to_end is not None:
        d = np.concatenate((d, _ends(to_end, d.dtype, "to_end")))
    return d


def scan_slots(x, axis=None, include_initial=False):
    """The positions of ``np.cumulative_sum(x, axis, include_initial)`` that come from
    ``x``: ``first, ..., first + n - 1`` (``first`` 1 after an initial slot)."""
    first = 0
    if include_initial:
        first = 1
    if axis is None:
        return np.arange(first, first + np.size(x))
    return np.arange(first, first + np.shape(x)[axis])


def cumsum_vjp(g, a, axis=None):
    """``a_bar_i = sum_{k >= i} g_k`` along ``axis`` (flat for None), shaped like ``a``."""
    gg = rows(g, axis)
    res = np.empty_like(gg)
    n = gg.shape[1]
    for j in range(gg.shape[0]):
        acc = 0.0
        for i in range(n - 1, -1, -1):
            acc = acc + gg[j, i]
            res[j, i] = acc
    if axis is None:
        return res.reshape(a.shape)
    return unrows(res, a, axis)


def cumprod_vjp(g, a, axis=None):
    """``a_bar_i = sum_{k >= i} g_k prod_{j <= k, j != i} a_j = P_{i-1} R_i`` with the
    prefix product ``P_{i-1} = prod_{j < i} a_j`` and ``R_i = g_i + a_{i+1} R_{i+1}``:
    exact where ``a`` has zeros (no division)."""
    x = rows(a, axis)
    gg = rows(g, axis)
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
    return unrows(res, a, axis)


def cumprod_jvp(t, ans, a, axis=None):
    """The tangent of ``cumprod``: ``d_0 = t_0``, ``d_k = d_{k-1} a_k + P_{k-1} t_k``
    (``P`` the running product ``ans``)."""
    x = rows(a, axis)
    tt = rows(t, axis)
    p = rows(ans, axis)
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
    return unrows(res, a, axis)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th differences ``x[i + 1] - x[i]`` along ``axis`` (``prepend``/``append``
    are not compiled: numpy's ``_NoValue`` defaults only)."""
    if prepend is not None or append is not None:
        raise NotImplementedError("s2s.jit: np.diff with prepend= or append=")
    if n < 0:
        raise ValueError("order must be non-negative")
    x = rows(a, axis)
    length = x.shape[1]
    buf = np.copy(x)
    for _ in range(n):
        for j in range(buf.shape[0]):
            for i in range(length - 1):
                buf[j, i] = buf[j, i + 1] - buf[j, i]
        if length > 0:
            length -= 1
    moved = np.moveaxis(a, axis, -1)
    res = np.copy(buf[:, :length]).reshape(moved.shape[:-1] + (length,))
    return np.moveaxis(res, -1, axis)


def diff_transpose(g, like, n=1, axis=-1):
    """The transpose of ``x -> np.diff(x, n, axis)``: ``n`` times ``-diff`` of ``g`` padded
    with a zero at both ends, ``(D^T h)_i = h_{i-1} - h_i`` (``h_{-1} = h_L = 0``)."""
    gg = rows(g, axis)
    length = gg.shape[1] + n
    buf = np.zeros((gg.shape[0], length))
    buf[:, :gg.shape[1]] = gg
    for step in range(n):
        size = gg.shape[1] + step  # entries of h now; D^T makes size + 1
        for j in range(buf.shape[0]):
            prev = 0.0
            for i in range(size + 1):
                cur = buf[j, i] if i < size else 0.0
                buf[j, i] = prev - cur
                prev = cur
    moved = np.moveaxis(like, axis, -1)
    return np.moveaxis(buf.reshape(moved.shape), -1, axis)


# cumprod's tangent has no derivative rules of its own: forward and reverse mode over it
# (``jacrev(jacfwd(f))``) read its recurrence too, bilinear in (the tangent, a, ans)
definline(rt.cumprod_jvp, code=cumprod_jvp, modes=("jit", "vmap", "jvp", "vjp"))
for _fn, _code in ((np.diff, diff), (np.cumsum, cumsum), (np.cumprod, cumprod), (rt.cumsum_vjp, cumsum_vjp),
                   (rt.cumprod_vjp, cumprod_vjp),
                   (rt.scan_slots, scan_slots), (np.nancumsum, nancumsum), (np.nancumprod, nancumprod), (np.ediff1d, ediff1d)):
    definline(_fn, code=_code, modes=("jit", "vmap"))
if hasattr(np, "cumulative_sum"):  # numpy >= 2.1
    definline(np.cumulative_sum, code=cumulative_sum, modes=("jit", "vmap"))
    definline(np.cumulative_prod, code=cumulative_prod, modes=("jit", "vmap"))
definline(_running, _cumulative, _cumulative_of, _ends, _kind_rank, modes=("jit", "vmap"))
definline(_running, diff_transpose, modes=("jit", "vmap"))
