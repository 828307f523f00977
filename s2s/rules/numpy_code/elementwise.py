"""Elementwise predicates and conversions (``np.isnan``, ``np.isfinite``, ``np.signbit``,
``np.deg2rad``, ``np.fmax``, ``np.sinc``, ``np.logaddexp2``, ``np.float_power``,
``np.nan_to_num``, ``np.select``; ``math.isnan``, ``math.degrees``, ``math.remainder``,
``math.fsum``, ``math.prod``; ``round``, ``pow``;
``x.astype(dtype)``) as plain Python the jit compiles, each with numpy's (or Python's)
formula, so values, dtype and shape are theirs: a number gives a number, an array an
array of the same shape.  Written with operators, ``np.where``, ``np.abs`` and the math
functions the jit lowers itself.
"""
import builtins
import math

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build

from ..registry import definline


def isnan(x, out=None, where=True):
    """``x != x``: True exactly where ``x`` is NaN (never for integers)."""
    return x != x


def isinf(x, out=None, where=True):
    """True where ``|x|`` is infinite."""
    return np.abs(x) == np.inf


def isfinite(x, out=None, where=True):
    """True where ``|x|`` is finite (False for NaN: every comparison with it is False)."""
    return np.abs(x) < np.inf


def signbit(x, out=None, where=True):
    """True where the sign bit is set (``-0.0`` and negative NaNs included)."""
    return np.copysign(1.0, x) < 0


def deg2rad(x, out=None, where=True):
    """numpy's ``x * (pi / 180)``."""
    return x * (np.pi / 180.0)


def rad2deg(x, out=None, where=True):
    """numpy's ``x * (180 / pi)``."""
    return x * (180.0 / np.pi)


def math_radians(x):
    """CPython's ``x * (pi / 180)`` on a float."""
    return float(x) * (math.pi / 180.0)


def math_degrees(x):
    """CPython's ``x / (pi / 180)`` on a float."""
    return float(x) / (math.pi / 180.0)


def math_isnan(x):
    return float(x) != float(x)


def math_isinf(x):
    return abs(float(x)) == math.inf


def math_isfinite(x):
    return abs(float(x)) < math.inf


def fmax(x1, x2, out=None, where=True):
    """The larger of ``x1`` and ``x2``, NaN only where both are (``np.maximum`` otherwise)."""
    return np.where(x1 != x1, x2, np.where(x2 != x2, x1, np.maximum(x1, x2)))


def fmin(x1, x2, out=None, where=True):
    """The smaller of ``x1`` and ``x2``, NaN only where both are."""
    return np.where(x1 != x1, x2, np.where(x2 != x2, x1, np.minimum(x1, x2)))


def sinc(x):
    """numpy's ``sin(y) / y`` with ``y = pi * where(x == 0, 1e-20, x)``."""
    y = np.pi * np.where(x == 0, 1.0e-20, x)
    return np.sin(y) / y


def logaddexp2(x1, x2, out=None, where=True):
    """``log2(2**x1 + 2**x2)`` without overflow, as numpy computes it: ``x1 + 1`` where
    the two are equal (infinities too), else the larger plus ``log2(1 + 2**-|x1 - x2|)``."""
    larger = np.maximum(x1, x2)
    gap = -np.abs(x1 - x2)
    return np.where(x1 == x2, x1 + 1.0, larger + np.log1p(np.exp2(gap)) * 1.4426950408889634)


def float_power(x1, x2, out=None, where=True):
    """``x1 ** x2`` computed in float64 whatever the operands' dtypes."""
    return np.power(np.float64(x1), np.float64(x2))


def round_(number, ndigits=None):
    """Python's ``round(number)``: the nearest integer, halves to even, as an ``int``.
    ``round(x, ndigits)`` (decimal rounding of the shortest repr) is not compiled."""
    if ndigits is None:
        return int(np.rint(number))
    raise NotImplementedError("s2s.jit: round(x, ndigits) (use np.round(x, ndigits))")


