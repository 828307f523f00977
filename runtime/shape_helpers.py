"""Non-differentiable helpers of the rule templates: shapes, axes, index maps and
selection masks (``s2s/rules/linear_rules.py`` marks them ``defnondiff``).

Each returns integers, shapes or 0/1 masks computed from its arguments' shapes
or values; none carries a derivative (a selection mask is piecewise constant).
"""
from __future__ import annotations

import numpy as np


def _real_dtype(x):
    """The real floating dtype of ``x`` (float64 for integers): weights and exponents in
    it keep a float32 computation in float32."""
    dt = np.result_type(x)
    if np.issubdtype(dt, np.complexfloating):
        return np.finfo(dt).dtype
    return dt if np.issubdtype(dt, np.floating) else np.dtype(np.float64)


def clip_selected(a, a_min, a_max, which):
    """1.0 where ``np.clip(a, a_min, a_max) = minimum(maximum(a, a_min), a_max)`` takes its
    value from argument ``which`` (0: ``a``, 1: ``a_min``, 2: ``a_max``), else 0.0, in the
    broadcast shape.  Ties go to ``a`` (and to ``a_min`` over ``a_max``); when
    ``a_min > a_max`` every entry is ``a_max`` (numpy's rule).  A None bound is absent."""
    a = np.asarray(a)
    below = np.zeros(a.shape, dtype=bool) if a_min is None else a_min > a
    low = a if a_min is None else np.maximum(a, a_min)
    above = np.zeros(np.shape(low), dtype=bool) if a_max is None else low > a_max
    mask = (~below & ~above, below & ~above, above)[which]
    shape = np.broadcast_shapes(a.shape, np.shape(a_min) if a_min is not None else (),
                                np.shape(a_max) if a_max is not None else ())
    return np.broadcast_to(mask, shape).astype(float)



def split_axis(ary, kind):
    """The axis of ``np.hsplit`` (1, or 0 for 1-D), ``np.vsplit`` (0), ``np.dsplit`` (2)."""
    return {"h": 1 if np.ndim(ary) > 1 else 0, "v": 0, "d": 2}[kind]


def delete_kept(arr, obj, axis=None):
    """The indices ``np.delete(arr, obj, axis)`` keeps (along ``axis``; flat for None)."""
    n = np.size(arr) if axis is None else np.shape(arr)[axis]
    return np.delete(np.arange(n), obj)


def rollaxis_destination(ndim, axis, start=0):
    """``np.rollaxis(a, axis, start)`` is ``np.moveaxis(a, axis, destination)``."""
    axis, start = int(axis) % ndim, int(start)
    if start < 0:
        start += ndim
    return start - 1 if start > axis else start


def trapezoid_weights(y, x=None, dx=1.0, axis=-1):
    """``w`` with ``np.trapezoid(y, x, dx, axis) = sum(w * y, axis)``: half the spacing on
    each side of every sample, shaped to broadcast against ``y``."""
    n = np.shape(y)[axis]
    d = np.full(n - 1, float(dx)) if x is None else np.diff(np.asarray(x, dtype=float))
    if np.ndim(d) != 1:
        raise NotImplementedError("s2s: no derivative of np.trapezoid with a multi-axis x")
    w = np.zeros(n)
    w[:-1] += d / 2
    w[1:] += d / 2
    shape = [1] * np.ndim(y)
    shape[axis] = n
    return w.reshape(shape).astype(_real_dtype(y))


def conv_pad(a, v, mode="full", kind="convolve"):
    """``(before, after)``: the zeros that put the output of ``np.convolve(a, v, mode)``
    (``kind`` "convolve") or ``np.correlate(a, v, mode)`` back at its place in the full
    output (length ``len(a) + len(v) - 1``)."""
    la, lv = np.size(a), np.size(v)
    if np.ndim(a) != 1 or np.ndim(v) != 1:
        raise ValueError(f"s2s: np.{kind} of 1-D arrays only")
    short, full = min(la, lv), la + lv - 1
    if mode == "full":
        return (0, 0)
    if mode == "valid":
        before, length = short - 1, max(la, lv) - short + 1
    elif mode == "same":
        before = (short - 1 + (kind == "correlate" and la < lv)) // 2
        length = max(la, lv)
    else:
        raise ValueError(f"np.{kind}: mode must be 'full', 'same' or 'valid', not {mode!r}")
    return (before, full - before - length)


def matching_permutation(ans, a, axis=-1):
    """``p`` with ``take_along_axis(a, p, axis) == ans`` when ``ans`` is a permutation of
    ``a`` along ``axis`` (``np.partition``; flat for None): equal values are matched in
    their stable-sort order."""
    a, ans = np.asarray(a), np.asarray(ans)
    if axis is None:
        a, axis = a.reshape(-1), 0
    order_a = np.argsort(a, axis=axis, kind="stable")
    rank_ans = np.argsort(np.argsort(ans, axis=axis, kind="stable"), axis=axis, kind="stable")
    return np.take_along_axis(order_a, rank_ans, axis)


def resize_source(a, new_shape):
    """The flat index of ``a`` each entry of ``np.resize(a, new_shape)`` copies."""
    return np.ravel(np.resize(np.arange(np.size(a)), new_shape))


