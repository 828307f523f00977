"""numpy functions ``s2s.vmap`` batches by reading plain Python (``modes=("vmap",)``):
each is written with numpy calls that have batching rules, per example exactly what
numpy computes -- values, dtype, shape and numpy's error for bad input (read under
``vmap``, ``np.ndim``/``np.shape``/``len`` answer for one example, so a rank check
is the example's).  The jit does not read these (it has no lowering of them yet).

``np.cumulative_sum``/``cumulative_prod`` (``axis=None`` only for 1-D, a 0-d input
as ``(1,)``, ``include_initial=``), ``np.ascontiguousarray``/``asfortranarray``
(a 0-d input as ``(1,)``), ``np.hsplit``/``vsplit``/``dsplit``, ``np.append``,
``np.ediff1d``, and the polynomial arithmetic ``np.polyadd``/``polysub``/``polymul``/
``polyder``/``polyint`` (coefficients highest power first).
"""
import numpy as np

from ..registry import definline


def _cumulative(x, axis, dtype, include_initial, prod):
    """``np.cumsum``/``np.cumprod`` along ``axis`` with numpy 2's array-API rules."""
    a = np.atleast_1d(x)  # a number as (1,)
    if axis is None and np.ndim(a) > 1:
        raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                         "is required.")
    ax = 0 if axis is None else axis
    if prod:
        res = np.cumprod(a, axis=ax, dtype=dtype)
    else:
        res = np.cumsum(a, axis=ax, dtype=dtype)
    if not include_initial:
        return res
    moved = np.moveaxis(res, ax, -1)
    first = np.ones_like(moved[..., :1]) if prod else np.zeros_like(moved[..., :1])
    return np.moveaxis(np.concatenate((first, moved), axis=-1), -1, ax)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Running sums along ``axis`` (``None``: a 1-D input's only axis), led by 0 with
    ``include_initial``."""
    if out is not None:
        raise NotImplementedError("s2s.vmap: np.cumulative_sum with out=")
    return _cumulative(x, axis, dtype, include_initial, False)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Running products along ``axis`` (``None``: a 1-D input's only axis), led by 1
    with ``include_initial``."""
    if out is not None:
        raise NotImplementedError("s2s.vmap: np.cumulative_prod with out=")
    return _cumulative(x, axis, dtype, include_initial, True)


def ascontiguousarray(a, dtype=None, *, like=None):
    """``a`` as an array (of ``dtype``) with at least one axis."""
    x = np.asarray(a, dtype=dtype)
    if np.ndim(x) == 0:
        return np.reshape(x, (1,))
    return x


def asfortranarray(a, dtype=None, *, like=None):
    """``a`` as an array (of ``dtype``) with at least one axis (the memory order is not
    part of the values)."""
    x = np.asarray(a, dtype=dtype)
    if np.ndim(x) == 0:
        return np.reshape(x, (1,))
    return x


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


def append(arr, values, axis=None):
    """``arr`` and ``values`` joined along ``axis`` (both flattened for ``None``)."""
    if axis is None:
        return np.concatenate((np.ravel(arr), np.ravel(values)), axis=0)
    return np.concatenate((arr, values), axis=axis)


#: the dtype kinds a value of each kind casts to under ``casting="same_kind"``
_SAME_KIND = {"b": "biufc", "u": "uifc", "i": "ifc", "f": "fc", "c": "c"}


def _ends(values, dtype, message):
    """``np.ediff1d``'s ``to_begin``/``to_end``: flattened, in ``dtype``, with numpy's
    error (``message``) where that is not a ``same_kind`` cast."""
    v = np.asarray(values)
    if v.dtype.kind not in _SAME_KIND or dtype.kind not in _SAME_KIND[v.dtype.kind]:
        raise TypeError(message)
    return np.ravel(np.asarray(v, dtype=dtype))


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of the flattened ``ary``, after ``to_begin`` and before
    ``to_end`` (each flattened, in ``ary``'s dtype)."""
    d = np.diff(np.ravel(ary))
    if to_begin is None and to_end is None:
        return d
    parts = []
    if to_begin is not None:
        parts.append(_ends(to_begin, d.dtype, "dtype of `to_begin` must be compatible with "
                           "input `ary` under the `same_kind` rule."))
    parts.append(d)
    if to_end is not None:
        parts.append(_ends(to_end, d.dtype, "dtype of `to_end` must be compatible with "
                           "input `ary` under the `same_kind` rule."))
    return np.concatenate(parts)


def _padded(a, size):
    """``a`` (1-D) led by zeros to length ``size``."""
    if len(a) == size:
        return a
    return np.concatenate((np.zeros(size - len(a), dtype=a.dtype), a))


def polyadd(a1, a2):
    """The sum of two polynomials (coefficients highest power first)."""
    x1 = np.atleast_1d(a1)
    x2 = np.atleast_1d(a2)
    size = max(len(x1), len(x2))
    return _padded(x1, size) + _padded(x2, size)


def polysub(a1, a2):
    """The difference of two polynomials (coefficients highest power first)."""
    x1 = np.atleast_1d(a1)
    x2 = np.atleast_1d(a2)
    size = max(len(x1), len(x2))
    return _padded(x1, size) - _padded(x2, size)


def polymul(a1, a2):
    """The product of two polynomials: the convolution of their coefficients."""
    return np.convolve(np.atleast_1d(a1), np.atleast_1d(a2))


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial."""
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    if np.ndim(p) == 0:
        raise TypeError("len() of unsized object")
    res = np.atleast_1d(p)
    for _ in range(m):
        n = len(res) - 1
        res = res[:-1] * np.arange(n, 0, -1)
    return res


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial, the ``i``-th integration constant
    ``k[i]`` (zeros for ``None``, one number for every one)."""
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    ks = np.zeros(m) if k is None else np.atleast_1d(k)
    if len(ks) == 1 and m > 1:
        ks = ks[0] * np.ones(m)
    if len(ks) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    if m == 0:
        return np.asarray(p)
    if np.ndim(p) == 0:
        raise TypeError("len() of unsized object")
    res = np.atleast_1d(p)
    for i in range(m):
        res = np.concatenate((res / np.arange(len(res), 0, -1), ks[i:i + 1]))
    return res


for _fn, _code in ((np.cumulative_sum, cumulative_sum), (np.cumulative_prod, cumulative_prod),
                   (np.ascontiguousarray, ascontiguousarray),
                   (np.asfortranarray, asfortranarray), (np.hsplit, hsplit),
                   (np.vsplit, vsplit), (np.dsplit, dsplit), (np.append, append),
                   (np.ediff1d, ediff1d), (np.polyadd, polyadd), (np.polysub, polysub),
                   (np.polymul, polymul), (np.polyder, polyder), (np.polyint, polyint)):
    definline(_fn, code=_code, modes=("vmap",))
definline(_cumulative, _padded, _ends, modes=("vmap",))
