"""Arithmetic, comparisons, unary operators, math functions and casts (numbers, and
elementwise on arrays through ``calls.map_elementwise``), the other elementwise functions
(``np.square``, ``np.sign``, ``np.where``, ``np.clip``, ``np.logaddexp``,
``math.log(x, base)``, ``np.conjugate``), ``is`` tests of None and the identity markers
(``stop_gradient``): handlers of ``calls.TABLE``.  (Bitwise operators: ``bitwise.py``.)"""
from __future__ import annotations

import builtins
import cmath
import math
import operator

import numpy as np
from llvmlite import ir as ll
import s2s_runtime as rt


from ....rules.registry import identity_primitives, result_check
from ..values import arrays as A
from ..values import overlap
from ..numerics import reductions as R
from ..values import complex_math as CX
from ..values import scalars as S
from ..typing import types as T
from .calls import array_types, elem_type, lifted_type, map_elementwise, all_numeric, register


# -- arithmetic ------------------------------------------------------------------------
class Arith:
    """``a op b`` (operators, their in-place forms and the numpy ufuncs)."""

    def __init__(self, ops):
        self.ops = ops

    def maps_elements(self, fn):  # (calls.maps_elements) not the in-place forms
        return fn not in _INPLACE

    def type(self, fn, types, kw, loc):
        if len(types) != 2 or kw or not all_numeric(types):
            return None
        op = self.ops[fn]
        st = S.arith_type(op, elem_type(types[0]), elem_type(types[1]))
        if fn in _INPLACE and isinstance(types[0], T.Array):
            return types[0]
        return lifted_type(types, st)

    def lower(self, L, fn, vals, kw, rtype):
        op = self.ops[fn]
        st = S.arith_type(op, elem_type(vals[0][1]), elem_type(vals[1][1]))
        # Python's errors for an operator on two Python numbers (numpy's inf/nan for numpy
        # scalars and arrays, whose elements are numpy scalars: never checked there)
        python = fn in _PYTHON_OPS and st.weak and not isinstance(rtype, T.Array)
        ints = all(elem_type(t).dtype in ("i8", "b1") for _, t in vals)

        def scalar(values, types):
            a, c = (S.convert(L, v, t, st) for v, t in zip(values, types))
            return S.binary(L, op, a, c, st, python=python, ints=ints)

        if fn in _INPLACE and isinstance(vals[0][1], T.Array):
            def write(operand):  # read from a copy where it overlaps the target otherwise
                A.elementwise(L, lambda items: (scalar([v for v, _ in items],
                                                       [t for _, t in items]), st),
                              [vals[0], (operand, vals[1][1])], rtype.dtype, out=vals[0])
            overlap.operand_guarded(L, *vals[0], *vals[1], write)
            return vals[0][0]
        return map_elementwise(L, vals, rtype, scalar)


_INPLACE = {operator.iadd, operator.isub, operator.imul, operator.itruediv,
            operator.ifloordiv, operator.imod, operator.ipow}
#: the operators that keep Python's semantics on Python numbers (``rt.power``, the ``**``
#: of derivative code, and the numpy ufuncs keep numpy's)
_PYTHON_OPS = {operator.truediv, operator.floordiv, operator.mod, operator.pow,
               operator.itruediv, operator.ifloordiv, operator.imod, operator.ipow}
_NP_ARITH = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "truediv",
             np.floor_divide: "floordiv", np.remainder: "mod", np.power: "pow"}
ARITHMETIC = register(Arith({**S.ARITH, **_NP_ARITH}), *S.ARITH, *_NP_ARITH)


