"""VJP helpers of reductions, products and structural numpy primitives.

Plain numpy.  Each helper returns the cotangent of one input given the
cotangent ``g`` of the result (and sometimes the result ``ans``).  JAX's
convention for complex numbers: a holomorphic primitive pulls ``g`` back to
``g * f'(x)`` (no conjugation); a real-valued function of a complex input
(norm, var, std) pulls a real ``g`` back to ``g * conj(df/dRe x)``-style
``g * conj(x)/|x|``.  Cotangents of real inputs are real, have the input's
shape and floating dtype, and are writable arrays (never read-only views).
"""
from __future__ import annotations

import string

import numpy as np

from .adjoint import _F64
from .adjoint_arrays import array_vjp


# --- small utilities ---------------------------------------------------------
def _axes(axis, ndim):
    """``axis`` (None, int, tuple, negative) as a sorted tuple of axes >= 0."""
    if axis is None:
        return tuple(range(ndim))
    if np.ndim(axis) == 0:
        axis = (axis,)
    return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()


def _expand(v, ndim, axis, keepdims):
    """The reduced value ``v`` with the reduced axes put back as length-1 axes."""
    v = np.asarray(v)
    if keepdims:
        return v
    return np.reshape(v, v.shape) if not ndim else np.expand_dims(v, _axes(axis, ndim))


def _fit(ct, x):
    """``ct`` as a cotangent of ``x``: real for real ``x``, ``x``'s float dtype, writable."""
    if isinstance(x, (list, tuple)):
        return array_vjp(ct, x)
    ct = np.asarray(ct)
    if np.iscomplexobj(ct) and not np.iscomplexobj(x):
        ct = ct.real
    dt = getattr(x, "dtype", None)
    if dt is not None and np.issubdtype(dt, np.inexact) and ct.dtype != dt:
        ct = ct.astype(dt)
    if not ct.flags.writeable:
        ct = ct.copy()
    if ct.shape == () and not isinstance(x, np.ndarray):
        return ct[()]
    return ct


def _sum_to(ct, shape):
    """``ct`` summed over broadcast axes down to ``shape``."""
    ct = np.asarray(ct)
    extra = ct.ndim - len(shape)
    if extra > 0:
        ct = ct.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and ct.shape[i] != 1)
    return ct.sum(axis=axes, keepdims=True) if axes else ct


def _sgn(x):
    """``conj(x)/|x|`` (``sign(x)`` for real ``x``), 0 at 0: the cotangent factor of ``|x|``."""
    x = np.asarray(x)
    if not np.iscomplexobj(x):
        return np.sign(x)
    ax = np.abs(x)
    return np.where(ax == 0, 0, np.conj(x) / np.where(ax == 0, 1, ax))


def _whole_float64(g, a) -> bool:
    """``a`` a float64 array of at least one axis, ``g`` a real float scalar or 0-d array (the
    cotangent of a reduction of all of ``a``)."""
    return (type(a) is np.ndarray and a.dtype is _F64 and a.ndim > 0
            and (type(g) is float or type(g) is np.float64
                 or (type(g) is np.ndarray and g.ndim == 0 and g.dtype is _F64)))


_count_nonzero = np.count_nonzero


def _revcumsum(v, axis):
    return np.flip(np.cumsum(np.flip(v, axis), axis), axis)


def _no_where(where):
    if where is not True:
        raise NotImplementedError("s2s: this derivative does not support where=")


# --- reductions --------------------------------------------------------------
def _sum_ct(g, a, axis, keepdims, where):
    shape = np.shape(a)
    ct = np.broadcast_to(_expand(g, len(shape), axis, keepdims), shape)
    return ct if where is True else np.where(where, ct, 0)


def sum_vjp(g, a, axis=None, keepdims=False, where=True):
    """``a_bar = broadcast(g)`` over the reduced axes (0 where ``where`` is False)."""
    if axis is None and where is True and _whole_float64(g, a):
        out = np.empty(a.shape)  # the common case: a float64 array summed whole
        out.fill(g)  # (np.full's Python wrapper costs more than the fill on small arrays)
        return out
    return _fit(np.array(_sum_ct(g, a, axis, keepdims, where)), a)


def mean_vjp(g, a, axis=None, keepdims=False, where=True):
    """``a_bar = broadcast(g) / n``, ``n`` the number of reduced (selected) entries."""
    shape = np.shape(a)
    if where is True:
        n = int(np.prod([shape[i] for i in _axes(axis, len(shape))]))
    else:
        n = np.sum(np.broadcast_to(where, shape), axis=_axes(axis, len(shape)), keepdims=True)
    return _fit(_sum_ct(g, a, axis, keepdims, where) / n, a)


