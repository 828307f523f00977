"""The run-time helpers generated derivative code calls (``s2s_runtime``), in LLVM IR.

Each handler implements, for numbers and arrays (1-D/2-D where products are
involved), the maths its ``s2s_runtime`` function states:

* ``grad_seed(out)``: 1 of ``out``'s type (a real scalar or a 0-d real array; anything else is refused);
* ``unbroadcast(g, x)``: ``g`` summed over the axes broadcasting added to ``x``
  (the imaginary part dropped for a real ``x``); ``g`` itself when shapes agree;
* ``sum_vjp``/``mean_vjp``: ``g`` (divided by the size) broadcast to ``a``'s shape;
* ``zeros_like``, ``getitem_vjp`` (zeros with ``g`` at the index), ``read_copy``,
  ``index_set`` (an in-place write returning the array), ``index_updated`` (on a
  copy), ``index_set_vjp_base`` (``g`` zeroed at the index), ``index_set_vjp_value``
  (``g[index]`` unbroadcast to the value), ``reversed_range``, ``add``;
* ``matmul_vjp_lhs``/``matmul_vjp_rhs``/``dot_vjp`` and ``max_vjp``: ``derivs/products.py``.

``add_at(acc, g, x, index)``: reverse mode's accumulation of the adjoint of a
read ``x[index]`` into ``x``'s adjoint ``acc``.  Maths (``s2s_runtime.add_at``): ``acc + S(g)``, ``S`` the scatter of ``g`` into
zeros shaped like ``x`` at ``index``.  For the indices compiled code takes
(integers and slices: no index repeats) that is a copy of ``acc`` with
``g`` added at ``index``.  ``acc`` is a float array of ``x``'s shape (its
adjoint), or None (no adjoint yet: the result is ``getitem_vjp(g, x, index)``).
A complex ``g`` into a real ``acc`` is refused (Python mode would widen ``acc``).

``owned(x)``: ``x`` itself (a number or a tuple of numbers), a copy when it is an array (the snapshot reverse mode
takes of an operand that a later in-place write could change).

``clip_selected(a, a_min, a_max, which)``: 1.0 where ``np.clip`` takes its value
from argument ``which`` (0: ``a``, 1: ``a_min``, 2: ``a_max``), else 0.0
(``s2s_runtime.shape_helpers``); here for number (or None) bounds and a
constant ``which``.
"""
from __future__ import annotations

from llvmlite import ir as ll

import s2s_runtime as rt

from ....errors import UnsupportedSyntaxError
from ..values import arrays as A
from ..numerics import reductions as R
from ..values import scalars as S
from ..typing import types as T
from ..numerics.axis import reduction_axis, spread_axis
from ..ops.calls import TABLE, register
from ..ops.arrays import GetItem
from ..ops.arrays import Reversed
from ..ops.numbers import ARITHMETIC

_FLOAT = ("f4", "f8", "c16")


def float_dtype(code):
    return code if code in _FLOAT else "f8"


def scalar_of(t):
    return t.elem if isinstance(t, T.Array) else t


def _example_of(t):
    """``(value,)``: a value of the type ``t`` (a number, None or a constant), else None."""
    if isinstance(t, T.Scalar):
        return (t.python()(0),)
    if isinstance(t, T.NoneType):
        return (None,)
    if isinstance(t, T.Static):
        return (t.value,)
    if isinstance(t, T.ListLiteral):
        return ([None] * len(t.items),)
    if T.plain_tuple(t):
        return ((None,) * len(t.items),)
    return None


