"""Which calls the LLVM backend compiles: one table, type rule and lowering per callable.

Contract: ``type_call(fn, args, kwargs, loc)`` gives the result type of a call
whose operands have these types (``args``: ``(atom, type)`` pairs), and
``lower_call(L, call)`` emits it; both raise ``UnsupportedSyntaxError`` naming
the callable, the operand types and the user's line for a call outside the
table.  Arithmetic, comparisons and math functions apply elementwise to
arrays with numpy's broadcasting (``arrays.elementwise``), one scalar rule per
operation serving both.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np
from llvmlite import ir as ll

import s2s_runtime as rt

from ...errors import UnsupportedSyntaxError
from . import arrays as A
from . import reductions as R
from . import scalars as S
from . import types as T

#: fn -> handler (an object with .type(fn, types, statics, loc) and .lower(L, fn, vals, rtype))
TABLE = {}


def register(handler, *fns):
    for fn in fns:
        TABLE[fn] = handler
    return handler


def name_of(fn) -> str:
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", repr(fn))
    if isinstance(fn, np.ufunc) or mod.startswith("numpy"):
        return f"np.{name}"
    if mod == "math":
        return f"math.{name}"
    if mod in ("_operator", "operator"):
        return f"operator.{name}"
    return name


def unsupported(fn, types, loc, why=""):
    shown = ", ".join(map(str, types))
    return UnsupportedSyntaxError(
        f"jit does not compile {name_of(fn)}({shown})" + (f": {why}" if why else ""), loc)


def _lookup(fn):
    try:
        return TABLE.get(fn)
    except TypeError:
        return None


def type_call(fn, args, kwargs, loc):
    if isinstance(fn, type) and issubclass(fn, BaseException) and not kwargs:
        return exception_instance(fn, args, loc)
    handler = _lookup(fn)
    types = [t for _, t in args]
    kw = {k: t for k, (_, t) in kwargs.items()}
    if handler is None:
        raise unsupported(fn, types, loc)
    if fn is operator.getitem and len(args) == 2 and isinstance(types[0], T.Tuple):
        return _tuple_item_type(args, loc)
    if getattr(handler, "wants_atoms", False):
        t = handler.type(fn, types, kw, loc, [a for a, _ in args])
    else:
        t = handler.type(fn, types, kw, loc)
    if t is None:
        raise unsupported(fn, types + [f"{k}={v}" for k, v in kw.items()], loc)
    return t


def lower_call(L, call):
    vals = [L.atom(a) for a in call.args]
    kw = {k: L.atom(a) for k, a in call.kwargs}
    rtype = type_call(call.fn, [(a, t) for a, (_, t) in zip(call.args, vals)],
                      {k: (a, kw[k][1]) for k, a in call.kwargs}, L.loc)
    if isinstance(rtype, T.Static):
        return ll.Constant(rtype.llvm(), None), rtype
    if call.fn is operator.getitem and isinstance(vals[0][1], T.Tuple):
        return _tuple_item(L, vals[0], call.args[1], rtype), rtype
    value = TABLE[call.fn].lower(L, call.fn, vals, kw, rtype)
    return value, rtype


def _tuple_index(args, loc):
    (_, base), (atom, _) = args
    index = getattr(atom, "value", None)
    if type(index) is int and -len(base.items) <= index < len(base.items):
        return index % len(base.items)
    if type(index) is slice:
        return range(*index.indices(len(base.items)))
    raise UnsupportedSyntaxError(
        f"jit: indexing a tuple {base} with {'a variable' if index is None else repr(index)} "
        "(a tuple index must be a constant in range)", loc)


def _tuple_item_type(args, loc):
    k = _tuple_index(args, loc)
    items = args[0][1].items
    return T.Tuple(tuple(items[j] for j in k)) if isinstance(k, range) else items[k]


def _tuple_item(L, base, atom, rtype):
    value, t = base
    k = _tuple_index([(None, t), (atom, None)], L.loc)
    if not isinstance(k, range):
        return L.b.extract_value(value, k)
    out = ll.Constant(rtype.llvm(), None)
    for pos, j in enumerate(k):
        out = L.b.insert_value(out, L.b.extract_value(value, j), pos)
    return out


def _arrays(types):
    return [t for t in types if isinstance(t, T.Array)]


def _numeric(types):
    return all(isinstance(t, (T.Scalar, T.Array)) for t in types)


def _elem(t):
    return t.elem if isinstance(t, T.Array) else t


def _lift(types, scalar_type):
    """The type of an elementwise operation: arrays if any operand is one."""
    arrays = _arrays(types)
    if not arrays or scalar_type is None:
        return scalar_type
    return T.Array(scalar_type.dtype, max(t.ndim for t in arrays))


def _map(L, vals, rtype, scalar_fn, out=None):
    """``scalar_fn(values, types)`` applied elementwise (or once, for scalars)."""
    if not isinstance(rtype, T.Array):
        return scalar_fn([v for v, _ in vals], [t for _, t in vals])
    return A.elementwise(L, lambda items: (scalar_fn([v for v, _ in items],
                                                     [t for _, t in items]), rtype.elem),
                         vals, rtype.dtype, out=out)


# -- arithmetic ------------------------------------------------------------------------
class Arith:
    """``a op b`` (operators, their in-place forms and the numpy ufuncs)."""

    def __init__(self, ops):
        self.ops = ops

    def type(self, fn, types, kw, loc):
        if len(types) != 2 or kw or not _numeric(types):
            return None
        op = self.ops[fn]
        st = S.arith_type(op, _elem(types[0]), _elem(types[1]))
        if fn in _INPLACE and isinstance(types[0], T.Array):
            return types[0]
        return _lift(types, st)

    def lower(self, L, fn, vals, kw, rtype):
        op = self.ops[fn]
        st = S.arith_type(op, _elem(vals[0][1]), _elem(vals[1][1]))

        def scalar(values, types):
            a, c = (S.convert(L, v, t, st) for v, t in zip(values, types))
            return S.binary(L, op, a, c, st)

        if fn in _INPLACE and isinstance(vals[0][1], T.Array):
            A.elementwise(L, lambda items: (scalar([v for v, _ in items], [t for _, t in items]),
                                            st), vals, rtype.dtype, out=vals[0])
            return vals[0][0]
        return _map(L, vals, rtype, scalar)


_INPLACE = {operator.iadd, operator.isub, operator.imul, operator.itruediv,
            operator.ifloordiv, operator.imod, operator.ipow}
_NP_ARITH = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "truediv",
             np.floor_divide: "floordiv", np.remainder: "mod", np.power: "pow"}
_ARITH = register(Arith({**S.ARITH, **_NP_ARITH}), *S.ARITH, *_NP_ARITH)


class Compare:
    def __init__(self, ops):
        self.ops = ops

    def type(self, fn, types, kw, loc):
        if len(types) != 2 or kw or not _numeric(types):
            return None
        a, c = _elem(types[0]), _elem(types[1])
        return _lift(types, T.Scalar("b1", a.weak and c.weak and not _arrays(types)))

    def lower(self, L, fn, vals, kw, rtype):
        st = T.promote(_elem(vals[0][1]), _elem(vals[1][1]))

        def scalar(values, types):
            a, c = (S.convert(L, v, t, st) for v, t in zip(values, types))
            return S.compare(L, self.ops[fn], a, c, st)

        return _map(L, vals, rtype, scalar)


_NP_COMPARE = {np.less: "<", np.less_equal: "<=", np.greater: ">", np.greater_equal: ">=",
               np.equal: "==", np.not_equal: "!="}
register(Compare({**S.COMPARE, **_NP_COMPARE}), *S.COMPARE, *_NP_COMPARE)


class Unary:
    """``-x``, ``+x``, ``abs(x)``, ``not x`` and their numpy forms."""

    def type(self, fn, types, kw, loc):
        if len(types) != 1 or kw or not _numeric(types):
            return None
        t = _elem(types[0])
        if fn is operator.not_:
            return None if _arrays(types) else T.BOOL
        if fn in (abs, np.abs, np.fabs) and t.dtype == "c16":
            return _lift(types, T.Scalar("f8", t.weak))
        if fn in (operator.neg, np.negative) and t.dtype == "b1":
            return None
        if fn in (operator.neg, operator.pos, abs) and t.dtype == "b1":
            t = T.Scalar("i8", t.weak)
        return _lift(types, t)

    def lower(self, L, fn, vals, kw, rtype):
        et = _elem(rtype)

        def scalar(values, types):
            v, t = values[0], types[0]
            if fn is operator.not_:
                return L.b.not_(S.truth(L, v, t))
            if t.dtype == "b1" and et.dtype == "i8":
                v, t = S.convert(L, v, t, et), et
            if fn in (operator.neg, np.negative):
                return S.negate(L, v, t)
            if fn in (abs, np.abs, np.fabs):
                return S.absolute(L, v, t)
            return v

        return _map(L, vals, rtype, scalar)


register(Unary(), operator.neg, operator.pos, operator.not_, abs, np.abs, np.fabs,
         np.negative, np.positive)


# -- math functions ----------------------------------------------------------------------
_MATH = {math.sqrt: "sqrt", math.sin: "sin", math.cos: "cos", math.tan: "tan", math.exp: "exp",
         math.log: "log", math.log2: "log2", math.log10: "log10", math.tanh: "tanh",
         math.sinh: "sinh", math.cosh: "cosh", math.asin: "asin", math.acos: "acos",
         math.atan: "atan", math.asinh: "asinh", math.acosh: "acosh", math.atanh: "atanh",
         math.log1p: "log1p", math.expm1: "expm1", math.erf: "erf", math.erfc: "erfc",
         math.fabs: "fabs", math.lgamma: "lgamma", math.gamma: "tgamma"}
_NP_MATH = {np.sqrt: "sqrt", np.sin: "sin", np.cos: "cos", np.tan: "tan", np.exp: "exp",
            np.log: "log", np.log2: "log2", np.log10: "log10", np.tanh: "tanh", np.sinh: "sinh",
            np.cosh: "cosh", np.arcsin: "asin", np.arccos: "acos", np.arctan: "atan",
            np.arcsinh: "asinh", np.arccosh: "acosh", np.arctanh: "atanh", np.log1p: "log1p",
            np.expm1: "expm1", np.floor: "floor", np.ceil: "ceil", np.trunc: "trunc",
            np.exp2: "exp2", np.cbrt: "cbrt", np.rint: "rint"}
_MATH_INT = {math.floor: "floor", math.ceil: "ceil", math.trunc: "trunc"}


class Math1:
    def type(self, fn, types, kw, loc):
        if len(types) != 1 or kw or not _numeric(types):
            return None
        t = _elem(types[0])
        if t.dtype == "c16":
            return None
        if fn in _MATH:
            return None if _arrays(types) else T.FLOAT
        if fn in _MATH_INT:
            return None if _arrays(types) else T.INT
        return _lift(types, T.Scalar("f4" if t.dtype == "f4" else "f8"))

    def lower(self, L, fn, vals, kw, rtype):
        name = _MATH.get(fn) or _NP_MATH.get(fn) or _MATH_INT[fn]
        ft = T.F64T if fn in _MATH or fn in _MATH_INT else _elem(rtype)

        def scalar(values, types):
            x = S.convert(L, values[0], types[0], ft)
            if fn in (math.sqrt, math.log) or name in ("log", "sqrt") and fn in _MATH:
                check = "<" if name == "sqrt" else "<="
                L.check(L.b.fcmp_ordered(check, x, ll.Constant(T.F64, 0.0)), ValueError,
                        "math domain error")
            y = S.math1(L, name, x, ft)
            return S.convert(L, y, T.F64T, T.INT) if fn in _MATH_INT else y

        return _map(L, vals, rtype, scalar)


_MATH1 = register(Math1(), *_MATH, *_NP_MATH, *_MATH_INT)

_MATH2 = {math.pow: "pow", math.atan2: "atan2", math.hypot: "hypot", math.copysign: "copysign",
          math.fmod: "fmod", np.arctan2: "atan2", np.hypot: "hypot", np.copysign: "copysign",
          np.fmod: "fmod", np.maximum: "maximum", np.minimum: "minimum"}


class Math2:
    def type(self, fn, types, kw, loc):
        if len(types) != 2 or kw or not _numeric(types):
            return None
        if any(_elem(t).dtype == "c16" for t in types):
            return None
        if fn in (np.maximum, np.minimum):
            return _lift(types, T.promote(*map(_elem, types)))
        if fn.__class__ is not np.ufunc:
            return None if _arrays(types) else T.FLOAT
        st = T.promote(*map(_elem, types))
        return _lift(types, T.Scalar("f4" if st.dtype == "f4" else "f8"))

    def lower(self, L, fn, vals, kw, rtype):
        name = _MATH2[fn]
        ft = _elem(rtype) if fn.__class__ is np.ufunc else T.F64T

        def scalar(values, types):
            a, c = (S.convert(L, v, t, ft) for v, t in zip(values, types))
            if name in ("maximum", "minimum"):
                return S.min_max(L, name[:3], a, c, ft, propagate_nan=True)
            return S.math2(L, name, a, c, ft)

        return _map(L, vals, rtype, scalar)


register(Math2(), *_MATH2)


class MinMax:
    """Python's ``min``/``max`` of scalars (an array operand: its reduction)."""

    def type(self, fn, types, kw, loc):
        if kw or not types or not all(isinstance(t, T.Scalar) for t in types):
            if len(types) == 1 and isinstance(types[0], T.Array) and types[0].ndim == 1:
                return types[0].elem
            return None
        return T.promote(*types) if len(types) > 1 else None

    def lower(self, L, fn, vals, kw, rtype):
        if len(vals) == 1:
            return R.min_max_all(L, vals[0][0], vals[0][1], fn.__name__)
        acc = S.convert(L, vals[0][0], vals[0][1], rtype)
        for v, t in vals[1:]:
            acc = S.min_max(L, fn.__name__, acc, S.convert(L, v, t, rtype), rtype)
        return acc


