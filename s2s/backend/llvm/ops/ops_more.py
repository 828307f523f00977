"""More elementwise functions (``np.square``, ``np.sign``, ``np.where``, ``np.clip``,
``np.logaddexp``, ``math.log(x, base)``), ``reversed(range)``, bitwise operators on
flags and ints, ``np.conjugate``, the identity markers (``stop_gradient``): handlers of ``calls.TABLE``."""
from __future__ import annotations

import math
import operator

import numpy as np
from llvmlite import ir as ll


from ....rules.registry import identity_primitives
from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T
from .calls import _arrays, _elem, _lift, _map, _numeric, register
from .numbers import _MATH1


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


register(Elementwise(), *Elementwise.ARITY)  # math.log(x) and math.log(x, base) too


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


class NoneTest:
    """``x is None`` / ``x is not None`` where one side's type is ``None``: known from the
    types, a constant (a compiled variable holds values of one type)."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not any(isinstance(t, T.NoneType) for t in types):
            return None
        return T.BOOL

    def lower(self, L, fn, vals, kw, rtype):
        same = all(isinstance(t, T.NoneType) for _, t in vals)
        return ll.Constant(ll.IntType(1), int(same == (fn is operator.is_)))


register(NoneTest(), operator.is_, operator.is_not)


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


class Identity:
    """Primitives whose rule says ``identity`` (``stop_gradient``): the argument's value,
    of any type (numbers, arrays, tuples)."""

    def type(self, fn, types, kw, loc):
        return types[0] if len(types) == 1 and not kw else None

    def lower(self, L, fn, vals, kw, rtype):
        return vals[0][0]


register(Identity(), *identity_primitives())
