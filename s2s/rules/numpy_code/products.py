"""Tensor products (``np.tensordot`` with an integer ``axes``, ``np.kron`` of matrices)
and ``tensordot``'s cotangents, as plain Python the jit compiles: reshapes to matrices
and one ``np.dot`` (the jit's matrix product) or loops."""
import numpy as np

import s2s_runtime as rt

from ..registry import definline


def _contracted(a, b, axes):
    """``K``, the size of the ``axes`` axes contracted: the last of ``a``, the first of
    ``b`` (which must agree)."""
    if axes < 1:
        raise NotImplementedError("s2s.jit: np.tensordot with axes=0 (an outer product)")
    size = 1
    for k in range(axes):
        if a.shape[a.ndim - axes + k] != b.shape[k]:
            raise ValueError("shape-mismatch for sum")
        size *= b.shape[k]
    return size


def tensordot(a, b, axes=2):
    """``sum_K a[I, K] b[K, J]`` over the last ``axes`` axes of ``a`` and the first of ``b``
    (``axes`` an integer; the pair-of-lists form is not compiled)."""
    k = _contracted(a, b, axes)
    a2 = np.reshape(a, (a.size // k if k > 0 else 0, k))
    b2 = np.reshape(b, (k, b.size // k if k > 0 else 0))
    return np.reshape(np.dot(a2, b2), a.shape[:-axes] + b.shape[axes:])


def tensordot_vjp(g, a, b, axes=2, which=0):
    """``a_bar[I, K] = sum_J g[I, J] b[K, J]`` (``which=0``) or ``b_bar[K, J] =
    sum_I a[I, K] g[I, J]`` (1), as matrix products of the reshaped operands."""
    k = _contracted(a, b, axes)
    a2 = np.reshape(a, (a.size // k if k > 0 else 0, k))
    b2 = np.reshape(b, (k, b.size // k if k > 0 else 0))
    g2 = np.reshape(g, (a2.shape[0], b2.shape[1]))
    if which == 0:
        return np.reshape(np.dot(g2, np.transpose(b2)), a.shape)
    return np.reshape(np.dot(np.transpose(a2), g2), b.shape)


def kron(a, b):
    """``kron(a, b)[i p + k, j q + l] = a[i, j] b[k, l]`` (``b`` of shape ``(p, q)``), for
    two matrices."""
    p = b.shape[0]
    q = b.shape[1]
    res = np.empty((a.shape[0] * p, a.shape[1] * q), dtype=(a[:1, :1] * b[:1, :1]).dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            for k in range(p):
                for m in range(q):
                    res[i * p + k, j * q + m] = a[i, j] * b[k, m]
    return res


for _fn, _code in ((np.tensordot, tensordot), (rt.tensordot_vjp, tensordot_vjp),
                   (np.kron, kron)):
    definline(_fn, code=_code, modes=("jit",))
definline(_contracted, modes=("jit",))