class DivMod:
    """``divmod(a, b)`` of two numbers: ``(a // b, a % b)`` (Python's ``ZeroDivisionError``
    for Python numbers, numpy's values for numpy scalars); ``np.divmod(a, b)`` of arrays
    and numbers: the pair ``(np.floor_divide(a, b), np.remainder(a, b))``, broadcast, in
    the promoted dtype (numpy's values for a zero divisor, never an error)."""

    def type(self, fn, types, kw, loc):
        if len(types) != 2 or kw or not all_numeric(types):
            return None
        st = S.arith_type("floordiv", *map(elem_type, types))
        if st.dtype == "c16" or (fn is builtins.divmod and array_types(types)):
            return None
        if fn is np.divmod:
            st = T.Scalar(st.dtype)  # numpy scalars, or arrays
        return T.Tuple((lifted_type(types, st),) * 2)

    def lower(self, L, fn, vals, kw, rtype):
        st = elem_type(rtype.items[0])
        if fn is builtins.divmod and st.weak:
            c = S.convert(L, vals[1][0], vals[1][1], st)
            S.check_divisor(L, "divmod", c, st, ints=st.dtype == "i8")

        def part(k):
            def scalar(values, types):
                a, c = (S.convert(L, v, t, st) for v, t in zip(values, types))
                q, r = S.int_divmod(L, a, c) if st.dtype == "i8" else \
                    S.float_divmod(L, a, c, st)
                return (q, r)[k]
            return map_elementwise(L, vals, rtype.items[k], scalar)

        out = ll.Constant(rtype.llvm(), None)
        return L.b.insert_value(L.b.insert_value(out, part(0), 0), part(1), 1)


register(DivMod(), builtins.divmod, np.divmod)


class FloatParts:
    """``math.modf(x)`` ``(fractional, integral)`` and ``math.frexp(x)`` ``(m, e)`` with
    ``x = m * 2**e``, ``0.5 <= |m| < 1`` (floats; ``e`` an int; C's ``modf``/``frexp``,
    as CPython: ``frexp(inf) == (inf, 0)``, ``modf(inf) == (0.0, inf)``), and ``np.modf``
    of arrays and numbers (float64, float32 kept); ``frexp_scale(x)``, the derivative
    helper ``2**-e`` (float64; 1.0 where ``x`` is not finite, where ``e`` is 0)."""

    def type(self, fn, types, kw, loc):
        if len(types) != 1 or kw or not all_numeric(types) or elem_type(types[0]).dtype == "c16":
            return None
        if fn is rt.frexp_scale:
            return lifted_type(types, T.FLOAT if not array_types(types) else T.Scalar("f8"))
        if fn is np.modf:
            ft = T.Scalar("f4" if elem_type(types[0]).dtype == "f4" else "f8")
            return T.Tuple((lifted_type(types, ft),) * 2)
        if array_types(types):
            return None
        return T.Tuple((T.FLOAT, T.FLOAT if fn is math.modf else T.INT))

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        ft = elem_type(rtype.items[0]) if fn is not rt.frexp_scale else T.F64T
        name = "modf" if fn is np.modf or fn is math.modf else "frexp"
        other = T.I32 if name == "frexp" else ft.llvm()
        cname = name + ("f" if ft.dtype == "f4" else "")
        cfn = L.module.globals.get(cname) or ll.Function(
            L.module, ll.FunctionType(ft.llvm(), [ft.llvm(), other.as_pointer()]), cname)
        slot = L.entry_alloca(other, "parts." + name)

        def both(x, xt):
            x = S.convert(L, x, xt, ft)
            first = b.call(cfn, [x, slot])
            second = b.load(slot)
            if name == "frexp":  # CPython: (x, 0) for inf and nan, C leaves e unspecified
                finite = b.fcmp_ordered("<", S.math1(L, "fabs", x, ft),
                                        ll.Constant(ft.llvm(), math.inf))
                return first, b.select(finite, b.sext(second, T.I64), A.ZERO)
            return first, second

        if fn is rt.frexp_scale:
            ldexp = L.module.globals.get("ldexp") or ll.Function(
                L.module, ll.FunctionType(T.F64, [T.F64, T.I32]), "ldexp")
            return map_elementwise(L, vals, rtype, lambda values, types: b.call(ldexp, [
                ll.Constant(T.F64, 1.0), b.trunc(b.neg(both(values[0], types[0])[1]), T.I32)]))
        if name == "modf":
            def part(k):
                return map_elementwise(L, vals, rtype.items[k],
                            lambda values, types: both(values[0], types[0])[k])
            first, second = part(0), part(1)
        else:
            first, second = both(*vals[0])
        out = ll.Constant(rtype.llvm(), None)
        return b.insert_value(b.insert_value(out, first, 0), second, 1)


