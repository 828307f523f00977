"""numpy's elementwise functions of complex128 numbers in LLVM IR, with numpy's values.

``complex1(L, name, z)`` computes ``np.<name>(z)`` for a complex128 ``z`` (an LLVM
``{double, double}``) from the real functions ``scalars.math1``/``math2`` already call (LLVM
intrinsics and the C library), with the formulas of C99's Annex G as FreeBSD's msun writes
them (the library numpy calls: glibc's ``cexp``/``clog``/``csqrt``/``csinh``/...), so the
values agree with numpy's to a few ulps, special values (zeros, infinities, nan) and the
branch cuts (the negative real axis, the sign of a zero imaginary part picking the side)
included:

* ``exp``: ``e^x (cos y + i sin y)`` (``e^x`` for ``y = 0``, keeping ``y``'s zero; for
  ``x > 709`` as ``(e^(x/2) cos y) e^(x/2)``, finite where the product is; an infinite or
  nan ``y``: ``inf + nan i`` for ``x = +inf``, ``0`` for ``x = -inf``, else nan);
* ``log``: ``log|z| + i atan2(y, x)``, ``log|z|`` as ``log1p(|z|^2 - 1) / 2`` where
  ``max(|x|, |y|)`` is in ``[0.5, 2]`` (``|z|^2 - 1`` summed exactly from the fma-split
  squares: no cancellation near the unit circle); ``log2``/``log10``: that times
  ``log2 e``/``log10 e`` (numpy's ``nc_log2``/``nc_log10``);
* ``sqrt``: Algorithm 312 (CACM 1967) as msun's ``csqrt``: ``t = sqrt((|x| + |z|) / 2)``,
  ``t + i y / 2t`` for ``x >= 0``, ``|y| / 2t + i copysign(t, y)`` else; operands scaled
  by 1/4 near overflow and by 2^600 when tiny;
* ``sinh``/``cosh``: ``sinh x cos y + i cosh x sin y`` / ``cosh x cos y + i sinh x sin y``
  (``e^|x| / 2`` in place of ``cosh x`` for ``|x| >= 22``, scaled as ``exp``'s past 709);
  ``sin z = -i sinh(iz)``, ``cos z = cosh(iz)``;
* ``tanh``: msun's ``ctanh`` (Kahan's ``t = tan y``, ``beta = 1 + t^2``, ``s = sinh x``:
  ``(beta s sqrt(1 + s^2) + i t) / (1 + beta s^2)``; ``+-1 + i 4 sin y cos y e^-2|x|``
  for ``|x| >= 22``); ``tan z = -i tanh(iz)``;
* ``expm1``/``log1p``: numpy's own formulas (``nc_expm1``: ``expm1(x) cos y -
  2 sin^2(y/2) + i e^x sin y``; ``nc_log1p``: ``log|1 + z| + i atan2(y, 1 + x)``).
"""
from __future__ import annotations

import math

from llvmlite import ir as ll

from ..typing import types as T
from .scalars import intrinsic, libm, make_complex, math1, math2

#: the numpy function names (``ops/numbers._NP_MATH``'s) computed here for complex numbers
FUNCTIONS = frozenset({"exp", "log", "log2", "log10", "sqrt", "sin", "cos", "tan", "sinh",
                       "cosh", "tanh", "expm1", "log1p"})

_F = T.F64T


def _c(v):
    return ll.Constant(T.F64, v)


