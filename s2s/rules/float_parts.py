"""Functions that split a float into parts or rebuild it from parts, in the builtins,
``math`` and numpy: remainders (``%`` is in ``arith.py``), ``divmod``, ``modf``,
``frexp``, ``ldexp``, ``copysign``, ``nextafter``, ``heaviside``, ``math.fsum``, ``math.cbrt``,
``math.exp2``; ``math.ulp`` and the integer functions of ``math`` (no derivative).

The maths (derivatives almost everywhere; the integer-valued parts are piecewise
constant, so their derivative is zero):

* ``r = x - n y`` with ``n`` an integer-valued function of ``x / y`` (``floor``:
  ``%``, ``divmod``, ``np.remainder``; ``trunc``: ``fmod``; round-half-even:
  ``math.remainder``): ``dr = dx - n dy``.  ``n`` is read back exactly from the
  result, ``n = round((x - r) / y)``, where a formula would round differently.
* ``divmod(x, y) = (x // y, x % y)``: the quotient has a zero derivative.
* ``modf(x) = (x - trunc(x), trunc(x))``: ``d frac = dx``, ``d int = 0``.
* ``frexp(x) = (m, e)`` with ``x = m 2**e``: ``dm = 2**-e dx`` (``frexp_scale``, itself
  piecewise constant), ``e`` is an integer.
* ``ldexp(x, e) = x 2**e``: ``dx 2**e`` (``e`` an integer: not differentiated).
* ``copysign(x, y) = |x| s(y)``: ``dx`` times +1 where the signs of ``x`` and ``y``
  agree and -1 where they differ; piecewise constant in ``y``.
* ``nextafter(x, y)``: the float next to ``x`` towards ``y``, ``x`` up to one ulp:
  the identity in ``x`` (as finite differences see it), constant in ``y``.
* ``heaviside(x, h)``: 0 below 0, 1 above, ``h`` at ``x == 0``: ``dh`` where
  ``x == 0``, zero in ``x``.

Each template is written with primitives that have rules themselves, so second
derivatives need nothing more.
"""
import math

import numpy as np

from s2s_runtime import (broadcast_like, densify, frexp_scale, sum_builtin_jvp, sum_builtin_vjp,
                         unbroadcast, zeros_like)

from .registry import defjvp, defnondiff, defprops, defvjp

# --- numpy ----------------------------------------------------------------------------
# np.remainder (np.mod) x1 % x2 = x1 - floor(x1 / x2) x2: dx1 -> 1, dx2 -> -floor(x1 / x2)
defvjp(np.remainder, lambda g, ans, x1, x2: unbroadcast(g, x1),
       lambda g, ans, x1, x2: unbroadcast(-g * np.floor_divide(x1, x2), x2))
defjvp(np.remainder, lambda t, ans, x1, x2: broadcast_like(t, ans),
       lambda t, ans, x1, x2: -t * np.floor_divide(x1, x2))
# np.fmod(x1, x2) = x1 - trunc(x1 / x2) x2 (the sign of x1): dx2 -> -trunc(x1 / x2)
defvjp(np.fmod, lambda g, ans, x1, x2: unbroadcast(g, x1),
       lambda g, ans, x1, x2: unbroadcast(-g * np.trunc(x1 / x2), x2))
defjvp(np.fmod, lambda t, ans, x1, x2: broadcast_like(t, ans),
       lambda t, ans, x1, x2: -t * np.trunc(x1 / x2))
# np.divmod(x1, x2) = (x1 // x2, x1 % x2): the quotient is piecewise constant
defvjp(np.divmod,
       lambda g, ans, x1, x2: unbroadcast(densify(g, ans)[1], x1),
       lambda g, ans, x1, x2: unbroadcast(-densify(g, ans)[1] * ans[0], x2),
       container_result=True)
defjvp(np.divmod,
       lambda t, ans, x1, x2: (zeros_like(ans[0]), broadcast_like(t, ans[1])),
       lambda t, ans, x1, x2: (zeros_like(ans[0]), -t * ans[0]))
# np.modf(x) = (fractional part, integral part)
defvjp(np.modf, lambda g, ans, x: unbroadcast(densify(g, ans)[0], x), container_result=True)
defjvp(np.modf, lambda t, ans, x: (broadcast_like(t, ans[0]), zeros_like(ans[1])))
# np.frexp(x) = (mantissa, exponent), x = m 2**e
defvjp(np.frexp, lambda g, ans, x: unbroadcast(densify(g, ans)[0] * frexp_scale(x), x),
       container_result=True)
defjvp(np.frexp, lambda t, ans, x: (t * frexp_scale(x), zeros_like(ans[1])))
# copysign(x1, x2) = |x1| s(x2): d/dx1 = +1 where the signs agree, -1 where they differ;
# piecewise constant in x2
defvjp(np.copysign,
       lambda g, ans, x1, x2: unbroadcast(np.where(np.signbit(x1) == np.signbit(x2), g, -g), x1),
       lambda g, ans, x1, x2: zeros_like(x2))
defjvp(np.copysign,
       lambda t, ans, x1, x2: broadcast_like(np.where(np.signbit(x1) == np.signbit(x2), t, -t),
                                             ans),
       lambda t, ans, x1, x2: zeros_like(ans))
