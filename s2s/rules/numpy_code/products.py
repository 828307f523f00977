"""Tensor products (``np.tensordot``, ``np.kron`` of up to 3 axes,
``np.inner``, ``np.vdot``, ``np.linalg.matrix_power``; ``np.linalg.multi_dot`` for vmap)
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


def _pair_axes(axes):
    """The contracted axes of one operand in a pair-of-sequences ``axes`` (an integer is
    one axis)."""
    if isinstance(axes, int):
        return (axes,)
    return axes


def _position(src, k, ndim, front):
    """Where axis ``src[k]`` is once ``src[0..k-1]`` have been moved one at a time to the
    end (``front=False``: each removal below it shifts it down) or to positions
    ``0..k-1`` (``front=True``: each one taken from above it shifts it up)."""
    p = src[k] + ndim if src[k] < 0 else src[k]
    cur = p
    for j in range(k):
        q = src[j] + ndim if src[j] < 0 else src[j]
        if front and q > p:
            cur += 1
        if not front and q < p:
            cur -= 1
    return cur


def _to_last(a, src):
    """``a`` with the axes ``src`` moved, in that order, to the end (one axis at a time:
    the jit moves an axis whose number it knows only when running)."""
    out = a
    for k in range(len(src)):
        out = np.moveaxis(out, _position(src, k, a.ndim, False), -1)
    return out


def _from_last(x, src):
    """``_to_last``'s inverse: the moves undone in reverse order."""
    out = x
    for k in range(len(src) - 1, -1, -1):
        out = np.moveaxis(out, -1, _position(src, k, x.ndim, False))
    return out


def _to_first(b, src):
    """``b`` with the axes ``src`` moved, in that order, to the front."""
    out = b
    for k in range(len(src)):
        out = np.moveaxis(out, _position(src, k, b.ndim, True), k)
    return out


def _from_first(x, src):
    """``_to_first``'s inverse."""
    out = x
    for k in range(len(src) - 1, -1, -1):
        out = np.moveaxis(out, k, _position(src, k, x.ndim, True))
    return out