register(FloatParts(), math.modf, math.frexp, np.modf, rt.frexp_scale)


class Compare:
    def __init__(self, ops):
        self.ops = ops

    def maps_elements(self, fn):  # (calls.maps_elements)
        return True

    def type(self, fn, types, kw, loc):
        if len(types) != 2 or kw or not all_numeric(types):
            return None
        a, c = elem_type(types[0]), elem_type(types[1])
        return lifted_type(types, T.Scalar("b1", a.weak and c.weak and not array_types(types)))

    def lower(self, L, fn, vals, kw, rtype):
        st = T.promote(elem_type(vals[0][1]), elem_type(vals[1][1]))

        def scalar(values, types):
            a, c = (S.convert(L, v, t, st) for v, t in zip(values, types))
            return S.compare(L, self.ops[fn], a, c, st)

        return map_elementwise(L, vals, rtype, scalar)


_NP_COMPARE = {np.less: "<", np.less_equal: "<=", np.greater: ">", np.greater_equal: ">=",
               np.equal: "==", np.not_equal: "!="}
register(Compare({**S.COMPARE, **_NP_COMPARE}), *S.COMPARE, *_NP_COMPARE)


class Unary:
    """``-x``, ``+x``, ``abs(x)``, ``not x`` and their numpy forms (``not`` of a list too:
    whether it is empty)."""

    def maps_elements(self, fn):  # (calls.maps_elements) not ``not x`` (numbers only)
        return fn is not operator.not_

    def type(self, fn, types, kw, loc):
        if fn is operator.not_ and len(types) == 1 and not kw and isinstance(types[0], T.List):
            return T.BOOL  # not of a list: it is empty
        if len(types) != 1 or kw or not all_numeric(types):
            return None
        t = elem_type(types[0])
        if fn is operator.not_:
            return None if array_types(types) else T.BOOL
        if fn in (abs, np.abs, np.fabs) and t.dtype == "c16":
            return lifted_type(types, T.Scalar("f8", t.weak))
        if fn in (operator.neg, np.negative) and t.dtype == "b1":
            return None
        if fn in (operator.neg, operator.pos, abs) and t.dtype == "b1":
            t = T.Scalar("i8", t.weak)
        return lifted_type(types, t)

    def lower(self, L, fn, vals, kw, rtype):
        if isinstance(vals[0][1], T.List):
            return L.b.not_(S.truth(L, *vals[0]))
        et = elem_type(rtype)

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

        return map_elementwise(L, vals, rtype, scalar)


register(Unary(), operator.neg, operator.pos, operator.not_, abs, np.abs, np.fabs,
         np.negative, np.positive)


# -- math functions ----------------------------------------------------------------------
_MATH = {math.sqrt: "sqrt", math.sin: "sin", math.cos: "cos", math.tan: "tan", math.exp: "exp",
         math.log: "log", math.log2: "log2", math.log10: "log10", math.tanh: "tanh",
         math.sinh: "sinh", math.cosh: "cosh", math.asin: "asin", math.acos: "acos",
         math.atan: "atan", math.asinh: "asinh", math.acosh: "acosh", math.atanh: "atanh",
         math.log1p: "log1p", math.expm1: "expm1", math.erf: "erf", math.erfc: "erfc",
         math.fabs: "fabs", math.lgamma: "lgamma", math.gamma: "tgamma",
         **({math.cbrt: "cbrt", math.exp2: "exp2"} if hasattr(math, "cbrt") else {})}