class _Ops:
    """Short names for the float64 operations of one formula."""

    def __init__(self, L):
        self.L, self.b = L, L.b

    def f(self, name, *args):
        return math1(self.L, name, args[0], _F) if len(args) == 1 else \
            math2(self.L, name, args[0], args[1], _F)

    def fma(self, a, c, d):
        return intrinsic(self.L, "fma", T.F64, [a, c, d])

    def abs(self, a):
        return math1(self.L, "fabs", a, _F)

    def copysign(self, a, c):
        return intrinsic(self.L, "copysign", T.F64, [a, c])

    def hypot(self, a, c):
        return libm(self.L, "hypot", T.F64, [a, c])

    def atan2(self, a, c):
        return libm(self.L, "atan2", T.F64, [a, c])

    def isnan(self, a):
        return self.b.fcmp_unordered("uno", a, a)

    def isinf(self, a):
        return self.b.fcmp_ordered("==", self.abs(a), _c(math.inf))

    def finite(self, a):
        return self.b.fcmp_ordered("<", self.abs(a), _c(math.inf))

    def eq(self, a, v):
        return self.b.fcmp_ordered("==", a, _c(v) if isinstance(v, float) else v)

    def ge(self, a, v):
        return self.b.fcmp_ordered(">=", a, _c(v) if isinstance(v, float) else v)

    def sel(self, test, a, c):
        return self.b.select(test, a, c)

    def pick(self, cases, default):
        """The pair of the first ``(test, (re, im))`` of ``cases`` that holds, else ``default``."""
        re, im = default
        for test, (r, i) in reversed(cases):
            re, im = self.sel(test, r, re), self.sel(test, i, im)
        return re, im


def complex1(L, name, z):
    """``np.<name>(z)`` of the complex128 value ``z`` (``name`` in ``FUNCTIONS``)."""
    o = _Ops(L)
    b = L.b
    x, y = b.extract_value(z, 0), b.extract_value(z, 1)
    if name in ("sin", "cos", "tan"):  # sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz)
        hyper = {"sin": _sinh, "cos": _cosh, "tan": _tanh}[name]
        re, im = hyper(o, b.fneg(y), x)
        if name != "cos":
            re, im = im, b.fneg(re)
        if name == "sin":  # glibc's csin: nan + inf i where y is infinite and x is not finite
            odd = b.and_(o.isinf(y), b.not_(o.finite(x)))
            re, im = o.sel(odd, _c(math.nan), re), o.sel(odd, _c(math.inf), im)
    else:
        re, im = _FORMULAS[name](o, x, y)
    return make_complex(b, re, im)


def _exp(o, x, y):
    b = o.b
    c, s = o.f("cos", y), o.f("sin", y)
    ex = o.f("exp", x)
    re, im = _exp_times(o, x, c), _exp_times(o, x, s)
    nan = _c(math.nan)
    return o.pick([(o.eq(y, 0.0), (ex, y)),
                   (b.and_(o.eq(x, math.inf), b.not_(o.finite(y))), (_c(math.inf), nan)),
                   (b.and_(o.eq(x, -math.inf), b.not_(o.finite(y))), (_c(0.0), _c(0.0))),
                   (b.not_(o.finite(y)), (nan, nan))], (re, im))


def _exp_times(o, x, v):
    """``e^x v``, finite where it is although ``e^x`` is not (``x >= 709``): as
    ``(v e^(x/2)) e^(x/2)``, or past 1419 with four factors ``e^(x/4)`` (exact halvings:
    a few ulps)."""
    b = o.b
    h2, h4 = o.f("exp", b.fmul(x, _c(0.5))), o.f("exp", b.fmul(x, _c(0.25)))
    r2 = b.fmul(b.fmul(v, h2), h2)
    r4 = b.fmul(b.fmul(b.fmul(b.fmul(v, h4), h4), h4), h4)
    return o.sel(o.ge(x, 1419.0), r4, o.sel(o.ge(x, 709.0), r2, b.fmul(o.f("exp", x), v)))


def _two_sum(b, a, c):
    s = b.fadd(a, c)
    cc = b.fsub(s, a)
    return s, b.fadd(b.fsub(a, b.fsub(s, cc)), b.fsub(c, cc))


