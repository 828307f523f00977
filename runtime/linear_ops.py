"""Linear maps of the structural numpy functions and their transposes, behind one helper.

``apply_linear(op, x, like, spec)`` applies the linear map named ``op`` to
``x``; ``like`` is the primal whose shape (and dtype kind) the result takes,
``spec`` a tuple of the map's non-differentiable parameters (pad widths,
indices, axes...).  Every op has a *transpose* op (``TRANSPOSE``) with
``<ct, L(x)> == <L^T(ct), x>`` for the real pairing ``Re(sum(a * b))`` (JAX's
convention: no conjugation), so the rules of ``apply_linear`` itself
(``s2s/rules/linear_rules.py``) are closed under differentiation: its JVP
is ``apply_linear(op, tan, like, spec)`` and its VJP is
``apply_linear(TRANSPOSE[op], ct, x, spec)``, at every order.

A primitive that is linear in an argument uses ``apply_linear(op, t, ans,
spec)`` as that argument's JVP (or the primitive itself) and
``apply_linear(op_T, g, x, spec)`` as its VJP.  Cotangents of real inputs
are real, of the input's shape and float dtype.
"""
from __future__ import annotations

import numpy as np

from .adjoint import unbroadcast, zeros_like
from .vjps import _fit


def apply_linear(op, x, like, spec=()):
    """``L_op(x)``, shaped like ``like`` (see the module docstring)."""
    return _OPS[op](x, like, *spec)


# --- np.pad (modes whose padding copies entries: an index map) ---------------------------
_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_kwargs(mode, reflect_type):
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"s2s: no derivative of np.pad with mode={mode!r} "
                                  f"(supported: {', '.join(_PAD_MODES)})")
    if mode in ("reflect", "symmetric"):
        if reflect_type != "even":
            raise NotImplementedError("s2s: no derivative of np.pad with reflect_type='odd'")
        return {"reflect_type": reflect_type}
    return {}


def pad(x, like, pad_width, mode="constant", reflect_type="even"):
    """``np.pad(x, pad_width, mode)`` with zero constants: the linear part of np.pad."""
    return np.pad(np.asarray(x), pad_width, mode=mode, **_pad_kwargs(mode, reflect_type))


def pad_transpose(g, like, pad_width, mode="constant", reflect_type="even"):
    """Each entry of ``like`` collects ``g`` from every padded position copied from it
    (padding ``arange`` with the same mode gives the source of each position)."""
    shape = np.shape(like)
    n = int(np.prod(shape))
    src = np.arange(n).reshape(shape)
    if mode == "constant":
        src = np.pad(src, pad_width, mode="constant", constant_values=-1)
    else:
        src = np.pad(src, pad_width, mode=mode, **_pad_kwargs(mode, reflect_type))
    g = np.asarray(g)
    keep = src >= 0
    out = np.zeros(n, dtype=np.result_type(g.dtype, float))
    np.add.at(out, src[keep], g[keep])
    return _fit(out.reshape(shape), like)


# --- np.take_along_axis -------------------------------------------------------------------
def take_along(x, like, indices, axis=-1):
    return np.take_along_axis(np.asarray(x), indices, axis)


def take_along_transpose(g, like, indices, axis=-1):
    """Zeros shaped like ``like`` with ``g`` added at the gathered positions."""
    shape = np.shape(like)
    g = np.asarray(g)
    out = np.zeros(shape if axis is not None else (int(np.prod(shape)),),
                   dtype=np.result_type(g.dtype, float))
    indices = np.asarray(indices)
    if axis is None:
        np.add.at(out, indices, g)
        return _fit(out.reshape(shape), like)
    axis = int(axis) % out.ndim
    fancy = []
    for i, n in enumerate(out.shape):
        if i == axis:
            fancy.append(indices)
        else:
            fancy.append(np.arange(n).reshape([-1 if j == i else 1 for j in range(out.ndim)]))
    np.add.at(out, tuple(np.broadcast_arrays(*fancy)), np.broadcast_to(g, indices.shape))
    return _fit(out, like)


