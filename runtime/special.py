"""Special functions the derivative rules of ``math.lgamma`` and ``math.gamma`` need,
in numpy alone (the compiler has scipy's when SciPy is installed; generated code
must run without it).

``digamma(x)`` is psi(x) = d/dx log|Gamma(x)|; ``polygamma(n, x)`` its n-th derivative
psi^(n)(x) for integers n >= 0.  Both are elementwise on numbers and arrays (float64;
a Python float gives a numpy float64), with numpy's conventions at the poles
(x = 0, -1, -2, ...: ``nan`` or ``inf``, never an exception).

Method: the recurrence psi^(n)(x) = psi^(n)(x + 1) - (-1)^n n! / x^(n+1) moves x up
to at least ``_LARGE + n``, where the asymptotic series

    psi(x)      ~ log x - 1/(2x) - sum_k B_2k / (2k x^2k)
    psi^(n)(x)  ~ (-1)^(n+1) [ (n-1)!/x^n + n!/(2 x^(n+1))
                               + sum_k B_2k (2k+n-1)! / ((2k)! x^(2k+n)) ]

has converged to float64 precision; digamma of x < 0.5 uses the reflection
psi(x) = psi(1 - x) - pi / tan(pi x).  Relative error ~1e-15 (tested against SciPy).
"""
from __future__ import annotations

import math

import numpy as np

#: Bernoulli numbers B_2, B_4, ..., B_20
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330)
_LARGE = 20.0


def _shifted(x, n):
    """``(y, acc)``: ``y >= _LARGE + n`` elementwise and psi^(n)(x) = psi^(n)(y) + acc."""
    y = np.array(x, dtype=np.float64, copy=True)
    acc = np.zeros_like(y)
    sign = -1.0 if n % 2 == 0 else 1.0  # -(-1)^n
    fact = float(math.factorial(n))
    low = (y < _LARGE + n) & (y > -np.inf)  # (-inf + 1 is -inf: a pole, never shifted)
    while np.any(low):
        with np.errstate(divide="ignore", invalid="ignore"):
            acc = np.where(low, acc + sign * fact / y ** (n + 1), acc)
        y = np.where(low, y + 1.0, y)
        low = (y < _LARGE + n) & (y > -np.inf)
    return y, acc


def _digamma_positive(x):
    y, acc = _shifted(x, 0)
    inv2 = 1.0 / (y * y)
    series = 0.0
    power = inv2
    for k, b in enumerate(_BERNOULLI, start=1):
        series = series + b / (2 * k) * power
        power = power * inv2
    return acc + np.log(y) - 0.5 / y - series


def digamma(x):
    """psi(x), the logarithmic derivative of Gamma (elementwise)."""
    x = np.asarray(x, dtype=np.float64)
    reflect = x < 0.5
    y = np.where(reflect, 1.0 - x, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _digamma_positive(y)
        tan = np.tan(np.pi * x)
        out = np.where(reflect, out - np.pi / np.where(tan == 0, np.nan, tan), out)
        out = np.where((x <= 0) & (x == np.floor(x)), np.nan, out)
    return out[()] if out.ndim == 0 else out


def _polygamma_one(n, x):
    y, acc = _shifted(x, n)
    sign = 1.0 if n % 2 == 1 else -1.0  # (-1)^(n+1)
    total = math.factorial(n - 1) / y ** n + math.factorial(n) / (2 * y ** (n + 1))
    for k, b in enumerate(_BERNOULLI, start=1):
        total = total + b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) \
            / y ** (2 * k + n)
    with np.errstate(invalid="ignore"):
        out = acc + sign * total
        return np.where((x <= 0) & (x == np.floor(x)), np.nan, out)


def polygamma(n, x):
    """psi^(n)(x), the n-th derivative of digamma, for integers ``n >= 0`` (elementwise,
    ``n`` and ``x`` broadcast)."""
    n_arr = np.asarray(n)
    if n_arr.dtype.kind not in "iub" and not np.all(n_arr == np.floor(n_arr)):
        raise ValueError(f"polygamma: n must be a non-negative integer, got {n!r}")
    if np.any(n_arr < 0):
        raise ValueError(f"polygamma: n must be a non-negative integer, got {n!r}")
    x = np.asarray(x, dtype=np.float64)
    n_arr, x = np.broadcast_arrays(n_arr.astype(np.int64), x)
    out = np.empty(x.shape)
    for k in np.unique(n_arr):
        here = n_arr == k
        out[here] = digamma(x[here]) if k == 0 else _polygamma_one(int(k), x[here])
    return out[()] if out.ndim == 0 else out


_LGAMMA = np.frompyfunc(math.lgamma, 1, 1)
_GAMMA = np.frompyfunc(math.gamma, 1, 1)


def lgamma(x):
    """``math.lgamma`` elementwise (log|Gamma(x)|; what batched code calls in its place)."""
    out = np.asarray(_LGAMMA(np.asarray(x, dtype=np.float64)), dtype=np.float64)
    return out[()] if out.ndim == 0 else out


def gamma(x):
    """``math.gamma`` elementwise (its ``ValueError`` at the poles too)."""
    out = np.asarray(_GAMMA(np.asarray(x, dtype=np.float64)), dtype=np.float64)
    return out[()] if out.ndim == 0 else out


_ERF = np.frompyfunc(math.erf, 1, 1)
_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _float_elementwise(f, x):
    """``f`` of each element of ``x``, in ``x``'s float type (float64 for other types)."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    out = np.asarray(f(x.astype(np.float64)), dtype=dtype)
    return out[()] if out.ndim == 0 else out


def erf(x):
    """``math.erf`` elementwise (what batched code calls in its place)."""
    return _float_elementwise(_ERF, x)


def erfc(x):
    """``math.erfc`` elementwise (what batched code calls in its place)."""
    return _float_elementwise(_ERFC, x)
