"""Order statistics (``np.median``, ``np.quantile``, ``np.percentile``) as linear maps of
the sorted values, for ``linear_ops``.

``quantile(a, q)`` along an axis is ``sum_j W[q, j] sort(a)_j``: the weights
``W`` depend only on the length ``n`` of the axis, ``q`` and the method (for
``linear``: ``1 - f`` at ``floor(h)`` and ``f`` at ``floor(h) + 1``, ``h = q (n - 1)``,
``f`` its fraction).  The sort permutation is piecewise constant in ``a``, so
the derivative of the quantile is the same weights applied to the permuted
tangent (``quantile``), and its transpose scatters ``g W`` back through the
permutation (``quantile_transpose``).  Tied values: the stable sort's order.
"""
from __future__ import annotations

import numpy as np

from .vjps import _fit

METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _weights(n, q, method):
    """``W`` of shape ``(len(q), n)`` (see the module docstring)."""
    if method not in METHODS:
        raise NotImplementedError(f"s2s: no derivative of a quantile with method={method!r} "
                                  f"(supported: {', '.join(METHODS)})")
    qs = np.atleast_1d(np.asarray(q, dtype=float))
    if qs.ndim != 1:
        raise NotImplementedError("s2s: no derivative of a quantile with a q of more than 1 axis")
    h = qs * (n - 1)
    lo = np.floor(h).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    frac = h - lo
    if method == "lower":
        pairs = [(lo, 1.0)]
    elif method == "higher":
        pairs = [(np.ceil(h).astype(int), 1.0)]
    elif method == "nearest":
        pairs = [(np.around(h).astype(int), 1.0)]
    elif method == "midpoint":
        pairs = [(lo, 0.5), (np.ceil(h).astype(int), 0.5)]
    else:
        pairs = [(lo, 1.0 - frac), (hi, frac)]
    w = np.zeros((len(qs), n))
    rows = np.arange(len(qs))
    for idx, val in pairs:
        np.add.at(w, (rows, idx), val)
    return w


def _axis_layout(a, axis):
    a = np.asarray(a)
    if axis is None:
        return a.reshape(-1), 0
    if np.ndim(axis) != 0:
        raise NotImplementedError("s2s: no derivative of a quantile over a tuple of axes")
    return a, int(axis) % a.ndim


def quantile(t, like, a, q, axis=None, keepdims=False, method="linear"):
    """The tangent of ``np.quantile(a, q, axis, keepdims=keepdims, method=method)``:
    the weights applied to ``t`` in ``a``'s sorted order."""
    x, ax = _axis_layout(a, axis)
    tt = np.reshape(np.asarray(t), x.shape)
    x, tt = np.moveaxis(x, ax, -1), np.moveaxis(tt, ax, -1)
    perm = np.argsort(x, axis=-1, kind="stable")
    ts = np.take_along_axis(tt, perm, -1)
    r = np.einsum("...n,kn->k...", ts, _weights(x.shape[-1], q, method))
    if np.ndim(q) == 0:
        r = r[0]
    if keepdims:
        qdims = r.shape[:np.ndim(q)]
        kept = [1] * np.ndim(a) if axis is None else list(np.shape(a))
        if axis is not None:
            kept[ax] = 1
        r = r.reshape(qdims + tuple(kept))
    return r[()] if r.ndim == 0 else r


def quantile_transpose(g, like, a, q, axis=None, keepdims=False, method="linear"):
    """The cotangent of ``a``: ``g W`` scattered back through the sort permutation."""
    x, ax = _axis_layout(a, axis)
    xm = np.moveaxis(x, ax, -1)
    g = np.asarray(g)
    qdims = np.shape(q)
    batch = xm.shape[:-1]
    g = np.reshape(g, (1,) * (len(qdims) == 0) + qdims[:1] + batch)
    gs = np.einsum("k...,kn->...n", g, _weights(xm.shape[-1], q, method))
    perm = np.argsort(xm, axis=-1, kind="stable")
    out = np.zeros(xm.shape, dtype=np.result_type(gs.dtype, float))
    np.put_along_axis(out, perm, gs, -1)
    return _fit(np.reshape(np.moveaxis(out, -1, ax), np.shape(a)), like)
