"""Cotangents and tangents of lists (``lists.py``) of numbers or arrays, and numpy's
reading of a list display of numbers as an array: handlers of ``calls.TABLE`` (``ops.lists.ListOp``,
each deferring to the handler registered before it unless its operand is a list).

Maths (``s2s_runtime.containers``, ``adjoint`` and ``jvps_arrays``, the same semantics):
a list's cotangent is a list of its length, of numbers or of arrays shaped like its
items -- ``getitem_vjp(g, l, i)`` (zeros with ``g``
at ``i``, or ``g``'s items along a slice), ``add_at`` (that added to ``acc``), ``add``
(item by item), ``zeros_like``, ``densify``, ``seq_cast`` (a tuple's cotangent from a
list of its length), ``array_vjp(g, l)`` (the items of the 1-D array ``g``),
``sum_builtin_vjp(g, l)`` (``g`` summed to every item's shape), ``extreme_ct(g, l, m)``
(``g`` at the first item equal to ``m``); ``array_jvp`` (the tangents as an array of the
result's dtype; of arrays: stacked).  A display ``[a, b, ...]`` of numbers: ``np.array``/``np.asarray`` (a 1-D array
of the promoted dtype; a rectangular display of displays: an array of its shape),
``np.shape``/``size``/``ndim``, and ``array_vjp`` into it; ``array_vjp_transpose(ct, g,
x)`` of such a display (the numbers of ``ct`` as an array of ``x``'s shape: reverse mode
over ``np.array``'s cotangent); ``array_vjp(g, x)`` of an array ``x`` is
``unbroadcast(g, x)``.  A regular nesting of tuples or list displays of arrays
(``np.array([x, y, z])``, ``values/nesting.py``): ``array_vjp(g, x)`` is the views
``g[j_1, ..., j_d]`` nested as ``x``; ``array_jvp`` the tangents stacked the same way
(None ones as zeros); ``array_vjp_transpose(ct, g, x)`` the pieces put back in ``g``'s
shape.
"""
from __future__ import annotations

import builtins

import numpy as np
from llvmlite import ir as ll

import s2s_runtime as rt

from ..values import arrays as A
from ..values import lists as Li
from ..numerics import reductions as R
from ..values import scalars as S
from ..values.nesting import fill_nested, leaf_values, regular_nesting
from ..typing import types as T
from .adjoints import Unbroadcast
from ..ops.lists import (ArraySum, ListOp, add_items, as_list, cotangent_type, is_item, is_list,
                         is_number, list_at, listish, overload_lists, sum_item_type, zero_item)

# -- cotangents --------------------------------------------------------------------------------
class FromArray(ListOp):
    """``array_vjp(g, l)``: the items of the 1-D array ``g`` (for a list of arrays: the
    rows of ``g``, one more dimension than an item)."""

    def ltype(self, fn, types, loc):
        g = types[0]
        if not isinstance(g, T.Array) or g.ndim != Li.array_type(types[1]).ndim:
            return None
        return Li.rows_type(g) if Li.holds_arrays(types[1]) else cotangent_type(types[1])

    def llower(self, L, fn, vals, rtype):
        return Li.from_array(L, *vals[0], rtype)


class StackRows(FromArray):
    """``stack_vjp(g, l, axis)`` of a list (a constant ``axis``): the slices of ``g`` along
    ``axis``, views, as ``array_vjp`` gives its rows (``axis=1``: vmap's stack of each
    example's list)."""

    reads_atoms = True

    def ltype(self, fn, types, loc):
        atoms = self.atoms[0] if self.atoms else ()
        axis = getattr(atoms[2], "value", None) if len(atoms) > 2 else 0
        g = types[0]
        ok = type(axis) is int and isinstance(g, T.Array) and -g.ndim <= axis < g.ndim
        return super().ltype(fn, types[:2], loc) if ok else None

    def llower(self, L, fn, vals, rtype):
        (g, gt) = vals[0]
        atoms = L.call_atoms[0]
        axis = atoms[2].value % gt.ndim if len(atoms) > 2 else 0
        if axis:  # that axis first: a view
            shape, strides = A.shape_list(L, g, gt), A.strides_list(L, g, gt)
            order = [axis] + [k for k in range(gt.ndim) if k != axis]
            g = A.make(L, gt, L.b.extract_value(g, 0), L.b.extract_value(g, 1),
                       [shape[k] for k in order], [strides[k] for k in order])
        return Li.from_array(L, g, gt, rtype)


class Filled(ListOp):
    """``sum_builtin_vjp(g, l)``: ``g`` (summed to its shape) for every item;
    ``zeros_like(l)``: zeros."""

    def ltype(self, fn, types, loc):
        if fn is rt.zeros_like:
            return cotangent_type(types[0])
        e = cotangent_type(types[1]).elem
        if isinstance(e, T.Array):
            out = Unbroadcast().type(None, [types[0], Li.elem_of(types[1])], {}, loc)
            return T.List(out) if isinstance(out, T.Array) else None
        return T.List(T.promote(types[0], e)) if is_number(types[0]) else None

    def llower(self, L, fn, vals, rtype):
        like, lt = vals[0] if fn is rt.zeros_like else vals[1]
        if rtype.elem is None:
            return ll.Constant(rtype.llvm(), None)  # of ``[]``: empty too
        data, _, n = Li.fields(L, like)
        e, le = rtype.elem, Li.elem_of(lt)
        if fn is rt.zeros_like:
            return Li.fresh(L, rtype, n, Li.room(L, n),
                            lambda i: (zero_item(L, Li.load(L, data, i, lt), le, e), e))
        if isinstance(e, T.Array):
            return Li.fresh(L, rtype, n, Li.room(L, n), lambda i: (Unbroadcast().lower(
                L, None, [vals[0], (Li.load(L, data, i, lt), le)], {}, e), e))
        return Li.fresh(L, rtype, n, Li.room(L, n), lambda i: vals[0])


