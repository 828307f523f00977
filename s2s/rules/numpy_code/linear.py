"""``s2s_runtime.apply_linear(op, x, like, spec)`` -- the linear maps derivative templates
apply by name (``"diff_T"``, ``"quantile"``...) -- as plain Python the jit compiles, for
the maps compiled here: ``np.diff``'s, ``np.pad``'s (``pads.py``), ``np.append``'s
(``append_part``), ``np.take_along_axis``'s (``take_along``: also ``np.partition``'s and
``np.sort_complex``'s) and ``np.gradient``'s (one scalar spacing) and their transposes;
the transposes of ``np.broadcast_arrays``, ``np.unstack``, ``np.array_split`` and
``np.meshgrid`` (``"bcast_T"``, ``"unstack_T"``, ``"array_split_T"``, ``"mesh_T"``) and of
the quantiles' linear interpolation and its transpose (``"quantile"``, ``"quantile_T"``:
``np.median``, ``np.quantile``, ``np.percentile`` with ``method="linear"``).  Other maps
(``np.select``'s, the joins'...) are refused when compiling, naming the map.  ``op`` is a
constant: the jit keeps the one branch it names."""
import math

import numpy as np

import s2s_runtime as rt

from ...errors import UnsupportedSyntaxError
from ..registry import definline
from .pads import pad_linear, pad_transpose
from .scans import diff_transpose


def apply_linear(op, x, like, spec=()):
    """``L_op(x)`` shaped like ``like`` (``s2s_runtime.linear_ops``)."""
    if op == "diff":
        return np.diff(x, spec[0], spec[1])
    if op == "diff_T":
        return diff_transpose(x, like, spec[0], spec[1])
    if op == "pad":
        return pad_linear(x, like, spec[0], spec[1], spec[2])
    if op == "pad_T":
        return pad_transpose(x, like, spec[0], spec[1], spec[2])
    if op == "unstack_T":
        return _unstack_transpose(x, like, spec[0])
    if op == "array_split_T":
        return _array_split_transpose(x, like, spec[0], spec[1])
    if op == "bcast_T":
        return _bcast_transpose(x[spec[0]], like)
    if op == "mesh_T":
        return _mesh_transpose(x[spec[0]], like, spec[0], spec[1], len(spec[3]))
    if op == "append_part":
        return _append_part(x, spec[0], spec[1], spec[2])
    if op == "append_part_T":
        return _append_part_transpose(x, like, spec[0], spec[1], spec[2])
    if op == "take_along":
        return np.take_along_axis(x, spec[0], spec[1])
    if op == "take_along_T":
        return _take_along_transpose(x, like, spec[0], spec[1])
    if op == "gradient":
        return np.gradient(x, spec[0], axis=spec[1], edge_order=spec[2])
    if op == "gradient_T":
        return _gradient_transpose(x, like, spec[0], spec[1], spec[2])
    if op == "ediff1d":
        return _ediff1d_tangent(x, spec[0], spec[1])
    if op == "ediff1d_T":
        return _ediff1d_transpose(x, like, spec[1])
    if op == "join_T":
        return _join_transpose(x, spec[0], spec[1])
    if op == "mesh":
        return _mesh_tangent(x, spec[0], spec[1], spec[3])
    if op == "bcast":
        return _bcast_tangent(x, spec[0], spec[1])
    if op == "select":
        return _select(x, like, spec[0])
    if op == "select_T":
        return _select_transpose(x, like, spec[0])
    if op == "quantile":
        return _quantile_tangent(x, like, spec[0], spec[1], spec[2], spec[4])
    if op == "quantile_T":
        return _quantile_transpose(x, like, spec[1], spec[2], spec[3], spec[4])
    raise UnsupportedSyntaxError(f"jit does not compile the linear map '{op}' of a derivative "
                                 f"(apply_linear)")


def _append_part(t, other, axis, which):
    """``np.append``'s tangent of one argument (``which`` 0: ``arr``, 1: ``values``):
    ``t`` in its slot, zeros shaped like ``other`` in the other's."""
    z = np.zeros(np.shape(other))
    if which == 0:
        return np.append(t, z, axis)
    return np.append(z, t, axis)


