"""Sequences of samples and coefficients: polynomial evaluation (``np.polyval``) and
least-squares fitting (``np.polyfit``, read as code by every transform), linear
interpolation (``np.interp``), the trapezoidal rule (``np.trapezoid``) and discrete
convolution and correlation (``np.convolve``, ``np.correlate``), as plain Python the jit
compiles with numpy's formulas (the same operations in the same order, so the same
rounding)."""
import numpy as np

from ..registry import definline
from .rows import rows, unrows


def polyval(p, x):
    """``p[0] x**(n-1) + ... + p[n-1]`` by Horner's rule, as numpy: ``y = 0; y = y x + c``
    for each coefficient ``c``."""
    y = x * 0 + p[0] * 0
    for k in range(len(p)):
        y = y * x + p[k]
    return y


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree ``deg`` through ``(x, y)``, as numpy
    computes it: the Vandermonde matrix with its columns scaled to unit norm, solved by
    ``np.linalg.lstsq`` (``rcond`` ``len(x) * eps`` by default), the scale divided back
    out; with weights ``w``, each row (and ``y``) times its weight.  ``full=True`` and
    ``cov=True`` (residuals, rank, singular values, covariance) are not read here."""
    if full or cov:
        raise NotImplementedError("s2s: np.polyfit with full=True or cov=True (the "
                                  "coefficients only are differentiated and compiled)")
    if deg < 0:
        raise ValueError("expected deg >= 0")
    x = np.asarray(x) + 0.0
    y = np.asarray(y) + 0.0
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    lhs = np.vander(x, deg + 1)
    rhs = y
    if w is not None:
        w = np.asarray(w) + 0.0
        lhs = lhs * w[:, None]
        rhs = rhs * w if rhs.ndim == 1 else rhs * w[:, None]
    if rcond is None:  # len(x) * np.finfo(x.dtype).eps
        rcond = x.shape[0] * (1.1920928955078125e-07 if x.dtype == np.float32
                              else 2.220446049250313e-16)
    scale = np.sqrt(np.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c = np.linalg.lstsq(lhs, rhs, rcond)[0]
    return (c.T / scale).T


def _padded_sum(a1, a2, sign):
    """``a1 + sign * a2`` of coefficient vectors, the shorter padded with leading zeros
    (numpy's ``polyadd``/``polysub``)."""
    diff = a2.shape[0] - a1.shape[0]
    if diff > 0:
        return np.concatenate((np.zeros(diff, dtype=a1.dtype), a1)) + sign * a2
    if diff < 0:
        return a1 + sign * np.concatenate((np.zeros(-diff, dtype=a2.dtype), a2))
    return a1 + sign * a2


def polyadd(a1, a2):
    """The sum of two polynomials' coefficients (highest power first)."""
    return _padded_sum(np.atleast_1d(a1), np.atleast_1d(a2), 1)


def polysub(a1, a2):
    """The difference of two polynomials' coefficients (highest power first)."""
    return _padded_sum(np.atleast_1d(a1), np.atleast_1d(a2), -1)


def polymul(a1, a2):
    """The product of two polynomials: the convolution of their coefficients."""
    return np.convolve(np.atleast_1d(a1), np.atleast_1d(a2))


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial: ``p[:-1] * (n, ..., 1)``, ``m`` times."""
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    if np.ndim(p) == 0:
        raise TypeError("len() of unsized object")
    y = np.atleast_1d(p)
    for _ in range(m):
        y = y[:-1] * np.arange(y.shape[0] - 1, 0, -1)
    return y


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial: ``(p / (n, ..., 1), k[i])`` for the
    ``i``-th integration, ``k`` a number (the same for every one), a sequence of ``m``
    or more, or None (zeros)."""
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    ks = np.zeros(m) if k is None else np.atleast_1d(k) * 1.0
    if ks.shape[0] == 1 and m > 1:
        ks = ks[0] * np.ones(m)
    if ks.shape[0] < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    if m == 0:
        return np.asarray(p)
    if np.ndim(p) == 0:
        raise TypeError("len() of unsized object")
    y = np.atleast_1d(p) * 1.0
    for i in range(m):
        y = np.concatenate((y / np.arange(y.shape[0], 0, -1), ks[i:i + 1]))
    return y


def unwrap(p, discont=None, axis=-1, period=6.283185307179586):
    """``p`` with each jump along ``axis`` larger than ``max(discont, period / 2)`` taken
    back by a multiple of ``period`` (numpy's formula: each difference brought into
    ``[-period/2, period/2)`` (``period/2`` for a positive difference on the boundary),
    the corrections summed in order)."""
    x = rows(p * 1.0, axis)
    res = np.empty_like(x)
    half = period / 2
    limit = half
    if discont is not None:
        limit = discont
    n = x.shape[1]
    for j in range(x.shape[0]):
        if n > 0:
            res[j, 0] = x[j, 0]
        acc = 0.0
        for i in range(1, n):
            dd = x[j, i] - x[j, i - 1]
            ddmod = np.mod(dd + half, period) - half
            if ddmod == -half and dd > 0:
                ddmod = half
            correct = ddmod - dd
            if abs(dd) < limit:
                correct = 0.0
            acc = acc + correct
            res[j, i] = x[j, i] + acc
    return unrows(res, p, axis)


def interp(x, xp, fp, left=None, right=None, period=None):
    """The piecewise-linear interpolant through ``(xp, fp)`` (``xp`` increasing) at
    ``x``: ``fp[0]`` (or ``left``) before ``xp[0]``, ``fp[-1]`` (or ``right``) after
    ``xp[-1]``, NaN at NaN; numpy's slope form and its fall-backs where it is NaN."""
    if period is not None:
        raise NotImplementedError("s2s.jit: np.interp with period=")
    n = xp.shape[0]
    if n == 0:
        raise ValueError("array of sample points is empty")
    if fp.shape[0] != n:
        raise ValueError("fp and xp are not of the same length.")
    lval = fp[0] if left is None else left
    rval = fp[n - 1] if right is None else right
    xs = np.ravel(np.atleast_1d(x))
    res = np.empty(xs.shape[0])
    for i in range(xs.shape[0]):
        v = xs[i]
        if v != v:
            res[i] = v
        elif v < xp[0]:
            res[i] = lval
        elif v > xp[n - 1]:
            res[i] = rval
        elif v == xp[n - 1]:
            res[i] = fp[n - 1]
        else:
            lo = 0
            hi = n - 1
            while hi - lo > 1:  # xp[lo] <= v < xp[hi]
                mid = (lo + hi) // 2
                if xp[mid] <= v:
                    lo = mid
                else:
                    hi = mid
            slope = (fp[lo + 1] - fp[lo]) / (xp[lo + 1] - xp[lo])
            y = slope * (v - xp[lo]) + fp[lo]
            if y != y:
                y = slope * (v - xp[lo + 1]) + fp[lo + 1]
                if y != y and fp[lo] == fp[lo + 1]:
                    y = fp[lo]
            res[i] = y
    if np.ndim(x) == 0:
        return res[0]
    return res.reshape(np.shape(x))


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """``sum(d (y[1:] + y[:-1]) / 2)`` along ``axis``, ``d`` the spacing: ``np.diff(x)``
    of a 1-D ``x``, else ``dx``."""
    moved = np.moveaxis(y, axis, -1)  # numpy's AxisError for an axis out of range
    if x is None:
        return np.sum(dx * (moved[..., 1:] + moved[..., :-1]) / 2.0, axis=-1)
    if np.ndim(x) != 1:
        raise NotImplementedError("s2s.jit: np.trapezoid with an x of 2 or more dimensions")
    return np.sum(np.diff(x) * (moved[..., 1:] + moved[..., :-1]) / 2.0, axis=-1)


def convolve(a, v, mode="full"):
    """The discrete linear convolution ``(a * v)[k] = sum_i a[i] v[k - i]`` of two 1-D
    arrays: all ``len(a) + len(v) - 1`` values (``"full"``), the middle ``max`` of them
    (``"same"``), or those where the two overlap completely (``"valid"``)."""
    na = a.shape[0]
    nv = v.shape[0]
    if na == 0:
        raise ValueError("a cannot be empty")
    if nv == 0:
        raise ValueError("v cannot be empty")
    full = np.zeros(na + nv - 1, dtype=(a[:1] * v[:1]).dtype)
    for i in range(na):
        for j in range(nv):
            full[i + j] += a[i] * v[j]
    short = min(na, nv)
    if mode == "full":
        return full
    if mode == "same":
        start = (short - 1) // 2
        return full[start:start + max(na, nv)]
    if mode == "valid":
        return full[short - 1:max(na, nv)]
    raise ValueError("mode must be one of 'valid', 'same', or 'full'")


def correlate(a, v, mode="valid"):
    """The cross-correlation ``c[k] = sum_n a[n + k] conj(v[n])``: ``np.convolve`` of ``a``
    and the reversed conjugate of ``v`` (``"valid"`` by default)."""
    return np.convolve(a, np.conj(v[::-1]), mode)


for _fn, _code in ((np.polyadd, polyadd), (np.polysub, polysub), (np.polymul, polymul),
                   (np.polyder, polyder), (np.polyint, polyint), (np.unwrap, unwrap)):
    definline(_fn, code=_code, modes=("jit", "vmap"))
definline(_padded_sum, modes=("jit", "vmap"))
for _fn, _code in ((np.polyval, polyval), (np.interp, interp), (np.trapezoid, trapezoid),
                   (np.convolve, convolve), (np.correlate, correlate)):
    definline(_fn, code=_code, modes=("jit", "vmap"))
definline(np.polyfit, code=polyfit)  # every transform: its derivative is lstsq's