class RowsCotangent(ListOp):
    """``sum_builtin_vjp(g, a)`` of an array ``a`` (``sum`` over its rows): ``g`` summed to
    a row's shape, in every row, an array shaped like ``a``."""

    def ltype(self, fn, types, loc):
        g, a = types
        row = a.elem if a.ndim == 1 else T.Array(a.dtype, a.ndim - 1)
        out = Unbroadcast().type(None, [g, row], {}, loc)
        if out is None:
            return None
        dtype = (out.elem if isinstance(out, T.Array) else out).dtype
        return T.Array(dtype if dtype in ("f4", "f8", "c16") else "f8", a.ndim)

    def llower(self, L, fn, vals, rtype):
        (g, gt), (a, at) = vals
        out = A.allocate(L, rtype, A.shape_list(L, a, at))
        data, strides = L.b.extract_value(out, 0), A.strides_list(L, out, rtype)
        row_t = at.elem if at.ndim == 1 else T.Array(at.dtype, at.ndim - 1)
        value_t = Unbroadcast().type(None, [gt, row_t], {}, None)
        e = rtype.elem

        def place(i):
            row, _ = A.first_axis_item(L, a, at, i)
            value = Unbroadcast().lower(L, None, [(g, gt), (row, row_t)], {}, value_t)
            if at.ndim == 1:  # a number per row
                A.store(L, S.convert(L, value, value_t, e),
                        A.element_ptr(L, data, strides, [i], e), e)
                return
            A.elementwise(L, lambda v: (S.convert(L, *v[0], e), e), [(value, value_t)],
                          rtype.dtype, out=A.leading_view(L, out, rtype, [i]))

        A.loop(L, A.shape_of(L, a, 0), place)
        return out


class RowsTangentSum(ListOp):
    """``sum_builtin_jvp(t, ans)`` of an array ``t`` of the rows' tangents: their sum
    (``sum(t)``), as ``ans``'s type (a number spread over ``ans``'s shape where a
    ``start`` array broadcast the sum)."""

    def ltype(self, fn, types, loc):
        t, ans = types
        total = ArraySum(None).ltype(builtins.sum, [t], loc)
        ok = total is not None and (total == ans or is_number(total) and (
            is_number(ans) or isinstance(ans, T.Array)))
        return ans if ok else None

    def llower(self, L, fn, vals, rtype):
        (t, tt), (ans, ans_t) = vals
        total_t = ArraySum(None).ltype(builtins.sum, [tt], None)
        total = ArraySum(None).llower(L, builtins.sum, [vals[0]], total_t)
        if total_t == rtype:
            return total
        if isinstance(rtype, T.Array):
            out = A.allocate(L, rtype, A.shape_list(L, ans, ans_t))
            A.fill(L, out, rtype, S.convert(L, total, total_t, rtype.elem))
            return out
        return S.convert(L, total, total_t, rtype)


def _scattered(L, acc, like, g, gt, index, it, rtype):
    """A copy of list ``acc`` (None: zeros shaped like the items of list ``like``) with
    ``g`` added at ``index`` (a position, or a slice along which ``g``'s items go)."""
    b = L.b
    ldata, _, like_n = Li.fields(L, like[0])
    e = rtype.elem
    if acc is None:
        item = (lambda i: (zero_item(L, Li.load(L, ldata, i, like[1]), Li.elem_of(like[1]), e),
                           e))
    else:
        data = Li.fields(L, acc[0])[0]
        item = (lambda i: (Li.load(L, data, i, acc[1]), Li.elem_of(acc[1])))
    out = Li.fresh(L, rtype, like_n, Li.room(L, like_n), item)
    odata = Li.fields(L, out)[0]

    def add_at(p, x, xt):
        old = Li.load(L, odata, p, rtype)
        Li.store(L, add_items(L, old, e, x, xt, e), e, odata, p, rtype)

    if isinstance(it, T.Slice):
        start, step, length = A.slice_bounds(L, index, it.present, like_n)
        gdata = Li.fields(L, g)[0]
        A.loop(L, length, lambda i: add_at(b.add(start, b.mul(i, step)),
                                           Li.load(L, gdata, i, gt), Li.elem_of(gt)))
    else:
        add_at(Li.item_position(L, index, it, like_n), g, gt)
    return out


class Scatter(ListOp):
    """``getitem_vjp(g, l, i)`` and ``add_at(acc, g, l, i)``."""

    def ltype(self, fn, types, loc):
        acc, g, lt, it = ([T.NONE] + types) if fn is rt.getitem_vjp else types
        if not (is_number(it) or isinstance(it, T.Slice)):
            return None
        ge = Li.elem_of(g) if isinstance(it, T.Slice) and is_list(g) else g
        if not isinstance(ge, (T.Scalar, T.Array)):
            return None
        base = cotangent_type(lt) if isinstance(acc, T.NoneType) else acc
        if not is_list(base):
            return None
        return T.List(sum_item_type(Li.elem_of(base), ge, loc))

    def llower(self, L, fn, vals, rtype):
        acc, g, like, idx = ([None] + vals) if fn is rt.getitem_vjp else vals
        if acc is not None and isinstance(acc[1], T.NoneType):
            acc = None
        return _scattered(L, acc, like, g[0], g[1], idx[0], idx[1], rtype)


