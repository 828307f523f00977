"""Scalar arithmetic, comparisons, conversions and math functions in LLVM IR.

Contract: every function takes and returns LLVM values of the backend types
(``types.py``): ``convert`` follows numpy's casts (float -> int truncates,
number -> bool is ``!= 0``); ``binary(L, op, a, b, t)`` computes ``op`` on two
values already converted to ``t`` (floor division and modulo round toward -inf,
computed as CPython's and numpy's ``divmod``); with ``python=True`` (an operator on
two Python numbers, ``t.weak``) a zero divisor raises ``ZeroDivisionError`` with
Python's message, as Numba's default error model does, and ``0.0 ** negative``
raises as Python does; otherwise (numpy scalars, array elements) division follows
numpy: inf/nan for floats, 0 for integers; ``int_of_float`` is Python's ``int(x)``
(``ValueError`` for nan, ``OverflowError`` for inf and for values outside int64);
``math1`` calls an LLVM intrinsic or the C library.
"""
from __future__ import annotations

import math
import operator

from llvmlite import ir as ll

import s2s_runtime as rt

from ....errors import UnsupportedSyntaxError
from ..typing import types as T


def make_complex(b, re, im):
    z = ll.Constant(T.C128, None)
    return b.insert_value(b.insert_value(z, re, 0), im, 1)


def convert(L, value, src, dst):
    """``value`` of type ``src`` as type ``dst`` (numpy's cast; a 0-d array's element
    where a number is expected)."""
    if src == dst or dst is None:
        return value
    b = L.b
    if isinstance(src, T.NoneType):
        return ll.Constant(dst.llvm(), None)
    if isinstance(dst, T.List):
        from .lists import convert_list  # [] or a literal becoming a grown list
        return convert_list(L, value, src, dst)
    if isinstance(dst, T.Dict) and isinstance(src, T.Dict) and src.keys != dst.keys:
        from ..ops.dicts import reordered  # the same keys in another order
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
    if isinstance(src, T.Array) and src.ndim == 0 and isinstance(dst, T.Scalar):
        from .arrays import element  # a 0-d array stored where a number goes (c[k] = a)
        return convert(L, element(L, value, src, []), src.elem, dst)
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
        return make_complex(b, re, ll.Constant(T.F64, 0.0))
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
    """The i1 truth value of a scalar (``bool(x)``), or of a list (``len(x) != 0``)."""
    b = L.b
    if isinstance(t, T.List):
        from .lists import fields
        return b.icmp_signed("!=", fields(L, value)[2], ll.Constant(T.I64, 0))
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


def _python_message(thunk):
    """The message of the exception Python raises running ``thunk`` (this Python's words)."""
    try:
        thunk()
    except (ArithmeticError, ValueError) as e:
        return str(e)
    raise AssertionError("s2s internal error: the thunk did not raise")