def pow_(base, exp, mod=None):
    """Python's ``pow(base, exp)``: ``base ** exp`` (three-argument ``pow`` not compiled)."""
    if mod is None:
        return base ** exp
    raise NotImplementedError("s2s.jit: pow(base, exp, mod)")


def astype(x, dtype):
    """``x.astype(dtype)``: a converted copy, for the dtypes compiled code holds (float64,
    float32, int64, bool; by class, name or ``np.dtype``)."""
    if dtype is float or dtype == np.float64 or dtype == "float64" or dtype == "f8":
        return np.float64(x) * 1
    if dtype == np.float32 or dtype == "float32" or dtype == "f4":
        return np.float32(x) * 1
    if dtype is int or dtype == np.int64 or dtype == "int64" or dtype == "i8":
        return np.int64(x) * 1
    if dtype is bool or dtype == np.bool_ or dtype == "bool":
        return x != 0
    raise NotImplementedError("s2s.jit: astype to a dtype compiled code does not hold")


def np_astype(x, dtype, copy=True, device=None):
    """``np.astype(x, dtype)``: ``x.astype(dtype)``."""
    return x.astype(dtype)


def angle(z, deg=False):
    """The argument of ``z``, ``arctan2(imag, real)`` (0 or pi for real ``z``), in degrees
    where ``deg``."""
    a = np.arctan2(np.imag(z), np.real(z))
    if deg:
        return a * (180.0 / np.pi)
    return a


def ldexp(x1, x2, out=None, where=True):
    """``x1 * 2 ** x2`` for integer ``x2``, in three exact parts of ``x2`` clipped to
    +-2200 (beyond, every finite nonzero ``x1`` overflows or underflows anyway), so no
    power of two overflows where the product does not (nor makes 0 * inf)."""
    e = np.clip(x2, -2200, 2200)
    first = e // 3
    second = (e - first) // 2
    return x1 * np.power(2.0, first) * np.power(2.0, second) * np.power(2.0, e - first - second)


def math_ldexp(x, i):
    """``math.ldexp``: ``x * 2 ** i`` (``np.ldexp``'s exact parts), ``OverflowError``
    where a finite ``x`` overflows."""
    r = float(np.ldexp(x, i))
    if math.isinf(r) and math.isfinite(x):
        raise OverflowError("math range error")
    return r


def math_remainder(x, y):
    """``math.remainder`` of two numbers: the IEEE 754 remainder, as a float, by the
    elementwise algorithm vmap uses (``rt.batch_remainder``: CPython's, its errors
    included)."""
    return float(rt.batch_remainder(x, y))


def math_prod(iterable, *, start=1):
    """``math.prod``: ``start`` times the items, left to right (Python's numbers: ints
    stay ints); read as code in every transform, so its derivative is the product rule
    through the partial products (exact where an item is zero)."""
    product = start
    for k in range(len(iterable)):  # (the jit indexes a list display, it does not iterate it)
        product = product * iterable[k]
    return product


def math_fsum(iterable):
    """``math.fsum``: the sum of the items (floats) correctly rounded, CPython's algorithm
    (Shewchuk's): each item is added into a list of non-overlapping partial sums whose
    exact sum is the exact sum so far (``hi = x + y``, ``lo = y - (hi - x)`` with
    ``|x| >= |y|`` is exact), then the partials are added from the largest while that
    stays exact, with a half-even correction from the next one.  An infinite or NaN item
    makes the result the plain sum of those items (``ValueError("-inf + inf in fsum")``
    for infinities of both signs); a sum of finite items that overflows is
    ``OverflowError("intermediate overflow in fsum")``."""
    partials = np.zeros(len(iterable) + 1)  # (never more partials than items)
    n = 0
    special = 0.0
    inf_sum = 0.0
    for k in range(len(iterable)):  # (the jit indexes a list display, it does not iterate it)
        x = float(iterable[k])
        xsave = x
        i = 0
        for j in range(n):
            y = float(partials[j])
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                partials[i] = lo
                i += 1
            x = hi
        n = i
        if x != 0.0:
            if not math.isfinite(x):
                if math.isfinite(xsave):
                    raise OverflowError("intermediate overflow in fsum")
                if math.isinf(xsave):
                    inf_sum += xsave
                special += xsave
                n = 0
            else:
                partials[n] = x
                n += 1
    if special != 0.0:  # (true for NaN too)
        if inf_sum != inf_sum:
            raise ValueError("-inf + inf in fsum")
        return special
    total = 0.0
    if n > 0:
        n -= 1
        total = float(partials[n])
        lo = 0.0
        while n > 0:
            x = total
            n -= 1
            y = float(partials[n])
            total = x + y
            lo = y - (total - x)
            if lo != 0.0:
                break
        # half-even rounding across partials: the next one says which side lo is on
        if n > 0 and ((lo < 0.0 and partials[n - 1] < 0.0) or
                      (lo > 0.0 and partials[n - 1] > 0.0)):
            y = lo * 2.0
            x = total + y
            if y == x - total:
                total = x
    return total


