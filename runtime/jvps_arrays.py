"""JVP (forward-mode) helpers of the reductions, products and structural
primitives (``s2s/rules/reductions.py``, ``products.py``, ``shape.py``).

Plain numpy.  Each helper returns the tangent contribution of one input,
shaped like the primal result ``ans``, given that input's tangent ``t``.
Linear primitives need no helper (their JVP is the primitive applied to the
tangent); these are the non-linear ones and the ones with bookkeeping
(ties, zeros, dtypes, symbolic-zero entries of sequences).  Complex numbers:
the tangent is the ordinary R-linear differential; a real-valued function
of a complex input (var, std, norm) has a real tangent ``Re(conj(df) t)``.
"""
from __future__ import annotations

import numpy as np

from .adjoint import zeros_like
from .vjps import _avg_weights, _axes, _expand, _no_where, max_vjp, norm_vjp


def _reduce(v, axes, keepdims):
    """``sum(v, axes)`` (``keepdims`` as numpy); a 0-d result stays 0-d."""
    return np.sum(v, axis=axes, keepdims=keepdims)


def _like_ans(v, ans):
    """``v`` as a tangent of ``ans``: a scalar (not a 0-d array) for a scalar ``ans``."""
    v = np.asarray(v)
    if v.shape == () and not isinstance(ans, np.ndarray):
        return v[()]
    return v


# --- reductions --------------------------------------------------------------
def _exclusive_prod(a, axes):
    """``prod_{j != i} a_j`` over ``axes`` for every entry ``i`` (exact with zeros)."""
    perm = [i for i in range(a.ndim) if i not in axes] + list(axes)
    at = np.transpose(a, perm)
    flat = at.reshape(at.shape[:a.ndim - len(axes)] + (-1,))
    if flat.shape[-1] == 0:
        return np.zeros(a.shape, dtype=a.dtype)
    ones = np.ones(flat.shape[:-1] + (1,), dtype=flat.dtype)
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], -1), -1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], -1), -1)[..., ::-1]
    return np.transpose((left * right).reshape(at.shape), np.argsort(perm))


def prod_jvp(t, ans, a, axis=None, keepdims=False, where=True):
    """``d prod(a) = sum_i t_i prod_{j != i} a_j`` over the reduced axes (zeros are fine)."""
    _no_where(where)
    a = np.asarray(a)
    t = np.asarray(t)
    if a.ndim == 0:
        return _like_ans(t, ans)
    axes = _axes(axis, a.ndim)
    return _like_ans(_reduce(t * _exclusive_prod(a, axes), axes, keepdims), ans)


def max_jvp(t, ans, a, axis=None, keepdims=False, initial=None, where=True):
    """``d max(a) = sum_i t_i [a_i == max] / #ties``: the mean tangent of the tied extrema.

    Also serves ``min``.  If ``initial`` wins, the tangent is 0 (as in the VJP).  The
    shares ``[a_i == max] / #ties`` are ``max_vjp`` of a cotangent of ones, so this is
    plain numpy over primitives that s2s reads as code (``rules/helper_code.py``):
    a transform without a rule of its own for it (``jit``) inlines it.
    """
    share = max_vjp(np.ones_like(ans), ans, a, axis, keepdims, initial, where)
    return np.sum(np.asarray(t) * share, axis=axis, keepdims=keepdims)


def var_jvp(t, ans, a, axis=None, ddof=0, keepdims=False, where=True, correction=None):
    """``d var(a) = 2 Re(sum(conj(a - mean(a)) t)) / (n - ddof)``.

    (``sum(conj(a - mean)) = 0`` removes the ``mean(t)`` term; ``correction``
    is numpy's alias of ``ddof``.)  Real, like ``var``.
    """
    _no_where(where)
    if correction is not None:
        ddof = correction
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    n = int(np.prod([a.shape[i] for i in axes]))
    centred = a - np.mean(a, axis=axes, keepdims=True)
    out = np.real(_reduce(np.conj(centred) * np.asarray(t), axes, keepdims)) * 2 / (n - ddof)
    return _like_ans(out, ans)


def cumprod_jvp(t, ans, a, axis=None):
    """``d cumprod(a)_k = sum_{i <= k} t_i prod_{j <= k, j != i} a_j``, exact with zeros.

    With ``z`` the first zero along the axis: for ``k < z`` it is
    ``ans_k * sum_{i <= k} t_i / a_i``; for ``k >= z`` only ``i = z`` survives:
    ``t_z * cumprod(a with a_z := 1)_k``.  Flat when ``axis`` is None.
    """
    x, tt = np.asarray(a), np.asarray(t)
    if axis is None:
        x, tt, axis = x.reshape(-1), tt.reshape(-1), 0
    x, tt = np.moveaxis(x, axis, -1), np.moveaxis(np.broadcast_to(tt, x.shape), axis, -1)
    n = x.shape[-1]
    idx = np.arange(n)
    iszero = x == 0
    z = np.where(iszero.any(-1, keepdims=True), np.argmax(iszero, -1)[..., None], n)
    ans1 = np.cumprod(np.where(idx == z, 1, x), -1)
    before = idx < z
    s = np.cumsum(np.where(before, tt / np.where(before, x, 1), 0), -1)
    tz = np.sum(np.where(idx == z, tt, 0), -1, keepdims=True)
    out = np.where(before, ans1 * s, tz * ans1)
    return np.moveaxis(out, -1, axis).reshape(np.shape(ans))