def prod_vjp(g, a, axis=None, keepdims=False, where=True):
    """``a_bar_i = g * prod_{j != i} a_j`` from exclusive cumulative products (zeros are fine)."""
    _no_where(where)
    a_in, a = a, np.asarray(a)
    if a.ndim == 0:
        return _fit(np.asarray(g) * np.ones_like(a), a_in)
    axes = _axes(axis, a.ndim)
    perm = [i for i in range(a.ndim) if i not in axes] + list(axes)
    at = np.transpose(a, perm)
    flat = at.reshape(at.shape[:a.ndim - len(axes)] + (-1,))
    if flat.shape[-1] == 0:
        return _fit(np.zeros(a.shape), a_in)
    ones = np.ones(flat.shape[:-1] + (1,), dtype=flat.dtype)
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], -1), -1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], -1), -1)[..., ::-1]
    excl = np.transpose((left * right).reshape(at.shape), np.argsort(perm))
    return _fit(_expand(g, a.ndim, axis, keepdims) * excl, a_in)


def max_vjp(g, ans, a, axis=None, keepdims=False, initial=None, where=True):
    """``a_bar = g * [a == max] / #ties``: tied extrema share the cotangent (as in JAX).

    Also serves ``min``.  If ``initial`` wins, no entry gets a cotangent.
    """
    _no_where(where)
    if axis is None and initial is None and _whole_float64(g, a):
        mask = a == ans  # the common case: the extremum of a whole float64 array
        n = _count_nonzero(mask)
        if n == 1 and -np.inf < g < np.inf:  # one winner: g there, zeros (no product)
            out = np.zeros(a.shape)
            if a.ndim == 1:
                out[mask.argmax()] = g
            else:
                out.flat[mask.argmax()] = g
            return out
        return mask * (g / max(n, 1))  # NaN in a: no entry is it
    a_in, a = a, np.asarray(a)
    mask = a == _expand(ans, a.ndim, axis, keepdims)
    count = np.sum(mask, axis=_axes(axis, a.ndim), keepdims=True)
    return _fit(_expand(g, a.ndim, axis, keepdims) * mask / np.maximum(count, 1), a_in)


def var_vjp(g, a, axis=None, ddof=0, keepdims=False, where=True, correction=None):
    """``a_bar = g * 2 conj(a - mean(a)) / (n - ddof)``.

    (``var = sum |a - mean|^2 / (n - ddof)``; ``correction`` is numpy's alias of ``ddof``.)
    """
    _no_where(where)
    if correction is not None:
        ddof = correction
    a_in, a = a, np.asarray(a)
    axes = _axes(axis, a.ndim)
    n = int(np.prod([a.shape[i] for i in axes]))
    centred = a - np.mean(a, axis=axes, keepdims=True)
    return _fit(_expand(g, a.ndim, axis, keepdims) * 2 * np.conj(centred) / (n - ddof), a_in)


def cumsum_vjp(g, a, axis=None):
    """``a_bar_i = sum_{k >= i} g_k`` (a reversed cumulative sum; flat when axis is None)."""
    g = np.asarray(g)
    if axis is None:
        return _fit(_revcumsum(g.reshape(-1), 0).reshape(np.shape(a)), a)
    return _fit(_revcumsum(g, axis), a)


def cumprod_vjp(g, a, axis=None):
    """``a_bar_i = sum_{k >= i} g_k prod_{j <= k, j != i} a_j``, exact with zeros in ``a``.

    With ``z`` the first zero along the axis: for ``i < z`` it is
    ``revcumsum(g * ans)_i / a_i`` (terms ``k >= z`` vanish); for ``i == z``
    it is ``sum_{k >= z} g_k cumprod(a with a_z := 1)_k``; for ``i > z``, 0.
    """
    shape = np.shape(a)
    x, gg = np.asarray(a), np.asarray(g)
    if axis is None:
        x, gg, axis = x.reshape(-1), gg.reshape(-1), 0
    x, gg = np.moveaxis(x, axis, -1), np.moveaxis(gg, axis, -1)
    n = x.shape[-1]
    idx = np.arange(n)
    iszero = x == 0
    z = np.where(iszero.any(-1, keepdims=True), np.argmax(iszero, -1)[..., None], n)
    ans1 = np.cumprod(np.where(idx == z, 1, x), -1)
    s1 = _revcumsum(gg * ans1 * (idx < z), -1) / np.where(idx < z, x, 1)
    s2 = np.sum(gg * ans1 * (idx >= z), -1, keepdims=True)
    ct = np.where(idx < z, s1, np.where(idx == z, s2, 0))
    return _fit(np.moveaxis(ct, -1, axis).reshape(shape), a)


