"""Vector norms (``np.linalg.vector_norm``) as plain Python the jit compiles and vmap
reads: over every axis, one axis or a tuple of them (each a vector norm of the
flattened entries, unlike ``np.linalg.norm``'s matrix norms of two axes)."""
import numpy as np

from ..registry import definline


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """``(sum |x|**ord)**(1/ord)`` over ``axis``: the largest ``|x|`` for ``inf``, the
    smallest for ``-inf``, the count of nonzero entries for 0."""
    a = np.abs(x)
    if ord == 2:
        return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))
    if ord == 1:
        return np.sum(a, axis=axis, keepdims=keepdims)
    if ord == np.inf:
        return np.max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return np.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdims) * 1.0
    return np.sum(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


definline(np.linalg.vector_norm, code=vector_norm, modes=("jit", "vmap"))