def math_ulp(x):
    """``math.ulp``: the gap from ``|x|`` to the next float up (down from the largest
    float); NaN for NaN, infinity for infinities."""
    a = abs(float(x))
    if math.isnan(a) or math.isinf(a):
        return a
    up = float(np.nextafter(a, math.inf))
    if math.isinf(up):
        return a - float(np.nextafter(a, 0.0))
    return up - a


def math_lcm(a, b):
    """``math.lcm`` of two integers: ``|a / gcd(a, b) * b|`` (0 if one is 0);
    ``OverflowError`` where it does not fit int64."""
    if a == 0 or b == 0:
        return 0
    m = abs(a) // math.gcd(a, b)
    n = abs(b)
    if m > 9223372036854775807 // n:
        raise OverflowError("s2s.jit: math.lcm(a, b) does not fit int64")
    return m * n


def isreal(x):
    """``np.isreal``: the imaginary part is 0 (every element of a real array)."""
    return np.imag(x) == 0


def iscomplex(x):
    """``np.iscomplex``: the imaginary part is not 0 (no element of a real array)."""
    return np.imag(x) != 0


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol |b|`` where both are finite, ``a == b`` where one is
    infinite, and (with ``equal_nan``) true where both are NaN."""
    finite = np.isfinite(a) & np.isfinite(b)
    close = np.where(finite, np.abs(a - b) <= atol + rtol * np.abs(b), a == b)
    if equal_nan:
        return close | (np.isnan(a) & np.isnan(b))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``isclose`` holds everywhere, as a Python bool."""
    return bool(np.all(np.isclose(a, b, rtol, atol, equal_nan)))


def isposinf(x, out=None):
    """``+inf`` elementwise."""
    return np.isinf(x) & ~np.signbit(x)


def isneginf(x, out=None):
    """``-inf`` elementwise."""
    return np.isinf(x) & np.signbit(x)


def fix(x, out=None):
    """Rounding towards zero: numpy's ``np.trunc``."""
    return np.trunc(x)


def heaviside(x1, x2, out=None, where=True):
    """The step function: 0 for ``x1 < 0``, ``x2`` at 0, 1 for ``x1 > 0``, NaN for NaN."""
    return np.where(x1 < 0, 0.0, np.where(x1 > 0, 1.0, np.where(x1 == 0, x2, x1 * 1.0)))


def any_(iterable):
    """Python's ``any``: whether some item is true (the items of a 1-D array, a list or
    a tuple)."""
    found = False
    for item in np.asarray(iterable):  # (no early exit: the items have no side effects)
        found = found | (item != 0)
    return found


def all_(iterable):
    """Python's ``all``: whether every item is true."""
    every = True
    for item in np.asarray(iterable):
        every = every & (item != 0)
    return every


