"""Batched forms of numpy functions whose batched form depends on the per-example rank
(``s2s.vmap``; see ``batching.py``): squeeze, item, builtin sum and max/min of numbers,
hstack/vstack, broadcast_to, diag, tile, ``np.linalg.solve``, and ``np.array`` of nested
lists of batched items (whose batch axis comes after the list levels) with its JVP and
VJP.
"""
from __future__ import annotations

import numpy as np

from .adjoint import sum_builtin_vjp
from .containers import seq_cast
from .batching import batch_align, batch_loop, batch_unbroadcast, _depth
from .tree import tree_map


# -- functions whose batched form depends on the per-example rank ----------------------
def batch_squeeze_axes(x):
    """The per-example axes of size 1 of batched ``x`` (what ``np.squeeze`` removes)."""
    return tuple(i for i in range(1, np.ndim(x)) if np.shape(x)[i] == 1)


def batch_item(x):
    """``x.item()`` of every example: one number per example, shape ``(n,)``."""
    x = np.asarray(x)
    return x.reshape(x.shape[0], -1)[:, 0]


def batch_sum_items(x, start=0):
    """Builtin ``sum(x, start)`` of every example: over the rows of an array (axis 1),
    over the items of a container (which are batched); ``start`` is added once."""
    if isinstance(x, np.ndarray):
        total = np.sum(x, axis=1)
        return total if start is None else total + start
    return sum(x, 0 if start is None else start)


def batch_extreme_items(x, greater):
    """Builtin ``max(x)`` (``greater``) or ``min(x)`` of every example whose items are
    numbers: over the rows of an array (axis 1) or the batched items of a list or tuple.
    Python's scan, example by example: an item replaces the running extreme where it
    compares greater (less), so ties keep the first item and a NaN is kept only where it
    comes first, as the builtins give; the derivative goes to the item chosen.  Empty
    examples raise the builtins' ``ValueError``; items that are arrays in each example
    (which the builtins cannot order) raise ``TypeError``."""
    if isinstance(x, np.ndarray) and np.ndim(x) != 2:
        raise TypeError("max()/min() of the rows of an array of rank "
                        f"{np.ndim(x) - 1} in each example: the rows are arrays, which "
                        "have no order")
    n = _extreme_count(x)
    if n == 0:
        raise ValueError("max()/min() iterable argument is empty")
    best = _extreme_item(x, 0)
    for j in range(1, n):
        item = _extreme_item(x, j)
        if np.ndim(item) != 1:
            raise TypeError("max()/min() of items that are arrays in each example: they "
                            "have no order")
        take = item > best if greater else item < best
        best = np.where(take, item, best)
    return best


def _extreme_count(x):
    """How many items ``max``/``min`` scans in every example: an array's columns (axis
    1), a list's or tuple's batched items."""
    return np.shape(x)[1] if isinstance(x, np.ndarray) else len(x)


def _extreme_item(x, j):
    """Item ``j`` of every example (see ``_extreme_count``)."""
    return x[:, j] if isinstance(x, np.ndarray) else x[j]


def batch_extreme_position(items, ans):
    """Per example, where ``ans = max(items)`` (or ``min``) was found: the first item
    equal to it, else the first item (a NaN result is the first item, as the builtins'
    scan keeps it only there)."""
    pos = np.zeros(np.shape(ans), dtype=np.int64)
    for j in range(_extreme_count(items) - 1, -1, -1):  # (backwards: the first one wins)
        pos = np.where(_extreme_item(items, j) == ans, j, pos)
    return pos


def batch_extreme_ct(g, items, ans):
    """``extreme_ct`` of every example (the cotangent of ``items`` for ``ans =
    max(items)``): ``g`` at the chosen item of each example, zeros elsewhere, in the
    items' own form (an array's columns stacked back, a list, a tuple)."""
    pos = batch_extreme_position(items, ans)
    out = []
    for j in range(_extreme_count(items)):
        out.append(np.where(pos == j, g, 0.0 * g))
    if isinstance(items, np.ndarray):
        return np.stack(out, axis=1)
    return seq_cast(out, items)


def batch_extreme_tangent(t, items, ans):
    """``extreme_tangent`` of every example: the tangent of the chosen item."""
    pos = batch_extreme_position(items, ans)
    out = 0.0 * _extreme_item(t, 0)
    for j in range(_extreme_count(t)):
        out = np.where(pos == j, _extreme_item(t, j), out)
    return out