def scan_slots(x, axis=None, include_initial=False):
    """For ``np.cumulative_sum/prod(x, axis, include_initial)``: the positions of the
    result along ``axis`` that come from ``x`` (all but the initial one)."""
    x = np.asarray(x)
    ax = 0 if axis is None else int(axis) % max(x.ndim, 1)
    n = x.size if axis is None else x.shape[ax]
    first = 1 if include_initial else 0
    return np.arange(first, first + n)


def scan_pad_widths(x, axis=None, include_initial=False):
    """For ``np.cumulative_sum/prod(x, axis, include_initial)``: the ``np.pad`` widths
    putting a result without the initial slot back in place."""
    x = np.asarray(x)
    ax = 0 if axis is None else int(axis) % max(x.ndim, 1)
    widths = [(0, 0)] * max(x.ndim if axis is not None else 1, 1)
    widths[ax] = (1 if include_initial else 0, 0)
    return widths


def interp_layout(x, xp, left=None, right=None, period=None):
    """For ``np.interp(x, xp, fp, left, right)``: ``(lo, hi, x_lo, span, keep, inside)`` with
    ``fp`` read at ``lo``/``hi`` (the knots around each ``x``; the end knot outside the
    range), ``x_lo = xp[lo]``, ``span = xp[hi] - xp[lo]`` (1 where 0), ``keep`` 0 where a
    given ``left``/``right`` constant replaces ``fp`` and ``inside`` 1 inside the knots
    (where the value moves with ``x``).  Then ``interp = keep ((1 - s) fp[lo] + s fp[hi])``
    (+ the constants), ``s = clip((x - x_lo) / span, 0, 1)``."""
    if period is not None:
        raise NotImplementedError("s2s: no derivative of np.interp with period=")
    xp = np.asarray(xp, dtype=float)
    x = np.asarray(x)
    n = xp.size
    lo = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, max(n - 2, 0))
    hi = np.minimum(lo + 1, n - 1)
    span = xp[hi] - xp[lo]
    below, above = x < xp[0], x > xp[-1]
    keep = np.ones(x.shape)
    if left is not None:
        keep = np.where(below, 0.0, keep)
    if right is not None:
        keep = np.where(above, 0.0, keep)
    inside = (~below & ~above).astype(float)
    return lo, hi, xp[lo], np.where(span == 0, 1.0, span), keep, inside


def vander_exponents(x, N=None, increasing=False):
    """``(k, max(k - 1, 0))``: the powers of the columns of ``np.vander(x, N, increasing)``
    and those of their derivatives."""
    n = np.size(x) if N is None else int(N)
    k = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    dt = _real_dtype(x)   # (float32 x ** int64 k would be float64)
    return k.astype(dt), np.maximum(k - 1, 0).astype(dt)


def initial_or_one(initial=None):
    """The factor ``np.prod(a, initial=initial)`` puts in front of the product (1 for None)."""
    return 1 if initial is None else initial


def poly_factors(p, m=1, kind="der"):
    """For ``np.polyder(p, m)`` (``kind`` "der"): ``(F, widths)`` with ``polyder = p[:n-m] F``
    (``F`` the falling factorials of the powers) and the pad widths putting a cotangent of
    the result back at ``p``'s leading entries.  For ``np.polyint(p, m)`` ("int"):
    ``(G, slots)`` with ``polyint[:n] = p G`` (``G = 1 / rising factorials``)."""
    n, m = np.size(p), int(m)
    powers = np.arange(n - 1, -1, -1, dtype=float)
    if kind == "der":
        keep = max(n - m, 0)
        f = np.ones(keep)
        for j in range(m):
            f = f * (powers[:keep] - j)
        return f, (0, min(m, n))
    g = np.ones(n)
    for j in range(1, m + 1):
        g = g / (powers + j)
    return g, np.arange(n)


def poly_slots(a, ans):
    """The entries of ``np.polyadd``/``np.polysub``'s result that ``a`` adds to (its tail)."""
    return np.arange(np.size(ans) - np.size(a), np.size(ans))


def cov_layout(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """For ``np.cov(m, ...)``: ``(axis, norm, cshape)``: the axis of ``atleast_2d(m)`` that
    indexes the variables, the divisor ``N - ddof`` and the shape of the covariance
    matrix before numpy squeezes a single variable's to a scalar."""
    if y is not None or fweights is not None or aweights is not None:
        raise NotImplementedError("s2s: no derivative of np.cov with y=, fweights= or "
                                  "aweights= (stack y onto m instead)")
    m2 = np.atleast_2d(m)
    axis = 0 if rowvar or m2.shape[0] == 1 else 1
    if ddof is None:
        ddof = 0 if bias else 1
    k = m2.shape[axis]
    return axis, m2.shape[1 - axis] - ddof, (k, k)


def insert_sources(arr, obj, values, axis=None):
    """Where each entry of ``np.insert(arr, obj, values, axis)`` comes from: the flat index
    ``k`` of ``arr`` (``k >= 0``) or ``-1 - k`` for the flat index ``k`` of ``values``
    (broadcast values repeat their index)."""
    arr_idx = np.arange(np.size(arr)).reshape(np.shape(arr))
    val_idx = -1 - np.arange(np.size(values)).reshape(np.shape(values))
    return np.insert(arr_idx, obj, val_idx, axis=axis)


def shapes_of(arrays):
    """The shapes of a tuple of arrays (np.meshgrid's outputs)."""
    return tuple(np.shape(a) for a in arrays)