def math_isclose(a, b, rel_tol=1e-09, abs_tol=0.0):
    """``math.isclose``: equal, or both finite and ``|a - b| <= max(rel_tol max(|a|, |b|),
    abs_tol)``; Python's ``ValueError`` for a negative tolerance."""
    if rel_tol < 0.0 or abs_tol < 0.0:
        raise ValueError("tolerances must be non-negative")
    if a == b:
        return True
    if math.isinf(a) or math.isinf(b):
        return False
    diff = abs(b - a)
    return (diff <= abs(rel_tol * b)) or (diff <= abs(rel_tol * a)) or (diff <= abs_tol)


def math_isqrt(n):
    """``math.isqrt``: the largest integer whose square is at most ``n`` (Newton's method
    on integers)."""
    if n < 0:
        raise ValueError("isqrt() argument must be nonnegative")
    if n < 2:
        return n
    x = int(np.sqrt(float(n)))  # within one of the answer, then corrected exactly
    while x > 3037000499 or x * x > n:
        x -= 1
    while x < 3037000499 and (x + 1) * (x + 1) <= n:
        x += 1
    return x


def math_factorial(n):
    """``math.factorial`` of an ``n`` whose factorial fits int64 (``n <= 20``; larger
    is refused with ``OverflowError``: compiled integers are int64)."""
    if n < 0:
        raise ValueError("factorial() not defined for negative values")
    if n > 20:
        raise OverflowError("s2s.jit: math.factorial(n) for n > 20 does not fit int64")
    out = 1
    for k in range(2, n + 1):
        out *= k
    return out


def math_perm(n, k=None):
    """``math.perm(n, k)``: ``n! / (n - k)!`` (0 for ``k > n``); ``OverflowError`` where
    it does not fit int64."""
    if k is None:
        return math.factorial(n)
    if n < 0 or k < 0:
        raise ValueError("n must be a non-negative integer")
    if k > n:
        return 0
    out = 1
    for j in range(n - k + 1, n + 1):
        if out > 9223372036854775807 // j:
            raise OverflowError("s2s.jit: math.perm(n, k) does not fit int64")
        out *= j
    return out


