"""Rearranging and masking (``np.flip``, ``np.fliplr``/``flipud``, ``np.rot90``, ``np.roll``,
``np.triu``/``tril``, ``np.squeeze``, ``np.diagonal``, ``np.take``,
``np.take_along_axis``, ``np.tile``), broadcasting (``np.broadcast_to``,
``np.broadcast_arrays``), filling (``np.identity``, ``np.full_like``, ``np.meshgrid`` of
two vectors), counting and rounding, as plain Python the jit compiles."""
import numpy as np

import s2s_runtime as rt
from s2s_runtime import build

from ...errors import UnsupportedSyntaxError
from ..registry import definline
from .rows import rows, unrows


def flip(m, axis=None):
    """``m`` reversed along ``axis`` (every axis for None: the reversed flat order)."""
    if axis is None:
        return np.ravel(m)[::-1].reshape(m.shape)
    return np.moveaxis(np.moveaxis(m, axis, 0)[::-1], 0, axis)


def roll(a, shift, axis=None):
    """``a`` shifted by ``shift`` along ``axis`` with wrap-around (flat for None)."""
    x = rows(a, axis)
    res = np.empty_like(x)
    n = x.shape[1]
    for j in range(x.shape[0]):
        for i in range(n):
            res[j, (i + shift) % n] = x[j, i]
    if axis is None:
        return res.reshape(a.shape)
    return np.moveaxis(res.reshape(np.moveaxis(a, axis, -1).shape), -1, axis)


def _band(m, k, upper):
    """``m`` with the elements below (``upper``) or above diagonal ``k`` of its last two
    axes zeroed: a mask of the diagonals kept, broadcast over the leading axes (no write,
    so the code that batches or differentiates this reads values only)."""
    rows = np.reshape(np.arange(m.shape[-2]), (m.shape[-2], 1))
    cols = np.reshape(np.arange(m.shape[-1]), (1, m.shape[-1]))
    if upper:
        keep = cols - rows >= k
    else:
        keep = cols - rows <= k
    return np.where(keep, m, np.zeros((), dtype=m.dtype))


def triu(m, k=0):
    """The upper triangle of ``m`` (last two axes), from diagonal ``k`` on."""
    return _band(m, k, True)


def tril(m, k=0):
    """The lower triangle of ``m`` (last two axes), up to diagonal ``k``."""
    return _band(m, k, False)


def count_nonzero(a, axis=None, keepdims=False):
    """How many elements of ``a`` are not zero (along ``axis``)."""
    return np.sum(a != 0, axis=axis)


def around(a, decimals=0, out=None):
    """``a`` rounded half to even at ``decimals`` decimals, as numpy computes it
    (``rint(a * 10**decimals) / 10**decimals``; negative ``decimals`` divide first)."""
    if decimals >= 0:
        scale = 10.0 ** decimals
        return np.rint(a * scale) / scale
    scale = 10.0 ** (-decimals)
    return np.rint(a / scale) * scale


def repeat(a, repeats, axis=None):
    """Each element repeated ``repeats`` times along ``axis`` (of the flat array for
    None); ``repeats`` one integer."""
    if repeats < 0:
        raise ValueError("negative dimensions are not allowed")
    x = rows(a, axis)
    n = x.shape[1]
    res = np.empty((x.shape[0], n * repeats), dtype=x.dtype)
    for j in range(x.shape[0]):
        for i in range(n):
            for t in range(repeats):
                res[j, i * repeats + t] = x[j, i]
    if axis is None:
        return res.reshape(-1)
    moved = np.moveaxis(a, axis, -1)
    return np.moveaxis(res.reshape(moved.shape[:-1] + (n * repeats,)), -1, axis)


def repeat_vjp(g, a, repeats, axis=None):
    """``a_bar_i`` = the sum of ``g`` over the ``repeats`` copies of ``a_i``."""
    x = rows(a, axis)
    gg = rows(g, axis)
    res = np.zeros((x.shape[0], x.shape[1]))
    for j in range(x.shape[0]):
        for i in range(x.shape[1]):
            for t in range(repeats):
                res[j, i] += gg[j, i * repeats + t]
    if axis is None:
        return res.reshape(a.shape)
    return unrows(res, a, axis)


