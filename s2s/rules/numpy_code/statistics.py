"""Spread and NaN-skipping reductions (``np.var``, ``np.std``, ``np.ptp``, ``np.nansum``,
``np.nanmean``, ``np.nanmax``, ``np.nanmin``, ``np.nanvar``, ``np.nanstd``), covariance
and correlation matrices (``np.cov``, ``np.corrcoef``), quantiles by numpy's ``linear``
method (``np.quantile``, ``np.percentile``, their NaN-skipping forms, ``np.nanmedian``)
and the cotangent and tangent of the
variance, as plain Python the jit compiles from the reductions it lowers itself (one
axis, a tuple of axes or all, ``keepdims``).

``var`` of complex values is the mean of ``|a - mean|^2`` (real), as numpy's;
``correction=`` and ``where=`` are not compiled (refused by their errors).
"""
import numpy as np

import s2s_runtime as rt

from ..registry import definline
from .rows import rows


def _count(a, kept):
    """How many elements of ``a`` each element of ``kept`` (a reduction of ``a`` with
    ``keepdims``) stands for."""
    return a.size // kept.size if kept.size > 0 else 0


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """``sum((a - mean(a))**2) / (n - ddof)`` over ``axis`` (numpy's two passes)."""
    if dtype is not None or out is not None or mean is not None or correction is not None:
        raise NotImplementedError("s2s.jit: np.var with dtype=, out=, mean= or correction=")
    m = np.mean(a, axis=axis, keepdims=True)
    d = a - m
    return np.sum(np.real(d * np.conj(d)), axis=axis, keepdims=keepdims) / (_count(a, m) - ddof)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """``sqrt(var(a))``."""
    return np.sqrt(np.var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                          correction=correction))


def var_vjp(g, a, axis=None, ddof=0, keepdims=False, where=True, correction=None):
    """``a_bar = 2 g (a - mean(a)) / (n - ddof)`` (``g`` laid out as the kept reduction)."""
    if correction is not None:
        raise NotImplementedError("s2s.jit: the derivative of np.var with correction=")
    m = np.mean(a, axis=axis, keepdims=True)
    if axis is not None and not keepdims:  # the reduced axes put back, of length 1
        return np.reshape(g, m.shape) * 2.0 * np.conj(a - m) / (_count(a, m) - ddof)
    return g * 2.0 * np.conj(a - m) / (_count(a, m) - ddof)


def var_jvp(t, ans, a, axis=None, ddof=0, keepdims=False, where=True, correction=None):
    """``d var = 2 sum((a - mean(a)) t) / (n - ddof)`` (the ``mean(t)`` term sums to 0)."""
    if correction is not None:
        raise NotImplementedError("s2s.jit: the derivative of np.var with correction=")
    m = np.mean(a, axis=axis, keepdims=True)
    return 2.0 * np.sum(np.real(np.conj(a - m) * t), axis=axis, keepdims=keepdims) / \
        (_count(a, m) - ddof)