register(MinMax(), builtins.min, builtins.max)


class Cast:
    """``float(x)``, ``int(x)``, ``bool(x)``, ``complex(x)``, ``np.float64(x)``, ..."""

    TARGET = {float: T.FLOAT, int: T.INT, bool: T.BOOL, complex: T.COMPLEX,
              np.float64: T.Scalar("f8"), np.float32: T.Scalar("f4"),
              np.int64: T.Scalar("i8"), np.bool_: T.Scalar("b1"),
              np.complex128: T.Scalar("c16")}

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], T.Scalar):
            if fn in (np.float64, np.float32, np.int64) and len(types) == 1 \
                    and isinstance(types[0], T.Array) and not kw:
                return T.Array(self.TARGET[fn].dtype, types[0].ndim)
            return None
        if types[0].dtype == "c16" and fn not in (complex, np.complex128, bool, np.bool_):
            return None
        return self.TARGET[fn]

    def lower(self, L, fn, vals, kw, rtype):
        return S.convert(L, vals[0][0], vals[0][1], rtype)


register(Cast(), *Cast.TARGET)


# -- tuples, ranges, shapes ----------------------------------------------------------------
class MakeTuple:
    def type(self, fn, types, kw, loc):
        return None if kw or any(isinstance(t, T.Static) for t in types) else T.Tuple(tuple(types))

    def lower(self, L, fn, vals, kw, rtype):
        out = ll.Constant(rtype.llvm(), None)
        for k, (v, _) in enumerate(vals):
            out = L.b.insert_value(out, v, k)
        return out


