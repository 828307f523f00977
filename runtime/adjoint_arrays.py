"""Cotangents of numpy array operations (``np.array``, ``split``, ``stack``,
``concatenate``, ``@``, ``clip``), called by adjoint code (``rt.split_vjp`` ...).

Each function returns the cotangent of one operand given the cotangent ``g`` of
the result, in that operand's shape (and real when the operand is real).
"""
from __future__ import annotations

import numpy as np

from .adjoint import _F64, _real_if_real, unbroadcast

_dot = np.dot
_concatenate = np.concatenate


def array_vjp(g, x):
    """Cotangent of the nested list/tuple ``x`` for ``y = np.array(x)``."""
    if isinstance(x, (list, tuple)):
        return type(x)(array_vjp(g[i], v) for i, v in enumerate(x))
    return unbroadcast(g, x)


def split_vjp(gs, x, indices_or_sections, axis=0):
    """Cotangent of ``x`` for ``ys = np.split(x, ...)``: the pieces concatenated."""
    for g in gs:
        if type(g) is not np.ndarray:
            break
    else:  # no zero pieces: nothing to fill in
        return _concatenate(gs, axis)
    pieces = np.split(np.zeros(np.shape(x)), indices_or_sections, axis)
    parts = [p if gi is None else gi for p, gi in zip(pieces, gs)]
    return np.concatenate(parts, axis=axis)


def stack_vjp(g, xs, axis=0):
    """Cotangents of ``xs`` for ``y = np.stack(xs, axis)``."""
    if isinstance(xs, (list, tuple)):
        return type(xs)(unbroadcast(np.take(g, i, axis=axis), x) for i, x in enumerate(xs))
    return _real_if_real(np.moveaxis(g, axis, 0).copy(), xs)


def concatenate_vjp(g, xs, axis=0):
    """Cotangents of ``xs`` for ``y = np.concatenate(xs, axis)``."""
    if axis is None:
        sizes = [np.size(x) for x in xs]
        g = np.reshape(g, -1)
        axis = 0
    else:
        sizes = [np.shape(x)[axis] for x in xs]
    cuts = np.cumsum(sizes)[:-1]
    pieces = np.split(g, cuts, axis=axis)
    out = [_real_if_real(np.reshape(p, np.shape(x)), x) for p, x in zip(pieces, xs)]
    return type(xs)(out) if isinstance(xs, (list, tuple)) else np.stack(out)


def _ndims(a, b):
    if type(a) is np.ndarray and type(b) is np.ndarray:
        return a.ndim, b.ndim
    return np.ndim(a), np.ndim(b)


def _matrix_vector_float64(g, a, b) -> bool:
    """``a`` a float64 matrix, ``b`` and ``g`` float64 vectors (``a @ b`` and its cotangent)."""
    return (type(g) is np.ndarray and type(a) is np.ndarray and type(b) is np.ndarray
            and g.dtype is _F64 and a.dtype is _F64 and b.dtype is _F64
            and a.ndim == 2 and b.ndim == 1 and g.ndim == 1)


def matmul_vjp_lhs(g, a, b):
    """Cotangent of ``a`` in ``a @ b`` (numpy's 1-D promotion rules undone)."""
    if _matrix_vector_float64(g, a, b):
        # the common case: matrix @ vector, shape of ``a``.  The outer product as a
        # matrix product with an inner dimension of 1 (each entry one rounded product,
        # as np.multiply.outer gives, but BLAS's loop is twice as fast)
        return _dot(g[:, None], b[None, :])
    a_nd, b_nd = _ndims(a, b)
    if b_nd == 1:
        if a_nd == 1:
            return g * b
        if a_nd == 2:  # matrix @ vector: the outer product
            return unbroadcast(np.multiply.outer(g, b), a)
        return unbroadcast(np.expand_dims(g, -1) * b, a)
    if a_nd == 2 and b_nd == 2:
        return unbroadcast(g @ np.asarray(b).T, a)
    if a_nd == 1:
        return unbroadcast(np.matmul(b, np.expand_dims(g, -1))[..., 0], a)
    return unbroadcast(np.matmul(g, np.swapaxes(b, -1, -2)), a)


def matmul_vjp_rhs(g, a, b):
    """Cotangent of ``b`` in ``a @ b`` (numpy's 1-D promotion rules undone)."""
    if _matrix_vector_float64(g, a, b):
        return _dot(g, a)  # the common case: matrix @ vector, shape of ``b`` (``a.T @ g``)
    a_nd, b_nd = _ndims(a, b)
    if a_nd == 1:
        if b_nd == 1:
            return g * a
        if b_nd == 2:  # vector @ matrix: the outer product
            return unbroadcast(np.multiply.outer(a, g), b)
        return unbroadcast(np.expand_dims(a, -1) * np.expand_dims(g, -2), b)
    if a_nd == 2 and b_nd <= 2:  # matrix @ vector or matrix
        return unbroadcast(np.asarray(a).T @ g, b)
    if b_nd == 1:
        return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), np.expand_dims(g, -1))[..., 0], b)
    return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), g), b)


def frexp_scale(x):
    """``2**-e`` where ``x = m 2**e`` (``frexp``): the factor ``dm/dx``, piecewise constant
    in ``x`` (a Python float for a Python number, like ``math.frexp``'s parts)."""
    if isinstance(x, (float, int)):
        import math
        return math.ldexp(1.0, -math.frexp(x)[1])
    return np.ldexp(1.0, -np.frexp(x)[1])


def clip_inside(a, a_min, a_max):
    """1.0 where ``a_min <= a <= a_max`` (a None bound is absent), else 0.0."""
    inside = np.ones(np.shape(a), dtype=bool)
    if a_min is not None:   # not in place: a bound may broadcast ``a`` to a larger shape
        inside = inside & (np.asarray(a) >= a_min)
    if a_max is not None:
        inside = inside & (np.asarray(a) <= a_max)
    return inside.astype(float)