# --- np.select (linear in the list of choices) ---------------------------------------------
def first_true(condlist, shape):
    """``m_i``: condition ``i`` holds and no earlier one does (np.select's choice)."""
    taken = np.zeros(shape, dtype=bool)
    out = []
    for c in condlist:
        c = np.broadcast_to(c, shape)
        out.append(c & ~taken)
        taken = taken | c
    return out, ~taken


def select(xs, like, condlist):
    """``sum_i m_i x_i``: ``np.select(condlist, xs, 0)`` (``None`` entries are zero)."""
    xs = [zeros_like(np.asarray(like)) if x is None else x for x in xs]
    return np.select(condlist, [np.broadcast_to(x, np.shape(like)) for x in xs], 0)


def select_transpose(g, like, condlist):
    """``[m_i g]`` summed to the shapes of the choices ``like``."""
    g = np.asarray(g)
    masks, _ = first_true(condlist, g.shape)
    out = [unbroadcast(np.where(m, g, 0), x) for m, x in zip(masks, like)]
    return type(like)(out) if isinstance(like, (list, tuple)) else out


def select_none(condlist, shape):
    """Where no condition holds (``np.select`` returns its default there)."""
    return first_true(condlist, tuple(shape))[1]


# --- joins and splits ---------------------------------------------------------------------
_JOINS = {"dstack": (np.dstack, 2), "column_stack": (np.column_stack, 1)}


def _promoted(x, how):
    if how == "dstack":
        return np.atleast_3d(x)
    x = np.asarray(x)
    return x.reshape(-1, 1) if x.ndim < 2 else x


def join(xs, like, how, tup):
    """``np.dstack(xs)`` / ``np.column_stack(xs)`` (``None`` pieces are zero; ``tup``
    the primal pieces)."""
    xs = [zeros_like(np.asarray(p)) if x is None else x for x, p in zip(xs, tup)]
    return _JOINS[how][0](xs)


def join_transpose(g, like, how, tup):
    """``g`` split back into the pieces ``tup`` (each promoted, then reshaped back)."""
    axis = _JOINS[how][1]
    cuts = np.cumsum([_promoted(p, how).shape[axis] for p in tup])[:-1]
    out = [_fit(np.reshape(gi, np.shape(p)), p)
           for gi, p in zip(np.split(np.asarray(g), cuts, axis=axis), tup)]
    return type(tup)(out) if isinstance(tup, (list, tuple)) else out


def array_split(x, like, indices_or_sections, axis=0):
    return np.array_split(np.asarray(x), indices_or_sections, axis)


def array_split_transpose(gs, like, indices_or_sections, axis=0):
    """The pieces concatenated back (``None`` pieces are zero)."""
    pieces = np.array_split(np.zeros(np.shape(like)), indices_or_sections, axis)
    return _fit(np.concatenate([p if gi is None else gi for p, gi in zip(pieces, gs)],
                               axis=axis), like)


def unstack(x, like, axis=0):
    return tuple(np.moveaxis(np.asarray(x), axis, 0))


def unstack_transpose(gs, like, axis=0):
    shape = np.shape(like)
    slot = shape[:axis % len(shape)] + shape[axis % len(shape) + 1:]
    return _fit(np.stack([np.zeros(slot) if gi is None else gi for gi in gs], axis), like)


# --- differences --------------------------------------------------------------------------
def _widths(x, n_extra, axis):
    """Pad widths adding ``n_extra = (before, after)`` entries along ``axis`` only."""
    nd = np.ndim(x)
    return [(0, 0)] * (axis % nd) + [n_extra] + [(0, 0)] * (nd - 1 - axis % nd)