def _avg_weights(a, axis, weights):
    a = np.asarray(a)
    w = np.asarray(weights)
    if w.shape != a.shape:
        shape = [1] * a.ndim
        shape[int(axis) % a.ndim] = w.shape[0]
        w = w.reshape(shape)
    return w


def average_vjp(g, ans, a, axis=None, weights=None, returned=False, keepdims=False, which=0):
    """Cotangents of ``avg = sum(a w) / sum(w)`` (``which`` 0: of ``a``, 1: of ``weights``).

    ``a_bar = g w / sum(w)``; ``w_bar = g (a - avg) / sum(w)`` summed back to
    the shape of ``weights``.  Without weights it is the mean.
    """
    if returned:
        raise NotImplementedError("s2s: no derivative of np.average(..., returned=True)")
    if weights is None:
        return mean_vjp(g, a, axis, keepdims)
    a_arr = np.asarray(a)
    w = _avg_weights(a_arr, axis, weights)
    axes = _axes(axis, a_arr.ndim)
    sw = np.sum(np.broadcast_to(w, a_arr.shape), axis=axes, keepdims=True)
    gE = _expand(g, a_arr.ndim, axis, keepdims)
    if which == 0:
        return _fit(np.array(np.broadcast_to(gE * w / sw, a_arr.shape)), a)
    ct = gE * (a_arr - _expand(ans, a_arr.ndim, axis, keepdims)) / sw
    wshape = np.shape(weights)
    if w.shape != np.shape(weights):
        keep = int(axis) % a_arr.ndim
        ct = np.sum(ct, axis=tuple(i for i in range(a_arr.ndim) if i != keep))
    return _fit(np.reshape(ct, wshape), weights)


def _share(values, target, axis):
    """``[values == target] / #ties`` along ``axis`` (keepdims)."""
    mask = values == target
    return mask / np.maximum(np.sum(mask, axis=axis, keepdims=True), 1)


def _norm_layout(nd, ord, axis):
    """The normed axes of ``np.linalg.norm(x, ord, axis)`` (``x`` with ``nd`` axes) as a
    tuple, and whether it is a vector norm (else a matrix norm over two axes)."""
    if axis is None and ord is None:
        return tuple(range(nd)), True
    if axis is None:
        if nd not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        return tuple(range(nd)), nd == 1
    axis = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return axis, len(axis) == 1


def norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    """Cotangent of ``x`` for ``np.linalg.norm(x, ord, axis, keepdims)``.

    Vector norms (``d|x|_p = |x|^(p-1) sgn(x) dx / |x|_p^(p-1)``, ``sgn(x) =
    conj(x)/|x|``): ord None/2, 1, inf, -inf (tied extremes share), 0 (zero
    derivative), other p.  Matrix norms over two axes: 'fro' and None
    (``conj(x)/|x|``), 'nuc' (``conj(U Vh)``), 2/-2 (``conj(u_k vh_k)`` for the
    extreme singular pair), 1/-1 (the extreme column's signs), inf/-inf (rows).
    A zero norm gets a zero cotangent for ord None/2/'fro'.
    """
    xa = np.asarray(x)
    nd = xa.ndim
    axis, vector = _norm_layout(nd, ord, axis)
    gE = _expand(g, nd, axis, keepdims)
    nE = _expand(ans, nd, axis, keepdims)
    if vector or ord in (None, "fro"):
        p = 2 if ord is None or ord == "fro" else ord
        if isinstance(p, str):
            raise NotImplementedError(f"s2s: no derivative of a vector norm with ord={ord!r}")
        safe = np.where(nE == 0, 1, nE)
        if p == 2:
            ct = np.where(nE == 0, 0, np.conj(xa) / safe)
        elif p == 1:
            ct = _sgn(xa) * np.ones_like(nE)
        elif p == 0:
            ct = np.zeros(xa.shape)
        elif p in (np.inf, -np.inf):
            ct = _share(np.abs(xa), nE, axis) * _sgn(xa)
        else:
            p = float(p)
            ct = np.abs(xa) ** (p - 1) * _sgn(xa) / safe ** (p - 1)
        return _fit(np.array(np.broadcast_to(gE * ct, xa.shape)), x)
    r, c = (a % nd for a in axis)
    xm = np.moveaxis(xa, (r, c), (-2, -1))
    gm = np.moveaxis(gE, (r, c), (-2, -1))
    nm = np.moveaxis(nE, (r, c), (-2, -1))
    if ord in ("nuc", 2, -2):
        u, _, vh = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":
            ct = np.conj(u @ vh)
        else:
            k = 0 if ord == 2 else u.shape[-1] - 1
            ct = np.conj(u[..., :, k:k + 1] @ vh[..., k:k + 1, :])
    elif ord in (1, -1):
        ct = _share(np.sum(np.abs(xm), -2, keepdims=True), nm, -1) * _sgn(xm)
    elif ord in (np.inf, -np.inf):
        ct = _share(np.sum(np.abs(xm), -1, keepdims=True), nm, -2) * _sgn(xm)
    else:
        raise NotImplementedError(f"s2s: no derivative of a matrix norm with ord={ord!r}")
    return _fit(np.moveaxis(gm * ct, (-2, -1), (r, c)), x)