def _append_part_transpose(g, like, other, axis, which):
    """``np.append``'s cotangent of one argument (``which`` 0: ``arr`` = ``like``, 1:
    ``values`` = ``like``, ``other`` the other): its slot of ``g`` (of the flattened
    ``g`` for ``axis=None``), shaped like ``like``."""
    n0 = np.size(like) if which == 0 else np.size(other)
    if axis is None:
        flat = np.ravel(g)
        part = flat[:n0] if which == 0 else flat[n0:]
    else:
        moved = np.moveaxis(g, axis, 0)
        n0 = np.shape(like)[axis] if which == 0 else np.shape(other)[axis]
        part = np.moveaxis(moved[:n0] if which == 0 else moved[n0:], 0, axis)
    if np.ndim(like) == 0:
        return part[0]
    return np.reshape(part, np.shape(like)) + 0.0


def _unstack_transpose(gs, like, axis):
    """``np.unstack``'s cotangent: the slices' cotangents stacked back along ``axis``."""
    moved = np.zeros(np.shape(np.moveaxis(like, axis, 0)))
    for k in range(moved.shape[0]):
        moved[k] = gs[k]
    return np.moveaxis(moved, 0, axis)


def _array_split_transpose(gs, like, indices_or_sections, axis):
    """``np.array_split``'s cotangent: the parts' cotangents put back where each was cut
    from (``array_split``'s and ``np.split``'s cuts)."""
    moved = np.zeros(np.shape(np.moveaxis(like, axis, 0)))
    if isinstance(indices_or_sections, (int, np.integer)):
        size = moved.shape[0] // indices_or_sections
        for k in range(indices_or_sections):
            moved[k * size:(k + 1) * size] = np.moveaxis(gs[k], axis, 0)
    else:
        start = 0
        for k in range(len(indices_or_sections)):
            stop = indices_or_sections[k]
            moved[start:stop] = np.moveaxis(gs[k], axis, 0)
            start = stop
        moved[start:] = np.moveaxis(gs[len(indices_or_sections)], axis, 0)
    return np.moveaxis(moved, 0, axis)


def _ediff1d_tangent(t, to_end, to_begin):
    """``np.ediff1d``'s tangent: the differences of the flattened ``t``, zeros for the
    constant ends."""
    nb = 0 if to_begin is None else np.size(to_begin)
    ne = 0 if to_end is None else np.size(to_end)
    return np.concatenate((np.zeros(nb), np.diff(np.ravel(t)), np.zeros(ne)))


def _ediff1d_transpose(g, like, to_begin):
    """``np.ediff1d``'s cotangent: difference ``i`` (after the ``to_begin`` entries) sends
    ``+g`` to item ``i + 1`` and ``-g`` to item ``i`` of the flattened input."""
    nb = 0 if to_begin is None else np.size(to_begin)
    n = np.size(like)
    out = np.zeros(n)
    for i in range(n - 1):
        out[i + 1] += g[nb + i]
        out[i] -= g[nb + i]
    return np.reshape(out, np.shape(like))


def _join_transpose(g, how, tup):
    """The cotangents of the pieces of ``np.dstack`` (axis 2) / ``np.column_stack`` (axis
    1): ``g``'s slices along that axis, each as wide as its piece once promoted (a piece
    of fewer axes is one wide), reshaped to the piece's shape."""
    axis = 2 if how == "dstack" else 1
    moved = np.moveaxis(g, axis, 0)
    out = []
    start = 0
    for k in range(len(tup)):
        width = np.shape(tup[k])[axis] if np.ndim(tup[k]) > axis else 1
        part = np.moveaxis(moved[start:start + width], 0, axis)
        out.append(np.reshape(np.ascontiguousarray(part), np.shape(tup[k])))
        start += width
    return out