def _log_abs(o, x, y):
    """``log|x + iy|``: ``log1p(hi^2 + lo^2 - 1) / 2`` for ``hi = max(|x|, |y|)`` in
    ``[0.5, 2]``, the sum exact to a double-double (fma products, two-sums)."""
    b = o.b
    ax, ay = o.abs(x), o.abs(y)
    # (|z| past float64: log|z/4| + log 4)
    huge = b.or_(o.ge(ax, 1e300), o.ge(ay, 1e300))
    quarter = b.fadd(o.f("log", o.hypot(b.fmul(x, _c(0.25)), b.fmul(y, _c(0.25)))),
                     _c(math.log(4.0)))
    far = o.sel(huge, quarter, o.f("log", o.hypot(x, y)))
    hi = o.sel(b.fcmp_ordered(">=", ax, ay), ax, ay)
    lo = o.sel(b.fcmp_ordered(">=", ax, ay), ay, ax)
    p1, p2 = b.fmul(hi, hi), b.fmul(lo, lo)
    e1, e2 = o.fma(hi, hi, b.fneg(p1)), o.fma(lo, lo, b.fneg(p2))
    s, t1 = _two_sum(b, p1, _c(-1.0))
    s, t2 = _two_sum(b, s, p2)
    m1 = b.fadd(s, b.fadd(b.fadd(t1, t2), b.fadd(e1, e2)))
    near = b.fmul(_c(0.5), o.f("log1p", m1))
    unit = b.and_(o.ge(hi, 0.5), b.fcmp_ordered("<=", hi, _c(2.0)))
    return o.sel(unit, near, far)


def _log(o, x, y):
    return _log_abs(o, x, y), o.atan2(y, x)


def _scaled_log(factor):
    def log(o, x, y):
        re, im = _log(o, x, y)
        return o.b.fmul(re, _c(factor)), o.b.fmul(im, _c(factor))
    return log


_SQRT_BIG = float.fromhex("0x1.a827999fcef32p+1022")


def _sqrt(o, x, y):
    b = o.b
    big = b.or_(o.ge(o.abs(x), _SQRT_BIG), o.ge(o.abs(y), _SQRT_BIG))
    tiny = b.and_(b.fcmp_ordered("<", o.abs(x), _c(2.0 ** -1000)),
                  b.fcmp_ordered("<", o.abs(y), _c(2.0 ** -1000)))
    scale = o.sel(big, _c(0.25), o.sel(tiny, _c(2.0 ** 600), _c(1.0)))
    unscale = o.sel(big, _c(2.0), o.sel(tiny, _c(2.0 ** -300), _c(1.0)))
    a, c = b.fmul(x, scale), b.fmul(y, scale)
    t = o.f("sqrt", b.fmul(b.fadd(o.abs(a), o.hypot(a, c)), _c(0.5)))
    two_t = b.fmul(_c(2.0), t)
    pos = (t, b.fdiv(c, two_t))
    neg = (b.fdiv(o.abs(c), two_t), o.copysign(t, c))
    right = o.ge(a, 0.0)
    re = b.fmul(o.sel(right, pos[0], neg[0]), unscale)
    im = b.fmul(o.sel(right, pos[1], neg[1]), unscale)
    inf, nan = _c(math.inf), _c(math.nan)
    zero = b.and_(o.eq(x, 0.0), o.eq(y, 0.0))
    return o.pick([(zero, (_c(0.0), y)),
                   (o.isinf(y), (inf, y)),
                   (o.isnan(x), (x, nan)),
                   (o.eq(x, -math.inf), (b.fsub(y, y), o.copysign(inf, y))),  # fabs(nan) = nan
                   (o.eq(x, math.inf), (x, o.copysign(b.fsub(y, y), y))),
                   (o.isnan(y), (nan, nan))], (re, im))


def _times_big(o, x, v):
    """``v e^|x| / 2``: ``v cosh x`` (``v |sinh x|``) for ``|x| >= 22``."""
    return _exp_times(o, o.abs(x), o.b.fmul(v, _c(0.5)))


def _sinh(o, x, y):
    b = o.b
    c, s = o.f("cos", y), o.f("sin", y)
    sh, ch = o.f("sinh", x), o.f("cosh", x)
    large = o.ge(o.abs(x), 22.0)
    re = o.sel(large, _times_big(o, x, b.fmul(c, o.copysign(_c(1.0), x))), b.fmul(sh, c))
    im = o.sel(large, _times_big(o, x, s), b.fmul(ch, s))
    nan = _c(math.nan)
    yy = b.fsub(y, y)
    fx, fy = o.finite(x), o.finite(y)
    return o.pick([(b.and_(fx, o.eq(y, 0.0)), (sh, y)),
                   (b.and_(fx, fy), (re, im)),
                   (o.eq(x, 0.0), (x, yy)),            # y inf or nan
                   (o.eq(y, 0.0), (x, y)),             # x inf or nan
                   (fx, (yy, yy)),                      # y inf or nan
                   (b.and_(o.isinf(x), b.not_(fy)), (_c(math.inf), yy)),  # (glibc's +inf)
                   (o.isinf(x), (b.fmul(x, c), b.fmul(_c(math.inf), s)))],
                  (nan, nan))