class Add(ListOp):
    def ltype(self, fn, types, loc):
        a, c = types
        if isinstance(a, T.NoneType) or isinstance(c, T.NoneType):
            return c if isinstance(a, T.NoneType) else a
        if not (is_list(a) and is_list(c)):
            return None
        return T.List(sum_item_type(Li.elem_of(a), Li.elem_of(c), loc))

    def llower(self, L, fn, vals, rtype):
        (a, at), (c, ct) = vals
        if isinstance(at, T.NoneType) or isinstance(ct, T.NoneType):
            return c if isinstance(at, T.NoneType) else a
        b = L.b
        adata, _, n = Li.fields(L, a)
        cdata, _, m = Li.fields(L, c)
        L.check(b.icmp_signed("!=", n, m), ValueError,
                "s2s: adding cotangents of lists of lengths {0} and {1}", (n, m))
        e = rtype.elem
        return Li.fresh(L, rtype, n, Li.room(L, n), lambda i: (add_items(
            L, Li.load(L, adata, i, at), Li.elem_of(at), Li.load(L, cdata, i, ct),
            Li.elem_of(ct), e), e))


class Densify(ListOp):
    """``densify(ct, l)``; ``seq_cast(items, l)`` (``items`` already a list)."""

    def ltype(self, fn, types, loc):
        ct, like = types
        if isinstance(ct, T.NoneType) or Li.elem_of(like).dtype in ("i8", "b1"):
            return cotangent_type(like)
        return listish(ct)

    def llower(self, L, fn, vals, rtype):
        (ct, ctt), (like, liket) = vals
        if isinstance(ctt, T.NoneType) or Li.elem_of(liket).dtype in ("i8", "b1"):
            return Filled(None).llower(L, rt.zeros_like, [(like, liket)], rtype)
        v, t = as_list(L, ct, ctt)
        return v if t == rtype else Li.convert_list(L, v, t, rtype)


def _numbers(t):
    return T.plain_tuple(t) and bool(t.items) and all(map(is_number, t.items))


def _grid(t):
    """The shape of a rectangular display of numbers (``[a, b]``, ``[[a, b], [c, d]]``,
    nested to any depth, every row of one length), else None."""
    if is_number(t):
        return ()
    if not (T.plain_tuple(t) and t.items):
        return None
    rows = [_grid(it) for it in t.items]
    if rows[0] is None or any(r != rows[0] for r in rows):
        return None
    return (len(t.items),) + rows[0]


def _grid_leaves(L, v, t, at=()):
    """``(index, value, type)`` of each number of the display ``v`` (row-major order)."""
    if is_number(t):
        yield at, v, t
        return
    for k, it in enumerate(t.items):
        yield from _grid_leaves(L, L.b.extract_value(v, k), it, at + (k,))


def _leaf_types(t):
    return [t] if is_number(t) else [x for it in t.items for x in _leaf_types(it)]


class ArrayOfItems(ListOp):
    """``np.array([a, b, ...])`` of numbers, or of rows of numbers nested to any depth
    (every row of one length): an array of that shape (C order) and of the promoted
    dtype of every number, as numpy reads the nested list."""

    def ltype(self, fn, types, loc):
        if len(types) != 1 or not _grid(types[0]):
            return None
        return T.Array(T.promote(*_leaf_types(types[0])).dtype, len(_grid(types[0])))

    def llower(self, L, fn, vals, rtype):
        v, t = vals[0]
        out = A.allocate(L, rtype, [A.i64(d) for d in _grid(t)])
        data, strides = L.b.extract_value(out, 0), A.strides_list(L, out, rtype)
        for at, x, xt in _grid_leaves(L, v, t):
            A.store(L, S.convert(L, x, xt, rtype.elem),
                    A.element_ptr(L, data, strides, [A.i64(k) for k in at], rtype.elem),
                    rtype.elem)
        return out


def _fits_grid(t, shape) -> bool:
    """Whether the tangent display ``t`` has the structure of a display of numbers of
    ``shape`` (``_grid``), a None anywhere standing for zeros of that part."""
    if isinstance(t, T.NoneType):
        return True
    if not shape:
        return is_number(t)
    return T.plain_tuple(t) and len(t.items) == shape[0] and \
        all(_fits_grid(it, shape[1:]) for it in t.items)


def _tangent_leaves(L, v, t, at=()):
    """``(index, value, type)`` of each number of the tangent display ``v`` (None parts,
    zeros, left out)."""
    if isinstance(t, T.NoneType):
        return
    if is_number(t):
        yield at, v, t
        return
    for k, it in enumerate(t.items):
        yield from _tangent_leaves(L, L.b.extract_value(v, k), it, at + (k,))