def _mesh_tangent(t, k, indexing, shapes):
    """``np.meshgrid``'s outputs' tangents when input ``k`` moves by ``t``: ``t`` along the
    axis input ``k`` varies on in output ``k``, zeros in the others."""
    n = len(shapes)
    axis = 1 - k if indexing == "xy" and n >= 2 and k < 2 else k
    out = []
    for j in range(n):
        if j == k:
            view = np.moveaxis(np.zeros(shapes[j]), axis, -1) + np.ravel(t)
            out.append(np.moveaxis(view, -1, axis))
        else:
            out.append(np.zeros(shapes[j]))
    return out


def _bcast_tangent(t, k, shapes):
    """``np.broadcast_arrays``' outputs' tangents when input ``k`` moves by ``t``: ``t``
    broadcast in output ``k``, zeros in the others."""
    out = []
    for j in range(len(shapes)):
        out.append(np.zeros(shapes[j]) + t if j == k else np.zeros(shapes[j]))
    return out


def _select(ts, like, condlist):
    """``np.select``'s tangent: ``t_i`` where condition ``i`` is the first to hold, zero
    where none does (``None`` tangents are zero)."""
    out = np.zeros(np.shape(like))
    taken = np.zeros(np.shape(like), dtype=np.bool_)
    for k in range(len(condlist)):
        c = np.broadcast_to(condlist[k], np.shape(like))
        if ts[k] is not None:
            out = np.where(c & ~taken, ts[k], out)
        taken = taken | c
    return out


def _select_transpose(g, like, condlist):
    """``np.select``'s cotangents of the choices ``like``: ``g`` where choice ``i`` was
    taken (its condition the first to hold), zero elsewhere, summed to its shape."""
    taken = np.zeros(np.shape(g), dtype=np.bool_)
    out = []
    for k in range(len(condlist)):
        c = np.broadcast_to(condlist[k], np.shape(g))
        out.append(rt.unbroadcast(np.where(c & ~taken, g, 0.0), like[k]))
        taken = taken | c
    return out


