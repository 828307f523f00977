"""Scalar arithmetic, comparisons, conversions and math functions in LLVM IR.

Contract: every function takes and returns LLVM values of the backend types
(``types.py``): ``convert`` follows numpy's casts (float -> int truncates,
number -> bool is ``!= 0``); ``binary(L, op, a, b, t)`` computes ``op`` on two
values already converted to ``t`` with Python's semantics (floor division and
modulo round toward -inf; an integer division by zero raises
``ZeroDivisionError``; float division follows numpy: inf/nan); ``math1``
calls an LLVM intrinsic or the C library.
"""
from __future__ import annotations

import math
import operator

from llvmlite import ir as ll

import s2s_runtime as rt

from ...errors import UnsupportedSyntaxError
from . import types as T


def _complex(b, re, im):
    z = ll.Constant(T.C128, None)
    return b.insert_value(b.insert_value(z, re, 0), im, 1)


def convert(L, value, src, dst):
    """``value`` of type ``src`` as type ``dst`` (numpy's cast)."""
    if src == dst or dst is None:
        return value
    b = L.b
    if isinstance(src, T.NoneType):
        return ll.Constant(dst.llvm(), None)
    if isinstance(dst, T.List):
        from .lists import convert_list  # [] or a literal becoming a grown list
        return convert_list(L, value, src, dst)
    if isinstance(dst, T.Dict) and isinstance(src, T.Dict) and src.keys != dst.keys:
        from .ops_dicts import reordered  # the same keys in another order
        value, src = reordered(L, value, src, dst)
    if isinstance(dst, T.Tuple):
        if not isinstance(src, T.Tuple) or len(src.items) != len(dst.items):
            raise UnsupportedSyntaxError(f"jit: a {src} where a {dst} is expected", L.loc)
        out = ll.Constant(dst.llvm(), None)
        for k, (s, d) in enumerate(zip(src.items, dst.items)):
            out = b.insert_value(out, convert(L, b.extract_value(value, k), s, d), k)
        return out
    if isinstance(src, T.NoneType):
        return ll.Constant(dst.llvm(), None)
    if isinstance(dst, T.Slice) and isinstance(src, T.Slice):
        return value
    if not (isinstance(src, T.Scalar) and isinstance(dst, T.Scalar)):
        if isinstance(src, T.Array) and isinstance(dst, T.Array) and src.ndim == dst.ndim:
            from .arrays import astype
            return astype(L, value, src, dst)
        raise UnsupportedSyntaxError(f"jit: a {src} where a {dst} is expected", L.loc)
    s, d = src.dtype, dst.dtype
    if s == d:
        return value
    if d == "c16":
        re = convert(L, value, T.Scalar(s), T.F64T)
        return _complex(b, re, ll.Constant(T.F64, 0.0))
    if s == "c16":
        if d == "b1":
            re, im = b.extract_value(value, 0), b.extract_value(value, 1)
            zero = ll.Constant(T.F64, 0.0)
            return b.or_(b.fcmp_unordered("!=", re, zero), b.fcmp_unordered("!=", im, zero))
        return convert(L, b.extract_value(value, 0), T.F64T, dst)
    if d == "b1":
        return truth(L, value, src)
    if s == "b1":
        return b.zext(value, T.I64) if d == "i8" else b.uitofp(value, dst.llvm())
    if s == "i8":
        return b.sitofp(value, dst.llvm())
    if d == "i8":
        return b.fptosi(value, T.I64)
    return b.fpext(value, T.F64) if d == "f8" else b.fptrunc(value, T.F32)


def truth(L, value, t):
    """The i1 truth value of a scalar (``bool(x)``)."""
    b = L.b
    if not isinstance(t, T.Scalar):
        raise UnsupportedSyntaxError(f"jit: the truth value of a {t}", L.loc)
    if t.dtype == "b1":
        return value
    if t.dtype == "i8":
        return b.icmp_signed("!=", value, ll.Constant(T.I64, 0))
    if t.dtype == "c16":
        return convert(L, value, t, T.BOOL)
    return b.fcmp_unordered("!=", value, ll.Constant(t.llvm(), 0.0))


def intrinsic(L, name, t, args):
    fnty = ll.FunctionType(t, [t] * len(args))
    suffix = "f32" if t == T.F32 else "f64"
    fn = L.module.declare_intrinsic(f"llvm.{name}.{suffix}", (), fnty) \
        if f"llvm.{name}.{suffix}" not in L.module.globals else L.module.globals[f"llvm.{name}.{suffix}"]
    return L.b.call(fn, args)