def _cosh(o, x, y):
    b = o.b
    c, s = o.f("cos", y), o.f("sin", y)
    sh, ch = o.f("sinh", x), o.f("cosh", x)
    large = o.ge(o.abs(x), 22.0)
    re = o.sel(large, _times_big(o, x, c), b.fmul(ch, c))
    im = o.sel(large, _times_big(o, x, b.fmul(s, o.copysign(_c(1.0), x))), b.fmul(sh, s))
    nan = _c(math.nan)
    yy = b.fsub(y, y)
    fx, fy = o.finite(x), o.finite(y)
    return o.pick([(b.and_(fx, o.eq(y, 0.0)), (ch, b.fmul(x, y))),
                   (b.and_(fx, fy), (re, im)),
                   (o.eq(x, 0.0), (yy, _c(0.0))),     # y inf or nan (glibc's +0)
                   (b.and_(o.isnan(x), o.eq(y, 0.0)), (x, y)),
                   (o.eq(y, 0.0), (b.fmul(x, x), b.fmul(o.copysign(_c(0.0), x), y))),
                   (fx, (yy, b.fmul(x, yy))),
                   (b.and_(o.isinf(x), b.not_(fy)), (b.fmul(x, x), b.fmul(x, yy))),
                   (o.isinf(x), (b.fmul(b.fmul(x, x), c), b.fmul(x, s)))],
                  (nan, nan))


def _tanh(o, x, y):
    b = o.b
    one = _c(1.0)
    t = o.f("tan", y)
    beta = b.fadd(one, b.fmul(t, t))
    s = o.f("sinh", x)
    rho = o.f("sqrt", b.fadd(one, b.fmul(s, s)))
    denom = b.fadd(one, b.fmul(beta, b.fmul(s, s)))
    re = b.fdiv(b.fmul(b.fmul(beta, rho), s), denom)
    im = b.fdiv(t, denom)
    e = o.f("exp", b.fneg(o.abs(x)))
    sin_cos = b.fmul(o.f("sin", y), o.f("cos", y))
    large = (o.copysign(one, x), b.fmul(b.fmul(b.fmul(_c(4.0), sin_cos), e), e))
    yy = b.fsub(y, y)
    return o.pick([(o.isnan(x), (x, o.sel(o.eq(y, 0.0), y, b.fmul(x, y)))),
                   (o.isinf(x), (o.copysign(one, x),
                                 o.copysign(_c(0.0), o.sel(o.isinf(y), y, sin_cos)))),
                   (b.not_(o.finite(y)), (o.sel(o.eq(x, 0.0), x, yy), yy)),
                   (o.ge(o.abs(x), 22.0), large)], (re, im))


def _expm1(o, x, y):
    b = o.b
    a = o.f("sin", b.fmul(y, _c(0.5)))
    re = b.fsub(b.fmul(o.f("expm1", x), o.f("cos", y)), b.fmul(_c(2.0), b.fmul(a, a)))
    return re, b.fmul(o.f("exp", x), o.f("sin", y))


def _log1p(o, x, y):
    x1 = o.b.fadd(x, _c(1.0))
    return o.f("log", o.hypot(x1, y)), o.atan2(y, x1)


_FORMULAS = {"exp": _exp, "log": _log, "log2": _scaled_log(1 / math.log(2.0)),
             "log10": _scaled_log(1 / math.log(10.0)), "sqrt": _sqrt, "sinh": _sinh,
             "cosh": _cosh, "tanh": _tanh, "expm1": _expm1, "log1p": _log1p}