register(MakeTuple(), rt.make_tuple)


class MakeRange:
    def type(self, fn, types, kw, loc):
        ok = 1 <= len(types) <= 3 and not kw and all(
            isinstance(t, T.Scalar) and t.dtype in ("i8", "b1") for t in types)
        return T.Range() if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        ints = [S.convert(L, v, t, T.INT) for v, t in vals]
        if len(ints) == 1:
            ints = [A.ZERO] + ints
        if len(ints) == 2:
            ints.append(A.ONE)
        out = ll.Constant(rtype.llvm(), None)
        for k, v in enumerate(ints):
            out = L.b.insert_value(out, v, k)
        return out


register(MakeRange(), range)


class MakeSlice:
    def type(self, fn, types, kw, loc):
        ok = 1 <= len(types) <= 3 and not kw and all(
            isinstance(t, T.NoneType) or isinstance(t, T.Scalar) and t.dtype in ("i8", "b1")
            for t in types)
        if not ok:
            return None
        parts = list(types) if len(types) > 1 else [T.NONE] + list(types)
        parts += [T.NONE] * (3 - len(parts))
        return T.Slice(tuple(not isinstance(t, T.NoneType) for t in parts))

    def lower(self, L, fn, vals, kw, rtype):
        parts = list(vals) if len(vals) > 1 else [(None, T.NONE)] + list(vals)
        parts += [(None, T.NONE)] * (3 - len(parts))
        out = ll.Constant(rtype.llvm(), None)
        for k, (v, t) in enumerate(parts):
            if not isinstance(t, T.NoneType):
                out = L.b.insert_value(out, S.convert(L, v, t, T.INT), k)
        return out


