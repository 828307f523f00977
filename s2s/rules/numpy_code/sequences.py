"""Arrays made from sizes and end points: log- and geometrically spaced samples
(``np.logspace``, ``np.geomspace``), the tapering windows (``np.hamming``,
``np.hanning``, ``np.blackman``, ``np.bartlett``) and triangles of ones or of indices
(``np.tri``, ``np.tril_indices``, ``np.triu_indices`` and their ``_from`` forms), as
plain Python the jit compiles with numpy's own formulas (the same operations in the
same order, so the same rounding).

``vmap`` needs no rule for them where their sizes are the same for every example; a
size that differs per example would make a ragged batch, the reason their records
state."""
import numpy as np

from ..registry import definline, defno_mode


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num, endpoint, axis=axis)`` (a number ``base``;
    ``start`` and ``stop`` numbers or arrays, the samples along ``axis``)."""
    y = np.linspace(start, stop, num, endpoint=endpoint, axis=axis)
    if dtype is None:
        return np.power(base, y)
    return np.power(base, y).astype(dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` samples from ``start`` to ``stop`` spaced evenly on a log scale: numpy's
    ``10 ** linspace(log10(start), log10(stop))`` with the end points exact; two
    negative ends give the negated samples of their magnitudes (real numbers only)."""
    if axis != 0 or dtype is not None:
        raise NotImplementedError("s2s.jit: np.geomspace with dtype= or axis=")
    if start == 0 or stop == 0:
        raise ValueError("Geometric sequence cannot include zero")
    if (start < 0) != (stop < 0):
        raise NotImplementedError("s2s.jit: np.geomspace between a negative and a positive "
                                  "end (numpy's result is complex)")
    sign = 1.0
    if start < 0:
        sign = -1.0
    lo = np.log10(start * sign)
    hi = np.log10(stop * sign)
    res = np.power(10.0, np.linspace(lo, hi, num, endpoint=endpoint))
    if num > 0:
        res[0] = start * sign
        if endpoint and num > 1:
            res[num - 1] = stop * sign
    return res * sign


def _window_steps(M):
    """``arange(1 - M, M, 2)`` as floats, numpy's sample positions of an ``M``-point
    window (``M`` > 1)."""
    m = float(M)
    return np.arange(1 - m, m, 2)


def hamming(M):
    """The Hamming window ``0.54 + 0.46 cos(pi n / (M - 1))``."""
    if M < 1:
        return np.empty(0)
    if M == 1:
        return np.ones(1)
    n = _window_steps(M)
    return 0.54 + 0.46 * np.cos(np.pi * n / (float(M) - 1))


def hanning(M):
    """The Hann window ``0.5 + 0.5 cos(pi n / (M - 1))``."""
    if M < 1:
        return np.empty(0)
    if M == 1:
        return np.ones(1)
    n = _window_steps(M)
    return 0.5 + 0.5 * np.cos(np.pi * n / (float(M) - 1))


def blackman(M):
    """The Blackman window ``0.42 + 0.5 cos(pi n / (M - 1)) + 0.08 cos(2 pi n / (M - 1))``."""
    if M < 1:
        return np.empty(0)
    if M == 1:
        return np.ones(1)
    n = _window_steps(M)
    return 0.42 + 0.5 * np.cos(np.pi * n / (float(M) - 1)) + \
        0.08 * np.cos(2.0 * np.pi * n / (float(M) - 1))


def bartlett(M):
    """The triangular Bartlett window ``1 - |n| / (M - 1)``."""
    if M < 1:
        return np.empty(0)
    if M == 1:
        return np.ones(1)
    n = _window_steps(M)
    return np.where(n <= 0, 1 + n / (float(M) - 1), 1 - n / (float(M) - 1))


def tri(N, M=None, k=0, dtype=float, like=None):
    """The ``N`` x ``M`` array with ones at and below the ``k``-th diagonal (``j <= i + k``),
    zeros elsewhere."""
    cols = N if M is None else M
    res = np.zeros((N, cols), dtype=dtype)
    for i in range(N):
        for j in range(max(min(i + k + 1, cols), 0)):
            res[i, j] = 1
    return res


def _triangle_indices(n, k, m, lower):
    """The row and column indices, in row-major order, of the entries on and below
    (``lower``) or on and above the ``k``-th diagonal of an ``n`` x ``m`` array."""
    cols = n if m is None else m
    count = 0
    for i in range(n):
        for j in range(cols):
            if (j <= i + k) if lower else (j >= i + k):
                count += 1
    rows = np.empty(count, dtype=np.int64)
    columns = np.empty(count, dtype=np.int64)
    c = 0
    for i in range(n):
        for j in range(cols):
            if (j <= i + k) if lower else (j >= i + k):
                rows[c] = i
                columns[c] = j
                c += 1
    return rows, columns


def tril_indices(n, k=0, m=None):
    """The indices of the lower triangle of an ``n`` x ``m`` array (see ``_triangle_indices``)."""
    return _triangle_indices(n, k, m, True)


def triu_indices(n, k=0, m=None):
    """The indices of the upper triangle of an ``n`` x ``m`` array (see ``_triangle_indices``)."""
    return _triangle_indices(n, k, m, False)


def tril_indices_from(arr, k=0):
    """``tril_indices`` of the 2-D ``arr``'s shape."""
    if np.ndim(arr) != 2:
        raise ValueError("input array must be 2-d")
    return _triangle_indices(arr.shape[-2], k, arr.shape[-1], True)


def triu_indices_from(arr, k=0):
    """``triu_indices`` of the 2-D ``arr``'s shape."""
    if np.ndim(arr) != 2:
        raise ValueError("input array must be 2-d")
    return _triangle_indices(arr.shape[-2], k, arr.shape[-1], False)


for _fn, _code in ((np.logspace, logspace), (np.geomspace, geomspace), (np.hamming, hamming),
                   (np.hanning, hanning), (np.blackman, blackman), (np.bartlett, bartlett),
                   (np.tri, tri), (np.tril_indices, tril_indices),
                   (np.triu_indices, triu_indices), (np.tril_indices_from, tril_indices_from),
                   (np.triu_indices_from, triu_indices_from)):
    definline(_fn, code=_code, modes=("jit",))
definline(_window_steps, _triangle_indices, modes=("jit",))
defno_mode("vmap", "its arguments are sizes: a size that differs per example would make a "
           "ragged batch (vmap calls it once where the sizes are the same for every example)",
           np.hamming, np.hanning, np.blackman, np.bartlett, np.tri, np.tril_indices,
           np.triu_indices)
