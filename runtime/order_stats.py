"""Order statistics (``np.median``, ``np.quantile``, ``np.percentile``) as linear maps of
the sorted values, for ``linear_ops``.

``quantile(a, q)`` along an axis is ``sum_j W[q, j] sort(a)_j``: the weights
``W`` depend only on the length ``n`` of the axis, ``q`` and the method (for
``linear``: ``1 - f`` at ``floor(h)`` and ``f`` at ``floor(h) + 1``, ``h = q (n - 1)``,
``f`` its fraction).  The sort permutation is piecewise constant in ``a``, so
the derivative of the quantile is the same weights applied to the permuted
tangent (``quantile``), and its transpose scatters ``g W`` back through the
permutation (``quantile_transpose``).  Tied values: the stable sort's order.
``np.nanquantile`` and friends: NaNs sort last and the weights use the count of
the others in each slice (NaN entries get no derivative).
"""
from __future__ import annotations

import numpy as np

from .vjps import _fit

METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _weights(n, q, method, valid=None):
    """``W`` of shape ``batch + (len(q), n)`` (see the module docstring); ``valid`` (shape
    ``batch``) counts the entries that are not NaN when NaNs are ignored (they sort last)."""
    if method not in METHODS:
        raise NotImplementedError(f"s2s: no derivative of a quantile with method={method!r} "
                                  f"(supported: {', '.join(METHODS)})")
    qs = np.atleast_1d(np.asarray(q, dtype=float))
    if qs.ndim != 1:
        raise NotImplementedError("s2s: no derivative of a quantile with a q of more than 1 axis")
    count = np.asarray(n if valid is None else valid)[..., None]
    h = qs * (count - 1)
    lo = np.floor(h).astype(int)
    up = np.ceil(h).astype(int)
    frac = h - lo
    if method == "lower":
        pairs = [(lo, 1.0)]
    elif method == "higher":
        pairs = [(up, 1.0)]
    elif method == "nearest":
        pairs = [(np.around(h).astype(int), 1.0)]
    elif method == "midpoint":
        pairs = [(lo, 0.5), (up, 0.5)]
    else:
        pairs = [(lo, 1.0 - frac), (np.minimum(lo + 1, count - 1), frac)]
    slots = np.arange(n)
    return sum(np.asarray(val)[..., None] * (slots == np.asarray(idx)[..., None])
               for idx, val in pairs)


def _axis_layout(a, axis):
    a = np.asarray(a)
    if axis is None:
        return a.reshape(-1), 0
    if np.ndim(axis) != 0:
        raise NotImplementedError("s2s: no derivative of a quantile over a tuple of axes")
    return a, int(axis) % a.ndim


def _sorted_layout(a, axis, ignore_nan):
    x, ax = _axis_layout(a, axis)
    xm = np.moveaxis(x, ax, -1)
    valid = np.sum(~np.isnan(xm), axis=-1) if ignore_nan else None
    perm = np.argsort(xm, axis=-1, kind="stable")      # (NaNs last)
    return x, ax, xm, perm, valid


def quantile(t, like, a, q, axis=None, keepdims=False, method="linear", ignore_nan=False):
    """The tangent of ``np.quantile(a, q, axis, keepdims=keepdims, method=method)`` (of
    ``np.nanquantile`` with ``ignore_nan``): the weights applied to ``t`` in ``a``'s
    sorted order."""
    x, ax, xm, perm, valid = _sorted_layout(a, axis, ignore_nan)
    tt = np.moveaxis(np.reshape(np.asarray(t), x.shape), ax, -1)
    ts = np.take_along_axis(tt, perm, -1)
    r = np.einsum("...n,...kn->k...", ts, _weights(xm.shape[-1], q, method, valid))
    if np.ndim(q) == 0:
        r = r[0]
    if keepdims:
        qdims = r.shape[:np.ndim(q)]
        kept = [1] * np.ndim(a) if axis is None else list(np.shape(a))
        if axis is not None:
            kept[ax] = 1
        r = r.reshape(qdims + tuple(kept))
    return r[()] if r.ndim == 0 else r


def quantile_transpose(g, like, a, q, axis=None, keepdims=False, method="linear",
                       ignore_nan=False):
    """The cotangent of ``a``: ``g W`` scattered back through the sort permutation."""
    x, ax, xm, perm, valid = _sorted_layout(a, axis, ignore_nan)
    g = np.asarray(g)
    qdims = np.shape(q)
    g = np.reshape(g, (1,) * (len(qdims) == 0) + qdims[:1] + xm.shape[:-1])
    gs = np.einsum("k...,...kn->...n", g, _weights(xm.shape[-1], q, method, valid))
    out = np.zeros(xm.shape, dtype=np.result_type(gs.dtype, float))
    np.put_along_axis(out, perm, gs, -1)
    return _fit(np.reshape(np.moveaxis(out, -1, ax), np.shape(a)), like)