register(MakeSlice(), slice)


class Shape:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], T.Array):
            if fn is len and len(types) == 1 and isinstance(types[0], (T.Tuple, T.Range)):
                return T.INT
            return None
        t = types[0]
        if fn is np.shape:
            return T.Tuple((T.INT,) * t.ndim)
        if fn is len:
            return T.INT if t.ndim else None
        return T.INT  # np.size, np.ndim

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if isinstance(t, T.Tuple):
            return A.i64(len(t.items))
        if isinstance(t, T.Range):
            return _range_len(L, v)
        if fn is np.shape:
            out = ll.Constant(rtype.llvm(), None)
            for k in range(t.ndim):
                out = L.b.insert_value(out, A.shape_of(L, v, k), k)
            return out
        if fn is len:
            return A.shape_of(L, v, 0)
        if fn is np.ndim:
            return A.i64(t.ndim)
        return A.size(L, v, t)


register(Shape(), np.shape, len, np.size, np.ndim)


class GetItem:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2:
            return None
        base, index = types
        if isinstance(base, T.Tuple):
            return "tuple"  # resolved with the constant index (type_getitem_tuple)
        if not isinstance(base, T.Array):
            return None
        parts = _index_types(index)
        if parts is None or len(parts) > base.ndim:
            return None
        kept = base.ndim - sum(1 for p in parts if p == "int")
        return base.elem if kept == 0 else T.Array(base.dtype, kept)

    def lower(self, L, fn, vals, kw, rtype):
        (a, t), (idx, it) = vals
        return A.getitem(L, a, t, idx, it)[0]