class ArrayJvp(ListOp):
    """``array_jvp(t, ans, object, copy, ndmin=0)`` for a list (or a display of numbers,
    None items as zeros) of tangents: them as an array of ``ans``'s dtype (1-D; stacked
    for a list of arrays; the real part for a real ``ans``); for a nested display
    (``np.array([[a, b], [c, d]])``, ``object`` a display of numbers of rows of one
    length) the tangents in ``object``'s shape, a None part as zeros."""

    reads_atoms = True

    def ltype(self, fn, types, loc):
        atoms = self.atoms[0] if self.atoms else ()
        ndmin = getattr(atoms[4], "value", None) if len(atoms) > 4 else 0
        ans = types[1]
        grid = _grid(types[2]) if len(types) > 2 else None
        if grid and len(grid) > 1 and not is_list(types[0]):
            ok = isinstance(ans, T.Array) and ans.ndim == len(grid) and ndmin in (0, 1) \
                and _fits_grid(types[0], grid)
            return ans if ok and ans.dtype in ("f4", "f8", "c16") else None
        ndim = Li.array_type(types[0]).ndim if is_list(types[0]) else 1
        ok = isinstance(ans, T.Array) and ans.ndim == ndim and ndmin in (0, 1)
        return ans if ok and ans.dtype in ("f4", "f8", "c16") else None

    def llower(self, L, fn, vals, rtype):
        (t, tt) = vals[0]
        e = rtype.elem

        def real(v, vt):
            if vt.dtype == "c16" and e.dtype != "c16":
                return L.b.extract_value(v, 0), T.F64T
            return v, vt

        grid = _grid(vals[2][1]) if len(vals) > 2 else None
        if grid and len(grid) > 1 and not is_list(tt):  # a nested display: object's shape
            out = A.allocate(L, rtype, [A.i64(d) for d in grid], zeroed=True)
            data, strides = L.b.extract_value(out, 0), A.strides_list(L, out, rtype)
            for at, x, xt in _tangent_leaves(L, t, tt):
                A.store(L, S.convert(L, *real(x, xt), e),
                        A.element_ptr(L, data, strides, [A.i64(k) for k in at], e), e)
            return out

        if is_list(tt) and Li.holds_arrays(tt):  # the tangents stacked, as ``ans``'s dtype
            stacked, st = Li.as_array(L, t, tt)
            return A.elementwise(L, lambda v: (S.convert(L, *real(*v[0]), e), e),
                                 [(stacked, st)], e.dtype)

        if is_list(tt):
            data, _, n = Li.fields(L, t)
            out = A.allocate(L, rtype, [n])
            odata, ostrides = L.b.extract_value(out, 0), A.strides_list(L, out, rtype)
            A.loop(L, n, lambda i: A.store(L, S.convert(L, *real(Li.load(L, data, i, tt),
                                                                  Li.elem_of(tt)), e),
                                           A.element_ptr(L, odata, ostrides, [i], e), e))
            return out
        out = R.create(L, rtype, [A.i64(len(tt.items))], (L.const(0, T.INT), T.INT))
        odata, ostrides = L.b.extract_value(out, 0), A.strides_list(L, out, rtype)
        for k, it in enumerate(tt.items):
            if isinstance(it, T.NoneType):
                continue
            A.store(L, S.convert(L, *real(L.b.extract_value(t, k), it), e),
                    A.element_ptr(L, odata, ostrides, [A.i64(k)], e), e)
        return out


class SumOfItems(ListOp):
    """Python's ``sum(t, start=0)`` of a tuple or display of numbers; ``sum_builtin_jvp``
    of such a tuple of tangents (None items are zeros) as ``ans``'s type."""

    def ltype(self, fn, types, loc):
        items = [t for t in types[0].items if not isinstance(t, T.NoneType)]
        if fn is rt.sum_builtin_jvp:
            return types[1] if is_number(types[1]) else None
        start = types[1] if len(types) > 1 else T.INT
        return T.promote(start, *items) if is_number(start) else None

    def llower(self, L, fn, vals, rtype):
        (v, t) = vals[0]
        acc = S.convert(L, *(vals[1] if len(vals) > 1 and fn is not rt.sum_builtin_jvp
                             else (L.const(0, T.INT), T.INT)), rtype)
        for k, it in enumerate(t.items):
            if not isinstance(it, T.NoneType):
                item = S.convert(L, L.b.extract_value(v, k), it, rtype)
                acc = S.binary(L, "add", acc, item, rtype)
        return acc


class EachItem(ListOp):
    """``sum_builtin_vjp(g, t)`` for a tuple or display of numbers or arrays: ``g``
    summed to each item's shape (as each item's cotangent)."""

    def ltype(self, fn, types, loc):
        g, x = types
        items = tuple(Unbroadcast().type(None, [g, it], {}, loc) for it in x.items)
        return None if not is_item(g) or None in items else type(x)(items)

    def llower(self, L, fn, vals, rtype):
        (g, gt), (x, xt) = vals
        out = ll.Constant(rtype.llvm(), None)
        for k, (it, rt_k) in enumerate(zip(xt.items, rtype.items)):
            item = Unbroadcast().lower(L, None, [(g, gt), (L.b.extract_value(x, k), it)], {},
                                       rt_k)
            out = L.b.insert_value(out, item, k)
        return out


class ShapeOfItems(ListOp):
    """``np.shape``/``np.size``/``np.ndim`` of a tuple or list display of numbers (``ndim``
    1, known when compiling, as of an array)."""

    def ltype(self, fn, types, loc):
        if fn is np.ndim:
            return T.Static(1)
        return T.Tuple((T.INT,)) if fn is np.shape else T.INT

    def llower(self, L, fn, vals, rtype):
        n = len(vals[0][1].items)
        if fn is np.shape:
            return ll.Constant(rtype.llvm(), [ll.Constant(T.I64, n)])
        return ll.Constant(T.I64, 1 if fn is np.ndim else n)


class ArrayVjpTranspose(ListOp):
    """``array_vjp_transpose(ct, g, x)`` of a display ``x`` of numbers (``_grid``): the
    transpose of splitting ``g`` into ``x``'s numbers, so the numbers of ``ct`` (``x``'s
    structure, a None part as zeros) as an array of ``g``'s type and ``x``'s shape."""

    def ltype(self, fn, types, loc):
        ct, g, x = types
        grid = _grid(x)
        ok = isinstance(g, T.Array) and bool(grid) and g.ndim == len(grid) \
            and g.dtype in ("f4", "f8", "c16") and _fits_grid(ct, grid)
        return g if ok else None

    def llower(self, L, fn, vals, rtype):
        (ct, ctt), _, (_, xt) = vals
        e = rtype.elem
        out = A.allocate(L, rtype, [A.i64(d) for d in _grid(xt)], zeroed=True)
        data, strides = L.b.extract_value(out, 0), A.strides_list(L, out, rtype)
        for at, v, vt in _tangent_leaves(L, ct, ctt):
            A.store(L, S.convert(L, v, vt, e),
                    A.element_ptr(L, data, strides, [A.i64(k) for k in at], e), e)
        return out