_NP_MATH = {np.sqrt: "sqrt", np.sin: "sin", np.cos: "cos", np.tan: "tan", np.exp: "exp",
            np.log: "log", np.log2: "log2", np.log10: "log10", np.tanh: "tanh", np.sinh: "sinh",
            np.cosh: "cosh", np.arcsin: "asin", np.arccos: "acos", np.arctan: "atan",
            np.arcsinh: "asinh", np.arccosh: "acosh", np.arctanh: "atanh", np.log1p: "log1p",
            np.expm1: "expm1", np.floor: "floor", np.ceil: "ceil", np.trunc: "trunc",
            np.exp2: "exp2", np.cbrt: "cbrt", np.rint: "rint",
            rt.erf: "erf", rt.erfc: "erfc"}  # rt: what batched code calls for math.erf(c)
_MATH_INT = {math.floor: "floor", math.ceil: "ceil", math.trunc: "trunc"}
def python_math_errors(L, fn, x, y):
    """Raise what CPython's ``math`` module raises for ``y = fn(x)`` (f8 values), as
    ``fn``'s record states it (``rules.registry.result_check``, the checks of
    ``s2s_runtime.math_checks``): ``ValueError("math domain error")`` for a nan result
    of a number, and for an infinite result of a finite number
    ``OverflowError("math range error")`` where that is an overflow
    (``math_range_checked``; ``gamma_checked`` away from the poles), else ``ValueError``
    (a pole: ``log1p(-1)``, ``atanh(1)``, ``lgamma(0)``)."""
    b = L.b
    inf = ll.Constant(T.F64, math.inf)
    is_nan = b.fcmp_unordered("uno", y, y)
    x_number = b.fcmp_ordered("ord", x, x)
    L.check(b.and_(is_nan, x_number), ValueError, "math domain error")
    y_inf = b.fcmp_ordered("==", S.math1(L, "fabs", y, T.F64T), inf)
    x_finite = b.fcmp_ordered("<", S.math1(L, "fabs", x, T.F64T), inf)
    blown = b.and_(y_inf, x_finite)
    check = result_check(fn)
    if check is rt.gamma_checked:
        pole = b.and_(b.fcmp_ordered("<=", x, ll.Constant(T.F64, 0.0)),
                      b.fcmp_ordered("==", S.math1(L, "floor", x, T.F64T), x))
        L.check(b.and_(blown, pole), ValueError, "math domain error")
        L.check(blown, OverflowError, "math range error")
    elif check is rt.math_range_checked:
        L.check(blown, OverflowError, "math range error")
    else:
        L.check(blown, ValueError, "math domain error")


class Math1:
    def maps_elements(self, fn):  # (calls.maps_elements) numpy's; math's take numbers
        return fn in _NP_MATH

    def type(self, fn, types, kw, loc):
        if len(types) != 1 or kw or not all_numeric(types):
            return None
        t = elem_type(types[0])
        if t.dtype == "c16":  # numpy's complex functions (values/complex_math.py)
            return lifted_type(types, T.Scalar("c16")) \
                if _NP_MATH.get(fn) in CX.FUNCTIONS else None
        if fn in _MATH:
            return None if array_types(types) else T.FLOAT
        if fn in _MATH_INT:
            return None if array_types(types) else T.INT
        return lifted_type(types, T.Scalar("f4" if t.dtype == "f4" else "f8"))

    def lower(self, L, fn, vals, kw, rtype):
        name = _MATH.get(fn) or _NP_MATH.get(fn) or _MATH_INT[fn]
        ft = T.F64T if fn in _MATH or fn in _MATH_INT else elem_type(rtype)

        def scalar(values, types):
            if ft.dtype == "c16":
                return CX.complex1(L, name, S.convert(L, values[0], types[0], ft))
            x = S.convert(L, values[0], types[0], ft)
            if fn in (math.sqrt, math.log) or name in ("log", "sqrt") and fn in _MATH:
                check = "<" if name == "sqrt" else "<="
                L.check(L.b.fcmp_ordered(check, x, ll.Constant(T.F64, 0.0)), ValueError,
                        "math domain error")
            y = S.math1(L, name, x, ft)
            if fn in _MATH and fn not in (math.sqrt, math.log, math.fabs):
                python_math_errors(L, fn, x, y)
            return S.int_of_float(L, y, T.F64T) if fn in _MATH_INT else y

        return map_elementwise(L, vals, rtype, scalar)


