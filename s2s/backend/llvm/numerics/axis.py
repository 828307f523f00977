"""Reductions along one axis (``np.sum(a, axis=k)``, ``keepdims``) and their cotangents.

Contract: ``reduction_axis(fn, atoms, kw_atoms, ndim, loc)`` reads ``axis`` and
``keepdims`` (constants; positional or keyword) and returns ``(axis, keepdims)``
with ``axis`` None for a whole-array reduction or in ``0..ndim-1``; anything else
(a tuple of axes, ``where=``, ``dtype=``, a non-constant axis) raises a clear
error.  ``reduce_axis`` computes sum/prod/mean/max/min along the axis (max/min of
an empty axis raise ``ValueError``; nan propagates), ``spread_axis`` is the
cotangent of sum/mean: ``g`` broadcast back along the axis (over its length for
mean).
"""
from __future__ import annotations

from llvmlite import ir as ll

from ....errors import UnsupportedSyntaxError
from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T

_NAMES = ("a", "axis", "dtype", "out", "keepdims")


def reduction_axis(fn, atoms, kw_atoms, ndim, loc, vjp=False):
    """``(axis, keepdims)`` of a reduction call (``vjp``: the ``*_vjp(g, a, axis, ...)``)."""
    shift = 1 if vjp else 0
    given = {}
    names = ("axis", "keepdims", "where") if vjp else ("axis", "dtype", "out", "keepdims")
    for name, atom in zip(names, atoms[1 + shift:]):
        given[name] = atom
    given.update(kw_atoms)
    values = {}
    for name, atom in given.items():
        if not hasattr(atom, "value"):
            raise UnsupportedSyntaxError(
                f"jit: {getattr(fn, '__name__', fn)} with a {name} that is not a constant", loc)
        values[name] = atom.value
    axis = values.pop("axis", None)
    keepdims = bool(values.pop("keepdims", False))
    if values.pop("where", True) is not True or any(v is not None for v in values.values()):
        raise UnsupportedSyntaxError(
            f"jit: {getattr(fn, '__name__', fn)} with {', '.join(values) or 'where'}= "
            "(jit compiles axis and keepdims)", loc)
    if axis is None:
        return None, keepdims
    if type(axis) is not int or not -ndim <= axis < ndim:
        raise UnsupportedSyntaxError(
            f"jit: {getattr(fn, '__name__', fn)} over axis {axis!r} of a {ndim}-d array "
            "(one integer axis)", loc)
    return axis % ndim, keepdims


def reduced_ndim(ndim, axis, keepdims):
    return ndim if keepdims else ndim - 1


def out_index(idx, axis, keepdims):
    return idx[:axis] + ([A.ZERO] if keepdims else []) + idx[axis + 1:]


def reduce_axis(L, a, t: T.Array, axis, keepdims, op, rtype: T.Array):
    b = L.b
    shape = A.shape_list(L, a, t)
    out_shape = shape[:axis] + ([A.ONE] if keepdims else []) + shape[axis + 1:]
    out = A.allocate(L, rtype, out_shape)
    data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)
    et = rtype.elem
    n = shape[axis]
    if op in ("max", "min"):
        L.check(b.icmp_signed("==", n, A.ZERO), ValueError,
                f"zero-size array to reduction operation {op}imum which has no identity")
        A.loop_nest(L, out_shape, lambda idx: A.store(
            L, S.convert(L, A.element(L, a, t, idx[:axis] + [A.ZERO] + idx[axis + 1:]
                                      if keepdims else idx[:axis] + [A.ZERO] + idx[axis:]),
                         t.elem, et),
            A.element_ptr(L, data, strides, idx, et), et))
    else:
        A.fill(L, out, rtype, L.const(1 if op == "prod" else 0, et))

    def body(idx):
        ptr = A.element_ptr(L, data, strides, out_index(idx, axis, keepdims), et)
        x = S.convert(L, A.element(L, a, t, idx), t.elem, et)
        acc = A.load(L, ptr, et)
        if op in ("max", "min"):
            new = S.min_max(L, op, acc, x, et, propagate_nan=True)
        else:
            new = S.binary(L, "mul" if op == "prod" else "add", acc, x, et)
        A.store(L, new, ptr, et)

    A.loop_nest(L, shape, body)
    if op == "mean":
        count = S.convert(L, n, T.INT, et)
        A.elementwise(L, lambda xs: (S.binary(L, "truediv", S.convert(L, xs[0][0], xs[0][1], et),
                                              count, et), et),
                      [(out, rtype)], rtype.dtype, out=(out, rtype))
    return out


def spread_axis(L, g, gt: T.Array, a, at: T.Array, axis, keepdims, mean, rtype: T.Array):
    """``a``-shaped: ``g`` at every position along ``axis`` (``/ n`` for a mean)."""
    b = L.b
    shape = A.shape_list(L, a, at)
    out = A.allocate(L, rtype, shape)
    data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)
    et = rtype.elem
    count = S.convert(L, shape[axis], T.INT, et)

    def body(idx):
        v = S.convert(L, A.element(L, g, gt, out_index(idx, axis, keepdims)), gt.elem, et)
        if mean:
            v = S.binary(L, "truediv", v, count, et)
        A.store(L, v, A.element_ptr(L, data, strides, idx, et), et)

    A.loop_nest(L, shape, body)
    return out


_ = ll