class ItemsOfArray(ListOp):
    """``array_vjp(g, (a, b, ...))``: ``g``'s items, each as the cotangent of its number."""

    def ltype(self, fn, types, loc):
        g, x = types
        if not (isinstance(g, T.Array) and g.ndim == 1):
            return None
        items = tuple(Unbroadcast().type(None, [g.elem, it], {}, loc) for it in x.items)
        return None if None in items else type(x)(items)

    def llower(self, L, fn, vals, rtype):
        (g, gt), (x, xt) = vals
        L.check(L.b.icmp_signed("!=", A.shape_of(L, g, 0), A.i64(len(xt.items))), ValueError,
                "s2s: a cotangent of {0} items for {1} numbers",
                (A.shape_of(L, g, 0), A.i64(len(xt.items))))
        out = ll.Constant(rtype.llvm(), None)
        for k, (it, rt_k) in enumerate(zip(xt.items, rtype.items)):
            item = Unbroadcast().lower(L, None, [(A.element(L, g, gt, [A.i64(k)]), gt.elem),
                                                 (L.b.extract_value(x, k), it)], {}, rt_k)
            out = L.b.insert_value(out, item, k)
        return out


class GridItems(ListOp):
    """``array_vjp(g, [[a, b], [c, d]])`` of a nested display of numbers (rows of one
    length, ``_grid``): ``g``'s elements in the display's structure, each as the
    cotangent of its number (``ItemsOfArray`` for a flat display)."""

    def ltype(self, fn, types, loc):
        g, x = types
        grid = _grid(x)
        if not (isinstance(g, T.Array) and g.ndim == len(grid)):
            return None
        return self._type(g.elem, x, loc)

    def _type(self, elem, x, loc):
        if is_number(x):
            return Unbroadcast().type(None, [elem, x], {}, loc)
        items = tuple(self._type(elem, it, loc) for it in x.items)
        return None if None in items else type(x)(items)

    def llower(self, L, fn, vals, rtype):
        (g, gt), (x, xt) = vals
        grid = _grid(xt)
        shape = A.shape_list(L, g, gt)
        L.check(A.differs(L, shape, [A.i64(d) for d in grid]), ValueError,
                "s2s: a cotangent whose first dimension is {0} for {1} rows",
                (shape[0], A.i64(grid[0])))

        def build(v, t, rt_, at):
            if is_number(t):
                return Unbroadcast().lower(L, None, [(A.element(L, g, gt, [A.i64(k) for k in at]),
                                                      gt.elem), (v, t)], {}, rt_)
            out = ll.Constant(rt_.llvm(), None)
            for k, (it, rk) in enumerate(zip(t.items, rt_.items)):
                out = L.b.insert_value(out, build(L.b.extract_value(v, k), it, rk, at + (k,)), k)
            return out

        return build(x, xt, rtype, ())


class GridShape(ListOp):
    """``np.shape`` of a display of numbers (rows of one length, ``_grid``): its shape,
    known when compiling (``np.reshape(g, np.shape(display))`` in ``np.array``'s
    cotangent)."""

    def ltype(self, fn, types, loc):
        return T.Tuple((T.INT,) * len(_grid(types[0])))

    def llower(self, L, fn, vals, rtype):
        return ll.Constant(rtype.llvm(), [A.i64(d) for d in _grid(vals[0][1])])


class ToTuple(ListOp):
    """``seq_cast(items, like)`` for a tuple ``like`` and a list ``items`` of its length:
    the tuple of the items."""

    def ltype(self, fn, types, loc):
        items, like = types
        if not T.plain_tuple(like):
            return None
        return type(like)(tuple(Li.elem_of(items) for _ in like.items))

    def llower(self, L, fn, vals, rtype):
        (v, vt), (_, like) = vals
        data, _, n = Li.fields(L, v)
        L.check(L.b.icmp_signed("!=", n, A.i64(len(like.items))), ValueError,
                "s2s: a cotangent list of {0} items for a tuple of {1}",
                (n, A.i64(len(like.items))))
        out = ll.Constant(rtype.llvm(), None)
        for k in range(len(like.items)):
            out = L.b.insert_value(out, Li.load(L, data, A.i64(k), vt), k)
        return out