# math.log: Elementwise below (one argument or two), which hands it one argument here
_MATH1 = register(Math1(), *(f for f in _MATH if f is not math.log), *_NP_MATH, *_MATH_INT)

class CMath:
    """``cmath``'s functions of one number (any real or complex number, a Python complex
    result): numpy's complex formulas (``values/complex_math.py``) of the number as a
    complex, with ``cmath``'s errors as the records state them (``result_check``, the
    checks vmap runs too): ``ValueError("math domain error")`` for a nan part from an
    operand without one (``cmath.sin(inf + 0j)``), for an infinite part from a finite
    operand ``OverflowError("math range error")`` (``cmath.exp(710)``), or ``ValueError``
    at a pole (``cmath.log(0)``); ``cmath.phase`` (``atan2(imag, real)``, CPython's
    ``OverflowError`` where it underflows to 0: ``phase(1e300 + 1e-310j)``) and
    ``cmath.isnan``/``isinf``/``isfinite`` (of either part).  ``cmath.log(z, base)`` and
    the inverse functions are not compiled."""

    NAMES = {cmath.exp: "exp", cmath.log: "log", cmath.log10: "log10", cmath.sqrt: "sqrt",
             cmath.sin: "sin", cmath.cos: "cos", cmath.tan: "tan", cmath.sinh: "sinh",
             cmath.cosh: "cosh", cmath.tanh: "tanh"}
    TESTS = (cmath.isnan, cmath.isinf, cmath.isfinite)

    def type(self, fn, types, kw, loc):
        if len(types) != 1 or kw or not all_numeric(types) or array_types(types):
            return None
        return T.BOOL if fn in self.TESTS else T.FLOAT if fn is cmath.phase else T.COMPLEX

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        z = S.convert(L, vals[0][0], vals[0][1], T.Scalar("c16"))
        x, y = b.extract_value(z, 0), b.extract_value(z, 1)
        inf = ll.Constant(T.F64, math.inf)

        def any_part(test):
            return b.or_(test(x), test(y))

        def isnan(v):
            return b.fcmp_unordered("uno", v, v)

        def isinf(v):
            return b.fcmp_ordered("==", S.math1(L, "fabs", v, T.F64T), inf)

        def finite(v):
            return b.fcmp_ordered("<", S.math1(L, "fabs", v, T.F64T), inf)

        if fn is cmath.phase:  # CPython checks errno: atan2 underflowing to 0 is ERANGE
            phi = S.math2(L, "atan2", y, x, T.F64T)
            zero = ll.Constant(T.F64, 0.0)
            L.check(b.and_(b.and_(b.fcmp_ordered("==", phi, zero), b.fcmp_ordered("!=", y, zero)),
                           finite(x)), OverflowError, "math range error")
            return phi
        if fn is cmath.isnan:
            return any_part(isnan)
        if fn is cmath.isinf:
            return any_part(isinf)
        if fn is cmath.isfinite:
            return b.and_(finite(x), finite(y))
        w = CX.complex1(L, self.NAMES[fn], z)
        u, v = b.extract_value(w, 0), b.extract_value(w, 1)
        for (ca, cb), (cu, cv) in _cmath_nan_cells(fn):  # CPython's own special values
            hit = b.and_(_in_class(L, x, ca), _in_class(L, y, cb))
            u = b.select(hit, ll.Constant(T.F64, cu), u)
            v = b.select(hit, ll.Constant(T.F64, cv), v)
        w = S.make_complex(b, u, v)
        L.check(b.and_(b.or_(isnan(u), isnan(v)), b.not_(any_part(isnan))), ValueError,
                "math domain error")
        blown = b.and_(b.or_(isinf(u), isinf(v)), b.and_(finite(x), finite(y)))
        if result_check(fn) is rt.math_range_checked:
            L.check(blown, OverflowError, "math range error")
        else:
            L.check(blown, ValueError, "math domain error")
        return w


register(CMath(), *CMath.NAMES, *CMath.TESTS, cmath.phase)