def ptp(a, axis=None, out=None, keepdims=False):
    """``max(a) - min(a)`` over ``axis``."""
    return np.max(a, axis=axis, keepdims=keepdims) - np.min(a, axis=axis, keepdims=keepdims)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """The sum with NaNs counted as zero."""
    return np.sum(np.where(a != a, 0, a), axis=axis, keepdims=keepdims)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """The product with NaNs counted as one."""
    return np.prod(np.where(a != a, 1, a), axis=axis, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """The mean of the values that are not NaN (NaN where there are none), in ``a``'s
    float dtype."""
    total = np.sum(np.where(a != a, 0, a), axis=axis, keepdims=keepdims)
    count = np.sum(a == a, axis=axis, keepdims=keepdims)
    if a.dtype == np.float32:
        return total / np.float32(count)
    return total / count


def _floating(a):
    return a.dtype == np.float64 or a.dtype == np.float32


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """The largest value that is not NaN (NaN where every value is)."""
    if not _floating(a):
        return np.max(a, axis=axis, keepdims=keepdims)
    big = np.max(np.where(a != a, -np.inf, a), axis=axis, keepdims=keepdims)
    return np.where(np.sum(a == a, axis=axis, keepdims=keepdims) == 0, np.nan, big)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """The smallest value that is not NaN (NaN where every value is)."""
    if not _floating(a):
        return np.min(a, axis=axis, keepdims=keepdims)
    small = np.min(np.where(a != a, np.inf, a), axis=axis, keepdims=keepdims)
    return np.where(np.sum(a == a, axis=axis, keepdims=keepdims) == 0, np.nan, small)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=None):
    """``var`` of the values that are not NaN: ``sum |a - m|^2 / (n - ddof)`` over them,
    ``m`` their mean and ``n`` their count."""
    if dtype is not None or out is not None or mean is not None or correction is not None:
        raise NotImplementedError("s2s.jit: np.nanvar with dtype=, out=, mean= or correction=")
    present = a == a
    count = np.sum(present, axis=axis, keepdims=True)
    m = np.sum(np.where(present, a, 0), axis=axis, keepdims=True) / count
    d = np.where(present, a - m, 0)
    return np.sum(np.real(d * np.conj(d)), axis=axis, keepdims=keepdims) / \
        (np.sum(present, axis=axis, keepdims=keepdims) - ddof)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=None):
    """``sqrt(nanvar(a))``."""
    return np.sqrt(np.nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                             correction=correction))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        *, dtype=None):
    """The covariance matrix of the variables (rows of ``m``, columns for
    ``rowvar=False``): ``X Xᴴ / (N - ddof)`` of the centred observations, ``ddof`` 1 (0
    for ``bias``); a number's worth (a 0-d array) for one variable."""
    if y is not None or fweights is not None or aweights is not None or dtype is not None:
        raise NotImplementedError("s2s.jit: np.cov with y=, fweights=, aweights= or dtype=")
    x = np.atleast_2d(m)
    if not rowvar:
        x = np.transpose(x)
    n = x.shape[1]
    d = (0 if bias else 1) if ddof is None else ddof
    centred = x - np.mean(x, axis=1, keepdims=True)
    c = np.dot(centred, np.transpose(np.conj(centred))) / (n - d)
    if np.ndim(m) == 1:
        return np.reshape(c, ())
    return c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """The correlation coefficients ``C_ij / sqrt(C_ii C_jj)`` of ``np.cov``'s ``C``, real
    ones clipped to ``[-1, 1]``."""
    c = np.atleast_2d(np.cov(x, y, rowvar, dtype=dtype))
    std = np.sqrt(np.real(np.diagonal(c)))
    r = np.clip(c / std.reshape(-1, 1) / std.reshape(1, -1), -1, 1)
    if np.ndim(x) == 1:
        return r[0, 0]
    return r


def _quantiles(a, q, axis, keepdims, method, skip_nan):
    """numpy's ``linear`` quantiles ``q`` (numbers in [0, 1]) of ``a`` along ``axis`` (the
    flat array for None): per row, sorted (NaN last), ``v = (n - 1) q``, the neighbours
    ``lo = floor(v)`` and ``lo + 1`` (clamped to the row), ``g = v - lo`` and numpy's
    ``lerp``: ``a + (b - a) g``, ``b - (b - a) (1 - g)`` for ``g >= 0.5``.  A row with a
    NaN gives NaN (``skip_nan``: its NaNs are left out; a row of NaNs gives NaN).  The
    result: ``q``'s shape, then ``a``'s without ``axis`` (with ``keepdims``: of length 1).
    A tuple of axes is not read (numpy's message for a ``moveaxis`` of it)."""
    if method != "linear":
        raise NotImplementedError("s2s.jit: quantiles by a method other than 'linear'")
    qv = np.ravel(np.atleast_1d(np.asarray(q))) * 1.0
    for k in range(qv.shape[0]):
        if not (qv[k] >= 0.0 and qv[k] <= 1.0):
            raise ValueError("Quantiles must be in the range [0, 1]")
    x = rows(a, axis) * 1.0
    res = np.empty((qv.shape[0], x.shape[0]))
    n = x.shape[1]
    for j in range(x.shape[0]):
        row = np.sort(x[j])
        if n == 0:
            raise IndexError("index -1 is out of bounds for axis 0 with size 0")
        count = n
        if skip_nan:  # the values that are not NaN (sorted first)
            count = int(np.sum(row == row))
        undefined = count == 0 or (not skip_nan and row[n - 1] != row[n - 1])
        for k in range(qv.shape[0]):
            v = (max(count, 1) - 1) * qv[k]
            lo = int(np.floor(v))
            hi = lo + 1
            if v >= count - 1:
                lo = max(count - 1, 0)
                hi = max(count - 1, 0)
            if v < 0:
                lo = 0
                hi = 0
            gamma = v - lo
            below = row[lo]
            above = row[hi]
            diff = above - below
            value = below + diff * gamma
            if gamma >= 0.5:
                value = above - diff * (1 - gamma)
            if undefined:
                value = np.nan
            res[k, j] = value  # (one write: vmap batches the choices above as selects)
    qa = np.asarray(q)  # (an array's rank is known when compiling; a list's is not)
    if axis is None:
        if np.ndim(qa) == 0:
            whole = np.reshape(res[0, 0], ())
        else:
            whole = res[:, 0].reshape(np.shape(qa))
        if keepdims:  # every axis of a kept, of length 1
            return np.reshape(whole, np.shape(qa) + (1,) * np.ndim(a))
        return res[0, 0] if np.ndim(qa) == 0 else whole
    kept = np.moveaxis(a, axis, -1).shape[:-1]
    if np.ndim(qa) == 0:
        out = res[0].reshape(kept)
    else:
        out = res.reshape(np.shape(qa) + kept)
    if keepdims:  # the reduced axis kept, of length 1, after q's axes
        return np.expand_dims(out, np.ndim(qa) + axis % np.ndim(a))
    return out