def libm(L, name, t, args):
    name = name + ("f" if t == T.F32 else "")
    fn = L.module.globals.get(name)
    if fn is None:
        fn = ll.Function(L.module, ll.FunctionType(t, [t] * len(args)), name)
    return L.b.call(fn, args)


_INTRINSICS = {"sqrt", "sin", "cos", "exp", "log", "log2", "log10", "fabs", "floor",
               "ceil", "trunc", "exp2", "rint"}
_LIBM = {"tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
         "log1p", "expm1", "erf", "erfc", "cbrt", "lgamma", "tgamma"}


def math1(L, name, value, t: T.Scalar):
    """``name(value)`` for a real scalar of type ``t`` (f4 or f8)."""
    if name in _INTRINSICS:
        return intrinsic(L, name, t.llvm(), [value])
    if name in _LIBM:
        return libm(L, name, t.llvm(), [value])
    raise KeyError(name)


def math2(L, name, a, c, t: T.Scalar):
    if name in ("pow", "minnum", "maxnum", "copysign"):
        return intrinsic(L, name, t.llvm(), [a, c])
    return libm(L, name, t.llvm(), [a, c])


# -- arithmetic ----------------------------------------------------------------------
ARITH = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
         operator.truediv: "truediv", operator.floordiv: "floordiv", operator.mod: "mod",
         operator.pow: "pow", operator.iadd: "add", operator.isub: "sub",
         operator.imul: "mul", operator.itruediv: "truediv", operator.ifloordiv: "floordiv",
         operator.imod: "mod", operator.ipow: "pow",
         rt.power: "pow"}  # (``**`` of derivative code: LLVM's pow is numpy's at 0 too)
COMPARE = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
           operator.eq: "==", operator.ne: "!="}


def arith_type(op, ta: T.Scalar, tb: T.Scalar) -> T.Scalar:
    """The result type of ``a op b`` (numpy/NEP 50; Python's for two Python scalars)."""
    t = T.promote(ta, tb)
    if t.dtype == "b1":
        t = T.Scalar("i8", t.weak)
    if op == "truediv" and t.dtype == "i8":
        t = T.Scalar("f8", t.weak)
    return t


def binary(L, op, a, c, t: T.Scalar):
    """``a op c`` with both operands of type ``t`` (the result type)."""
    b = L.b
    if t.dtype == "c16":
        return _complex_binary(L, op, a, c)
    if t.dtype == "i8":
        if op in ("add", "sub", "mul"):
            return getattr(b, op)(a, c)
        if op in ("floordiv", "mod"):
            zero = ll.Constant(T.I64, 0)
            L.check(b.icmp_signed("==", c, zero), ZeroDivisionError,
                    "integer division or modulo by zero")
            q, r = b.sdiv(a, c), b.srem(a, c)
            adjust = b.and_(b.icmp_signed("!=", r, zero),
                            b.icmp_signed("!=", b.icmp_signed("<", r, zero),
                                          b.icmp_signed("<", c, zero)))
            if op == "floordiv":
                return b.select(adjust, b.sub(q, ll.Constant(T.I64, 1)), q)
            return b.select(adjust, b.add(r, c), r)
        if op == "pow":
            return int_pow(L, a, c)
    if op == "add":
        return b.fadd(a, c)
    if op == "sub":
        return b.fsub(a, c)
    if op == "mul":
        return b.fmul(a, c)
    if op == "truediv":
        return b.fdiv(a, c)
    if op == "floordiv":
        return math1(L, "floor", b.fdiv(a, c), t)
    if op == "mod":
        r = b.frem(a, c)
        zero = ll.Constant(t.llvm(), 0.0)
        adjust = b.and_(b.fcmp_ordered("!=", r, zero),
                        b.xor(b.fcmp_ordered("<", r, zero), b.fcmp_ordered("<", c, zero)))
        return b.select(adjust, b.fadd(r, c), r)
    if op == "pow":
        return intrinsic(L, "pow", t.llvm(), [a, c])
    raise UnsupportedSyntaxError(f"jit: the operator {op} on {t}", L.loc)