def batch_sum_builtin_vjp(g, iterable, g_batched, n):
    """``sum_builtin_vjp`` of every example (the cotangent of ``sum(items)``, ``n``
    examples): for a list of batched items, ``g`` summed to each item's example shape, a
    list of batched items; for a tuple or the rows of a batched array, example by
    example (``batch_loop``)."""
    if isinstance(iterable, list):
        return [batch_unbroadcast(g, iterable[j], g_batched, True)
                for j in range(len(iterable))]
    return batch_loop(sum_builtin_vjp, (g_batched, True), n, g, iterable)


def batch_hstack(xs):
    """``np.hstack`` of every example: per-example 1-D items join on their only axis,
    others on their second."""
    nd = min(np.ndim(x) for x in xs) - 1
    return np.concatenate(list(xs), axis=1 if nd <= 1 else 2)


def batch_vstack(xs):
    """``np.vstack`` of every example: per-example 1-D items become rows."""
    items = [np.asarray(x) for x in xs]
    items = [x.reshape(x.shape[:1] + (1,) * (3 - x.ndim) + x.shape[1:]) if x.ndim < 3 else x
             for x in items]
    return np.concatenate(items, axis=1)


def batch_hstack_vjp(g, xs):
    """Cotangents of ``xs`` for ``batch_hstack(xs)``: ``g`` split where the items were
    joined, each piece shaped like its item (real for a real item)."""
    nd = min(np.ndim(x) for x in xs) - 1
    axis = 1 if nd <= 1 else 2
    return _pieces_of(g, xs, [np.shape(x)[axis] for x in xs], axis)


def batch_vstack_vjp(g, xs):
    """Cotangents of ``xs`` for ``batch_vstack(xs)``: ``g`` split into the rows each item
    gave (one for an example of at most one axis), each shaped like its item."""
    return _pieces_of(g, xs, [1 if np.ndim(x) < 3 else np.shape(x)[1] for x in xs], 1)


def _pieces_of(g, xs, sizes, axis):
    g = np.asarray(g)
    out = []
    for piece, x in zip(np.split(g, np.cumsum(sizes)[:-1], axis=axis), xs):
        piece = np.reshape(piece, np.shape(x))
        out.append(np.real(piece) if np.iscomplexobj(piece) and not np.iscomplexobj(x)
                   else piece)
    return type(xs)(out) if isinstance(xs, (list, tuple)) else out


def batch_broadcast_to(x, shape):
    """``np.broadcast_to(x, shape)`` of every example of batched ``x``."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    x = batch_align(x, np.empty(shape, dtype=bool), False)
    return np.broadcast_to(x, x.shape[:1] + shape)


def batch_diag(v, k=0):
    """``np.diag`` of every example: a 1-D example becomes a diagonal matrix, a 2-D one
    gives its diagonal."""
    v = np.asarray(v)
    if v.ndim == 2:
        n = v.shape[1] + abs(k)
        out = np.zeros((v.shape[0], n, n), dtype=v.dtype)
        i = np.arange(v.shape[1])
        out[:, i + max(-k, 0), i + max(k, 0)] = v
        return out
    return np.diagonal(v, offset=k, axis1=1, axis2=2).copy()


def batch_tile(x, reps):
    """``np.tile(x, reps)`` of every example."""
    x = np.asarray(x)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    nd = max(x.ndim - 1, len(reps))
    x = x.reshape(x.shape[:1] + (1,) * (nd - (x.ndim - 1)) + x.shape[1:])
    return np.tile(x, (1,) + (1,) * (nd - len(reps)) + reps)


def batch_array(fn, x, *args, **kwargs):
    """``np.array(x)`` (or ``fn``: ``np.asarray``, ``array_jvp``...) of every example of a
    batched value: nested lists of batched items give the batch on the axis after the
    list levels, moved to the front; a batched array is converted as it is."""
    d = _depth(x)
    out = np.asarray(fn(x, *args, **kwargs))
    return np.moveaxis(out, d, 0) if d else out


def batch_array_jvp(t, ans, obj, *args):
    """``array_jvp`` of every example (``t``: nested lists of batched tangents)."""
    from .jvps_arrays import array_jvp
    d = _depth(obj)
    if not d:
        return array_jvp(t, ans, obj, *args)
    out = array_jvp(t, np.moveaxis(np.asarray(ans), 0, d), obj, *args)
    return np.moveaxis(np.asarray(out), d, 0)


def batch_array_vjp(g, x):
    """``array_vjp`` of every example: the batched cotangent of ``np.array(x)`` split back
    into ``x``'s nested lists (each item batched)."""
    from .adjoint_arrays import array_vjp
    d = _depth(x)
    return array_vjp(np.moveaxis(np.asarray(g), 0, d) if d else g, x)