#: Python's ZeroDivisionError messages: (operation, operands are ints) -> message
ZERO_DIVISION = {
    ("truediv", True): _python_message(lambda: 1 / 0),
    ("truediv", False): _python_message(lambda: 1.0 / 0.0),
    ("floordiv", True): _python_message(lambda: 1 // 0),
    ("floordiv", False): _python_message(lambda: 1.0 // 0.0),
    ("mod", True): _python_message(lambda: 1 % 0),
    ("mod", False): _python_message(lambda: 1.0 % 0.0),
    ("divmod", True): _python_message(lambda: divmod(1, 0)),
    ("divmod", False): _python_message(lambda: divmod(1.0, 0.0)),
    ("pow", False): _python_message(lambda: 0.0 ** -1.0),
    ("complex", False): _python_message(lambda: 1j / 0j),
}
_INT_OF_NAN = _python_message(lambda: int(math.nan))
_INT_OF_INF = _python_message(lambda: int(math.inf))


def check_divisor(L, op, c, t: T.Scalar, ints=False):
    """Python's ``ZeroDivisionError`` when the divisor ``c`` (of type ``t``) is zero;
    ``ints``: both operands were Python ints (Python words the message by that)."""
    b = L.b
    if t.dtype == "c16":
        zero = ll.Constant(T.F64, 0.0)
        is_zero = b.and_(b.fcmp_ordered("==", b.extract_value(c, 0), zero),
                         b.fcmp_ordered("==", b.extract_value(c, 1), zero))
        L.check(is_zero, ZeroDivisionError, ZERO_DIVISION["complex", False])
    elif t.dtype == "i8":
        L.check(b.icmp_signed("==", c, ll.Constant(T.I64, 0)), ZeroDivisionError,
                ZERO_DIVISION[op, True])
    else:
        L.check(b.fcmp_ordered("==", c, ll.Constant(t.llvm(), 0.0)), ZeroDivisionError,
                ZERO_DIVISION[op, ints])


def int_divmod(L, a, c):
    """``(a // c, a % c)`` for int64, rounding toward -inf; a zero divisor gives
    ``(0, 0)`` (numpy's integer division; Python's raises before: ``check_divisor``)."""
    b = L.b
    zero, one = ll.Constant(T.I64, 0), ll.Constant(T.I64, 1)
    is_zero = b.icmp_signed("==", c, zero)
    safe = b.select(is_zero, one, c)
    # INT64_MIN // -1 wraps to INT64_MIN (numpy's value), never a trap
    minus_one = b.icmp_signed("==", safe, ll.Constant(T.I64, -1))
    safe = b.select(minus_one, one, safe)
    q, r = b.sdiv(a, safe), b.srem(a, safe)
    q = b.select(minus_one, b.neg(a), q)
    adjust = b.and_(b.icmp_signed("!=", r, zero),
                    b.icmp_signed("!=", b.icmp_signed("<", r, zero),
                                  b.icmp_signed("<", safe, zero)))
    q = b.select(adjust, b.sub(q, one), q)
    r = b.select(adjust, b.add(r, safe), r)
    return b.select(is_zero, zero, q), b.select(is_zero, zero, r)


def float_divmod(L, a, c, t: T.Scalar):
    """``(a // c, a % c)`` for floats as CPython's ``float_divmod`` and numpy's
    ``npy_divmod`` compute them (``1.0 // 0.1 == 9.0``; the remainder has the divisor's
    sign, a zero remainder too); a zero divisor gives numpy's ``(a / c, nan)``."""
    b = L.b
    ty = t.llvm()
    zero, one, half = (ll.Constant(ty, v) for v in (0.0, 1.0, 0.5))
    mod = b.frem(a, c)
    div = b.fdiv(b.fsub(a, mod), c)
    nonzero = b.fcmp_unordered("!=", mod, zero)
    flip = b.and_(b.fcmp_ordered("!=", mod, zero),
                  b.xor(b.fcmp_ordered("<", c, zero), b.fcmp_ordered("<", mod, zero)))
    mod = b.select(flip, b.fadd(mod, c), mod)
    div = b.select(flip, b.fsub(div, one), div)
    mod = b.select(nonzero, mod, intrinsic(L, "copysign", ty, [zero, c]))
    floor = intrinsic(L, "floor", ty, [div])
    floor = b.select(b.fcmp_ordered(">", b.fsub(div, floor), half), b.fadd(floor, one), floor)
    quotient = b.fdiv(a, c)
    floor = b.select(b.fcmp_unordered("!=", div, zero), floor,
                     intrinsic(L, "copysign", ty, [zero, quotient]))
    c_zero = b.fcmp_ordered("==", c, zero)
    return b.select(c_zero, quotient, floor), mod


def binary(L, op, a, c, t: T.Scalar, python=False, ints=False):
    """``a op c`` with both operands of type ``t`` (the result type); ``python``: with
    Python's errors (a zero divisor, ``0.0 ** negative``) for an operator on Python
    numbers; ``ints``: both operands were Python ints (``/`` words its error so)."""
    b = L.b
    if python and op in ("truediv", "floordiv", "mod"):
        check_divisor(L, op, c, t, ints)
    if t.dtype == "c16":
        return _complex_binary(L, op, a, c)
    if t.dtype == "i8":
        if op in ("add", "sub", "mul"):
            return getattr(b, op)(a, c)
        if op in ("floordiv", "mod"):
            q, r = int_divmod(L, a, c)
            return q if op == "floordiv" else r
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
    if op in ("floordiv", "mod"):
        q, r = float_divmod(L, a, c, t)
        return q if op == "floordiv" else r
    if op == "pow":
        if python:  # Python: 0.0 ** negative raises
            zero = ll.Constant(t.llvm(), 0.0)
            L.check(b.and_(b.fcmp_ordered("==", a, zero), b.fcmp_ordered("<", c, zero)),
                    ZeroDivisionError, ZERO_DIVISION["pow", False])
        return intrinsic(L, "pow", t.llvm(), [a, c])
    raise UnsupportedSyntaxError(f"jit: the operator {op} on {t}", L.loc)


def int_of_float(L, value, t: T.Scalar):
    """Python's ``int(x)`` (``math.trunc``) of a float ``value`` of type ``t`` as int64:
    ``ValueError`` for nan and ``OverflowError`` for +-inf in Python's words, and
    ``OverflowError`` for a finite value outside int64 (compiled ints are int64)."""
    b = L.b
    x = convert(L, value, t, T.F64T)
    L.check(b.fcmp_unordered("!=", x, x), ValueError, _INT_OF_NAN)
    L.check(b.fcmp_ordered("==", intrinsic(L, "fabs", T.F64, [x]), ll.Constant(T.F64, math.inf)),
            OverflowError, _INT_OF_INF)
    L.check(b.or_(b.fcmp_ordered(">=", x, ll.Constant(T.F64, 2.0 ** 63)),
                  b.fcmp_ordered("<", x, ll.Constant(T.F64, -2.0 ** 63))), OverflowError,
            "jit: the float does not fit in the int64 that int() gives in compiled code")
    return b.fptosi(x, T.I64)


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
        return make_complex(b, b.fadd(ar, cr), b.fadd(ai, ci))
    if op == "sub":
        return make_complex(b, b.fsub(ar, cr), b.fsub(ai, ci))
    if op == "mul":
        return make_complex(b, b.fsub(b.fmul(ar, cr), b.fmul(ai, ci)),
                        b.fadd(b.fmul(ar, ci), b.fmul(ai, cr)))
    if op == "truediv":
        den = b.fadd(b.fmul(cr, cr), b.fmul(ci, ci))
        re = b.fadd(b.fmul(ar, cr), b.fmul(ai, ci))
        im = b.fsub(b.fmul(ai, cr), b.fmul(ar, ci))
        return make_complex(b, b.fdiv(re, den), b.fdiv(im, den))
    if op == "pow":
        return _complex_pow(L, ar, ai, cr, ci)
    raise UnsupportedSyntaxError(f"jit: the operator {op} on complex numbers", L.loc)


def _complex_pow(L, ar, ai, cr, ci):
    """``z ** w = exp(w log z)`` with ``log z = log|z| + i arg z``; ``z * z`` for ``w = 2``
    (a product, as numpy computes small integer powers); at ``z = 0``: 1 for ``w = 0``, 0
    for a real ``w > 0``, nan otherwise (numpy's values)."""
    b = L.b
    f64 = T.F64
    log_r = intrinsic(L, "log", f64, [libm(L, "hypot", f64, [ar, ai])])
    theta = libm(L, "atan2", f64, [ai, ar])
    re = b.fsub(b.fmul(cr, log_r), b.fmul(ci, theta))
    im = b.fadd(b.fmul(cr, theta), b.fmul(ci, log_r))
    mag = intrinsic(L, "exp", f64, [re])
    out_re = b.fmul(mag, intrinsic(L, "cos", f64, [im]))
    out_im = b.fmul(mag, intrinsic(L, "sin", f64, [im]))
    zero, one = ll.Constant(f64, 0.0), ll.Constant(f64, 1.0)
    nan = ll.Constant(f64, math.nan)
    at_zero = b.and_(b.fcmp_ordered("==", ar, zero), b.fcmp_ordered("==", ai, zero))
    w_zero = b.and_(b.fcmp_ordered("==", cr, zero), b.fcmp_ordered("==", ci, zero))
    w_positive = b.and_(b.fcmp_ordered(">", cr, zero), b.fcmp_ordered("==", ci, zero))
    zero_re = b.select(w_zero, one, b.select(w_positive, zero, nan))
    zero_im = b.select(b.or_(w_zero, w_positive), zero, nan)
    square = b.and_(b.fcmp_ordered("==", cr, ll.Constant(f64, 2.0)),
                    b.fcmp_ordered("==", ci, zero))
    out_re = b.select(square, b.fsub(b.fmul(ar, ar), b.fmul(ai, ai)), out_re)
    out_im = b.select(square, b.fmul(ll.Constant(f64, 2.0), b.fmul(ar, ai)), out_im)
    return make_complex(b, b.select(at_zero, zero_re, out_re), b.select(at_zero, zero_im, out_im))


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
    if t.dtype == "b1":  # an i1: True is 1 (a signed i1 would read it as -1)
        return b.icmp_unsigned(op, a, c)
    if t.dtype == "i8":
        return b.icmp_signed(op, a, c)
    return b.fcmp_unordered(op, a, c) if op == "!=" else b.fcmp_ordered(op, a, c)


def negate(L, value, t):
    b = L.b
    if t.dtype == "c16":
        return make_complex(b, b.fneg(b.extract_value(value, 0)), b.fneg(b.extract_value(value, 1)))
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
    if t.dtype == "b1":
        return b.select(b.icmp_unsigned(op, c, a), c, a)
    if t.dtype == "i8":
        return b.select(b.icmp_signed(op, c, a), c, a)
    pick = b.fcmp_ordered(op, c, a)
    if propagate_nan:
        pick = b.or_(pick, b.fcmp_unordered("uno", c, c))
    return b.select(pick, c, a)


_ = math