def _extra(v, shape, axis):
    """Length along ``axis`` of a ``prepend``/``append`` value (``None``: absent)."""
    if v is None or v is np._NoValue:
        return 0
    return 1 if np.ndim(v) == 0 else np.shape(v)[axis]


def diff(x, like, n=1, axis=-1, prepend=None, append=None):
    """``np.diff`` of ``x`` with zeros for ``prepend``/``append``: its linear part."""
    x = np.asarray(x)
    before, after = _extra(prepend, x.shape, axis), _extra(append, x.shape, axis)
    return np.diff(np.pad(x, _widths(x, (before, after), axis)), n, axis)


def diff_transpose(g, like, n=1, axis=-1, prepend=None, append=None):
    """``-diff`` of ``g`` padded with a zero at both ends, ``n`` times, then the
    entries of ``like`` (dropping the prepended/appended ones)."""
    g = np.asarray(g)
    for _ in range(int(n)):
        g = -np.diff(np.pad(g, _widths(g, (1, 1), axis)), 1, axis)
    shape = np.shape(like)
    before = _extra(prepend, shape, axis)
    g = np.take(g, np.arange(before, before + shape[axis]), axis=axis)
    return _fit(g, like)


def ediff1d(x, like, to_end=None, to_begin=None):
    """``np.ediff1d(x)`` with zeros at the ends."""
    d = np.diff(np.ravel(x))
    b = np.zeros(np.size(to_begin)) if to_begin is not None else np.zeros(0)
    e = np.zeros(np.size(to_end)) if to_end is not None else np.zeros(0)
    return np.concatenate([b, d, e])


def ediff1d_transpose(g, like, to_end=None, to_begin=None):
    g = np.asarray(g)
    b = np.size(to_begin) if to_begin is not None else 0
    mid = g[b:b + max(np.size(like) - 1, 0)]
    return _fit(np.reshape(-np.diff(np.pad(mid, 1)), np.shape(like)), like)


# --- np.append -----------------------------------------------------------------------------
def append_part(x, like, other, axis, which):
    """``np.append`` of ``x`` in slot ``which`` (0: arr, 1: values) with zeros in the other."""
    z = np.zeros(np.shape(other))
    return np.append(x, z, axis) if which == 0 else np.append(z, x, axis)


def append_part_transpose(g, like, other, axis, which):
    """The slot ``which`` of ``g`` (the cotangent of that argument of ``np.append``)."""
    g = np.asarray(g)
    first = other if which == 1 else like
    if axis is None:
        g, axis, n0 = np.ravel(g), 0, np.size(first)
    else:
        n0 = np.shape(first)[axis]
    part = np.take(g, np.arange(n0) if which == 0 else np.arange(n0, g.shape[axis]), axis=axis)
    return _fit(np.reshape(part, np.shape(like)), like)


# --- np.gradient (one spacing for every axis: a scalar, or the sample points of 1-D f) ------
def _gradient_axes(ndim, axis):
    if axis is None:
        return list(range(ndim)), ndim == 1
    if np.ndim(axis) == 0:
        return [int(axis) % ndim], True
    return [int(a) % ndim for a in axis], False


def gradient(x, like, spacing=1.0, axis=None, edge_order=1):
    """``np.gradient(x, spacing, axis=axis, edge_order=edge_order)``."""
    return np.gradient(np.asarray(x), spacing, axis=axis, edge_order=edge_order)


def gradient_transpose(gs, like, spacing=1.0, axis=None, edge_order=1):
    """``sum_k D_k^T g_k``: each axis' difference matrix ``D_k`` (``np.gradient`` of the
    identity along that axis), transposed, applied to that axis' cotangent."""
    shape = np.shape(like)
    axes, single = _gradient_axes(len(shape), axis)
    gs = [gs] if single else list(gs)
    out = np.zeros(shape, dtype=np.result_type(float, *[np.asarray(g).dtype for g in gs
                                                        if g is not None]))
    for ax, g in zip(axes, gs):
        if g is None:
            continue
        n = shape[ax]
        d = np.gradient(np.eye(n), spacing, axis=0, edge_order=edge_order)   # d[i, j] = D_ij
        out = out + np.moveaxis(np.tensordot(d, np.moveaxis(np.asarray(g), ax, 0), (0, 0)), 0, ax)
    return _fit(out, like)