class ArrayExtreme(ListOp):
    """``max(a)``/``min(a)`` of a 1-D array ``a`` (or of a list of numbers, for the
    tangent), ``m`` the item chosen (Python's builtins: the first item equal to it takes
    the derivative): ``extreme_ct(g, a, m)`` zeros like ``a`` (a float dtype) with ``g``
    there, ``extreme_tangent(t, a, m)`` the tangent ``t`` (an array or a list of numbers)
    there; item 0 where no item equals ``m`` (a nan)."""

    @staticmethod
    def number_array(t):
        """The 1-D array type ``t`` is, or a list of numbers reads as; else None."""
        if is_list(t):
            e = Li.elem_of(t)
            return None if e is None or isinstance(e, T.Array) else Li.array_type(t)
        return t if isinstance(t, T.Array) and t.ndim == 1 else None

    def ltype(self, fn, types, loc):
        g, a, m = types
        at = self.number_array(a)
        if at is None or not is_number(m):
            return None
        if fn is rt.extreme_tangent:
            gt = g if is_number(g) else self.number_array(g)
            return None if gt is None else (gt if is_number(gt) else gt.elem)
        if not is_number(g) or is_list(a):
            return None
        code = "c16" if "c16" in (at.dtype, g.dtype) else ("f4" if at.dtype == "f4" else "f8")
        return T.Array(code, 1)

    def llower(self, L, fn, vals, rtype):
        (g, gt), (a, at), (m, mt) = [Li.as_array(L, v, t) if is_list(t) else (v, t)
                                     for v, t in vals]
        b = L.b
        n = A.shape_of(L, a, 0)
        where = L.entry_alloca(T.I64)
        b.store(n, where)
        ct = T.promote(at.elem, mt)

        def look(i):
            hit = S.compare(L, "==", S.convert(L, A.element(L, a, at, [i]), at.elem, ct),
                            S.convert(L, m, mt, ct), ct)
            with b.if_then(b.and_(hit, b.icmp_signed("==", b.load(where), n))):
                b.store(i, where)

        A.loop(L, n, look)
        p = b.load(where)
        p = b.select(b.icmp_signed("==", p, n), A.ZERO, p)
        if fn is rt.extreme_tangent:
            return S.convert(L, A.element(L, g, gt, [p]), gt.elem, rtype) \
                if isinstance(gt, T.Array) else g
        out = A.allocate(L, rtype, [n], zeroed=True)
        A.store(L, S.convert(L, g, gt, rtype.elem),
                A.element_ptr(L, b.extract_value(out, 0), A.strides_list(L, out, rtype), [p],
                              rtype.elem), rtype.elem)
        return out


class TupleExtremeDerivatives(ListOp):
    """``max(a, b, c)``/``min(...)`` of numbers (a tuple), ``m`` the item chosen (the
    first item equal to it takes the derivative; item 0 where none is, a nan):
    ``extreme_ct(g, items, m)`` the tuple with ``g`` there and zeros elsewhere (each item
    of ``g``'s type promoted with its own), ``extreme_tangent(t, items, m)`` the tangent
    ``t``'s item there."""

    def ltype(self, fn, types, loc):
        g, items, m = types
        if not items.items or not all(is_number(t) for t in items.items) or not is_number(m):
            return None
        if fn is rt.extreme_tangent:
            if not (T.plain_tuple(g) and len(g.items) == len(items.items)
                    and all(is_number(t) for t in g.items)):
                return None
            out = g.items[0]
            for t in g.items[1:]:
                out = T.promote(out, t)
            return out
        if not is_number(g):
            return None
        return T.Tuple(tuple(T.promote(g, t) for t in items.items))

    def llower(self, L, fn, vals, rtype):
        (g, gt), (v, vt), (m, mt) = vals
        b = L.b
        pos = A.ZERO
        for k in range(len(vt.items) - 1, -1, -1):  # (backwards: the first equal item wins)
            ct = T.promote(vt.items[k], mt)
            hit = S.compare(L, "==", S.convert(L, b.extract_value(v, k), vt.items[k], ct),
                            S.convert(L, m, mt, ct), ct)
            pos = b.select(hit, A.i64(k), pos)
        if fn is rt.extreme_tangent:
            out = S.convert(L, b.extract_value(g, 0), gt.items[0], rtype)
            for k in range(1, len(gt.items)):
                x = S.convert(L, b.extract_value(g, k), gt.items[k], rtype)
                out = b.select(b.icmp_signed("==", pos, A.i64(k)), x, out)
            return out
        out = ll.Constant(rtype.llvm(), None)
        for k, t in enumerate(rtype.items):
            zero = S.convert(L, A.ZERO, T.INT, t)
            item = b.select(b.icmp_signed("==", pos, A.i64(k)), S.convert(L, g, gt, t), zero)
            out = b.insert_value(out, item, k)
        return out


class StackedItems(ListOp):
    """``seq_cast(items, like)`` for an array ``like`` (the cotangent of ``list(a)``): the
    list ``items`` (numbers, or arrays broadcast to a row of ``like``) stacked into an
    array of ``like``'s rank and a float (or complex) dtype; zeros of ``like``'s shape for
    an empty list."""

    def ltype(self, fn, types, loc):
        items, like = types
        e = Li.elem_of(items)
        if e is None:
            return None
        if isinstance(e, T.Array) and e.ndim > like.ndim - 1 or \
                not isinstance(e, T.Array) and like.ndim != 1:
            return None
        codes = {like.dtype, e.dtype}
        return T.Array("c16" if "c16" in codes else ("f4" if codes == {"f4"} else "f8"),
                       like.ndim)

    def llower(self, L, fn, vals, rtype):
        (items, it), (like, lt) = vals
        b = L.b
        data, _, n = Li.fields(L, items)
        shape = A.shape_list(L, like, lt)
        empty = b.icmp_signed("==", n, A.ZERO)
        out = A.allocate(L, rtype, [b.select(empty, shape[0], n)] + shape[1:], zeroed=True)
        e = Li.elem_of(it)

        def row(k):
            item = Li.load(L, data, k, it)
            if isinstance(e, T.Array):
                target = A.first_axis_item(L, out, rtype, k)
                A.elementwise(L, lambda vs: (S.convert(L, vs[0][0], vs[0][1], rtype.elem),
                                             rtype.elem), [(item, e)], rtype.dtype, out=target)
            else:
                ptr = A.element_ptr(L, b.extract_value(out, 0), A.strides_list(L, out, rtype),
                                    [k], rtype.elem)
                A.store(L, S.convert(L, item, e, rtype.elem), ptr, rtype.elem)

        A.loop(L, n, row)
        return out


