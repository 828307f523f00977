"""``s2s_runtime.apply_linear(op, x, like, spec)`` -- the linear maps derivative templates
apply by name (``"diff_T"``, ``"quantile"``...) -- as plain Python the jit compiles, for
the maps compiled here: ``np.diff``'s, ``np.pad``'s (``pads.py``) and ``np.append``'s
(``append_part``) and their transposes, and the transposes of ``np.broadcast_arrays``,
``np.unstack``, ``np.array_split`` and ``np.meshgrid`` (``"bcast_T"``, ``"unstack_T"``,
``"array_split_T"``, ``"mesh_T"``).  Other maps (the median's and quantiles',
``np.gradient``'s, ``np.take_along_axis``'s...) are
refused when compiling, naming the map.  ``op`` is a constant: the jit keeps the one
branch it names."""
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


definline(_mesh_transpose, _bcast_transpose, _unstack_transpose, _array_split_transpose, _append_part,
          _append_part_transpose, modes=("jit",))
definline(rt.shapes_of, code=shapes_of, modes=("jit",))
definline(rt.apply_linear, code=apply_linear, modes=("jit",))