def _rows(x, axis):
    """``x`` with ``axis`` moved last, as a C-ordered ``(rows, n)`` matrix."""
    moved = np.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    return np.reshape(np.ascontiguousarray(moved), (moved.size // n if n > 0 else 0, n))


def _unrows(m, like, axis):
    """``_rows``' inverse: ``(rows, n)`` back to ``like``'s shape, ``axis`` in place."""
    moved = np.moveaxis(like, axis, -1)
    return np.moveaxis(np.reshape(m, moved.shape), -1, axis)


def _take_along_transpose(g, like, indices, axis):
    """``np.take_along_axis``'s cotangent: zeros shaped like ``like`` with ``g`` added at
    the gathered positions (repeated indices accumulate; an axis of ``like`` that the
    indices broadcast is summed back by ``unbroadcast``)."""
    if axis is None:
        flat = np.zeros(np.size(like))
        idx = np.ravel(indices)
        gf = np.ravel(g)
        n = flat.shape[0]
        for j in range(idx.shape[0]):
            k = idx[j]
            flat[k + n if k < 0 else k] += gf[j]
        return np.reshape(flat, np.shape(like))
    ax = axis + np.ndim(g) if axis < 0 else axis
    g2 = _rows(g, ax)
    i2 = _rows(np.broadcast_to(indices, np.shape(g)), ax)
    n = np.shape(like)[ax]
    out = np.zeros((g2.shape[0], n))
    for r in range(g2.shape[0]):
        for j in range(g2.shape[1]):
            k = i2[r, j]
            out[r, k + n if k < 0 else k] += g2[r, j]
    # like's shape with g's other axes (which the indices may broadcast), then summed back
    full = np.moveaxis(np.reshape(out, np.moveaxis(g, ax, -1).shape[:-1] + (n,)), -1, ax)
    return rt.unbroadcast(full, like)


def _gradient_rows_transpose(g2, n, h, edge_order):
    """``D^T g`` along the rows of ``g2`` (``(rows, n)``): ``D`` is ``np.gradient``'s
    difference matrix of ``n`` points ``h`` apart (central inside, one-sided of order
    ``edge_order`` at the ends)."""
    out = np.zeros(g2.shape)
    for r in range(g2.shape[0]):
        for i in range(1, n - 1):
            out[r, i + 1] += g2[r, i] / (2.0 * h)
            out[r, i - 1] -= g2[r, i] / (2.0 * h)
        if edge_order == 1:
            out[r, 1] += g2[r, 0] / h
            out[r, 0] -= g2[r, 0] / h
            out[r, n - 1] += g2[r, n - 1] / h
            out[r, n - 2] -= g2[r, n - 1] / h
        else:
            out[r, 0] -= 1.5 * g2[r, 0] / h
            out[r, 1] += 2.0 * g2[r, 0] / h
            out[r, 2] -= 0.5 * g2[r, 0] / h
            out[r, n - 1] += 1.5 * g2[r, n - 1] / h
            out[r, n - 2] -= 2.0 * g2[r, n - 1] / h
            out[r, n - 3] += 0.5 * g2[r, n - 1] / h
    return out


def _gradient_transpose(gs, like, spacing, axis, edge_order):
    """``np.gradient``'s cotangent with one scalar spacing: ``sum_k D_k^T g_k`` over the
    axes it differentiates (one array ``gs`` for one axis, else one per axis)."""
    if np.ndim(spacing) != 0:
        raise NotImplementedError("s2s.jit: the derivative of np.gradient with sample "
                                  "coordinates (a scalar spacing only)")
    nd = np.ndim(like)
    out = np.zeros(np.shape(like))
    if axis is None and nd != 1:
        for ax in range(nd):
            n = np.shape(like)[ax]
            part = _gradient_rows_transpose(_rows(gs[ax], ax), n, spacing, edge_order)
            out = out + _unrows(part, like, ax)
        return out
    ax = 0 if axis is None else (axis + nd if axis < 0 else axis)
    n = np.shape(like)[ax]
    return _unrows(_gradient_rows_transpose(_rows(gs, ax), n, spacing, edge_order), like, ax)


def _quantile_rows(a, axis, method):
    """``a`` as ``(rows, n)`` rows whose quantiles are taken (all of it for ``axis=None``);
    the linear interpolation only."""
    if method != "linear":
        raise NotImplementedError("s2s.jit: the derivative of a quantile with method="
                                  f"{method!r} (linear only)")
    if axis is None:
        return np.reshape(np.ravel(a), (1, np.size(a)))
    return _rows(a, axis + np.ndim(a) if axis < 0 else axis)


def _quantile_pair(perm, q, n):
    """The two items the quantile ``q`` of a sorted row of ``n`` interpolates, as positions
    in the unsorted row (through the sort permutation ``perm``), and the weight ``w`` of
    the second: numpy's linear interpolation at the virtual index ``q (n - 1)``."""
    pos = q * (n - 1)
    lo = int(math.floor(pos))
    hi = lo + 1 if lo + 1 < n else n - 1
    return perm[lo], perm[hi], pos - lo


def _quantile_tangent(t, like, a, q, axis, method):
    """``np.quantile``'s tangent (shaped like its result ``like``): a quantile of a row of
    ``a`` is ``(1 - w)`` times one item plus ``w`` times another (``_quantile_pair``), so
    its tangent takes those weights of ``t``'s items."""
    x = _quantile_rows(a, axis, method)
    tr = _quantile_rows(t, axis, method)
    rows, n = x.shape[0], x.shape[1]
    qs = np.ravel(np.asarray(q) * 1.0)
    out = np.zeros((qs.shape[0], rows))
    for r in range(rows):
        perm = np.argsort(x[r])
        for j in range(qs.shape[0]):
            i, k, w = _quantile_pair(perm, qs[j], n)
            out[j, r] = (1.0 - w) * tr[r, i] + w * tr[r, k]
    return np.reshape(out, np.shape(like))


def _quantile_transpose(g, like, q, axis, keepdims, method):
    """``np.quantile``'s cotangent of ``a`` (= ``like``): the transpose of
    ``_quantile_tangent``, each quantile's cotangent sent with weights ``1 - w`` and ``w``
    to the two items it interpolates."""
    x = _quantile_rows(like, axis, method)
    rows, n = x.shape[0], x.shape[1]
    qs = np.ravel(np.asarray(q) * 1.0)
    gk = np.reshape(g, (qs.shape[0], rows))
    out = np.zeros((rows, n))
    for r in range(rows):
        perm = np.argsort(x[r])
        for j in range(qs.shape[0]):
            i, k, w = _quantile_pair(perm, qs[j], n)
            out[r, i] += (1.0 - w) * gk[j, r]
            out[r, k] += w * gk[j, r]
    if axis is None:
        return np.reshape(out, np.shape(like))
    return _unrows(out, like, axis + np.ndim(like) if axis < 0 else axis)


def select_none(condlist, shape):
    """Where no condition of ``condlist`` holds (``s2s_runtime.select_none``: where
    ``np.select`` gives its default), in ``shape``."""
    taken = np.zeros(shape, dtype=bool)
    for c in condlist:
        taken = taken | c
    return ~taken


def shapes_of(arrays):
    """The shapes of a tuple of up to four arrays (``s2s_runtime.shapes_of``: the
    outputs' shapes ``np.broadcast_arrays``' and ``np.meshgrid``'s derivatives pass)."""
    n = len(arrays)
    if n == 1:
        return (np.shape(arrays[0]),)
    if n == 2:
        return (np.shape(arrays[0]), np.shape(arrays[1]))
    if n == 3:
        return (np.shape(arrays[0]), np.shape(arrays[1]), np.shape(arrays[2]))
    if n == 4:
        return (np.shape(arrays[0]), np.shape(arrays[1]), np.shape(arrays[2]),
                np.shape(arrays[3]))
    raise NotImplementedError("s2s.jit: the shapes of more than four arrays (shapes_of)")


def _bcast_transpose(g, like):
    """``np.broadcast_arrays``' cotangent of one input: its output's (zero for None)
    summed back to the input's shape."""
    if g is None:
        return np.zeros(np.shape(like))
    return rt.unbroadcast(g, like)


def _mesh_transpose(g, like, k, indexing, n):
    """``np.meshgrid``'s cotangent of input ``k`` of ``n``: output ``k``'s (zero for None)
    summed over every axis but the one input ``k`` varies along (the first two swapped
    for ``indexing="xy"``)."""
    if g is None:
        return np.zeros(np.shape(like))
    axis = 1 - k if indexing == "xy" and n >= 2 and k < 2 else k
    moved = np.moveaxis(g, axis, 0)
    rows = np.reshape(np.ascontiguousarray(moved), (moved.shape[0], moved.size // moved.shape[0]))
    return np.reshape(np.sum(rows, axis=1), np.shape(like))


definline(_mesh_transpose, _bcast_transpose, _unstack_transpose, _array_split_transpose,
          _append_part, _append_part_transpose, _ediff1d_tangent, _ediff1d_transpose,
          _join_transpose, _mesh_tangent, _bcast_tangent, _select, _select_transpose, _rows,
          _unrows, _take_along_transpose, _gradient_rows_transpose, _gradient_transpose,
          _quantile_rows, _quantile_pair, _quantile_tangent, _quantile_transpose,
          modes=("jit",))
# shape and index helpers of the derivative templates (np.partition's permutation by
# argsorts, np.delete's kept and np.insert's source indices by the same calls on an
# arange, np.cov's layout), plain numpy the jit compiles as it is
definline(rt.matching_permutation, rt.delete_kept, rt.insert_sources, rt.cov_layout,
          modes=("jit",))
definline(rt.shapes_of, code=shapes_of, modes=("jit",))
# (vmap too: a condition that differs per example makes the mask batched)
definline(rt.select_none, code=select_none, modes=("jit", "vmap"))
definline(rt.apply_linear, code=apply_linear, modes=("jit",))