def _index_types(index):
    items = index.items if isinstance(index, T.Tuple) else (index,)
    out = []
    for t in items:
        if isinstance(t, T.Scalar) and t.dtype in ("i8", "b1"):
            out.append("int")
        elif isinstance(t, T.Slice):
            out.append("slice")
        else:
            return None
    return out


class SetItem:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 3 or not isinstance(types[0], T.Array):
            return None
        if _index_types(types[1]) is None or not _numeric([types[2]]):
            return None
        return T.NONE

    def lower(self, L, fn, vals, kw, rtype):
        (a, t), (idx, it), (v, vt) = vals
        A.setitem(L, a, t, idx, it, v, vt)
        return ll.Constant(T.NONE.llvm(), None)


register(SetItem(), operator.setitem)
_GETITEM = register(GetItem(), operator.getitem)


# -- creation, copies, reductions, products ------------------------------------------------
def _dtype_of(kw, default):
    if "dtype" not in kw:
        return default
    t = kw["dtype"]
    if isinstance(t, T.NoneType):
        return default
    if not isinstance(t, T.Static):
        return None
    return T.dtype_code(t.value)


class Create:
    FILL = {np.zeros: 0, np.ones: 1, np.empty: None, np.zeros_like: 0, np.ones_like: 1,
            np.empty_like: None}

    def type(self, fn, types, kw, loc):
        if len(types) != 1 or set(kw) - {"dtype"}:
            return None
        if fn in (np.zeros, np.ones, np.empty):
            t = types[0]
            dims = [t] if isinstance(t, T.Scalar) else list(getattr(t, "items", [None]))
            if not all(isinstance(d, T.Scalar) and d.dtype in ("i8", "b1") for d in dims):
                return None
            code = _dtype_of(kw, "f8")
            return T.Array(code, len(dims)) if code else None
        if not isinstance(types[0], T.Array):
            return None
        code = _dtype_of(kw, types[0].dtype)
        return T.Array(code, types[0].ndim) if code else None

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        shape = R.shape_values(L, v, t) if fn in (np.zeros, np.ones, np.empty) \
            else A.shape_list(L, v, t)
        fill = self.FILL[fn]
        return R.create(L, rtype, shape, None if fill is None else (L.const(fill, T.INT), T.INT))


register(Create(), *Create.FILL)


class Copy:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not isinstance(types[0], T.Array):
            return types[0] if len(types) == 1 and isinstance(types[0], T.Scalar) \
                and not kw and fn is np.copy else None
        return types[0]

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if isinstance(t, T.Scalar):
            return v
        if fn is np.transpose:
            return A.transpose(L, v, t)
        return A.copy(L, v, t)


register(Copy(), np.copy, np.transpose, np.ascontiguousarray)