def batch_solve(a, b, a_batched, b_batched):
    """``np.linalg.solve(a, b)`` in every example (numpy broadcasts stacked matrices; a
    per-example vector ``b`` becomes a one-column matrix so it is not read as a stack)."""
    vector = np.ndim(b) - (1 if b_batched else 0) == 1
    if vector:
        return np.linalg.solve(a, np.asarray(b)[..., None])[..., 0]
    return np.linalg.solve(a, b)


# -- pad widths of one example, checked against its rank --------------------------------
def batch_pad_width(x, pad_width):
    """``np.pad``'s ``pad_width`` (an int, one ``(before, after)`` pair, or one pair per
    axis) for batched ``x``: one pair per per-example axis (numpy's broadcast, with its
    error for a bad shape) after ``(0, 0)`` for the batch axis."""
    widths = np.asarray(pad_width)
    widths = np.broadcast_to(widths, (np.ndim(x) - 1, 2))
    return np.concatenate([np.zeros((1, 2), dtype=widths.dtype), widths])


def batch_stand_in(x):
    """One example of batched ``x`` for a helper that reads only its shape and dtype:
    zeros of that shape and dtype, a read-only zero-stride view (nothing allocated, and
    there even for an empty batch); containers leaf by leaf."""
    def leaf(v):
        v = np.asarray(v)
        return np.broadcast_to(np.zeros((), dtype=v.dtype), v.shape[1:])
    return tree_map(leaf, x)


# -- scalar-only builtins and math functions, elementwise ------------------------------
def batch_complex(real, imag):
    """``complex(real, imag)`` of every example (numbers or arrays, broadcast together):
    the complex128 numbers whose real part is ``real`` and imaginary part ``imag``,
    exactly, as ``lax.complex`` (CPython sets the parts, no arithmetic: ``complex(1.0,
    inf)`` is ``1+infj`` where ``1.0 + 1j * inf`` is ``nan+infj``, and a ``-0.0`` part
    stays ``-0.0``).  Complex operands combine as Python's:
    real part ``real.real - imag.imag``, imaginary part ``imag.real + real.imag``."""
    real, imag = np.asarray(real), np.asarray(imag)
    re, im = np.real(real), np.real(imag)
    if np.iscomplexobj(imag):
        re = re - np.imag(imag)
    if np.iscomplexobj(real):
        im = im + np.imag(real)
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, dtype=np.complex128)
    out.real = re
    out.imag = im
    return out


def batch_remainder(x, y):
    """``math.remainder(x, y)`` of every example (elementwise over the broadcast float64
    operands), as CPython computes it: the IEEE 754 remainder ``x - n y`` with ``n`` the
    integer nearest ``x / y`` (ties to even), exact; from ``m = fmod(|x|, |y|)`` and
    ``c = |y| - m``: ``m`` if ``m < c``, ``-c`` if ``m > c``, at a tie the one of the two
    with an even quotient, signed as ``x``.  NaN for a NaN operand, ``x`` for an infinite
    ``y``; ``ValueError("math domain error")`` where any example's ``y`` is 0 or ``x`` is
    infinite (neither NaN), as a loop over the examples would raise."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    finite_x = np.isfinite(x)
    if np.any((finite_x & (y == 0.0)) | (np.isinf(x) & (y == y))):
        raise ValueError("math domain error")
    ax = np.where(finite_x, np.abs(x), 0.0)  # (the other cases are chosen below)
    ay = np.where(np.isfinite(y) & (y != 0.0), np.abs(y), 1.0)
    m = np.fmod(ax, ay)
    c = ay - m
    tie = m - 2.0 * np.fmod(0.5 * (ax - m), ay)
    r = np.copysign(1.0, x) * np.where(m < c, m, np.where(m > c, -c, tie))
    return np.where(x != x, x, np.where(y != y, y, np.where(np.isinf(y), x, r)))
