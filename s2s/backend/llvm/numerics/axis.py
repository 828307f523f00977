"""Reductions along axes (``np.sum(a, axis=k)``, ``axis=(j, k)``, ``keepdims``) and their
cotangents.

Contract: ``reduction_axis(fn, atoms, kw_atoms, ndim, loc)`` reads ``axis`` and
``keepdims`` (constants; positional or keyword) and returns ``(axis, keepdims)`` with
``axis`` None for a whole-array reduction (every axis named counts as one), an ``int``
in ``0..ndim-1`` for one axis, or (for a tuple of axes, numpy's form) a sorted tuple of
distinct axes in ``0..ndim-1``; anything else (``where=``, ``dtype=``, a non-constant
axis, an axis out of range, a repeated axis) raises a clear error.  The helpers below
take either form of ``axis``: ``reduce_axis`` computes sum/prod/mean/max/min over the
axes (max/min over no element raise ``ValueError``; nan propagates), ``spread_axis`` is
the cotangent of sum/mean: ``g`` broadcast back along the axes (over their element count
for mean); ``out_index``/``out_shape`` map an index or shape of the operand to the
reduced array's.
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
    many = type(axis) is tuple
    axes = axis if many else (axis,)
    if not all(type(k) is int and -ndim <= k < ndim for k in axes):
        raise UnsupportedSyntaxError(
            f"jit: {getattr(fn, '__name__', fn)} over axis {axis!r} of a {ndim}-d array "
            "(an integer axis or a tuple of them)", loc)
    axes = tuple(sorted(k % ndim for k in axes))
    if len(set(axes)) != len(axes):
        raise UnsupportedSyntaxError(
            f"jit: {getattr(fn, '__name__', fn)} over axis {axis!r}: duplicate value in "
            "'axis'", loc)
    if axes == tuple(range(ndim)):  # every axis: numpy's number, as for axis=None
        return None, keepdims
    return (axes if many else axes[0]), keepdims


def _axes(axis):
    return axis if type(axis) is tuple else (axis,)


def reduced_ndim(ndim, axis, keepdims):
    return ndim if keepdims else ndim - len(_axes(axis))


def out_index(idx, axis, keepdims):
    """The reduced array's index (or shape) of the operand's ``idx``: each reduced axis
    dropped, or 0 (``keepdims``)."""
    return out_shape(idx, axis, keepdims, A.ZERO)


def out_shape(shape, axis, keepdims, one=None):
    """The reduced array's shape of the operand's ``shape`` (each reduced axis dropped,
    or of length 1 with ``keepdims``)."""
    axes = _axes(axis)
    one = A.ONE if one is None else one
    return [one if k in axes else d for k, d in enumerate(shape)
            if keepdims or k not in axes]


def _first_index(idx, axis, keepdims, ndim):
    """The operand's index of the first element reduced into the reduced array's ``idx``."""
    axes = _axes(axis)
    it = iter(idx)
    full = []
    for k in range(ndim):
        if k in axes:
            full.append(A.ZERO)
            if keepdims:
                next(it)
        else:
            full.append(next(it))
    return full


def _count(L, shape, axis):
    """How many elements are reduced into each output element (an i64)."""
    n = A.ONE
    for k in _axes(axis):
        n = L.b.mul(n, shape[k])
    return n


def reduce_axis(L, a, t: T.Array, axis, keepdims, op, rtype: T.Array):
    shape = A.shape_list(L, a, t)

    def elements(visit):
        A.loop_nest(L, shape, lambda idx: visit(idx, A.element(L, a, t, idx), t.elem))

    first = lambda idx: (A.element(L, a, t, _first_index(idx, axis, keepdims, t.ndim)),  # noqa: E731
                         t.elem)
    return accumulate_axis(L, shape, elements, axis, keepdims, op, rtype, first)


def accumulate_axis(L, shape, elements, axis, keepdims, op, rtype: T.Array, first=None):
    """A new array of ``rtype``: the reduction ``op`` (``"sum"``, ``"prod"``, ``"mean"``;
    ``"max"``/``"min"`` given ``first(out_idx)``, the first element reduced into each
    place) along ``axis`` of the elements ``elements(visit)`` yields, calling
    ``visit(idx, value, type)`` for every index of ``shape`` in C order; each is added
    to its place in that order (``reduce_axis``: of an array; ``ops/fused.py``: of
    elements computed as they are visited)."""
    b = L.b
    reduced = out_shape(shape, axis, keepdims)
    out = A.allocate(L, rtype, reduced)
    data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)
    et = rtype.elem
    n = _count(L, shape, axis)
    if op in ("max", "min"):
        L.check(b.icmp_signed("==", n, A.ZERO), ValueError,
                f"zero-size array to reduction operation {op}imum which has no identity")
        A.loop_nest(L, reduced, lambda idx: A.store(
            L, S.convert(L, *first(idx), et), A.element_ptr(L, data, strides, idx, et), et))
    else:
        A.fill(L, out, rtype, L.const(1 if op == "prod" else 0, et))

    def visit(idx, value, vt):
        ptr = A.element_ptr(L, data, strides, out_index(idx, axis, keepdims), et)
        x = S.convert(L, value, vt, et)
        acc = A.load(L, ptr, et)
        if op in ("max", "min"):
            new = S.min_max(L, op, acc, x, et, propagate_nan=True)
        else:
            new = S.binary(L, "mul" if op == "prod" else "add", acc, x, et)
        A.store(L, new, ptr, et)

    elements(visit)
    if op == "mean":
        count = S.convert(L, n, T.INT, et)
        A.elementwise(L, lambda xs: (S.binary(L, "truediv", S.convert(L, xs[0][0], xs[0][1], et),
                                              count, et), et),
                      [(out, rtype)], rtype.dtype, out=(out, rtype))
    return out


def spread_axis(L, g, gt: T.Array, a, at: T.Array, axis, keepdims, mean, rtype: T.Array):
    """``a``-shaped: ``g`` at every position along the axes (``/ n`` for a mean)."""
    b = L.b
    shape = A.shape_list(L, a, at)
    out = A.allocate(L, rtype, shape)
    data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)
    et = rtype.elem
    count = S.convert(L, _count(L, shape, axis), T.INT, et)

    def body(idx):
        v = S.convert(L, A.element(L, g, gt, out_index(idx, axis, keepdims)), gt.elem, et)
        if mean:
            v = S.binary(L, "truediv", v, count, et)
        A.store(L, v, A.element_ptr(L, data, strides, idx, et), et)

    A.loop_nest(L, shape, body)
    return out


_ = ll