class GradSeed:
    """``grad_seed(out)``: 1 of a real scalar or 0-d array ``out``; for any output grad
    refuses, the same TypeError as Python mode (``rt.grad_seed``)."""

    def type(self, fn, types, kw, loc):
        t = types[0]
        if isinstance(t, T.Scalar) and t.dtype in ("f4", "f8"):
            return t
        if isinstance(t, T.Array) and t.ndim == 0 and t.dtype in ("f4", "f8"):
            return t  # a 0-d array output: its seed is a 0-d array holding 1
        if isinstance(t, T.Array) and t.ndim > 0 and not kw and len(types) == 1:
            raise TypeError("Gradient only defined for scalar-output functions. Output was an "
                            f"array of {t.ndim} {'axis' if t.ndim == 1 else 'axes'}.")
        example = _example_of(t)
        if example is not None and not kw and len(types) == 1:
            rt.grad_seed(example[0])  # the TypeError Python mode raises for such an output
        return None

    def lower(self, L, fn, vals, kw, rtype):
        if isinstance(rtype, T.Array):
            out = A.allocate(L, rtype, [])
            A.fill(L, out, rtype, L.const(1.0, rtype.elem))
            return out
        return L.const(1.0, rtype)


class Unbroadcast:
    def type(self, fn, types, kw, loc):
        g, x = types
        if isinstance(x, T.NoneType):  # a residual never computed (a branch not taken)
            return g
        if not (isinstance(g, (T.Scalar, T.Array)) and isinstance(x, (T.Scalar, T.Array))):
            return None
        ge, xe = scalar_of(g), scalar_of(x)
        code = xe.dtype if xe.dtype in _FLOAT else ge.dtype
        if ge.dtype == "c16" and xe.dtype != "c16":
            code = "f8" if xe.dtype not in ("f4",) else "f4"
        if isinstance(x, T.Scalar):
            if isinstance(g, T.Scalar):
                return g if code == ge.dtype else T.Scalar(code, g.weak and x.weak)
            return T.Scalar(code)
        if isinstance(g, T.Scalar) or g.ndim < x.ndim:
            return None
        return T.Array(code, x.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (g, gt), (x, xt) = vals
        if isinstance(xt, T.NoneType):
            return g
        if isinstance(gt, T.Scalar):
            return S.convert(L, _real(L, g, gt, rtype), _real_t(gt, rtype), rtype)
        if isinstance(xt, T.Scalar):
            total = R.sum_all(L, g, gt)
            st = R.sum_type(gt)
            return S.convert(L, _real(L, total, st, rtype), _real_t(st, rtype), rtype)
        return sum_to_shape(L, g, gt, x, xt, rtype)


def _real(L, v, t, rtype):
    if t.dtype == "c16" and scalar_of(rtype).dtype != "c16":
        return L.b.extract_value(v, 0)
    return v


def _real_t(t, rtype):
    if t.dtype == "c16" and scalar_of(rtype).dtype != "c16":
        return T.F64T
    return t


def sum_to_shape(L, g, gt, x, xt, rtype):
    """``g`` summed to ``x``'s shape (numpy's broadcasting undone); ``g`` if shapes agree."""
    b = L.b
    if gt.ndim > xt.ndim or gt != rtype:
        differs = ll.Constant(T.I1, 1)
    else:
        differs = A.differs(L, A.shape_list(L, g, gt), A.shape_list(L, x, xt))
    result_slot = L.entry_alloca(rtype.llvm())
    with b.if_else(differs) as (then, otherwise):
        with then:
            out = R.create(L, rtype, A.shape_list(L, x, xt), (L.const(0, T.INT), T.INT))
            data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)
            off = gt.ndim - xt.ndim
            xs = A.shape_list(L, x, xt)
            gdata, gstrides = b.extract_value(g, 0), A.strides_list(L, g, gt)

            def body(idx):
                target = [b.select(b.icmp_signed("==", xs[k], A.ONE), A.ZERO, idx[off + k])
                          for k in range(xt.ndim)]
                ptr = A.element_ptr(L, data, strides, target, rtype.elem)
                v = A.load(L, A.element_ptr(L, gdata, gstrides, idx, gt.elem), gt.elem)
                v = S.convert(L, _real(L, v, gt.elem, rtype), _real_t(gt.elem, rtype), rtype.elem)
                A.store(L, S.binary(L, "add", A.load(L, ptr, rtype.elem), v, rtype.elem), ptr,
                        rtype.elem)

            A.loop_nest(L, A.shape_list(L, g, gt), body)
            b.store(out, result_slot)
        with otherwise:
            if gt == rtype:
                b.store(g, result_slot)
    return b.load(result_slot)