#: one number of each class of CPython's cmath special-value tables (``special_type``)
_CLASSES = (-math.inf, -1.0, -0.0, 0.0, 1.0, math.inf, math.nan)


def _cmath_nan_cells(fn):
    """The cells of ``fn``'s special-value table with a nan part in the operand, as
    CPython's ``cmath`` gives them (read from it): ``((class_re, class_im), (re, im))``.
    numpy's (glibc's) values differ there in signs of zeros (``cmath.sin(nan + 0j)`` is
    ``nan - 0j``, numpy's ``nan + 0j``) or zeros for nan (``cmath.tan(nan + 0j)``)."""
    cells = []
    for a in _CLASSES:
        for c in _CLASSES:
            if not (math.isnan(a) or math.isnan(c)):
                continue
            w = fn(complex(a, c))  # (no error: a nan operand never raises)
            cells.append(((a, c), (w.real, w.imag)))
    return cells


def _in_class(L, v, rep):
    """Whether the float64 ``v`` is in ``rep``'s class of ``_CLASSES`` (zeros by sign)."""
    b = L.b
    if math.isnan(rep):
        return b.fcmp_unordered("uno", v, v)
    if math.isinf(rep) or rep == 0.0:
        same = b.fcmp_ordered("==", v, ll.Constant(T.F64, rep))
        if rep != 0.0:
            return same
        negative = b.icmp_signed("<", b.bitcast(v, T.I64), ll.Constant(T.I64, 0))
        return b.and_(same, negative if math.copysign(1.0, rep) < 0 else b.not_(negative))
    inside = b.fcmp_ordered("<", S.math1(L, "fabs", v, T.F64T), ll.Constant(T.F64, math.inf))
    return b.and_(inside, b.fcmp_ordered("<" if rep < 0 else ">", v, ll.Constant(T.F64, 0.0)))

_MATH2 = {math.pow: "pow", math.atan2: "atan2", math.hypot: "hypot", math.copysign: "copysign",
          math.fmod: "fmod", np.arctan2: "atan2", np.hypot: "hypot", np.copysign: "copysign",
          np.fmod: "fmod", np.maximum: "maximum", np.minimum: "minimum",
          math.nextafter: "nextafter", np.nextafter: "nextafter"}


def python_math2_errors(L, fn, a, c, y):
    """What CPython raises for ``y = math.pow(a, c)`` / ``math.fmod(a, c)`` (f8 values):
    ``ValueError("math domain error")`` for a nan result of two numbers
    (``pow(-8, 1/3)``, ``fmod(x, 0)``, ``fmod(inf, x)``); for an infinite ``pow`` of two
    finite numbers ``ValueError`` when ``a`` is 0 (a pole), else
    ``OverflowError("math range error")``."""
    b = L.b
    inf = ll.Constant(T.F64, math.inf)
    numbers = b.and_(b.fcmp_ordered("ord", a, a), b.fcmp_ordered("ord", c, c))
    L.check(b.and_(b.fcmp_unordered("uno", y, y), numbers), ValueError, "math domain error")
    if fn is math.pow:
        finite = b.and_(b.fcmp_ordered("<", S.math1(L, "fabs", a, T.F64T), inf),
                        b.fcmp_ordered("<", S.math1(L, "fabs", c, T.F64T), inf))
        blown = b.and_(b.fcmp_ordered("==", S.math1(L, "fabs", y, T.F64T), inf), finite)
        L.check(b.and_(blown, b.fcmp_ordered("==", a, ll.Constant(T.F64, 0.0))), ValueError,
                "math domain error")
        L.check(blown, OverflowError, "math range error")