def average_jvp(t, ans, a, axis=None, weights=None, returned=False, keepdims=False, which=0):
    """Tangent of ``avg = sum(a w) / sum(w)`` from ``a``'s (``which`` 0) or ``weights``' (1).

    ``d_a avg = sum(t w) / sum(w)`` (the average of ``t``);
    ``d_w avg = sum(t_w (a - avg)) / sum(w)``, ``t_w`` broadcast like ``w``.
    """
    if returned:
        raise NotImplementedError("s2s: no derivative of np.average(..., returned=True)")
    if which == 0:
        return _like_ans(np.average(t, axis=axis, weights=weights, keepdims=keepdims), ans)
    a_arr = np.asarray(a)
    w = _avg_weights(a_arr, axis, weights)
    tw = _avg_weights(a_arr, axis, t)
    axes = _axes(axis, a_arr.ndim)
    sw = np.sum(np.broadcast_to(w, a_arr.shape), axis=axes, keepdims=True)
    num = np.sum(np.broadcast_to(tw * (a_arr - _expand(ans, a_arr.ndim, axis, keepdims)),
                                 a_arr.shape), axis=axes, keepdims=True)
    out = num / sw
    if not keepdims:
        out = np.squeeze(out, axes) if axis is not None else out.reshape(())
    return _like_ans(out, ans)


def norm_jvp(t, ans, x, ord=None, axis=None, keepdims=False):
    """Tangent of ``np.linalg.norm(x, ord, axis, keepdims)``: ``Re(sum(c t))`` over the
    normed axes, ``c`` the per-entry cotangent factor of ``norm_vjp`` with ``g = 1``
    (``conj(x)/|x|`` for the 2-norm, ``conj(U Vh)`` for 'nuc'...; every entry of
    ``x`` feeds exactly one norm, so ``g = 1`` everywhere gives each entry's factor).
    """
    xa = np.asarray(x)
    c = np.asarray(norm_vjp(np.ones(np.shape(ans)), ans, x, ord, axis, keepdims))
    if axis is None:
        axes = tuple(range(xa.ndim))
    else:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return _like_ans(np.real(_reduce(c * np.asarray(t), axes, keepdims)), ans)


# --- structural ----------------------------------------------------------------
def sort_jvp(t, a, axis=-1):
    """``t`` moved by the (stable) sort permutation of ``a``: ``take_along_axis(t, argsort(a))``.

    (Tied entries of ``a`` take the tangent of the one the stable sort puts
    first, matching ``sort_vjp``.)  Flat when ``axis`` is None.
    """
    a_arr, tt = np.asarray(a), np.asarray(t)
    if axis is None:
        return tt.reshape(-1)[np.argsort(a_arr.reshape(-1), kind="stable")]
    return np.take_along_axis(tt, np.argsort(a_arr, axis=axis, kind="stable"), axis)


def _densify(t, x):
    """The tangent ``t`` of the (nested list of) ``x`` with ``None`` entries as zeros."""
    if t is None:
        return zeros_like(x)
    if isinstance(x, (list, tuple)) and isinstance(t, (list, tuple)):
        return [_densify(ti, xi) for ti, xi in zip(t, x)]
    return t


def tangent_as(t, ans):
    """``t`` converted to ``ans``'s dtype: ``Re(t)`` for a real result, and a zero
    (float64) tangent for an integer or boolean result (no derivative)."""
    t = np.asarray(t)
    dt = np.result_type(ans)
    if not np.issubdtype(dt, np.inexact):
        return _like_ans(np.zeros(np.shape(ans)), ans)
    if np.iscomplexobj(t) and not np.issubdtype(dt, np.complexfloating):
        t = np.real(t)
    return _like_ans(t.astype(dt, copy=False), ans)


def astype_jvp(t, ans):
    """Tangent of ``x.astype(dtype)``: a copy of ``t`` in ``ans``'s dtype (a linear map;
    ``Re(t)`` for a complex-to-real cast, zero for a cast to an integer type)."""
    return tangent_as(np.array(t, copy=True), ans)


def array_jvp(t, ans, object, copy=True, ndmin=0):
    """Tangent of ``np.array(object, ...)`` / ``np.asarray``: ``np.array(t)``.

    ``t`` has ``object``'s structure (a nested list of tangents, ``None`` for a
    symbolic zero); the result is converted to ``ans``'s dtype with
    ``tangent_as``.  An array ``t`` is copied exactly when numpy copies the
    primal (``copy`` True; None/False keep a view), so aliasing matches.
    """
    t = _densify(t, object)
    if isinstance(t, np.ndarray) and not copy and np.shape(t) == np.shape(ans):
        out = t
    else:
        out = np.array(t, ndmin=ndmin)
    out = tangent_as(out, ans)
    return out