def int_pow(L, base, exp):
    """``base ** exp`` for int64 (square and multiply); a negative exponent raises."""
    b = L.b
    zero, one = ll.Constant(T.I64, 0), ll.Constant(T.I64, 1)
    L.check(b.icmp_signed("<", exp, zero), ValueError,
            "Integers to negative integer powers are not allowed.")
    head, body, done = (L.fn.append_basic_block(n) for n in ("ipow.head", "ipow.body", "ipow.end"))
    pre = b.block
    b.branch(head)
    b.position_at_end(head)
    acc, x, n = b.phi(T.I64), b.phi(T.I64), b.phi(T.I64)
    acc.add_incoming(one, pre), x.add_incoming(base, pre), n.add_incoming(exp, pre)
    b.cbranch(b.icmp_signed(">", n, zero), body, done)
    b.position_at_end(body)
    odd = b.icmp_signed("!=", b.and_(n, one), zero)
    acc.add_incoming(b.select(odd, b.mul(acc, x), acc), body)
    x.add_incoming(b.mul(x, x), body)
    n.add_incoming(b.ashr(n, one), body)
    b.branch(head)
    b.position_at_end(done)
    return acc


def _complex_binary(L, op, a, c):
    b = L.b
    ar, ai, cr, ci = (b.extract_value(v, k) for v in (a, c) for k in (0, 1))
    if op == "add":
        return _complex(b, b.fadd(ar, cr), b.fadd(ai, ci))
    if op == "sub":
        return _complex(b, b.fsub(ar, cr), b.fsub(ai, ci))
    if op == "mul":
        return _complex(b, b.fsub(b.fmul(ar, cr), b.fmul(ai, ci)),
                        b.fadd(b.fmul(ar, ci), b.fmul(ai, cr)))
    if op == "truediv":
        den = b.fadd(b.fmul(cr, cr), b.fmul(ci, ci))
        re = b.fadd(b.fmul(ar, cr), b.fmul(ai, ci))
        im = b.fsub(b.fmul(ai, cr), b.fmul(ar, ci))
        return _complex(b, b.fdiv(re, den), b.fdiv(im, den))
    raise UnsupportedSyntaxError(f"jit: the operator {op} on complex numbers", L.loc)


def compare(L, op, a, c, t: T.Scalar):
    """``a op c`` (i1) for operands of type ``t``."""
    b = L.b
    if t.dtype == "c16":
        if op not in ("==", "!="):
            raise UnsupportedSyntaxError(f"jit: ordering comparison {op} of complex numbers",
                                         L.loc)
        re = b.fcmp_ordered("==", b.extract_value(a, 0), b.extract_value(c, 0))
        im = b.fcmp_ordered("==", b.extract_value(a, 1), b.extract_value(c, 1))
        eq = b.and_(re, im)
        return eq if op == "==" else b.not_(eq)
    if t.dtype in ("i8", "b1"):
        return b.icmp_signed(op, a, c)
    return b.fcmp_unordered(op, a, c) if op == "!=" else b.fcmp_ordered(op, a, c)


def negate(L, value, t):
    b = L.b
    if t.dtype == "c16":
        return _complex(b, b.fneg(b.extract_value(value, 0)), b.fneg(b.extract_value(value, 1)))
    return b.neg(value) if t.dtype == "i8" else b.fneg(value)


def absolute(L, value, t):
    """``abs(value)``: same type, complex -> float."""
    b = L.b
    if t.dtype == "c16":
        return libm(L, "hypot", T.F64, [b.extract_value(value, 0), b.extract_value(value, 1)])
    if t.dtype == "i8":
        return b.select(b.icmp_signed("<", value, ll.Constant(T.I64, 0)), b.neg(value), value)
    if t.dtype == "b1":
        return value
    return intrinsic(L, "fabs", t.llvm(), [value])


def min_max(L, which, a, c, t, propagate_nan=False):
    """``min``/``max`` of two values of type ``t``: Python's (``c`` if ``c < a`` else
    ``a``), or numpy's ``minimum``/``maximum`` (nan wins) with ``propagate_nan``."""
    b = L.b
    op = "<" if which == "min" else ">"
    if t.dtype in ("i8", "b1"):
        return b.select(b.icmp_signed(op, c, a), c, a)
    pick = b.fcmp_ordered(op, c, a)
    if propagate_nan:
        pick = b.or_(pick, b.fcmp_unordered("uno", c, c))
    return b.select(pick, c, a)


_ = math