class Math2:
    def maps_elements(self, fn):  # (calls.maps_elements) numpy's; math's take numbers
        return fn.__class__ is np.ufunc

    def type(self, fn, types, kw, loc):
        if len(types) != 2 or kw or not all_numeric(types):
            return None
        if any(elem_type(t).dtype == "c16" for t in types):
            return None
        if fn in (np.maximum, np.minimum):
            return lifted_type(types, T.promote(*map(elem_type, types)))
        if fn.__class__ is not np.ufunc:
            return None if array_types(types) else T.FLOAT
        st = T.promote(*map(elem_type, types))
        return lifted_type(types, T.Scalar("f4" if st.dtype == "f4" else "f8"))

    def lower(self, L, fn, vals, kw, rtype):
        name = _MATH2[fn]
        ft = elem_type(rtype) if fn.__class__ is np.ufunc else T.F64T

        def scalar(values, types):
            a, c = (S.convert(L, v, t, ft) for v, t in zip(values, types))
            if name in ("maximum", "minimum"):
                return S.min_max(L, name[:3], a, c, ft, propagate_nan=True)
            y = S.math2(L, name, a, c, ft)
            if fn in (math.pow, math.fmod):
                python_math2_errors(L, fn, a, c, y)
            return y

        return map_elementwise(L, vals, rtype, scalar)


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
    """``float(x)``, ``int(x)``, ``bool(x)``, ``complex(x)``, ``np.float64(x)``, ...;
    ``complex(re, im)`` of two real numbers: the complex number with exactly those parts
    (CPython sets them, no arithmetic: ``complex(inf, 1.0)`` is ``inf+1j``, ``-0.0``
    stays); of a complex operand it is not compiled."""

    TARGET = {float: T.FLOAT, int: T.INT, bool: T.BOOL, complex: T.COMPLEX,
              np.float64: T.Scalar("f8"), np.float32: T.Scalar("f4"),
              np.int64: T.Scalar("i8"), np.bool_: T.Scalar("b1"),
              np.complex128: T.Scalar("c16")}

    def type(self, fn, types, kw, loc):
        if fn is complex and len(types) == 2 and not kw:
            real = all(isinstance(t, T.Scalar) and t.dtype != "c16" for t in types)
            return T.COMPLEX if real else None
        if kw or len(types) != 1 or not isinstance(types[0], T.Scalar):
            if fn in (np.float64, np.float32, np.int64, np.bool_, np.complex128) \
                    and len(types) == 1 and isinstance(types[0], T.Array) and not kw:
                return T.Array(self.TARGET[fn].dtype, types[0].ndim)
            return None
        if types[0].dtype == "c16" and fn not in (complex, np.complex128, bool, np.bool_):
            return None
        return self.TARGET[fn]

    def lower(self, L, fn, vals, kw, rtype):
        if len(vals) == 2:  # complex(re, im) of real numbers
            re, im = (S.convert(L, v, t, T.F64T) for v, t in vals)
            return S.make_complex(L.b, re, im)
        v, t = vals[0]
        if fn is int and t.dtype in ("f4", "f8"):  # Python's int(): nan, inf raise
            return S.int_of_float(L, v, t)
        return S.convert(L, v, t, rtype)


register(Cast(), *Cast.TARGET)


class ComplexOf:
    """``rt.batch_complex(re, im)`` (what vmap makes of ``complex(re, im)``): elementwise
    over the broadcast operands, the complex128 numbers with exactly those real and
    imaginary parts (real operands; a complex one is not compiled)."""

    def maps_elements(self, fn):
        return True

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not all_numeric(types) or \
                any(elem_type(t).dtype == "c16" for t in types):
            return None
        return lifted_type(types, T.Scalar("c16"))

    def lower(self, L, fn, vals, kw, rtype):
        def scalar(values, types):
            re, im = (S.convert(L, v, t, T.F64T) for v, t in zip(values, types))
            return S.make_complex(L.b, re, im)

        return map_elementwise(L, vals, rtype, scalar)


register(ComplexOf(), rt.batch_complex)