class SumVjp:
    """``sum_vjp(g, a, axis, keepdims)``/``mean_vjp``: ``g`` (over the count) in ``a``'s
    shape -- broadcast along the reduced axis (``axis.spread_axis``); ``unreduce(g, a,
    axis, keepdims)`` is ``sum_vjp``'s spreading (a reduction's cotangent put back)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if len(types) < 2:
            return None
        g, a = types[:2]
        if isinstance(a, T.Scalar):
            return g if isinstance(g, T.Scalar) else None
        if not isinstance(a, T.Array):
            return None
        axis, keepdims = reduction_axis(fn, atoms, kw_atoms or {}, a.ndim, loc, vjp=True)
        code = float_dtype(a.dtype) if scalar_of(g).dtype != "c16" else "c16"
        if axis is None and not keepdims:
            return T.Array(code, a.ndim) if isinstance(g, T.Scalar) else None
        if not isinstance(g, T.Array):
            return None
        return T.Array(code, a.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (g, gt), (a, at) = vals[:2]
        if isinstance(at, T.Scalar):
            return g
        args, kwargs = L.call_atoms
        axis, keepdims = reduction_axis(fn, args, kwargs, at.ndim, L.loc, vjp=True)
        mean = fn is rt.mean_vjp
        if axis is not None:
            return spread_axis(L, g, gt, a, at, axis, keepdims, mean, rtype)
        if isinstance(gt, T.Array):  # keepdims of a whole-array reduction: g has size 1
            g = A.element(L, g, gt, [A.ZERO] * gt.ndim)
            gt = gt.elem
        if mean:
            ft = gt if gt.dtype != "i8" else T.F64T
            n = S.convert(L, A.size(L, a, at), T.INT, ft)
            g = S.binary(L, "truediv", S.convert(L, g, gt, ft), n, ft)
            gt = ft
        return R.create(L, rtype, A.shape_list(L, a, at), (g, gt))


def _defaults(extra, kw):
    """Whether the optional arguments (axis, keepdims, initial, where) are all None or a
    flag: a whole-array reduction (a flag's value cannot change the result's shape here,
    keepdims of a whole-array reduction being undone by the scalar ``g``)."""
    return all(isinstance(t, T.NoneType) or isinstance(t, T.Scalar) and t.dtype == "b1"
               for t in list(extra) + list(kw.values()))


class ZerosLike:
    """``zeros_like(x)``: float zeros shaped like ``x`` (tuples item by item; of None, an
    array variable still holding None, or a compile-time string (a dict's key), None)."""

    def type(self, fn, types, kw, loc):
        t = types[0]
        if isinstance(t, T.Scalar):
            return t
        if isinstance(t, T.Static) and type(t.value) is str:
            return T.NONE
        if isinstance(t, T.Array):
            return T.Array(float_dtype(t.dtype), t.ndim)
        if isinstance(t, T.NoneType):
            return t
        if isinstance(t, T.Tuple):
            items = tuple(self.type(fn, [i], kw, loc) for i in t.items)
            return None if None in items else T.tuple_like(t, items)
        return None

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if isinstance(t, T.Array) and not L.may_hold_none(L.call_atoms[0][0]):
            return R.create(L, rtype, A.shape_list(L, v, t), (L.const(0, T.INT), T.INT))
        if isinstance(t, T.Array):  # of an array variable still holding None: None
            slot = L.entry_alloca(rtype.llvm())
            L.b.store(ll.Constant(rtype.llvm(), None), slot)
            with L.b.if_then(L.b.not_(A.holds_none(L, v))):
                L.b.store(R.create(L, rtype, A.shape_list(L, v, t), (L.const(0, T.INT), T.INT)),
                          slot)
            return L.b.load(slot)
        if isinstance(t, T.Tuple):
            out = ll.Constant(rtype.llvm(), None)
            for k, it in enumerate(t.items):
                item = self.lower(L, fn, [(L.b.extract_value(v, k), it)], kw, rtype.items[k])
                out = L.b.insert_value(out, item, k)
            return out
        return ll.Constant(rtype.llvm(), None)


class GetitemVjp:
    """Arrays: zeros with ``g`` scattered in at the index; tuples indexed by a constant
    (a tuple item's cotangent): a tuple of zeros with ``g`` in that slot."""
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        g, x, index = types
        if isinstance(x, T.Tuple):
            k = getattr(atoms[2], "value", None) if len(atoms) == 3 else None
            if type(k) is not int or not -len(x.items) <= k < len(x.items):
                return None
            items = [ZerosLike().type(fn, [v], {}, loc) for v in x.items]
            items[k] = g
            return None if None in items else T.Tuple(tuple(items))
        if not isinstance(x, T.Array):
            return None
        return T.Array(float_dtype(x.dtype), x.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (g, gt), (x, xt), (idx, it) = vals
        if isinstance(xt, T.Tuple):
            k = L.call_atoms[0][2].value % len(xt.items)
            out = ll.Constant(rtype.llvm(), None)
            for j, v in enumerate(xt.items):
                item = g if j == k else ZerosLike().lower(
                    L, fn, [(L.b.extract_value(x, j), v)], {}, rtype.items[j])
                out = L.b.insert_value(out, item, j)
            return out
        out = R.create(L, rtype, A.shape_list(L, x, xt), (L.const(0, T.INT), T.INT))
        A.setitem(L, out, rtype, idx, it, g, gt)
        return out


def _number_rebound(fn, types) -> bool:
    """``index_set``/``index_updated``/their cotangents at ``...`` of a number: Python's
    ``x += v`` on a number rebinds ``x`` to ``x + v`` (``runtime/index_writes.py``)."""
    return fn in (rt.index_set, rt.index_updated, rt.index_set_vjp_base,
                  rt.index_set_vjp_value) and len(types) >= 2 and \
        isinstance(types[0], T.Scalar) and isinstance(types[1], T.Static) and \
        types[1].value is Ellipsis and (len(types) == 2 or isinstance(types[2], T.Scalar))


class IndexOps:
    """``read_copy``, ``read_checked`` (a view raises ``ValueError``), ``index_set``, ``index_updated``, ``index_set_vjp_base``,
    ``index_set_vjp_value``."""

    def type(self, fn, types, kw, loc):
        if fn is rt.read_copy:
            return GetItem().type(fn, types, kw, loc)
        if fn is rt.read_checked:
            return GetItem().type(fn, types[:2], kw, loc)
        if _number_rebound(fn, types):  # x[...] = v of a number (x += v): rebinds to v
            if fn is rt.index_set_vjp_value:
                return Unbroadcast().type(fn, [types[0], types[2]], {}, loc)
            return types[2] if fn is not rt.index_set_vjp_base else types[0]
        if fn in (rt.index_set, rt.index_updated):
            return types[0] if isinstance(types[0], T.Array) else None
        if fn is rt.index_set_vjp_base:
            return types[0] if isinstance(types[0], T.Array) else None
        g, index, v = types
        if not isinstance(g, T.Array):
            return None
        read = GetItem().type(fn, [g, index], {}, loc)
        return None if read is None else Unbroadcast().type(fn, [read, v], {}, loc)

    def lower(self, L, fn, vals, kw, rtype):
        if _number_rebound(fn, [t for _, t in vals]):
            if fn is rt.index_set_vjp_base:  # the old number is not read: no cotangent
                return L.const(0, rtype)
            if fn is rt.index_set_vjp_value:
                return Unbroadcast().lower(L, fn, [vals[0], vals[2]], {}, rtype)
            return S.convert(L, vals[2][0], vals[2][1], rtype)
        if fn is rt.read_checked:
            (y, yt), (idx, it) = vals[:2]
            value, vt = A.getitem(L, y, yt, idx, it)
            if isinstance(vt, T.Array):
                L.raise_(ValueError, "s2s: this reads a view of an array that is written in "
                         "place later while the view is still used; take a copy")
                L.b.position_at_end(L.fn.append_basic_block("unreachable"))
            return value
        if fn is rt.read_copy:
            (y, yt), (idx, it) = vals
            value, vt = A.getitem(L, y, yt, idx, it)
            return A.copy(L, value, vt) if isinstance(vt, T.Array) else value
        if fn is rt.index_set:
            (y, yt), (idx, it), (v, vt) = vals
            A.setitem(L, y, yt, idx, it, v, vt)
            return y
        if fn is rt.index_updated:
            (y, yt), (idx, it), (v, vt) = vals
            out = A.copy(L, y, yt)
            A.setitem(L, out, yt, idx, it, v, vt)
            return out
        if fn is rt.index_set_vjp_base:
            (g, gt), (idx, it) = vals
            out = A.copy(L, g, gt)
            A.setitem(L, out, gt, idx, it, L.const(0, T.INT), T.INT)
            return out
        (g, gt), (idx, it), (v, vt) = vals
        read, read_t = A.getitem(L, g, gt, idx, it)
        return Unbroadcast().lower(L, fn, [(read, read_t), (v, vt)], {}, rtype)


class AddCotangents:
    """``rt.add(a, c)``: cotangents added, None as zero; tuples item by item (each pair
    through the call table, so items may be arrays, dicts or tuples again)."""

    def type(self, fn, types, kw, loc):
        a, c = types
        if isinstance(a, T.NoneType):
            return c
        if isinstance(c, T.NoneType):
            return a
        if _item_pairs(a, c):
            head = TABLE[rt.add]
            atoms = _NO_ATOMS if getattr(head, "wants_atoms", False) else ()
            items = [head.type(rt.add, [x, y], {}, loc, *atoms) for x, y in zip(a.items, c.items)]
            return None if any(i is None for i in items) else T.tuple_like(a, items)
        return ARITHMETIC.type(__import__("operator").add, types, kw, loc)

    def lower(self, L, fn, vals, kw, rtype):
        (a, at), (c, ct) = vals
        if isinstance(at, T.NoneType):
            return c
        if isinstance(ct, T.NoneType):
            return a
        if _item_pairs(at, ct):
            out = ll.Constant(rtype.llvm(), None)
            for k, (x, y, it) in enumerate(zip(at.items, ct.items, rtype.items)):
                pair = [(L.b.extract_value(a, k), x), (L.b.extract_value(c, k), y)]
                item = TABLE[rt.add].lower(L, rt.add, pair, {}, it)
                out = L.b.insert_value(out, item, k)
            return out
        return ARITHMETIC.lower(L, __import__("operator").add, vals, kw, rtype)


_NO_ATOMS = ((None, None), {})  # for handlers that read constant operands (dict keys)


def _item_pairs(a, c) -> bool:
    return (isinstance(a, T.Tuple) and isinstance(c, T.Tuple)
            and len(a.items) == len(c.items))


class GetattrVjp:
    """``getattr_vjp(g, x, name)`` of a namedtuple ``x`` and a constant field ``name``:
    a namedtuple of ``x``'s class, zeros like ``x`` with ``g`` at that field."""
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 3 or not isinstance(types[1], T.NamedTuple):
            return None
        g, x = types[:2]
        k = x.field(getattr(atoms[2], "value", None)) if len(atoms) > 2 else None
        zeros = ZerosLike().type(fn, [x], {}, loc)
        if k is None or zeros is None:
            return None
        return T.tuple_like(x, [g if j == k else z for j, z in enumerate(zeros.items)])

    def lower(self, L, fn, vals, kw, rtype):
        (g, _), (x, xt) = vals[:2]
        k = xt.field(L.call_atoms[0][2].value)
        out = ll.Constant(rtype.llvm(), None)
        for j, it in enumerate(xt.items):
            item = g if j == k else ZerosLike().lower(L, fn, [(L.b.extract_value(x, j), it)], {},
                                                      rtype.items[j])
            out = L.b.insert_value(out, item, j)
        return out


class FieldTangent:
    """``field_tangent(t, name)`` of a record tangent (``types.NamedTuple``) and a constant
    field ``name``: that field's item (``t.name``)."""
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 2 or not isinstance(types[0], T.NamedTuple):
            return None
        k = types[0].field(getattr(atoms[1], "value", None))
        return None if k is None else types[0].items[k]

    def lower(self, L, fn, vals, kw, rtype):
        (t, tt) = vals[0]
        return L.b.extract_value(t, tt.field(L.call_atoms[0][1].value))


class UnpackVjp:
    """``unpack_vjp(cts, x)`` for a tuple ``x``: the cotangents, None as zeros; for a list
    ``x`` (``a, b = np.split(y, 2)``): them as a list."""

    def type(self, fn, types, kw, loc):
        cts, x = types
        if isinstance(x, T.List) and isinstance(cts, T.Tuple):
            item = ZerosLike().type(fn, [x.elem if x.elem is not None else T.F64T], {}, loc)
            ok = item is not None and all(isinstance(c, T.NoneType) or c == item
                                          for c in cts.items)
            return T.List(item) if ok else None
        if not (isinstance(cts, T.Tuple) and isinstance(x, T.Tuple)
                and len(cts.items) == len(x.items)):
            return None
        items = []
        for c, v in zip(cts.items, x.items):
            items.append(ZerosLike().type(fn, [v], {}, loc) if isinstance(c, T.NoneType) else c)
        return None if any(i is None for i in items) else T.Tuple(tuple(items))

    def lower(self, L, fn, vals, kw, rtype):
        (cts, ct), (x, xt) = vals
        if isinstance(xt, T.List):
            from ..values import lists as Li
            data = Li.fields(L, x)[0]
            items = [(ZerosLike().lower(L, fn, [(Li.load(L, data, A.i64(k), xt), Li.elem_of(xt))],
                                        {}, rtype.elem), rtype.elem)
                     if isinstance(c, T.NoneType) else (L.b.extract_value(cts, k), c)
                     for k, c in enumerate(ct.items)]
            return Li.from_items(L, items, rtype)
        out = ll.Constant(rtype.llvm(), None)
        for k, (c, v) in enumerate(zip(ct.items, xt.items)):
            if isinstance(c, T.NoneType):
                item = ZerosLike().lower(L, fn, [(L.b.extract_value(x, k), v)], {}, rtype.items[k])
            else:
                item = L.b.extract_value(cts, k)
            out = L.b.insert_value(out, item, k)
        return out


class Densify:
    """``densify(ct, like)``: ``ct`` with None (and the cotangents of integer or boolean
    leaves of ``like``) replaced by zeros shaped like ``like``."""

    def _type(self, ct, like):
        integral = isinstance(like, (T.Scalar, T.Array)) and scalar_of(like).dtype in ("i8", "b1")
        if isinstance(ct, T.NoneType) or integral:
            return ZerosLike().type(None, [like], {}, None)
        if isinstance(ct, T.Tuple) and isinstance(like, T.Tuple) \
                and len(ct.items) == len(like.items):
            items = tuple(self._type(c, v) for c, v in zip(ct.items, like.items))
            return None if None in items else T.same_kind(like, items)
        return ct

    def type(self, fn, types, kw, loc):
        return self._type(*types) if len(types) == 2 and not kw else None

    def _lower(self, L, ct, cty, like, liket, rtype):
        integral = isinstance(liket, (T.Scalar, T.Array)) and \
            scalar_of(liket).dtype in ("i8", "b1")
        if isinstance(cty, T.NoneType) or integral:
            return ZerosLike().lower(L, None, [(like, liket)], {}, rtype)
        if isinstance(cty, T.Tuple) and isinstance(liket, T.Tuple):
            out = ll.Constant(rtype.llvm(), None)
            for k in range(len(cty.items)):
                item = self._lower(L, L.b.extract_value(ct, k), cty.items[k],
                                   L.b.extract_value(like, k), liket.items[k], rtype.items[k])
                out = L.b.insert_value(out, item, k)
            return out
        return ct

    def lower(self, L, fn, vals, kw, rtype):
        (ct, cty), (like, liket) = vals
        return self._lower(L, ct, cty, like, liket, rtype)


class BroadcastLike:
    """``broadcast_like(t, ans)``: the tangent ``t`` in ``ans``'s shape (``t`` itself when
    the shapes agree, else a broadcast copy; a record's tangent, of the record's own type,
    is itself, as in Python, where a record has the shape ``()``)."""

    def type(self, fn, types, kw, loc):
        t, ans = types
        if isinstance(t, T.NamedTuple) and isinstance(ans, T.NamedTuple) and \
                t.cls is ans.cls and T.join(t, ans) is not None:  # a record's tangent: itself
            return t
        if not isinstance(t, (T.Scalar, T.Array)) or not isinstance(ans, (T.Scalar, T.Array)):
            return t if isinstance(ans, T.NoneType) else None
        if isinstance(ans, T.Scalar):
            return t if isinstance(t, T.Scalar) else None
        if isinstance(t, T.Array) and t.ndim > ans.ndim:
            return None
        return T.Array(scalar_of(t).dtype, ans.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (t, tt), (ans, anst) = vals
        if not isinstance(anst, T.Array):
            return t
        b = L.b
        slot = L.entry_alloca(rtype.llvm())
        if isinstance(tt, T.Array) and tt.ndim == anst.ndim:
            differs = A.differs(L, A.shape_list(L, t, tt), A.shape_list(L, ans, anst))
        else:
            differs = ll.Constant(T.I1, 1)
        with b.if_else(differs) as (then, otherwise):
            with then:
                out = A.allocate(L, rtype, A.shape_list(L, ans, anst))
                A.elementwise(L, lambda xs: xs[0], [(t, tt)], rtype.dtype, out=(out, rtype))
                b.store(out, slot)
            with otherwise:
                if tt == rtype:
                    b.store(t, slot)
        return b.load(slot)


class AddAt:
    def type(self, fn, types, kw, loc):
        acc, g, x, index = types
        if isinstance(acc, T.NoneType):
            return GetitemVjp().type(fn, [g, x, index], kw, loc)
        if not (isinstance(acc, T.Array) and isinstance(x, T.Array) and acc.ndim == x.ndim):
            return None
        g_elem = scalar_of(g)
        if not isinstance(g_elem, T.Scalar) or (g_elem.dtype == "c16" and acc.dtype != "c16"):
            return None
        return acc

    def lower(self, L, fn, vals, kw, rtype):
        (acc, at), (g, gt), (x, xt), (idx, it) = vals
        if isinstance(at, T.NoneType):
            return GetitemVjp().lower(L, fn, [(g, gt), (x, xt), (idx, it)], kw, rtype)
        out = A.copy(L, acc, at)
        read, rt_ = A.getitem(L, out, at, idx, it)
        if isinstance(rt_, T.Array):  # a slice: add g over it, in place in the copy
            A.elementwise(L, lambda v: _added(L, v[0], v[1]), [(read, rt_), (g, gt)],
                          at.dtype, out=(read, rt_))
        else:
            value, vt = _added(L, (read, rt_), (g, gt))
            A.setitem(L, out, at, idx, it, value, vt)
        return out


def _added(L, a, c):
    """``a + c`` for two ``(value, scalar type)`` pairs, in their common type (a 0-d array,
    as ``take_vjp`` gives for a number, is its number)."""
    (av, at), (cv, ct) = _as_number(L, *a), _as_number(L, *c)
    t = S.arith_type("add", at, ct)
    return S.binary(L, "add", S.convert(L, av, at, t), S.convert(L, cv, ct, t), t), t


def _as_number(L, v, t):
    if isinstance(t, T.Array):
        if t.ndim != 0:
            raise UnsupportedSyntaxError(f"jit: adding a {t} into one element of an array",
                                         L.loc)
        return S.convert(L, v, t, t.elem), t.elem
    return v, t


class ClipSelected:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 4 or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        if not all(isinstance(t, T.NoneType) or (isinstance(t, T.Scalar) and t.dtype != "c16")
                   for t in types[1:3]):
            return None
        which = getattr(atoms[3], "value", None) if len(atoms) == 4 else None
        if which not in (0, 1, 2) or scalar_of(types[0]).dtype == "c16":
            return None
        return T.Array("f8", types[0].ndim) if isinstance(types[0], T.Array) else T.F64T

    def lower(self, L, fn, vals, kw, rtype):
        (a, at), lo, hi = vals[0], vals[1], vals[2]
        which = L.call_atoms[0][3].value  # a constant: checked by type()
        b = L.b

        def scalar(x, xt):
            false = ll.Constant(T.I1, 0)
            below, low, low_t = false, x, xt
            if not isinstance(lo[1], T.NoneType):
                ct = T.promote(xt, lo[1])
                xv, lv = S.convert(L, x, xt, ct), S.convert(L, lo[0], lo[1], ct)
                below = S.compare(L, ">", lv, xv, ct)
                low, low_t = b.select(below, lv, xv), ct
            above = false
            if not isinstance(hi[1], T.NoneType):
                ct = T.promote(low_t, hi[1])
                above = S.compare(L, ">", S.convert(L, low, low_t, ct),
                                  S.convert(L, hi[0], hi[1], ct), ct)
            keep = b.not_(above)
            mask = (b.and_(b.not_(below), keep), b.and_(below, keep), above)[which]
            return S.convert(L, mask, T.BOOL, T.F64T)

        if isinstance(at, T.Scalar):
            return scalar(a, at)
        return A.elementwise(L, lambda xs: (scalar(*xs[0]), T.F64T), [(a, at)], "f8")


class Owned:
    """``rt.owned(x)``: a copy of an array, anything else itself (a tuple of arrays too,
    as in Python mode: an index tuple's snapshot)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1:
            return None
        t = types[0]
        if isinstance(t, (T.Array, T.Scalar, T.NoneType)) or type(t) is T.Tuple:
            return t
        return None

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        return A.copy(L, v, t) if isinstance(t, T.Array) else v


register(BroadcastLike(), rt.broadcast_like)
register(Densify(), rt.densify)
register(UnpackVjp(), rt.unpack_vjp)
register(GradSeed(), rt.grad_seed)
register(Unbroadcast(), rt.unbroadcast)
register(SumVjp(), rt.sum_vjp, rt.mean_vjp, rt.unreduce)
register(ZerosLike(), rt.zeros_like)
register(GetitemVjp(), rt.getitem_vjp)
register(GetattrVjp(), rt.getattr_vjp)
register(FieldTangent(), rt.field_tangent)
register(IndexOps(), rt.read_copy, rt.read_checked, rt.index_set, rt.index_updated, rt.index_set_vjp_base,
         rt.index_set_vjp_value)
register(AddCotangents(), rt.add)
register(Reversed(), rt.reversed_range)
register(AddAt(), rt.add_at)
register(Owned(), rt.owned)
register(ClipSelected(), rt.clip_selected)

# the other handlers of derivative code's helpers (and the containers' handlers they
# defer to) register themselves
from . import products, custom_checks, index_transposes, remat_calls, tuples  # noqa: E402,F401
from ..ops import fancy, dicts, lists  # noqa: E402,F401