class ItemsOfTangent(ListOp):
    """``seq_cast_transpose(ct, items, like)`` for a list ``items`` and a sequence ``like``
    (the tangent of ``list(a)``, of ``sum`` over a list): ``ct`` as a list, the numbers or
    rows of an array ``ct``, a list ``ct`` itself."""

    def ltype(self, fn, types, loc):
        ct = types[0]
        if is_list(ct):
            return ct
        if not (isinstance(ct, T.Array) and ct.ndim >= 1):
            return None
        return Li.rows_type(ct)

    def llower(self, L, fn, vals, rtype):
        if is_list(vals[0][1]):
            return vals[0][0]
        return Li.from_array(L, vals[0][0], vals[0][1], rtype)


class ExtremeCt(ListOp):
    """``extreme_ct(g, l, m)``: ``g`` at the first item of ``l`` equal to ``m``."""

    def ltype(self, fn, types, loc):
        return Scatter.ltype(self, rt.getitem_vjp, [types[0], types[1], T.INT], loc)

    def llower(self, L, fn, vals, rtype):
        (g, gt), (v, vt), (m, mt) = vals
        b = L.b
        data, _, n = Li.fields(L, v)
        where = L.entry_alloca(T.I64)
        b.store(n, where)

        def look(i):
            ct = T.promote(Li.elem_of(vt), mt)
            hit = S.compare(L, "==", S.convert(L, Li.load(L, data, i, vt), Li.elem_of(vt), ct),
                            S.convert(L, m, mt, ct), ct)
            first = b.icmp_signed("==", b.load(where), n)
            with b.if_then(b.and_(hit, first)):
                b.store(i, where)

        A.loop(L, n, look)
        p = b.load(where)
        p = b.select(b.icmp_signed("==", p, n), A.ZERO, p)
        return _scattered(L, None, (v, vt), g, gt, p, T.INT, rtype)


def _array_nesting(t, nones=False):
    """``regular_nesting`` of a tuple or list display (not of an array itself), else None."""
    return regular_nesting(t, nones) if T.plain_tuple(t) else None


def _nested_as(t, leaf):
    """The type of ``t``'s nesting with ``leaf`` at every leaf."""
    if not T.plain_tuple(t):
        return leaf
    return T.same_kind(t, [_nested_as(i, leaf) for i in t.items])


class OfAnArray(ListOp):
    """``array_vjp(g, x)`` of an array or a number ``x`` (``np.array(x)``, ``np.asarray``
    of one): ``unbroadcast(g, x)``, ``g`` itself in ``x``'s shape and kind."""

    def ltype(self, fn, types, loc):
        return Unbroadcast().type(rt.unbroadcast, types, {}, loc)

    def llower(self, L, fn, vals, rtype):
        return Unbroadcast().lower(L, rt.unbroadcast, vals, {}, rtype)


class RowsOfArray(ListOp):
    """``array_vjp(g, x)`` for a nesting ``x`` of arrays: the views ``g[j_1, ..., j_d]``
    nested as ``x`` (a complex ``g`` of real items is left to Python)."""

    def ltype(self, fn, types, loc):
        g, x = types
        dims, leaves = _array_nesting(x)
        if not isinstance(g, T.Array) or g.ndim != leaves[0].ndim + len(dims) or \
                g.dtype == "c16" and any(t.dtype != "c16" for t in leaves):
            return None
        return _nested_as(x, T.Array(g.dtype, leaves[0].ndim))

    def llower(self, L, fn, vals, rtype):
        b = L.b
        (g, gt), (_, xt) = vals
        dims, leaves = _array_nesting(xt)
        shape, strides = A.shape_list(L, g, gt), A.strides_list(L, g, gt)
        row_t = T.Array(gt.dtype, leaves[0].ndim)

        def build(t, rt_, position):
            if not T.plain_tuple(t):
                offset = A.ZERO
                for k, j in enumerate(position):
                    offset = b.add(offset, b.mul(A.i64(j), strides[k]))
                data = b.gep(b.extract_value(g, 0), [offset])
                return A.make(L, row_t, data, b.extract_value(g, 1), shape[len(dims):],
                              strides[len(dims):])
            out = ll.Constant(rt_.llvm(), None)
            for k, (it, irt) in enumerate(zip(t.items, rt_.items)):
                out = b.insert_value(out, build(it, irt, position + (k,)), k)
            return out

        return build(xt, rtype, ())


def _stacked_like(L, pieces, like, rtype, what):
    """A new array of ``like``'s shape (zeros) with the nesting ``pieces`` of arrays (None
    ones: left zero) stacked into it as ``np.array`` stacks its items."""
    (p, pt), (v, vt) = pieces, like
    dims, _ = _array_nesting(pt, nones=True)
    out = A.allocate(L, rtype, A.shape_list(L, v, vt), zeroed=True)
    fill_nested(L, out, rtype, leaf_values(L, p, pt), dims, lead=0,
                message=f"s2s: {what} of np.array's items of different shapes")
    return out


class StackedTangents(ListOp):
    """``array_jvp(t, ans, object, copy, ndmin=0)`` for a nesting ``object`` of arrays:
    the tangents (None ones: zeros) stacked as ``np.array`` stacks the items, in
    ``ans``'s shape and dtype (the real part for a real ``ans``)."""

    reads_atoms = True

    def ltype(self, fn, types, loc):
        atoms = self.atoms[0] if self.atoms else ()
        ndmin = getattr(atoms[4], "value", None) if len(atoms) > 4 else 0
        ans = types[1]
        dims, leaves = _array_nesting(types[2])
        ok = isinstance(ans, T.Array) and ans.ndim == leaves[0].ndim + len(dims) and \
            ndmin in (0, 1) and ans.dtype in ("f4", "f8", "c16")
        return ans if ok else None

    def llower(self, L, fn, vals, rtype):
        return _stacked_like(L, vals[0], vals[1], rtype, "tangents")