def math_comb(n, k):
    """``math.comb(n, k)``: the binomial coefficient (0 for ``k > n``), by the exact
    product ``c = c (n - k + j) / j``; ``OverflowError`` where it does not fit int64."""
    if n < 0 or k < 0:
        raise ValueError("n must be a non-negative integer")
    if k > n:
        return 0
    r = min(k, n - k)
    out = 1
    for j in range(1, r + 1):
        g = math.gcd(out, j)
        step = (n - r + j) // (j // g)
        if out // g > 9223372036854775807 // step:
            raise OverflowError("s2s.jit: math.comb(n, k) does not fit int64")
        out = (out // g) * step
    return out


def gcd(x1, x2, out=None, where=True):
    """``np.gcd`` of integers, elementwise and broadcast: Euclid's algorithm on every
    element at once (``gcd(0, 0) = 0``)."""
    a = np.abs(x1 + x2 * 0)
    b = np.abs(x2 + x1 * 0)
    while np.any(b != 0):
        nonzero = b != 0
        step = np.where(nonzero, b, 1)
        a, b = np.where(nonzero, b, a), np.where(nonzero, a % step, 0)
    return a


def lcm(x1, x2, out=None, where=True):
    """``np.lcm`` of integers: ``|x1 / gcd * x2|`` (0 where either is 0)."""
    g = np.gcd(x1, x2)
    return np.where(g == 0, 0, np.abs(x1 // np.where(g == 0, 1, g) * x2))


def spacing(x, out=None, where=True):
    """``np.spacing``: the distance from ``x`` to the next float away from zero (negative
    for ``x < 0``, positive for both zeros; NaN for infinities and NaN)."""
    return np.where(x < 0, np.nextafter(x, -np.inf) - x, np.nextafter(x, np.inf) - x)


def math_gcd(a, b):
    """``math.gcd(a, b)``: the greatest common divisor of two integers, by Euclid's
    algorithm (``math.gcd`` of other numbers of integers is not compiled)."""
    x = abs(a)
    y = abs(b)
    while y != 0:
        x, y = y, x % y
    return x


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``x`` with NaN replaced by ``nan`` and infinities by ``posinf``/``neginf`` (the
    largest finite value of ``x``'s float dtype by default); integers unchanged."""
    if not (x.dtype == np.float64 or x.dtype == np.float32):
        return x * 1
    big = 3.4028234663852886e38 if x.dtype == np.float32 else 1.7976931348623157e308
    high = big if posinf is None else posinf
    low = -big if neginf is None else neginf
    return np.where(x != x, nan, np.where(x == np.inf, high, np.where(x == -np.inf, low, x)))


def select(condlist, choicelist, default=0):
    """Elementwise, the choice of the first condition that holds (``default`` where none
    does)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    res = np.where(condlist[len(condlist) - 1], choicelist[len(condlist) - 1], default)
    for k in range(len(condlist) - 2, -1, -1):
        res = np.where(condlist[k], choicelist[k], res)
    return res


def astype_vjp(g, x):
    """``x_bar = g`` in ``x``'s shape and float dtype (real for real ``x``)."""
    if x.dtype == np.float32:
        return np.float32(np.reshape(g, np.shape(x)))
    if x.dtype == np.complex128:
        return np.reshape(g, np.shape(x)) * (1.0 + 0.0j)
    return np.float64(np.real(np.reshape(g, np.shape(x))))


for _fn, _code in ((np.isnan, isnan), (np.isinf, isinf), (np.isfinite, isfinite),
                   (np.signbit, signbit), (np.deg2rad, deg2rad), (np.radians, deg2rad),
                   (np.rad2deg, rad2deg), (np.degrees, rad2deg), (np.fmax, fmax),
                   (np.fmin, fmin), (np.sinc, sinc),
                   (np.logaddexp2, logaddexp2), (np.float_power, float_power),
                   (math.isnan, math_isnan), (math.isinf, math_isinf),
                   (math.isfinite, math_isfinite), (math.radians, math_radians),
                   (math.degrees, math_degrees), (builtins.round, round_),
                   (builtins.pow, pow_), (build.astype, astype), (rt.astype_vjp, astype_vjp),
                   (np.nan_to_num, nan_to_num), (np.select, select)):
    definline(_fn, code=_code, modes=("jit", "vmap"))
# vmap batches these as elementwise functions of their own
for _fn, _code in ((np.angle, angle), (np.ldexp, ldexp), (np.isclose, isclose),
                   (np.fix, fix), (np.heaviside, heaviside)):
    definline(_fn, code=_code, modes=("jit",))
for _fn, _code in ((np.allclose, allclose), (np.isposinf, isposinf), (np.isneginf, isneginf),
                   (math.gcd, math_gcd), (builtins.any, any_), (builtins.all, all_),
                   (math.isclose, math_isclose), (math.isqrt, math_isqrt),
                   (math.factorial, math_factorial), (math.ulp, math_ulp),
                   (np.isreal, isreal), (np.iscomplex, iscomplex)):
    definline(_fn, code=_code, modes=("jit", "vmap"))
# their overflow checks raise where the numbers differ per example: vmap refuses them
# (vmap batches math.ldexp as np.ldexp)
for _fn, _code in ((math.perm, math_perm), (math.comb, math_comb), (math.lcm, math_lcm),
                   (math.ldexp, math_ldexp)):
    definline(_fn, code=_code, modes=("jit",))
# vmap batches math.remainder with rt.batch_remainder and math.fsum once per example
definline(math.remainder, code=math_remainder, modes=("jit",))
definline(math.fsum, code=math_fsum, modes=("jit",))
definline(math.prod, code=math_prod)
# vmap batches these ufuncs elementwise
for _fn, _code in ((np.gcd, gcd), (np.lcm, lcm), (np.spacing, spacing)):
    definline(_fn, code=_code, modes=("jit",))
if hasattr(np, "astype"):  # numpy >= 2.1
    definline(np.astype, code=np_astype, modes=("jit", "vmap"))