# --- np.meshgrid (output k broadcasts the k-th input along its own axis) ------------------
def _mesh_axis(k, n, indexing):
    """The axis of meshgrid's outputs along which input ``k`` of ``n`` varies."""
    if indexing == "xy" and n >= 2 and k < 2:
        return 1 - k
    return k


def mesh(t, like, k, indexing="xy", sparse=False, shapes=()):
    """The outputs' tangents when input ``k`` moves by ``t``: ``t`` broadcast along output
    ``k`` (shapes ``shapes``), zeros in the others."""
    n = len(shapes)
    out = []
    for j, shape in enumerate(shapes):
        if j != k:
            out.append(np.zeros(shape, dtype=np.result_type(t, float)))
            continue
        view = [1] * len(shape)
        view[_mesh_axis(k, n, indexing)] = -1
        out.append(np.array(np.broadcast_to(np.reshape(t, view), shape)))
    return tuple(out)


def mesh_transpose(gs, like, k, indexing="xy", sparse=False, shapes=()):
    """The cotangent of input ``k``: output ``k``'s cotangent summed over the other axes."""
    g = gs[k]
    if g is None:
        return _fit(np.zeros(np.shape(like)), like)
    axis = _mesh_axis(k, len(shapes), indexing)
    g = np.asarray(g)
    total = np.sum(g, axis=tuple(a for a in range(g.ndim) if a != axis))
    return _fit(np.reshape(total, np.shape(like)), like)


# --- np.broadcast_arrays (output k is input k broadcast to the common shape) --------------
def bcast(t, like, k, shapes=()):
    """The outputs' tangents when input ``k`` moves by ``t``: zeros but ``t`` broadcast."""
    return tuple(np.array(np.broadcast_to(t, shape)) if j == k
                 else np.zeros(shape, dtype=np.result_type(t, float))
                 for j, shape in enumerate(shapes))


def bcast_transpose(gs, like, k, shapes=()):
    """The cotangent of input ``k``: output ``k``'s summed back to the input's shape."""
    g = gs[k]
    return _fit(np.zeros(np.shape(like)) if g is None else unbroadcast(g, like), like)


_OPS = {
    "pad": pad, "pad_T": pad_transpose,
    "take_along": take_along, "take_along_T": take_along_transpose,
    "select": select, "select_T": select_transpose,
    "join": join, "join_T": join_transpose,
    "array_split": array_split, "array_split_T": array_split_transpose,
    "unstack": unstack, "unstack_T": unstack_transpose,
    "diff": diff, "diff_T": diff_transpose,
    "ediff1d": ediff1d, "ediff1d_T": ediff1d_transpose,
    "append_part": append_part, "append_part_T": append_part_transpose,
    "gradient": gradient, "gradient_T": gradient_transpose,
    "mesh": mesh, "mesh_T": mesh_transpose,
    "bcast": bcast, "bcast_T": bcast_transpose,
}
#: the transpose of each op
TRANSPOSE = {}
for _name in list(_OPS):
    if not _name.endswith("_T"):
        TRANSPOSE[_name], TRANSPOSE[_name + "_T"] = _name + "_T", _name


def transpose_of(op):
    """The name of the transpose of ``op`` (non-differentiable: a string)."""
    return TRANSPOSE[op]


def _register_order_stats():
    from .order_stats import quantile, quantile_transpose
    _OPS["quantile"], _OPS["quantile_T"] = quantile, quantile_transpose
    TRANSPOSE["quantile"], TRANSPOSE["quantile_T"] = "quantile_T", "quantile"


_register_order_stats()