class RowsPutBack(ListOp):
    """``array_vjp_transpose(ct, g, x)`` for a nesting ``x`` of arrays: the pieces of
    ``ct`` (None ones: zeros) put back in ``g``'s shape (reverse mode over ``np.array``'s
    cotangent)."""

    def ltype(self, fn, types, loc):
        ct, g, _ = types
        return g if isinstance(g, T.Array) and _array_nesting(ct, nones=True) else None

    def llower(self, L, fn, vals, rtype):
        return _stacked_like(L, vals[0], vals[1], rtype, "cotangents")


def _wrap(cls, fn, when, *args):
    overload_lists(cls, fn, when, *args, family="list derivatives")


_wrap(ArrayJvp, rt.array_jvp, lambda ts: len(ts) >= 2 and (is_list(ts[0]) or (
    T.plain_tuple(ts[0]) and ts[0].items
    and all(is_number(i) or isinstance(i, T.NoneType) for i in ts[0].items)) or (
    len(ts) >= 3 and bool(_grid(ts[2])) and len(_grid(ts[2])) > 1
    and _fits_grid(ts[0], _grid(ts[2])))))
_wrap(ItemsOfArray, rt.array_vjp, lambda ts: len(ts) == 2 and _numbers(ts[1]))
_wrap(ArrayVjpTranspose, rt.array_vjp_transpose,
      lambda ts: len(ts) == 3 and T.plain_tuple(ts[2]) and bool(_grid(ts[2])))
_wrap(GridItems, rt.array_vjp, lambda ts: len(ts) == 2 and not _numbers(ts[1])
      and T.plain_tuple(ts[1]) and bool(_grid(ts[1])))
_wrap(GridShape, np.shape, lambda ts: len(ts) == 1 and T.plain_tuple(ts[0]) and bool(_grid(ts[0])))
_wrap(FromArray, rt.array_vjp, list_at(1))
_wrap(RowsOfArray, rt.array_vjp, lambda ts: len(ts) == 2 and bool(_array_nesting(ts[1])))
_wrap(OfAnArray, rt.array_vjp, lambda ts: len(ts) == 2 and isinstance(ts[0], (T.Array, T.Scalar))
      and isinstance(ts[1], (T.Array, T.Scalar)))
_wrap(StackedTangents, rt.array_jvp, lambda ts: len(ts) >= 3 and bool(
    _array_nesting(ts[0], nones=True)) and bool(_array_nesting(ts[2])))
_wrap(RowsPutBack, rt.array_vjp_transpose, lambda ts: len(ts) == 3 and bool(
    _array_nesting(ts[2])) and bool(_array_nesting(ts[0], nones=True)))
_wrap(StackRows, rt.stack_vjp, list_at(1))
for _fn in (np.array, np.asarray):
    _wrap(ArrayOfItems, _fn, lambda ts: len(ts) == 1 and bool(_grid(ts[0])))
_wrap(SumOfItems, builtins.sum, lambda ts: _numbers(ts[0]))
_wrap(SumOfItems, rt.sum_builtin_jvp, lambda ts: T.plain_tuple(ts[0]) and bool(ts[0].items) and all(
    is_number(i) or isinstance(i, T.NoneType) for i in ts[0].items))
_wrap(Filled, rt.sum_builtin_vjp, list_at(1))
_wrap(RowsCotangent, rt.sum_builtin_vjp,
      lambda ts: len(ts) == 2 and isinstance(ts[1], T.Array) and ts[1].ndim >= 1)
_wrap(RowsTangentSum, rt.sum_builtin_jvp,
      lambda ts: len(ts) == 2 and isinstance(ts[0], T.Array) and ts[0].ndim >= 1)
_wrap(EachItem, rt.sum_builtin_vjp, lambda ts: len(ts) == 2 and T.plain_tuple(ts[1])
      and all(map(is_item, ts[1].items)))
for _fn in (np.shape, np.size, np.ndim):
    _wrap(ShapeOfItems, _fn, lambda ts: len(ts) == 1 and _numbers(ts[0]))
_wrap(Filled, rt.zeros_like, list_at(0))
_wrap(Scatter, rt.getitem_vjp, list_at(1))
_wrap(Scatter, rt.add_at, list_at(2))
_wrap(Add, rt.add, lambda ts: len(ts) == 2 and (is_list(ts[0]) or is_list(ts[1])))
_wrap(Densify, rt.densify, list_at(1))
_wrap(ToTuple, rt.seq_cast, lambda ts: is_list(ts[0]) and T.plain_tuple(ts[1]))
_wrap(Densify, rt.seq_cast, list_at(1))
_wrap(ExtremeCt, rt.extreme_ct, list_at(1))
_wrap(ArrayExtreme, rt.extreme_ct, lambda ts: len(ts) == 3 and isinstance(ts[1], T.Array)
      and ts[1].ndim == 1)
_wrap(ArrayExtreme, rt.extreme_tangent, lambda ts: len(ts) == 3 and (
    isinstance(ts[1], T.Array) and ts[1].ndim == 1 or is_list(ts[1])))
for _fn in (rt.extreme_ct, rt.extreme_tangent):
    _wrap(TupleExtremeDerivatives, _fn, lambda ts: len(ts) == 3 and T.plain_tuple(ts[1]))
_wrap(StackedItems, rt.seq_cast, lambda ts: len(ts) == 2 and is_list(ts[0])
      and isinstance(ts[1], T.Array) and ts[1].ndim >= 1)
_wrap(ItemsOfTangent, rt.seq_cast_transpose, lambda ts: len(ts) == 3 and is_list(ts[1])
      and (isinstance(ts[0], T.Array) or is_list(ts[0]))
      and (isinstance(ts[2], T.Array) or is_list(ts[2])))