def _percent_range(q):
    """numpy's ``ValueError`` for a percentile outside [0, 100]."""
    qv = np.ravel(np.atleast_1d(np.asarray(q))) * 1.0
    for k in range(qv.shape[0]):
        if not (qv[k] >= 0.0 and qv[k] <= 100.0):
            raise ValueError("Percentiles must be in the range [0, 100]")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, weights=None, interpolation=None):
    """``np.quantile`` by the ``linear`` method (see ``_quantiles``)."""
    if weights is not None or interpolation is not None:
        raise NotImplementedError("s2s.jit: np.quantile with weights= or interpolation=")
    return _quantiles(a, q, axis, keepdims, method, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, weights=None, interpolation=None):
    """``np.nanquantile``: quantiles of the values that are not NaN."""
    if weights is not None or interpolation is not None:
        raise NotImplementedError("s2s.jit: np.nanquantile with weights= or interpolation=")
    return _quantiles(a, q, axis, keepdims, method, True)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, weights=None, interpolation=None):
    """``np.percentile``: ``quantile`` at ``q / 100``."""
    if weights is not None or interpolation is not None:
        raise NotImplementedError("s2s.jit: np.percentile with weights= or interpolation=")
    _percent_range(q)
    return _quantiles(a, np.true_divide(np.asarray(q), 100), axis, keepdims, method, False)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, weights=None, interpolation=None):
    """``np.nanpercentile``: ``nanquantile`` at ``q / 100``."""
    if weights is not None or interpolation is not None:
        raise NotImplementedError("s2s.jit: np.nanpercentile with weights= or interpolation=")
    _percent_range(q)
    return _quantiles(a, np.true_divide(np.asarray(q), 100), axis, keepdims, method, True)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``np.nanmedian``: the middle of the values that are not NaN."""
    return _quantiles(a, 0.5, axis, keepdims, "linear", True)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """The index of the largest value that is not NaN; numpy's ``ValueError`` where every
    value of a slice is NaN."""
    if not _floating(a):
        return np.argmax(a, axis=axis, keepdims=keepdims)
    if np.any(np.all(a != a, axis=axis)):
        raise ValueError("All-NaN slice encountered")
    return np.argmax(np.where(a != a, -np.inf, a), axis=axis, keepdims=keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """The index of the smallest value that is not NaN; numpy's ``ValueError`` where
    every value of a slice is NaN."""
    if not _floating(a):
        return np.argmin(a, axis=axis, keepdims=keepdims)
    if np.any(np.all(a != a, axis=axis)):
        raise ValueError("All-NaN slice encountered")
    return np.argmin(np.where(a != a, np.inf, a), axis=axis, keepdims=keepdims)


for _fn, _code in ((np.var, var), (np.std, std), (rt.var_vjp, var_vjp),
                   (rt.var_jvp, var_jvp), (np.ptp, ptp), (np.nansum, nansum), (np.nanprod, nanprod),
                   (np.nanmean, nanmean), (np.nanmax, nanmax), (np.nanmin, nanmin),
                   (np.nanvar, nanvar), (np.nanstd, nanstd), (np.cov, cov),
                   (np.corrcoef, corrcoef), (np.quantile, quantile),
                   (np.nanquantile, nanquantile), (np.percentile, percentile),
                   (np.nanpercentile, nanpercentile), (np.nanmedian, nanmedian)):
    definline(_fn, code=_code, modes=("jit", "vmap"))
for _fn, _code in ((np.nanargmax, nanargmax), (np.nanargmin, nanargmin)):
    definline(_fn, code=_code, modes=("jit",))
definline(_count, _floating, _quantiles, _percent_range, modes=("jit", "vmap"))
