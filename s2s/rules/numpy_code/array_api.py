"""``np.linalg``'s array-API names (numpy >= 2.0) as the numpy functions they stand for,
in plain Python the jit compiles and vmap reads: ``matmul`` (operands of at least one
dimension), ``outer`` (1-D operands only), ``cross`` (3-vectors only, along ``axis``),
``diagonal`` and ``trace`` (of the last two axes, of at least two), ``tensordot`` and
``vecdot``.  Each checks what the array-API name refuses
and numpy's namesake does not, with numpy's words, then calls the namesake, whose
lowering, batching rule or code of its own does the work.  Derivatives stay the rules
of each name's own record."""
import numpy as np

from ..registry import definline


def matmul(x1, x2, /):
    """``np.matmul(x1, x2)`` of operands of at least one dimension."""
    if np.ndim(x1) == 0 or np.ndim(x2) == 0:
        k = 0 if np.ndim(x1) == 0 else 1
        raise ValueError(f"matmul: Input operand {k} does not have enough dimensions "
                         f"(has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) "
                         f"requires 1)")
    return np.matmul(x1, x2)


def outer(x1, x2, /):
    """``np.outer(x1, x2)`` of two 1-D arrays (``np.outer`` flattens; this refuses)."""
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={np.ndim(x1)} and x2.ndim={np.ndim(x2)}.")
    return np.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """``np.cross(x1, x2, axis=axis)`` of 3-vectors (``np.cross`` also takes 2-vectors):
    as numpy does it, each operand's ``axis`` moved last, the product of the broadcast
    operands, its last axis moved to ``axis``."""
    n1, n2 = np.shape(x1)[axis], np.shape(x2)[axis]
    if n1 != 3 or n2 != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, "
                         f"but they are {n1} and {n2} dimensional instead.")
    product = np.cross(np.moveaxis(x1, axis, -1), np.moveaxis(x2, axis, -1))
    return np.moveaxis(product, -1, axis)


def _at_least_2d(x):
    if np.ndim(x) < 2:
        raise ValueError("diag requires an array of at least two dimensions")


def diagonal(x, /, *, offset=0):
    """``np.diagonal`` of the last two axes."""
    _at_least_2d(x)
    return np.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """``np.trace`` of the last two axes: the sum of each diagonal."""
    _at_least_2d(x)
    d = np.diagonal(x, offset=offset, axis1=-2, axis2=-1)
    if dtype is None:
        return np.sum(d, axis=-1)
    return np.sum(d, axis=-1, dtype=dtype)


def tensordot(x1, x2, /, *, axes=2):
    return np.tensordot(x1, x2, axes=axes)


def vecdot(x1, x2, /, *, axis=-1):
    return np.vecdot(x1, x2, axis=axis)


if hasattr(np.linalg, "matmul"):  # numpy >= 2.0
    # vmap batches these names with rules of their own: the jit reads the code
    for _name, _code in (("matmul", matmul), ("diagonal", diagonal), ("trace", trace),
                         ("tensordot", tensordot), ("vecdot", vecdot)):
        definline(getattr(np.linalg, _name), code=_code, modes=("jit",))
    for _name, _code in (("outer", outer), ("cross", cross)):
        definline(getattr(np.linalg, _name), code=_code, modes=("jit", "vmap"))
    definline(_at_least_2d, modes=("jit", "vmap"))
