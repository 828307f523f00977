"""The gamma family elementwise (numbers and arrays, numpy broadcasting): SciPy's
``gammaln``, ``digamma`` (``psi``) and ``polygamma``, and s2s_runtime's ``lgamma``,
``gamma``, ``digamma`` and ``polygamma`` (what batched and derivative code calls for
``math.lgamma``/``math.gamma`` and their derivatives); handlers of ``calls.TABLE``.

Each computes in float64 and keeps its own function's conventions:

* ``scipy.special.gammaln(x)`` = log|Gamma(x)| (libm ``lgamma``), with SciPy's values:
  +inf at the poles and where 1/x overflows (|x| < 2^-1024), -inf at -inf; float32 in,
  float32 out (rounded from float64), other real dtypes float64.
* ``scipy.special.digamma(x)`` = psi(x) (``numerics.gamma.digamma``: -inf at +0, +inf at
  -0, nan at negative integers and -inf); dtypes as ``gammaln``.
* ``scipy.special.polygamma(n, x)`` = psi^(n)(x) for integer ``n`` (SciPy's
  where(n == 0, psi(x), (-1)^(n+1) n! zeta(n+1, x)): +-inf at the poles for n >= 1, nan
  for n < 0; float64, where n = 0 gives psi in x's float type, as SciPy).
* ``s2s_runtime.lgamma``/``gamma``: ``math.lgamma``/``math.gamma`` of each element, as
  float64, raising what they raise (``ValueError`` at the poles, ``OverflowError``).
* ``s2s_runtime.digamma``/``polygamma``: as SciPy's, float64, but nan at every pole
  x = 0, -1, -2, ... (and -inf); ``polygamma`` raises ``ValueError`` for n < 0.
"""
from __future__ import annotations

import math

from llvmlite import ir as ll

import s2s_runtime as rt

from ..numerics import gamma as G
from ..typing import types as T
from ..values import scalars as S
from .calls import all_numeric, elem_type, lifted_type, map_elementwise, register
from .numbers import python_math_errors

try:
    import scipy.special as scipy_special
except ImportError:  # pragma: no cover - scipy is in the test extra
    scipy_special = None

#: the functions of one argument x and of two (n, x); SciPy's keep float32
ONE_ARGUMENT = [rt.lgamma, rt.gamma, rt.digamma]
TWO_ARGUMENTS = [rt.polygamma]
KEEPS_FLOAT32 = []
if scipy_special is not None:
    ONE_ARGUMENT += [scipy_special.gammaln, scipy_special.digamma]
    TWO_ARGUMENTS += [scipy_special.polygamma]
    KEEPS_FLOAT32 += [scipy_special.gammaln, scipy_special.digamma]

_NAN = ll.Constant(T.F64, math.nan)
_INF = ll.Constant(T.F64, math.inf)


def is_pole(L, x):
    """Whether the float64 ``x`` is 0, a negative integer or -inf (Gamma's poles)."""
    b = L.b
    return b.and_(b.fcmp_ordered("<=", x, ll.Constant(T.F64, 0.0)),
                  b.fcmp_ordered("==", S.math1(L, "floor", x, T.F64T), x))


class GammaFamily:
    """``gammaln``, ``digamma``, ``polygamma``, ``lgamma``, ``gamma``: see the module."""

    def maps_elements(self, fn):  # (calls.maps_elements)
        return True

    def type(self, fn, types, kw, loc):
        arity = 2 if fn in TWO_ARGUMENTS else 1
        if kw or len(types) != arity or not all_numeric(types):
            return None
        dtypes = [elem_type(t).dtype for t in types]
        if "c16" in dtypes or (arity == 2 and dtypes[0] not in ("i8", "b1")):
            return None  # complex arguments; an order n that is not an integer
        keeps = fn in KEEPS_FLOAT32 and dtypes[0] == "f4"
        return lifted_type(types, T.Scalar("f4" if keeps else "f8"))

    def lower(self, L, fn, vals, kw, rtype):
        out = elem_type(rtype)

        def scalar(values, types):
            x = S.convert(L, values[-1], types[-1], T.F64T)
            if fn in TWO_ARGUMENTS:
                n = S.convert(L, values[0], types[0], T.INT)
                y = self.polygamma(L, fn, n, x, float32=types[-1].dtype == "f4")
            else:
                y = self.one_argument(L, fn, x)
            return S.convert(L, y, T.F64T, out)

        return map_elementwise(L, vals, rtype, scalar)

    @staticmethod
    def one_argument(L, fn, x):
        b = L.b
        if fn is rt.lgamma or fn is rt.gamma:
            y = S.math1(L, "lgamma" if fn is rt.lgamma else "tgamma", x, T.F64T)
            python_math_errors(L, math.lgamma if fn is rt.lgamma else math.gamma, x, y)
            return y
        if fn is rt.digamma:
            return b.select(is_pole(L, x), _NAN, b.call(G.digamma(L.module), [x]))
        if fn is scipy_special.digamma:
            return b.call(G.digamma(L.module), [x])
        # gammaln: SciPy's lgamma is +inf where 1/x overflows, -inf at -inf
        y = S.math1(L, "lgamma", x, T.F64T)
        tiny = b.fcmp_ordered("==", S.math1(L, "fabs", b.fdiv(ll.Constant(T.F64, 1.0), x),
                                            T.F64T), _INF)
        y = b.select(tiny, _INF, y)
        return b.select(b.fcmp_ordered("==", x, ll.Constant(T.F64, -math.inf)),
                        ll.Constant(T.F64, -math.inf), y)

    @staticmethod
    def polygamma(L, fn, n, x, float32):
        b = L.b
        y = b.call(G.polygamma(L.module), [n, x])
        if fn is rt.polygamma:
            L.check(b.icmp_signed("<", n, ll.Constant(T.I64, 0)), ValueError,
                    "polygamma: n must be a non-negative integer, got {0}", ints=[n])
            return b.select(is_pole(L, x), _NAN, y)
        if float32:  # SciPy: psi of a float32 x is float32 (n = 0)
            rounded = b.fpext(b.fptrunc(y, T.F32), T.F64)
            y = b.select(b.icmp_signed("==", n, ll.Constant(T.I64, 0)), rounded, y)
        return y


register(GammaFamily(), *ONE_ARGUMENT, *TWO_ARGUMENTS)