class Reduce:
    def type(self, fn, types, kw, loc):
        if len(types) != 1 or not _numeric(types):
            return None
        if kw:
            raise UnsupportedSyntaxError(
                f"jit: {name_of(fn)} with {', '.join(kw)}= (jit compiles whole-array "
                "reductions; write the loop over the axis)", loc)
        t = types[0]
        if fn in (np.mean, np.average):
            e = _elem(t)
            return T.Scalar("f4" if e.dtype == "f4" else ("c16" if e.dtype == "c16" else "f8"))
        if isinstance(t, T.Scalar):
            return R.sum_type(T.Array(t.dtype, 0)) if fn in (np.sum, np.prod) else T.Scalar(t.dtype)
        if fn in (np.sum, np.prod):
            return R.sum_type(t)
        return None if t.dtype == "c16" else t.elem

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if isinstance(t, T.Scalar):
            return S.convert(L, v, t, rtype)
        if fn in (np.sum, np.prod):
            return R.sum_all(L, v, t, "add" if fn is np.sum else "mul")
        if fn in (np.mean, np.average):
            return R.mean_all(L, v, t)
        return R.min_max_all(L, v, t, "max" if fn in (np.max, np.amax) else "min")


register(Reduce(), np.sum, np.prod, np.max, np.min, np.amax, np.amin, np.mean, np.average)


