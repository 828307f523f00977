"""VJP helpers of the structural numpy primitives (reshape, transpose, joins,
tile, repeat, sort, linspace, diag...).

Each undoes the data movement of its primitive; see ``vjps`` for the
conventions (real cotangents for real inputs, the input's dtype and shape,
writable arrays).
"""
from __future__ import annotations

import numpy as np

from .vjps import _fit, _sum_to, trace_vjp


def transpose_vjp(g, a, axes=None):
    """``a_bar = transpose(g, inverse permutation of axes)``."""
    if axes is None:
        return _fit(np.transpose(g), a)
    nd = np.ndim(a)
    return _fit(np.transpose(g, np.argsort([int(i) % nd for i in axes])), a)


def reshape_vjp(g, a, order="C"):
    """``a_bar = reshape(g, shape(a))`` (ravel, squeeze, expand_dims, flatten, reshape)."""
    order = "C" if order in ("K", "A", None) else order
    return _fit(np.reshape(g, np.shape(a), order=order), a)


def _pieces_vjp(g, xs, promoted, axis):
    """Split ``g`` along ``axis`` into pieces shaped like ``promoted``, reshaped like ``xs``."""
    cuts = np.cumsum([np.shape(p)[axis] for p in promoted])[:-1]
    out = [None if gi is None else _fit(np.reshape(gi, np.shape(x)), x)
           for gi, x in zip(np.split(np.asarray(g), cuts, axis=axis), xs)]
    return type(xs)(out) if isinstance(xs, (list, tuple)) else out


def hstack_vjp(g, tup):
    """Cotangents of ``tup`` for ``np.hstack(tup)`` (1-D pieces: axis 0, else axis 1)."""
    promoted = [np.atleast_1d(x) for x in tup]
    return _pieces_vjp(g, tup, promoted, 0 if promoted[0].ndim == 1 else 1)


def vstack_vjp(g, tup):
    """Cotangents of ``tup`` for ``np.vstack(tup)`` (each promoted to 2-D, axis 0)."""
    return _pieces_vjp(g, tup, [np.atleast_2d(x) for x in tup], 0)


def diag_vjp(g, v, k=0):
    """``np.diag``: for 1-D ``v`` (builds a matrix) ``v_bar = diag(g, k)``;
    for 2-D ``v`` (extracts the diagonal) ``v_bar`` = zeros with ``g`` on it."""
    if np.ndim(v) == 1:
        return _fit(np.array(np.diag(g, k)), v)
    return trace_vjp(g, v, k, 0, 1)


def tile_vjp(g, a, reps):
    """``a_bar`` = the sum of the tiles of ``g`` (``np.tile(a, reps)``)."""
    shape = np.shape(a)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    d = max(len(shape), len(reps))
    shape_p = (1,) * (d - len(shape)) + tuple(shape)
    reps_p = (1,) * (d - len(reps)) + reps
    inter = [n for pair in zip(reps_p, shape_p) for n in pair]
    ct = np.reshape(g, inter).sum(axis=tuple(range(0, 2 * d, 2)))
    return _fit(np.reshape(ct, shape), a)


def repeat_vjp(g, a, repeats, axis=None):
    """``a_bar_i = sum of g over the copies of a_i`` (``np.repeat``)."""
    shape = np.shape(a)
    g = np.asarray(g)
    if axis is None:
        n, axis, flat_shape = int(np.prod(shape)), 0, (int(np.prod(shape)),)
    else:
        axis = int(axis) % len(shape)
        n, flat_shape = shape[axis], shape
    src = np.repeat(np.arange(n), repeats)
    gm = np.moveaxis(g, axis, 0)
    out = np.zeros((n,) + gm.shape[1:], dtype=np.result_type(g.dtype, float))
    np.add.at(out, src, gm)
    return _fit(np.moveaxis(out, 0, axis).reshape(flat_shape).reshape(shape), a)


def sort_vjp(g, a, axis=-1):
    """``a_bar[perm] = g`` with ``perm = argsort(a, stable)``: the sort permutation undone."""
    a_arr = np.asarray(a)
    g = np.asarray(g)
    if axis is None:
        perm = np.argsort(a_arr.reshape(-1), kind="stable")
        out = np.zeros(perm.shape, dtype=np.result_type(g.dtype, float))
        out[perm] = g
        return _fit(out.reshape(a_arr.shape), a)
    perm = np.argsort(a_arr, axis=axis, kind="stable")
    out = np.zeros(a_arr.shape, dtype=np.result_type(g.dtype, float))
    np.put_along_axis(out, perm, g, axis)
    return _fit(out, a)


def _linspace_weights(num, endpoint, retstep, which):
    """``d y_i / d start = 1 - t_i`` (``which`` 0) or ``d y_i / d stop = t_i`` (1) for
    ``y = np.linspace(start, stop, num, endpoint)``, ``t_i = i / (num - 1)`` (``i / num``
    without the endpoint)."""
    if retstep:
        raise NotImplementedError("s2s: no derivative of np.linspace(..., retstep=True)")
    num = int(num)
    div = (num - 1 if endpoint else num) or 1
    t = np.arange(num) / div
    if num == 1 and endpoint:
        t = np.zeros(1)
    return t if which == 1 else 1 - t


def linspace_vjp(g, start, stop, num=50, endpoint=True, retstep=False, axis=0, which=0):
    """Cotangent of ``start`` (0) or ``stop`` (1) for ``np.linspace``.

    ``y_i = start (1 - t_i) + stop t_i`` with ``t_i = i / (num - 1)`` (``i / num``
    without the endpoint), so ``start_bar = sum_i g_i (1 - t_i)``, ``stop_bar = sum_i g_i t_i``.
    """
    w = _linspace_weights(num, endpoint, retstep, which)
    gm = np.moveaxis(np.asarray(g), axis, -1)
    ct = np.sum(gm * w, axis=-1)
    x = stop if which == 1 else start
    return _fit(_sum_to(ct, np.shape(x)), x)


def full_vjp(g, fill_value):
    """``fill_value_bar = sum of g`` over the broadcast (``np.full``)."""
    return _fit(_sum_to(g, np.shape(fill_value)), fill_value)


def astype_vjp(g, x):
    """``x_bar = g`` converted back to ``x``'s (floating) dtype and shape; real for real ``x``."""
    return _fit(np.reshape(g, np.shape(x)), x)


def take_vjp(g, a, indices, axis=None, mode="raise"):
    """``a_bar`` = zeros with ``g`` added at the taken positions (repeats accumulate)."""
    shape = np.shape(a)
    g = np.asarray(g)
    if axis is None:
        n, out_shape, axis = int(np.prod(shape)), (int(np.prod(shape)),), 0
    else:
        axis = int(axis) % len(shape)
        n, out_shape = shape[axis], shape
    idx = np.asarray(indices)
    idx = np.mod(idx, n) if mode == "wrap" else np.clip(idx, 0, n - 1) if mode == "clip" else idx
    out = np.zeros(out_shape, dtype=np.result_type(g.dtype, float))
    np.add.at(out, (slice(None),) * axis + (idx,), g)
    return _fit(out.reshape(shape), a)