def tensordot(a, b, axes=2):
    """``sum_K a[I, K] b[K, J]`` over the last ``axes`` axes of ``a`` and the first of ``b``;
    for a pair of sequences ``axes``, over those axes of each (moved last in ``a`` and
    first in ``b``, in the order given)."""
    if not isinstance(axes, int):
        src_a, src_b = _pair_axes(axes[0]), _pair_axes(axes[1])
        if len(src_a) != len(src_b):
            raise ValueError("shape-mismatch for sum")
        return np.tensordot(_to_last(a, src_a), _to_first(b, src_b), len(src_a))
    k = _contracted(a, b, axes)
    a2 = np.reshape(a, (a.size // k if k > 0 else 0, k))
    b2 = np.reshape(b, (k, b.size // k if k > 0 else 0))
    return np.reshape(np.dot(a2, b2), a.shape[:-axes] + b.shape[axes:])


def tensordot_vjp(g, a, b, axes=2, which=0):
    """``a_bar[I, K] = sum_J g[I, J] b[K, J]`` (``which=0``) or ``b_bar[K, J] =
    sum_I a[I, K] g[I, J]`` (1), as matrix products of the reshaped operands (for a pair of
    sequences ``axes``, of the operands laid out as ``tensordot`` lays them, the cotangent
    moved back)."""
    if not isinstance(axes, int):
        src_a, src_b = _pair_axes(axes[0]), _pair_axes(axes[1])
        n = len(src_a)
        moved = rt.tensordot_vjp(g, _to_last(a, src_a), _to_first(b, src_b), n, which)
        if which == 0:
            return _from_last(moved, src_a)
        return _from_first(moved, src_b)
    k = _contracted(a, b, axes)
    a2 = np.reshape(a, (a.size // k if k > 0 else 0, k))
    b2 = np.reshape(b, (k, b.size // k if k > 0 else 0))
    g2 = np.reshape(g, (a2.shape[0], b2.shape[1]))
    if which == 0:
        return np.reshape(np.dot(g2, np.transpose(b2)), a.shape)
    return np.reshape(np.dot(np.transpose(a2), g2), b.shape)


def kron(a, b):
    """``kron(a, b)[i p + k, j q + l] = a[i, j] b[k, l]`` (``b`` of shape ``(p, q)``), and the
    same interleaving along every axis for vectors and 3-D arrays: the operand with fewer
    axes is given leading axes of length 1 first (numpy's rule), then the product of
    the two, spread on alternate axes, is reshaped.  (One test of ranks per ``if``: each
    folds when compiling.)"""
    if np.ndim(a) < np.ndim(b):
        return _kron_same_rank(_leading_ones(a, np.ndim(b) - np.ndim(a)), b)
    return _kron_same_rank(a, _leading_ones(b, np.ndim(a) - np.ndim(b)))


def _kron_same_rank(a, b):
    if np.ndim(a) == 0:
        return a * b
    if np.ndim(a) == 1:
        return np.reshape(np.expand_dims(a, 1) * np.expand_dims(b, 0),
                          (a.shape[0] * b.shape[0],))
    if np.ndim(a) == 2:
        return np.reshape(np.expand_dims(np.expand_dims(a, 1), 3)
                          * np.expand_dims(np.expand_dims(b, 0), 2),
                          (a.shape[0] * b.shape[0], a.shape[1] * b.shape[1]))
    if np.ndim(a) == 3:
        return np.reshape(np.expand_dims(np.expand_dims(np.expand_dims(a, 1), 3), 5)
                          * np.expand_dims(np.expand_dims(np.expand_dims(b, 0), 2), 4),
                          (a.shape[0] * b.shape[0], a.shape[1] * b.shape[1],
                           a.shape[2] * b.shape[2]))
    raise NotImplementedError("s2s: np.kron of arrays of more than 3 axes")


def _leading_ones(x, missing):
    """``x`` with ``missing`` (0 to 3) leading axes of length 1."""
    if missing == 0:
        return x
    if missing == 1:
        return np.expand_dims(x, 0)
    if missing == 2:
        return np.expand_dims(np.expand_dims(x, 0), 0)
    return np.expand_dims(np.expand_dims(np.expand_dims(x, 0), 0), 0)


def inner(a, b):
    """``sum_k a[..., k] b[..., k]`` over the last axes (a product for a number)."""
    if np.ndim(a) == 0:  # (one test per if: each folds when compiling)
        return a * b
    if np.ndim(b) == 0:
        return a * b
    if np.ndim(a) + np.ndim(b) == 2:
        return np.dot(a, b)
    n = a.shape[-1]
    if b.shape[-1] != n:
        raise ValueError("shapes not aligned: last dimensions differ")
    a2 = np.reshape(a, (a.size // n if n > 0 else 0, n))
    b2 = np.reshape(b, (b.size // n if n > 0 else 0, n))
    return np.reshape(np.dot(a2, np.transpose(b2)), a.shape[:-1] + b.shape[:-1])


def vdot(a, b):
    """``sum conj(a) b`` over the flattened arrays."""
    return np.dot(np.conj(np.ravel(a)), np.ravel(b))


def matrix_power(a, n):
    """``a`` multiplied by itself ``n`` times (the identity for 0; the inverse's power for
    a negative ``n``), by repeated squaring, for a square matrix or a stack of them."""
    if np.ndim(a) < 2:
        raise np.linalg.LinAlgError("%d-dimensional array given. Array must be at least "
                                    "two-dimensional" % np.ndim(a))
    if a.shape[-2] != a.shape[-1]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if n < 0:
        if np.issubdtype(a.dtype, np.integer):  # (folds when compiling: one result type)
            raise NotImplementedError("s2s.jit: np.linalg.matrix_power of an integer "
                                      "matrix to a negative power (numpy's result is float)")
        else:
            return _power(np.linalg.inv(a), -n)
    return _power(a, n)


def _power(a, n):
    result = np.zeros(a.shape, dtype=a.dtype)
    for i in range(a.shape[-1]):
        result[..., i, i] = 1
    base = a
    k = n
    while k > 0:
        if k % 2 == 1:
            result = np.matmul(result, base)
        k = k // 2
        if k > 0:
            base = np.matmul(base, base)
    return result


def _core_check(name, signature, size, want):
    """numpy's error for operand 1 of a generalized ufunc whose core dimension 0 differs
    from operand 0's (numpy's message also gives the two sizes)."""
    if size != want:
        raise ValueError(name + ": Input operand 1 has a mismatch in its core dimension 0, "
                         "with gufunc signature " + signature)


def vecdot(x1, x2, out=None, axis=-1):
    """``np.vecdot``, ``(n),(n)->()``: ``sum(conj(x1) * x2)`` over the last axis, the
    other axes broadcast (``axis=`` other than -1 is not compiled)."""
    if axis != -1:
        raise NotImplementedError("s2s.jit: np.vecdot with axis=")
    _core_check("vecdot", "(n),(n)->()", np.shape(x2)[-1], np.shape(x1)[-1])
    return np.sum(np.conj(x1) * x2, axis=-1)


def matvec(x1, x2, out=None):
    """``np.matvec``, ``(m,n),(n)->(m)``: ``x1 @ x2`` per stacked matrix and vector."""
    _core_check("matvec", "(m,n),(n)->(m)", np.shape(x2)[-1], np.shape(x1)[-1])
    return np.sum(x1 * np.expand_dims(x2, -2), axis=-1)


def multi_dot(arrays, *, out=None):
    """``np.linalg.multi_dot``: the factors multiplied left to right with ``np.dot`` (a 1-D
    first factor a row, a 1-D last one a column, as ``np.dot`` reads them; numpy picks the
    cheapest order, the same value up to rounding); at least two factors, the inner ones
    matrices."""
    if out is not None:
        raise NotImplementedError("s2s: np.linalg.multi_dot with out=")
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    result = arrays[0]
    for k in range(1, len(arrays)):
        if 0 < k < len(arrays) - 1 and np.ndim(arrays[k]) != 2:
            raise ValueError("multi_dot: the inner factors must be 2-dimensional")
        result = np.dot(result, arrays[k])
    return result


def vecmat(x1, x2, out=None):
    """``np.vecmat``, ``(n),(n,m)->(m)``: ``conj(x1) @ x2`` per stacked vector and matrix."""
    _core_check("vecmat", "(n),(n,m)->(m)", np.shape(x2)[-2], np.shape(x1)[-1])
    return np.sum(np.expand_dims(np.conj(x1), -1) * x2, axis=-2)


# np.kron has no rules of its own: every transform reads this code (its derivatives,
# batching and lowering come from expand_dims, multiply and reshape)
definline(np.kron, code=kron)
definline(_leading_ones, _kron_same_rank)
for _fn, _code in ((np.tensordot, tensordot), (rt.tensordot_vjp, tensordot_vjp),
                   (np.inner, inner), (np.vdot, vdot),
                   (np.linalg.matrix_power, matrix_power)):
    definline(_fn, code=_code, modes=("jit", "vmap"))
definline(np.linalg.multi_dot, code=multi_dot, modes=("vmap",))
definline(_contracted, _power, _pair_axes, _position, _to_last, _from_last, _to_first,
          _from_first, modes=("jit", "vmap"))
if hasattr(np, "vecdot"):  # numpy >= 2.0 (matvec, vecmat: 2.2); vmap batches the gufuncs
    for _fn, _code in ((np.vecdot, vecdot), (getattr(np, "matvec", None), matvec),
                       (getattr(np, "vecmat", None), vecmat)):
        if _fn is not None:
            definline(_fn, code=_code, modes=("jit",))
definline(_core_check, modes=("jit",))