class Dot:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2:
            return None
        a, c = types
        if fn is np.dot and isinstance(a, T.Scalar) and isinstance(c, T.Scalar):
            return S.arith_type("mul", a, c)
        if not (isinstance(a, T.Array) and isinstance(c, T.Array)):
            return None
        if not (1 <= a.ndim <= 2 and 1 <= c.ndim <= 2):
            return None
        st = T.promote(a.elem, c.elem)
        st = T.Scalar("i8") if st.dtype == "b1" else st
        ndim = (a.ndim - 1) + (c.ndim - 1)
        return st if ndim == 0 else T.Array(st.dtype, ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (a, ta), (c, tc) = vals
        if isinstance(ta, T.Scalar):
            return S.binary(L, "mul", S.convert(L, a, ta, rtype), S.convert(L, c, tc, rtype), rtype)
        return R.dot(L, a, ta, c, tc, rtype)


register(Dot(), np.dot, np.matmul, operator.matmul)


# -- a few more elementwise functions -----------------------------------------------------
class Elementwise:
    """Elementwise functions written with the scalar helpers: ``np.square``,
    ``np.sign``, ``np.logaddexp``, ``np.where``, ``np.clip``, ``math.log(x, base)``."""

    ARITY = {np.square: (1,), np.sign: (1,), np.logaddexp: (2,), np.where: (3,),
             np.clip: (3,), math.log: (1, 2)}

    def type(self, fn, types, kw, loc):
        if fn is math.log and len(types) == 1:
            return _MATH1.type(fn, types, kw, loc)
        if kw or len(types) not in self.ARITY[fn] or not _numeric(types):
            return None
        if any(_elem(t).dtype == "c16" for t in types):
            return None
        if fn is math.log:
            return None if _arrays(types) else T.FLOAT
        if fn is np.where:
            return _lift(types, T.promote(_elem(types[1]), _elem(types[2])))
        st = T.promote(*map(_elem, types))
        if fn is np.logaddexp:
            st = T.Scalar("f4" if st.dtype == "f4" else "f8")
        if fn is np.square and st.dtype == "b1":
            return None
        if fn is np.sign and st.dtype == "b1":
            return None
        return _lift(types, T.Scalar(st.dtype))

    def lower(self, L, fn, vals, kw, rtype):
        if fn is math.log and len(vals) == 1:
            return _MATH1.lower(L, fn, vals, kw, rtype)
        et = _elem(rtype)
        b = L.b

        def scalar(values, types):
            if fn is np.where:
                test = S.truth(L, values[0], types[0])
                x, y = (S.convert(L, v, t, et) for v, t in zip(values[1:], types[1:]))
                return b.select(test, x, y)
            xs = [S.convert(L, v, t, et) for v, t in zip(values, types)]
            if fn is np.square:
                return S.binary(L, "mul", xs[0], xs[0], et)
            if fn is np.sign:
                zero = L.const(0, et)
                pos = S.convert(L, S.compare(L, ">", xs[0], zero, et), T.BOOL, et)
                neg = S.convert(L, S.compare(L, "<", xs[0], zero, et), T.BOOL, et)
                out = S.binary(L, "sub", pos, neg, et)
                if et.dtype in ("f4", "f8"):  # nan stays nan
                    out = b.select(b.fcmp_unordered("uno", xs[0], xs[0]), xs[0], out)
                return out
            if fn is np.clip:
                low = S.min_max(L, "max", xs[0], xs[1], et, propagate_nan=True)
                return S.min_max(L, "min", low, xs[2], et, propagate_nan=True)
            if fn is math.log:
                for x in xs:
                    L.check(b.fcmp_ordered("<=", x, ll.Constant(T.F64, 0.0)), ValueError,
                            "math domain error")
                return b.fdiv(S.math1(L, "log", xs[0], et), S.math1(L, "log", xs[1], et))
            # logaddexp: max + log1p(exp(-|a - c|))
            a, c = xs
            big = S.min_max(L, "max", a, c, et, propagate_nan=True)
            diff = S.absolute(L, b.fsub(a, c), et)
            tail = S.math1(L, "log1p", S.math1(L, "exp", b.fneg(diff), et), et)
            same = b.fcmp_ordered("==", a, c)  # inf, inf: no inf - inf
            return b.select(same, b.fadd(a, ll.Constant(et.llvm(), 0.6931471805599453)),
                            b.fadd(big, tail))

        return _map(L, vals, rtype, scalar)


register(Elementwise(), *Elementwise.ARITY)


class Reversed:
    """``reversed(range(...))``: the same numbers, last first."""

    def type(self, fn, types, kw, loc):
        return T.Range() if not kw and len(types) == 1 and isinstance(types[0], T.Range) else None

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        r = vals[0][0]
        start, stop, step = (b.extract_value(r, k) for k in range(3))
        up = b.icmp_signed(">", step, A.ZERO)
        span = b.select(up, b.sub(stop, start), b.sub(start, stop))
        mag = b.select(up, step, b.neg(step))
        n = b.sdiv(b.add(span, b.sub(mag, A.ONE)), mag)
        n = b.select(b.icmp_signed("<", n, A.ZERO), A.ZERO, n)
        last = b.add(start, b.mul(b.sub(n, A.ONE), step))
        new_stop = b.sub(last, b.mul(n, step))
        out = ll.Constant(rtype.llvm(), None)
        for k, v in enumerate((last, new_stop, b.neg(step))):
            out = b.insert_value(out, v, k)
        return out


register(Reversed(), reversed)


def exception_instance(fn, args, loc):
    """``ValueError("message")`` with constant arguments: a constant to ``raise``."""
    if not all(hasattr(a, "value") for a, _ in args):
        raise UnsupportedSyntaxError(
            f"jit: {fn.__name__}(...) with arguments that are not constants", loc)
    return T.Static(fn(*[a.value for a, _ in args]))


def _range_len(L, r):
    b = L.b
    start, stop, step = (b.extract_value(r, k) for k in range(3))
    up = b.icmp_signed(">", step, A.ZERO)
    span = b.select(up, b.sub(stop, start), b.sub(start, stop))
    mag = b.select(up, step, b.neg(step))
    n = b.sdiv(b.add(span, b.sub(mag, A.ONE)), mag)
    return b.select(b.icmp_signed("<", n, A.ZERO), A.ZERO, n)


class Bitwise:
    """``a | b``, ``a & b``, ``a ^ b`` on bools and ints (``or_`` of flags in loops)."""

    OPS = {operator.or_: "or_", operator.and_: "and_", operator.xor: "xor",
           operator.ior: "or_", operator.iand: "and_", operator.ixor: "xor"}

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not all(isinstance(t, T.Scalar) and t.dtype in ("b1", "i8")
                                            for t in types):
            return None
        return T.promote(*types)

    def lower(self, L, fn, vals, kw, rtype):
        a, c = (S.convert(L, v, t, rtype) for v, t in vals)
        return getattr(L.b, self.OPS[fn])(a, c)


register(Bitwise(), *Bitwise.OPS)


class Conjugate:
    def type(self, fn, types, kw, loc):
        return types[0] if len(types) == 1 and not kw and _numeric(types) else None

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if _elem(t).dtype != "c16":
            return v
        def scalar(values, types):
            z = values[0]
            return L.b.insert_value(z, L.b.fneg(L.b.extract_value(z, 1)), 1)
        return _map(L, vals, rtype, scalar)


register(Conjugate(), np.conjugate, np.conj)