# ldexp(x1, x2) = x1 2**x2 (x2 an integer exponent)
defvjp(np.ldexp, lambda g, ans, x1, x2: unbroadcast(g * np.ldexp(1.0, x2), x1), None)
defjvp(np.ldexp, lambda t, ans, x1, x2: broadcast_like(t * np.ldexp(1.0, x2), ans), None)
# nextafter(x1, x2): x1 moved by one ulp: the identity in x1, constant in x2
defvjp(np.nextafter, lambda g, ans, x1, x2: unbroadcast(g, x1),
       lambda g, ans, x1, x2: zeros_like(x2))
defjvp(np.nextafter, lambda t, ans, x1, x2: broadcast_like(t, ans),
       lambda t, ans, x1, x2: zeros_like(ans))
# heaviside(x1, x2) = x2 where x1 == 0 (0 or 1 elsewhere)
defvjp(np.heaviside, lambda g, ans, x1, x2: zeros_like(x1),
       lambda g, ans, x1, x2: unbroadcast(g * (x1 == 0), x2))
defjvp(np.heaviside, lambda t, ans, x1, x2: zeros_like(ans),
       lambda t, ans, x1, x2: broadcast_like(t * (x1 == 0), ans))

# --- builtins and math (Python numbers; scalar code stays scalar) -----------------------
# divmod(x, y) = (x // y, x % y) (numbers, or arrays through numpy's divmod)
defvjp(divmod,
       lambda g, ans, x, y: unbroadcast(densify(g, ans)[1], x),
       lambda g, ans, x, y: unbroadcast(-densify(g, ans)[1] * ans[0], y),
       container_result=True)
defjvp(divmod,
       lambda t, ans, x, y: (zeros_like(ans[0]), broadcast_like(t, ans[1])),
       lambda t, ans, x, y: (zeros_like(ans[0]), -t * ans[0]))
# math.fmod(x, y) = x - trunc(x / y) y; math.remainder(x, y) = x - n y, n = x / y rounded
# half to even; n read back from the result
defvjp(math.fmod, lambda g, ans, x, y: g, lambda g, ans, x, y: -g * round((x - ans) / y))
defjvp(math.fmod, lambda t, ans, x, y: t, lambda t, ans, x, y: -t * round((x - ans) / y))
defvjp(math.remainder, lambda g, ans, x, y: g, lambda g, ans, x, y: -g * round((x - ans) / y))
defjvp(math.remainder, lambda t, ans, x, y: t, lambda t, ans, x, y: -t * round((x - ans) / y))
# math.modf(x) = (x - trunc(x), trunc(x))
defvjp(math.modf, lambda g, ans, x: densify(g, ans)[0], container_result=True)
defjvp(math.modf, lambda t, ans, x: (t, zeros_like(ans[1])))
# math.frexp(x) = (m, e), x = m 2**e
defvjp(math.frexp, lambda g, ans, x: densify(g, ans)[0] * frexp_scale(x),
       container_result=True)
defjvp(math.frexp, lambda t, ans, x: (t * frexp_scale(x), zeros_like(ans[1])))
# math.ldexp(x, i) = x 2**i
defvjp(math.ldexp, lambda g, ans, x, i: math.ldexp(g, i), None)
defjvp(math.ldexp, lambda t, ans, x, i: math.ldexp(t, i), None)
# math.copysign(x, y) = |x| s(y)
defvjp(math.copysign,
       lambda g, ans, x, y: g * (math.copysign(1.0, x) * math.copysign(1.0, y)),
       lambda g, ans, x, y: zeros_like(y))
defjvp(math.copysign,
       lambda t, ans, x, y: t * (math.copysign(1.0, x) * math.copysign(1.0, y)),
       lambda t, ans, x, y: zeros_like(ans))
# math.nextafter(x, y): the identity in x, constant in y (Python 3.12's steps= is not
# taken: a call with it does not bind and is an error naming the call)
defvjp(math.nextafter, lambda g, ans, x, y: g, lambda g, ans, x, y: zeros_like(y))
defjvp(math.nextafter, lambda t, ans, x, y: t, lambda t, ans, x, y: zeros_like(ans))

# math.fsum(items): the exactly rounded sum, every item receives g (as sum)
defvjp(math.fsum, lambda g, ans, seq: sum_builtin_vjp(g, seq))
defjvp(math.fsum, lambda t, ans, seq: sum_builtin_jvp(t, ans))
# the spacing of floats at x, and integer functions of integers: no derivative
defnondiff(math.ulp, math.isclose, math.comb, math.perm, math.isqrt, math.lcm)
# frexp's dm/dx = 2**-e: piecewise constant
defnondiff(frexp_scale)

# --- math functions of Python 3.11 -------------------------------------------------------
if hasattr(math, "cbrt"):
    # cbrt(x)' = 1 / (3 cbrt(x)**2)
    defvjp(math.cbrt, lambda g, ans, x: g / (3.0 * ans * ans))
    defjvp(math.cbrt, lambda t, ans, x: t / (3.0 * ans * ans))
if hasattr(math, "exp2"):
    # exp2(x)' = exp2(x) ln 2
    defvjp(math.exp2, lambda g, ans, x: g * ans * math.log(2.0))
    defjvp(math.exp2, lambda t, ans, x: t * ans * math.log(2.0))
# (pairs of results)
defprops(np.divmod, np.modf, np.frexp, divmod, math.modf, math.frexp, sequence=True)