def trace_vjp(g, a, offset=0, axis1=0, axis2=1):
    """``a_bar`` = zeros with ``g`` on the ``offset`` diagonal of axes ``(axis1, axis2)``.

    Also the cotangent of ``np.diagonal`` (where ``g`` has the diagonal as last axis).
    """
    a_arr = np.asarray(a)
    g = np.asarray(g)
    out = np.zeros(a_arr.shape, dtype=np.result_type(g.dtype, a_arr.dtype, float))
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    n, m = view.shape[-2:]
    rows = np.arange(max(0, -offset), min(n, m - offset))
    view[..., rows, rows + offset] = g if g.ndim == view.ndim - 1 else g[..., None]
    return _fit(out, a)


# --- products ----------------------------------------------------------------
def _tensordot_subscripts(a_nd, b_nd, axes):
    if np.ndim(axes) == 0:
        ax_a, ax_b = list(range(a_nd - axes, a_nd)), list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if np.ndim(ax_a) == 0 else list(ax_a)
        ax_b = [ax_b] if np.ndim(ax_b) == 0 else list(ax_b)
    ax_a = [int(i) % a_nd for i in ax_a]
    ax_b = [int(i) % b_nd for i in ax_b]
    letters = iter(string.ascii_letters)
    a_sub = [next(letters) for _ in range(a_nd)]
    b_sub = [None] * b_nd
    for i, j in zip(ax_a, ax_b):
        b_sub[j] = a_sub[i]
    b_sub = [s if s is not None else next(letters) for s in b_sub]
    out = [s for i, s in enumerate(a_sub) if i not in ax_a] + \
          [s for j, s in enumerate(b_sub) if j not in ax_b]
    return "".join(a_sub), "".join(b_sub), "".join(out)


def tensordot_vjp(g, a, b, axes=2, which=0):
    """Cotangent of ``a`` (``which=0``) or ``b`` (1) in ``y = tensordot(a, b, axes)``.

    With ``y[I,J] = sum_K a[I,K] b[K,J]``: ``a_bar[I,K] = sum_J g[I,J] b[K,J]``
    and ``b_bar[K,J] = sum_I a[I,K] g[I,J]`` (no conjugation), as einsums.
    """
    sa, sb, so = _tensordot_subscripts(np.ndim(a), np.ndim(b), axes)
    if which == 0:
        return _fit(np.einsum(f"{so},{sb}->{sa}", g, b), a)
    return _fit(np.einsum(f"{sa},{so}->{sb}", a, g), b)


def dot_vjp(g, a, b, which=0):
    """Cotangent of ``a`` (0) or ``b`` (1) in ``np.dot(a, b)``.

    Scalars: ``a_bar = sum(g b)``.  Otherwise ``dot`` contracts the last axis
    of ``a`` with the second-to-last of ``b`` (the only one for 1-D ``b``).
    """
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 0 or b_nd == 0:
        other = b if which == 0 else a
        return _scalar_product_vjp(g, other, a if which == 0 else b)
    return tensordot_vjp(g, a, b, ([a_nd - 1], [max(b_nd - 2, 0)]), which)


def inner_vjp(g, a, b, which=0):
    """Cotangent of ``a`` (0) or ``b`` (1) in ``np.inner(a, b)`` (last axes contracted)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        other = b if which == 0 else a
        return _scalar_product_vjp(g, other, a if which == 0 else b)
    return tensordot_vjp(g, a, b, ([-1], [-1]), which)


def _scalar_product_vjp(g, other, x):
    """Cotangent of ``x`` in ``x * other`` with broadcasting: ``sum(g * other)`` to x's shape."""
    ct = np.asarray(g) * np.asarray(other)
    if np.ndim(x) == 0:
        ct = np.sum(ct)
    return _fit(ct, x)