def broadcast_to(array, shape, subok=False):
    """``array`` broadcast to ``shape`` (a tuple), as a new array (numpy returns a
    read-only view: the values are the same)."""
    res = np.zeros(shape, dtype=array.dtype) + array
    if res.shape != shape:
        raise ValueError("operands could not be broadcast together with the requested shape")
    return res


def nonzero(a):
    """The indices of the nonzero elements, as a tuple of one index array (1-D arrays;
    other ranks raise ``NotImplementedError``)."""
    if a.ndim != 1:
        raise NotImplementedError("s2s.jit: np.nonzero of an array that is not 1-D")
    flat = np.ravel(a)  # (typed for every rank: the check above refuses the others)
    count = 0
    for i in range(flat.shape[0]):
        if flat[i] != 0:
            count += 1
    idx = np.empty(count, dtype=np.int64)
    k = 0
    for i in range(flat.shape[0]):
        if flat[i] != 0:
            idx[k] = i
            k += 1
    return (idx,)


def fliplr(m):
    """``m`` with its columns reversed (axis 1; at least 2-D)."""
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


def flipud(m):
    """``m`` with its rows reversed (axis 0; at least 1-D)."""
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1]


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times from the first axis towards the second (the
    first two axes; other ``axes`` are not compiled)."""
    if axes != (0, 1):
        raise NotImplementedError("s2s.jit: np.rot90 with axes other than (0, 1)")
    if m.ndim < 2:
        raise ValueError("Axes must be different.")
    turns = k % 4
    if turns == 0:
        return m[:, :]
    if turns == 1:
        return np.swapaxes(m, 0, 1)[::-1]
    if turns == 2:
        return m[::-1, ::-1]
    return np.swapaxes(m[::-1], 0, 1)


def squeeze(a, axis=None):
    """``a`` without its length-1 axis ``axis`` (an int).  The jit types an array by its
    dtype and number of dimensions, not its lengths, so ``axis=None`` (drop every axis of
    length 1: a rank that depends on the lengths) compiles only for a 0-d ``a`` (itself);
    for an array with axes it is refused when compiling, with a message saying to pass
    ``axis=``."""
    if axis is None:
        if np.ndim(a) == 0:
            return a
        raise UnsupportedSyntaxError("jit does not compile np.squeeze (or .squeeze()) without "
                                     "axis= of an array with axes: which axes have length 1, "
                                     "and so the result's number of dimensions, is known only "
                                     "at run time; pass axis= (the axis of length 1 to drop)")
    moved = np.moveaxis(a, axis, 0)  # numpy's AxisError for an axis out of range
    if moved.shape[0] != 1:
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return moved[0]


def diagonal(a, offset=0, axis1=0, axis2=1):
    """Diagonal ``offset`` of the matrices in axes ``(axis1, axis2)``, as the last axis of
    the result (the other axes in order before it)."""
    if axis1 < -a.ndim or axis1 >= a.ndim or axis2 < -a.ndim or axis2 >= a.ndim:
        raise np.exceptions.AxisError("axis out of bounds for the array's dimension")
    first = axis1 % a.ndim
    second = axis2 % a.ndim
    if first == second:
        raise ValueError("axis1 and axis2 cannot be the same")
    # axis2 to the end, then axis1 (one place lower if it was after axis2) before it
    x = np.moveaxis(np.moveaxis(a, axis2, -1), first - (first > second), -2)
    rows = x.shape[-2]
    cols = x.shape[-1]
    first_row = -offset if offset < 0 else 0
    first_col = offset if offset > 0 else 0
    n = min(rows - first_row, cols - first_col)
    n = n if n > 0 else 0
    flat = x.reshape(-1, rows, cols)
    res = np.empty((flat.shape[0], n), dtype=a.dtype)
    for b in range(flat.shape[0]):
        for i in range(n):
            res[b, i] = flat[b, first_row + i, first_col + i]
    return res.reshape(x.shape[:-2] + (n,))


def take(a, indices, axis=None, out=None, mode="raise"):
    """``a``'s elements (flat, for ``axis=None``) or slices along ``axis`` at ``indices``
    (an integer or an array of them; negative ones count from the end)."""
    if axis is None:
        return np.ravel(a)[indices]
    return np.moveaxis(np.moveaxis(a, axis, 0)[indices], 0, axis)


def _tiled(A, reps):
    """``np.tile(A, reps)`` for a tuple of integers ``reps``: ``A`` given leading axes of
    length 1 up to ``len(reps)`` axes (``reps`` leading 1s up to ``A``'s rank), then each
    axis in turn repeated ``reps[k]`` times -- on axis 0, which is then moved last, so
    after every axis the order is ``A``'s again."""
    d = max(np.ndim(A), len(reps))
    x = np.reshape(A, (1,) * (d - np.ndim(A)) + np.shape(A))
    r = (1,) * (d - len(reps)) + reps
    if d == 0:
        return np.copy(x)
    for k in range(d):
        n = r[k]
        if n < 0:
            raise ValueError("negative dimensions are not allowed")
        m = x.shape[0]
        res = np.empty((m * n,) + x.shape[1:], dtype=x.dtype)
        for t in range(n):
            res[t * m:(t + 1) * m] = x
        x = np.moveaxis(res, 0, -1)
    return np.copy(x)


def tile(A, reps):
    """``A`` repeated ``reps`` times: along its last axis for an integer ``reps``, along
    each axis for a tuple of integers (the shorter of ``A``'s shape and ``reps`` padded
    with leading 1s, as numpy does); a copy of ``A``'s dtype."""
    if isinstance(reps, tuple):
        return _tiled(A, reps)
    x = np.atleast_1d(A)
    n = x.shape[-1]
    if reps < 0:
        raise ValueError("negative dimensions are not allowed")
    flat = x.reshape(-1, n)
    res = np.empty((flat.shape[0], n * reps), dtype=x.dtype)
    for j in range(flat.shape[0]):
        for r in range(reps):
            for i in range(n):
                res[j, r * n + i] = flat[j, i]
    return res.reshape(x.shape[:-1] + (n * reps,))


def flatnonzero(a):
    """The indices of the nonzero elements of the flattened ``a``."""
    return np.nonzero(np.ravel(a))[0]


def argwhere(a):
    """The indices of the nonzero elements of ``a``, one row per element (row-major)."""
    flat = np.ravel(a)
    hits = np.nonzero(flat)[0]
    shape = np.shape(a)
    res = np.empty((hits.shape[0], len(shape)), dtype=np.int64)
    for r in range(hits.shape[0]):
        rest = hits[r]
        for d in range(len(shape) - 1, -1, -1):
            res[r, d] = rest % shape[d]
            rest = rest // shape[d]
    return res


def extract(condition, arr):
    """The elements of the flattened ``arr`` where the flattened ``condition`` is
    nonzero."""
    return np.ravel(arr)[np.nonzero(np.ravel(condition))[0]]


def compress(condition, a, axis=None, out=None):
    """The slices of ``a`` along ``axis`` (elements of the flattened ``a`` for None)
    where the 1-D ``condition`` is true (numpy's ``IndexError`` where it is longer)."""
    idx = np.nonzero(np.asarray(condition))[0]
    if axis is None:
        return np.ravel(a)[idx]
    return np.take(a, idx, axis=axis)


def delete(arr, obj, axis=None):
    """``arr`` (flattened for None) without the entry (slice along ``axis``) at the
    integer ``obj`` (negative from the end; numpy's ``IndexError`` out of range)."""
    if not isinstance(obj, (int, np.integer)):
        raise NotImplementedError("s2s.jit: np.delete of a slice or an array of indices")
    if axis is None:
        flat = np.ravel(arr)
        n = flat.shape[0]
        if obj < -n or obj >= n:
            raise IndexError(f"index {obj} is out of bounds for axis 0 with size {n}")
        k = obj % n
        return np.concatenate((flat[:k], flat[k + 1:]))
    moved = np.moveaxis(arr, axis, 0)
    n = moved.shape[0]
    if obj < -n or obj >= n:
        raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {n}")
    k = obj % n
    return np.moveaxis(np.concatenate((moved[:k], moved[k + 1:])), 0, axis)


def insert(arr, obj, values, axis=None):
    """The flattened ``arr`` with the number ``values`` inserted before the integer
    ``obj`` (``axis=None`` and a number only)."""
    if not isinstance(obj, (int, np.integer)) or axis is not None or np.ndim(values) != 0:
        raise NotImplementedError("s2s.jit: np.insert other than of a number into the "
                                  "flattened array at an integer")
    flat = np.ravel(arr)
    n = flat.shape[0]
    if obj < -n or obj > n:
        raise IndexError(f"index {obj} is out of bounds for axis 0 with size {n}")
    k = obj
    if obj < 0:
        k = obj + n
    res = np.empty(n + 1, dtype=flat.dtype)
    res[:k] = flat[:k]
    res[k] = values
    res[k + 1:] = flat[k:]
    return res


def resize(a, new_shape):
    """An array of ``new_shape`` filled with the flattened ``a`` repeated (zeros for an
    empty ``a``)."""
    flat = np.ravel(a)
    res = np.zeros(new_shape, dtype=flat.dtype)
    out = np.ravel(res)  # a view: res is fresh and contiguous
    if flat.shape[0] > 0:
        for i in range(out.shape[0]):
            out[i] = flat[i % flat.shape[0]]
    return res


def flatten(x):
    """``x.flatten()``: a fresh flat copy, in C order."""
    return np.ravel(np.copy(x))


def identity(n, dtype=None):
    """The ``n`` x ``n`` identity matrix (float64 by default)."""
    res = np.zeros((n, n), dtype=np.float64 if dtype is None else dtype)
    for i in range(n):
        res[i, i] = 1
    return res


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    """An array shaped like ``a`` (of its dtype unless given), every element
    ``fill_value``."""
    res = np.empty_like(a, dtype=dtype)
    res[...] = fill_value
    return res


def take_along_axis(arr, indices, axis):
    """``arr``'s elements at ``indices`` along ``axis`` (``indices`` shaped like ``arr`` but
    along ``axis``; the flat array for None)."""
    if axis is None:
        return np.ravel(arr)[indices]
    x = rows(arr, axis)
    ix = rows(indices, axis)
    if ix.shape[0] != x.shape[0]:
        raise ValueError("s2s.jit: np.take_along_axis with indices that broadcast "
                         "(give them arr's shape outside the axis)")
    res = np.empty(ix.shape, dtype=arr.dtype)
    for j in range(ix.shape[0]):
        for i in range(ix.shape[1]):
            res[j, i] = x[j, ix[j, i]]
    return unrows(res, indices, axis)


def meshgrid(x, y, indexing="xy"):
    """The coordinate matrices of two 1-D arrays: ``(Y, X)``-shaped for ``"xy"``, ``(X,
    Y)`` for ``"ij"`` (copies)."""
    if indexing == "xy":
        return (np.zeros((y.shape[0], 1), dtype=x.dtype) + x,
                np.zeros((1, x.shape[0]), dtype=y.dtype) + y.reshape(-1, 1))
    if indexing == "ij":
        return (np.zeros((1, y.shape[0]), dtype=x.dtype) + x.reshape(-1, 1),
                np.zeros((x.shape[0], 1), dtype=y.dtype) + y)
    raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")


def atleast_1d(x):
    """``x`` with at least one axis: a number as ``(1,)``."""
    if np.ndim(x) == 0:
        return np.reshape(x, (1,))
    return np.asarray(x)  # (a list: numpy's array of it)


def atleast_2d(x):
    """``x`` with at least two axes: a number as ``(1, 1)``, ``(N,)`` as ``(1, N)``."""
    if np.ndim(x) == 0:
        return np.reshape(x, (1, 1))
    if np.ndim(x) == 1:
        return np.reshape(x, (1, np.shape(x)[0]))
    return np.asarray(x)


def atleast_3d(x):
    """``x`` with at least three axes: ``()`` as ``(1, 1, 1)``, ``(N,)`` as ``(1, N, 1)``,
    ``(M, N)`` as ``(M, N, 1)``."""
    if np.ndim(x) == 0:
        return np.reshape(x, (1, 1, 1))
    if np.ndim(x) == 1:
        return np.reshape(x, (1, np.shape(x)[0], 1))
    if np.ndim(x) == 2:
        return np.reshape(x, np.shape(x) + (1,))
    return np.asarray(x)


def diagflat(v, k=0):
    """The flattened ``v`` on diagonal ``k`` of a square matrix of zeros."""
    return np.diag(np.ravel(v), k)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-D ``x``: columns ``x**(N-1), ..., x, 1`` (reversed for
    ``increasing``), ``N`` columns (``len(x)`` by default)."""
    n = x.shape[0] if N is None else N
    if n < 0:
        raise ValueError("N must be nonnegative")
    res = np.empty((x.shape[0], n), dtype=(x[:1] * 1).dtype)
    for i in range(x.shape[0]):
        p = x[i] ** 0
        for j in range(n):
            res[i, j if increasing else n - 1 - j] = p
            p = p * x[i]
    return res


def split_axis(ary, kind):
    """The axis ``np.hsplit`` (``kind`` "h": 1, or 0 for 1-D), ``np.vsplit`` ("v": 0) and
    ``np.dsplit`` ("d": 2) cut along (``s2s_runtime.split_axis``)."""
    if kind == "h":
        return 1 if np.ndim(ary) > 1 else 0
    if kind == "v":
        return 0
    return 2


def vander_exponents(x, N=None, increasing=False):
    """``(k, max(k - 1, 0))`` (``s2s_runtime``'s, for ``np.vander``'s derivative): the
    powers of the Vandermonde columns and of their derivatives, of ``x``'s real dtype."""
    n = x.shape[0] if N is None else N
    k = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    k = k.astype(np.float32 if x.dtype == np.float32 else np.float64)
    return k, np.maximum(k - 1, 0)


def take_vjp(g, a, indices, axis=None, mode="raise"):
    """``a_bar``: zeros shaped like ``a`` with ``g`` added at the taken positions (a
    position taken twice gets both)."""
    out = np.zeros(np.shape(a))
    idx = np.ravel(np.atleast_1d(indices))
    if axis is None:
        flat = np.ravel(out)  # (a view of the fresh array)
        gf = np.ravel(np.atleast_1d(g))
        for k in range(idx.shape[0]):
            flat[idx[k]] += gf[k]
        return flat.reshape(np.shape(a))
    ax = axis % np.ndim(a)
    moved = np.moveaxis(out, ax, 0)
    gm = np.moveaxis(np.reshape(g, np.shape(a)[:ax] + (idx.shape[0],) + np.shape(a)[ax + 1:]),
                     ax, 0)
    for k in range(idx.shape[0]):
        moved[idx[k]] += gm[k]
    return out


def ascontiguousarray(a, dtype=None, *, like=None):
    """``a`` as an array (of ``dtype``) with at least one axis."""
    x = np.asarray(a, dtype=dtype)
    if np.ndim(x) == 0:
        return np.reshape(x, (1,))
    return x


def asfortranarray(a, dtype=None, *, like=None):
    """``a`` as an array (of ``dtype``) with at least one axis (the memory order is not
    part of the values)."""
    x = np.asarray(a, dtype=dtype)
    if np.ndim(x) == 0:
        return np.reshape(x, (1,))
    return x


def _tiled_vjp(g, a, reps):
    """``a_bar`` of ``np.tile(a, reps)`` for a tuple ``reps``: ``g``'s tiles summed, one
    axis at a time in ``_tiled``'s order (each summed on axis 0, then moved last)."""
    d = max(np.ndim(a), len(reps))
    shape = (1,) * (d - np.ndim(a)) + np.shape(a)
    r = (1,) * (d - len(reps)) + reps
    x = np.asarray(g) * 1.0
    if d == 0:
        return np.reshape(x, np.shape(a))
    for k in range(d):
        m = shape[k]
        res = np.zeros((m,) + x.shape[1:])
        for t in range(r[k]):
            res += x[t * m:(t + 1) * m]
        x = np.moveaxis(res, 0, -1)
    return np.reshape(x, np.shape(a))


def tile_vjp(g, a, reps):
    """``a_bar``: the sum of ``g``'s ``reps`` tiles (``reps`` an integer or a tuple of
    them)."""
    if isinstance(reps, tuple):
        return _tiled_vjp(g, a, reps)
    x = np.atleast_1d(a)
    n = x.shape[-1]
    tiles = np.reshape(g, (x.size // n if n > 0 else 0, reps, n))
    return np.reshape(np.sum(tiles, axis=1), np.shape(a)) * 1.0


for _fn, _code in ((np.repeat, repeat), (rt.repeat_vjp, repeat_vjp),
                   (np.broadcast_to, broadcast_to), (np.nonzero, nonzero), (np.flip, flip), (np.roll, roll), (np.triu, triu), (np.tril, tril),
                   (np.count_nonzero, count_nonzero), (np.around, around), (np.round, around),
                   (np.fliplr, fliplr), (np.flipud, flipud), (np.rot90, rot90),
                   (np.squeeze, squeeze), (np.diagonal, diagonal), (np.take, take),
                   (np.tile, tile), (np.identity, identity), (np.full_like, full_like),
                   (np.take_along_axis, take_along_axis), (np.meshgrid, meshgrid),
                   (rt.take_vjp, take_vjp), (rt.tile_vjp, tile_vjp), (np.diagflat, diagflat),
                   (np.vander, vander)):
    definline(_fn, code=_code, modes=("jit", "vmap"))
# the jit lowers these as views of their own (backend/llvm/derivs/linalg.py); vmap reads this
for _fn, _code in ((np.atleast_1d, atleast_1d), (np.atleast_2d, atleast_2d),
                   (np.atleast_3d, atleast_3d)):
    definline(_fn, code=_code, modes=("vmap",))
# the jit copies these with a lowering of its own (backend/llvm/ops/arrays.py Copy)
for _fn, _code in ((np.ascontiguousarray, ascontiguousarray),
                   (np.asfortranarray, asfortranarray)):
    definline(_fn, code=_code, modes=("vmap",))
definline(_band, modes=("jit", "vmap"))
definline(rt.vander_exponents, code=vander_exponents, modes=("jit",))
definline(rt.split_axis, code=split_axis, modes=("jit",))
definline(_tiled, _tiled_vjp, modes=("jit",))
definline(build.flatten, code=flatten, modes=("jit",))  # vmap batches it as np.ravel
# the number of elements they return depends on values: the jit only
for _fn, _code in ((np.flatnonzero, flatnonzero), (np.argwhere, argwhere),
                   (np.extract, extract), (np.compress, compress), (np.delete, delete),
                   (np.insert, insert), (np.resize, resize)):
    definline(_fn, code=_code, modes=("jit",))


def _broadcast(x, mask):
    """``x`` broadcast to ``mask``'s shape: a new array of ``x``'s dtype."""
    res = np.empty(np.shape(mask), dtype=np.asarray(x).dtype)
    res[...] = x
    return res


def broadcast_arrays(x0, x1="absent", x2="absent", x3="absent", *, subok=False):
    """Up to four arrays (or numbers) broadcast to their common shape, as a tuple of new
    arrays of their own dtypes (numpy returns views: the values are the same); a
    ``ValueError`` where the shapes do not broadcast.  (An argument not given is the
    string ``"absent"``: its ``isinstance`` folds when compiling, where ``is None`` of an
    array is a run-time test.)"""
    if isinstance(x1, str):
        return (np.copy(np.asarray(x0)),)
    m01 = np.ones(np.shape(x0), dtype=np.bool_) & np.ones(np.shape(x1), dtype=np.bool_)
    if isinstance(x2, str):
        return (_broadcast(x0, m01), _broadcast(x1, m01))
    m012 = m01 & np.ones(np.shape(x2), dtype=np.bool_)
    if isinstance(x3, str):
        return (_broadcast(x0, m012), _broadcast(x1, m012), _broadcast(x2, m012))
    mask = m012 & np.ones(np.shape(x3), dtype=np.bool_)
    return (_broadcast(x0, mask), _broadcast(x1, mask), _broadcast(x2, mask),
            _broadcast(x3, mask))


definline(np.broadcast_arrays, code=broadcast_arrays, modes=("jit",))
definline(_broadcast, modes=("jit",))