# -- other elementwise functions and operators -----------------------------------------------------
class Elementwise:
    """Elementwise functions written with the scalar helpers: ``np.square``,
    ``np.sign``, ``np.logaddexp``, ``np.where``, ``np.clip``, ``math.log(x, base)``,
    ``np.reciprocal`` (``1 / x`` of floats; numpy's integer reciprocal is not compiled)."""

    ARITY = {np.square: (1,), np.sign: (1,), np.logaddexp: (2,), np.where: (3,),
             np.clip: (3,), math.log: (1, 2), np.reciprocal: (1,)}

    def maps_elements(self, fn):  # (calls.maps_elements) math.log takes numbers
        return fn is not math.log

    def type(self, fn, types, kw, loc):
        if fn is math.log and len(types) == 1:
            return _MATH1.type(fn, types, kw, loc)
        if kw or len(types) not in self.ARITY[fn] or not all_numeric(types):
            return None
        if any(elem_type(t).dtype == "c16" for t in types):
            return None
        if fn is math.log:
            return None if array_types(types) else T.FLOAT
        if fn is np.where:
            return lifted_type(types, T.promote(elem_type(types[1]), elem_type(types[2])))
        st = T.promote(*map(elem_type, types))
        if fn is np.logaddexp:
            st = T.Scalar("f4" if st.dtype == "f4" else "f8")
        if fn is np.square and st.dtype == "b1":
            return None
        if fn is np.sign and st.dtype == "b1":
            return None
        if fn is np.reciprocal and st.dtype not in ("f4", "f8"):
            return None
        return lifted_type(types, T.Scalar(st.dtype))

    def lower(self, L, fn, vals, kw, rtype):
        if fn is math.log and len(vals) == 1:
            return _MATH1.lower(L, fn, vals, kw, rtype)
        et = elem_type(rtype)
        b = L.b

        def scalar(values, types):
            if fn is np.where:
                test = S.truth(L, values[0], types[0])
                x, y = (S.convert(L, v, t, et) for v, t in zip(values[1:], types[1:]))
                return b.select(test, x, y)
            xs = [S.convert(L, v, t, et) for v, t in zip(values, types)]
            if fn is np.square:
                return S.binary(L, "mul", xs[0], xs[0], et)
            if fn is np.reciprocal:
                return b.fdiv(L.const(1, et), xs[0])
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

        return map_elementwise(L, vals, rtype, scalar)


register(Elementwise(), *Elementwise.ARITY)  # math.log(x) and math.log(x, base) too


class NoneTest:
    """``x is None`` / ``x is not None`` where one side's type is ``None``: known from the
    types, a compile-time flag (a compiled variable holds values of one type), except for
    an array ``x``: true while it holds the None it started as (its data pointer null;
    an array's own never is: allocation failures raise ``MemoryError``)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not any(isinstance(t, T.NoneType) for t in types):
            return None
        if any(isinstance(t, T.Array) for t in types):
            return T.BOOL
        same = all(isinstance(t, T.NoneType) for t in types)  # known when compiling:
        return T.Static(same == (fn is operator.is_))  # an if on it compiles one branch

    def lower(self, L, fn, vals, kw, rtype):
        arrays = [v for v, t in vals if isinstance(t, T.Array)]
        if arrays:  # an array variable still holding the None it started as
            null = A.holds_none(L, arrays[0])
            return null if fn is operator.is_ else L.b.not_(null)
        same = all(isinstance(t, T.NoneType) for _, t in vals)
        return ll.Constant(ll.IntType(1), int(same == (fn is operator.is_)))


register(NoneTest(), operator.is_, operator.is_not)


class Conjugate:
    def maps_elements(self, fn):  # (calls.maps_elements)
        return True

    def type(self, fn, types, kw, loc):
        return types[0] if len(types) == 1 and not kw and all_numeric(types) else None

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if elem_type(t).dtype != "c16":
            return v
        def scalar(values, types):
            z = values[0]
            return L.b.insert_value(z, L.b.fneg(L.b.extract_value(z, 1)), 1)
        return map_elementwise(L, vals, rtype, scalar)


register(Conjugate(), np.conjugate, np.conj)


class Identity:
    """Primitives whose rule says ``identity`` (``stop_gradient``): the argument's value,
    of any type (numbers, arrays, tuples)."""

    def type(self, fn, types, kw, loc):
        return types[0] if len(types) == 1 and not kw else None

    def lower(self, L, fn, vals, kw, rtype):
        return vals[0][0]


register(Identity(), *identity_primitives())
