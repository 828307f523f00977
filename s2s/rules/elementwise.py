"""Elementwise functions of ``math`` and numpy.

Each VJP is ``x_bar = g * f'(x)`` (JAX's convention: no conjugation for
holomorphic functions), with ``ans = f(x)`` reused where it is cheaper.
Binary numpy functions undo broadcasting with ``unbroadcast``.  Each JVP
(``defjvp``, beside its VJP) is ``t * f'(x)``, the R-linear differential for
complex ``x``; where a contribution involves only the parameter's own tangent
it is broadcast to the result's shape with ``broadcast_like``.
"""
import cmath
import math

import numpy as np

from s2s_runtime import broadcast_like, cast_vjp, clip_selected, unbroadcast

from .registry import defjvp, defnondiff, defvjp

# --- math (Python scalars) ------------------------------------------------
defvjp(math.sin, lambda g, ans, x: g * math.cos(x))
defjvp(math.sin, lambda t, ans, x: t * math.cos(x))
defvjp(math.cos, lambda g, ans, x: -g * math.sin(x))
defjvp(math.cos, lambda t, ans, x: -t * math.sin(x))
defvjp(math.tan, lambda g, ans, x: g * (1.0 + ans * ans))
defjvp(math.tan, lambda t, ans, x: t * (1.0 + ans * ans))
defvjp(math.asin, lambda g, ans, x: g / math.sqrt(1.0 - x * x))
defjvp(math.asin, lambda t, ans, x: t / math.sqrt(1.0 - x * x))
defvjp(math.acos, lambda g, ans, x: -g / math.sqrt(1.0 - x * x))
defjvp(math.acos, lambda t, ans, x: -t / math.sqrt(1.0 - x * x))
defvjp(math.atan, lambda g, ans, x: g / (1.0 + x * x))
defjvp(math.atan, lambda t, ans, x: t / (1.0 + x * x))
defvjp(math.sinh, lambda g, ans, x: g * math.cosh(x))
defjvp(math.sinh, lambda t, ans, x: t * math.cosh(x))
defvjp(math.cosh, lambda g, ans, x: g * math.sinh(x))
defjvp(math.cosh, lambda t, ans, x: t * math.sinh(x))
defvjp(math.tanh, lambda g, ans, x: g * (1.0 - ans * ans))
defjvp(math.tanh, lambda t, ans, x: t * (1.0 - ans * ans))
defvjp(math.asinh, lambda g, ans, x: g / math.sqrt(x * x + 1.0))
defjvp(math.asinh, lambda t, ans, x: t / math.sqrt(x * x + 1.0))
defvjp(math.acosh, lambda g, ans, x: g / math.sqrt(x * x - 1.0))
defjvp(math.acosh, lambda t, ans, x: t / math.sqrt(x * x - 1.0))
defvjp(math.atanh, lambda g, ans, x: g / (1.0 - x * x))
defjvp(math.atanh, lambda t, ans, x: t / (1.0 - x * x))
defvjp(math.exp, lambda g, ans, x: g * ans)
defjvp(math.exp, lambda t, ans, x: t * ans)
defvjp(math.expm1, lambda g, ans, x: g * (ans + 1.0))
defjvp(math.expm1, lambda t, ans, x: t * (ans + 1.0))
defvjp(math.log, lambda g, ans, x, base=math.e: g / (x * math.log(base)),
       lambda g, ans, x, base=math.e: -g * ans / (base * math.log(base)))
defjvp(math.log, lambda t, ans, x, base=math.e: t / (x * math.log(base)),
       lambda t, ans, x, base=math.e: -t * ans / (base * math.log(base)))
defvjp(math.log1p, lambda g, ans, x: g / (1.0 + x))
defjvp(math.log1p, lambda t, ans, x: t / (1.0 + x))
defvjp(math.log2, lambda g, ans, x: g / (x * math.log(2.0)))
defjvp(math.log2, lambda t, ans, x: t / (x * math.log(2.0)))
defvjp(math.log10, lambda g, ans, x: g / (x * math.log(10.0)))
defjvp(math.log10, lambda t, ans, x: t / (x * math.log(10.0)))
defvjp(math.sqrt, lambda g, ans, x: g / (2.0 * ans))
defjvp(math.sqrt, lambda t, ans, x: t / (2.0 * ans))
# (the exponent y - 1 + (y == 0): see operator.pow in arith.py)
defvjp(math.pow, lambda g, ans, x, y: g * y * math.pow(x, y - 1.0 + (y == 0)),
       lambda g, ans, x, y: g * ans * np.log(np.where(x == 0, 1.0, x)))
defjvp(math.pow, lambda t, ans, x, y: t * y * math.pow(x, y - 1.0 + (y == 0)),
       lambda t, ans, x, y: t * ans * np.log(np.where(x == 0, 1.0, x)))
defvjp(math.hypot, lambda g, ans, x, y: g * x / ans, lambda g, ans, x, y: g * y / ans)
defjvp(math.hypot, lambda t, ans, x, y: t * x / ans,
       lambda t, ans, x, y: t * y / ans)
defvjp(math.atan2, lambda g, ans, y, x: g * x / (x * x + y * y),
       lambda g, ans, y, x: -g * y / (x * x + y * y))
defjvp(math.atan2, lambda t, ans, y, x: t * x / (x * x + y * y),
       lambda t, ans, y, x: -t * y / (x * x + y * y))
defvjp(math.erf, lambda g, ans, x: g * 2.0 / math.sqrt(math.pi) * math.exp(-x * x))
defjvp(math.erf, lambda t, ans, x: t * 2.0 / math.sqrt(math.pi) * math.exp(-x * x))
defvjp(math.erfc, lambda g, ans, x: -g * 2.0 / math.sqrt(math.pi) * math.exp(-x * x))
defjvp(math.erfc, lambda t, ans, x: -t * 2.0 / math.sqrt(math.pi) * math.exp(-x * x))
defvjp(math.fabs, lambda g, ans, x: g * np.sign(x))
defjvp(math.fabs, lambda t, ans, x: t * np.sign(x))
defvjp(math.degrees, lambda g, ans, x: g * (180.0 / math.pi))
defjvp(math.degrees, lambda t, ans, x: t * (180.0 / math.pi))
defvjp(math.radians, lambda g, ans, x: g * (math.pi / 180.0))
defjvp(math.radians, lambda t, ans, x: t * (math.pi / 180.0))
defnondiff(math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite,
           math.factorial, math.gcd)

# --- cmath (Python complex numbers) ---------------------------------------
# Holomorphic: z_bar = g f'(z) as numpy's rules (JAX's convention), the real part for a
# real z (cast_vjp: cmath.exp(0.5) is complex); the derivatives call cmath again, so they
# keep its Python complex results (the primal raised first where cmath raises).
defvjp(cmath.exp, lambda g, ans, z: cast_vjp(g * ans, z))
defjvp(cmath.exp, lambda t, ans, z: t * ans)
defvjp(cmath.log, lambda g, ans, z, base=math.e: cast_vjp(g / (z * cmath.log(base)), z),
       lambda g, ans, z, base=math.e: cast_vjp(-g * ans / (base * cmath.log(base)), base))
defjvp(cmath.log, lambda t, ans, z, base=math.e: t / (z * cmath.log(base)),
       lambda t, ans, z, base=math.e: -t * ans / (base * cmath.log(base)))
defvjp(cmath.log10, lambda g, ans, z: cast_vjp(g / (z * math.log(10.0)), z))
defjvp(cmath.log10, lambda t, ans, z: t / (z * math.log(10.0)))
defvjp(cmath.sqrt, lambda g, ans, z: cast_vjp(g / (2.0 * ans), z))
defjvp(cmath.sqrt, lambda t, ans, z: t / (2.0 * ans))
defvjp(cmath.sin, lambda g, ans, z: cast_vjp(g * cmath.cos(z), z))
defjvp(cmath.sin, lambda t, ans, z: t * cmath.cos(z))
defvjp(cmath.cos, lambda g, ans, z: cast_vjp(-g * cmath.sin(z), z))
defjvp(cmath.cos, lambda t, ans, z: -t * cmath.sin(z))
defvjp(cmath.tan, lambda g, ans, z: cast_vjp(g * (1.0 + ans * ans), z))
defjvp(cmath.tan, lambda t, ans, z: t * (1.0 + ans * ans))
defvjp(cmath.sinh, lambda g, ans, z: cast_vjp(g * cmath.cosh(z), z))
defjvp(cmath.sinh, lambda t, ans, z: t * cmath.cosh(z))
defvjp(cmath.cosh, lambda g, ans, z: cast_vjp(g * cmath.sinh(z), z))
defjvp(cmath.cosh, lambda t, ans, z: t * cmath.sinh(z))
defvjp(cmath.tanh, lambda g, ans, z: cast_vjp(g * (1.0 - ans * ans), z))
defjvp(cmath.tanh, lambda t, ans, z: t * (1.0 - ans * ans))
# phase(z) = angle(z): np.angle's rules (0 at z = 0)
defvjp(cmath.phase, lambda g, ans, z: cast_vjp(
    -1j * np.real(g) * np.conj(z) / np.where(z == 0, 1.0, np.real(z * np.conj(z))), z))
defjvp(cmath.phase, lambda t, ans, z: np.imag(np.conj(z) * t)
       / np.where(z == 0, 1.0, np.real(z * np.conj(z))))
defnondiff(cmath.isnan, cmath.isinf, cmath.isfinite)

# --- numpy unary ----------------------------------------------------------
# A numpy function's derivative keeps numpy's semantics on Python floats too: where a
# denominator is built from the raw operand (``g / x`` for log), ``np.divide`` gives
# inf/nan (and numpy's warning) at 0, where Python's ``/`` would raise
# ZeroDivisionError although the primal (numpy: -inf) did not.
defvjp(np.sin, lambda g, ans, x: g * np.cos(x))
defjvp(np.sin, lambda t, ans, x: t * np.cos(x))
defvjp(np.cos, lambda g, ans, x: -g * np.sin(x))
defjvp(np.cos, lambda t, ans, x: -t * np.sin(x))
defvjp(np.tan, lambda g, ans, x: g * (1 + ans * ans))
defjvp(np.tan, lambda t, ans, x: t * (1 + ans * ans))
defvjp(np.arcsin, lambda g, ans, x: g / np.sqrt(1 - x * x))
defjvp(np.arcsin, lambda t, ans, x: t / np.sqrt(1 - x * x))
defvjp(np.arccos, lambda g, ans, x: -g / np.sqrt(1 - x * x))
defjvp(np.arccos, lambda t, ans, x: -t / np.sqrt(1 - x * x))
defvjp(np.arctan, lambda g, ans, x: g / (1 + x * x))
defjvp(np.arctan, lambda t, ans, x: t / (1 + x * x))
defvjp(np.sinh, lambda g, ans, x: g * np.cosh(x))
defjvp(np.sinh, lambda t, ans, x: t * np.cosh(x))
defvjp(np.cosh, lambda g, ans, x: g * np.sinh(x))
defjvp(np.cosh, lambda t, ans, x: t * np.sinh(x))
defvjp(np.tanh, lambda g, ans, x: g * (1 - ans * ans))
defjvp(np.tanh, lambda t, ans, x: t * (1 - ans * ans))
defvjp(np.arcsinh, lambda g, ans, x: g / np.sqrt(x * x + 1))
defjvp(np.arcsinh, lambda t, ans, x: t / np.sqrt(x * x + 1))
defvjp(np.arccosh, lambda g, ans, x: g / np.sqrt(x * x - 1))
defjvp(np.arccosh, lambda t, ans, x: t / np.sqrt(x * x - 1))
defvjp(np.arctanh, lambda g, ans, x: np.divide(g, 1 - x * x))
defjvp(np.arctanh, lambda t, ans, x: np.divide(t, 1 - x * x))
defvjp(np.exp, lambda g, ans, x: g * ans)
defjvp(np.exp, lambda t, ans, x: t * ans)
defvjp(np.exp2, lambda g, ans, x: g * ans * np.log(2.0))
defjvp(np.exp2, lambda t, ans, x: t * ans * np.log(2.0))
defvjp(np.expm1, lambda g, ans, x: g * (ans + 1))
defjvp(np.expm1, lambda t, ans, x: t * (ans + 1))
defvjp(np.log, lambda g, ans, x: np.divide(g, x))
defjvp(np.log, lambda t, ans, x: np.divide(t, x))
defvjp(np.log1p, lambda g, ans, x: np.divide(g, 1 + x))
defjvp(np.log1p, lambda t, ans, x: np.divide(t, 1 + x))
defvjp(np.log2, lambda g, ans, x: np.divide(g, x * np.log(2.0)))
defjvp(np.log2, lambda t, ans, x: np.divide(t, x * np.log(2.0)))
defvjp(np.log10, lambda g, ans, x: np.divide(g, x * np.log(10.0)))
defjvp(np.log10, lambda t, ans, x: np.divide(t, x * np.log(10.0)))
defvjp(np.sqrt, lambda g, ans, x: g / (2 * ans))
defjvp(np.sqrt, lambda t, ans, x: t / (2 * ans))
defvjp(np.cbrt, lambda g, ans, x: g / (3 * ans * ans))
defjvp(np.cbrt, lambda t, ans, x: t / (3 * ans * ans))
defvjp(np.square, lambda g, ans, x: g * 2 * x)
defjvp(np.square, lambda t, ans, x: t * 2 * x)
defvjp(np.reciprocal, lambda g, ans, x: -g * ans * ans)
defjvp(np.reciprocal, lambda t, ans, x: -t * ans * ans)
defvjp(np.negative, lambda g, ans, x: -g)
defjvp(np.negative, lambda t, ans, x: -t)
defvjp(np.positive, lambda g, ans, x: g)
defjvp(np.positive, lambda t, ans, x: t)
defvjp(np.absolute, lambda g, ans, x: g * np.conj(x) / np.where(ans == 0, 1.0, ans))
# d|x| = Re(conj(x) dx) / |x|  (sign(x) dx for real x; 0 at 0)
defjvp(np.absolute, lambda t, ans, x: np.real(np.conj(x) * t) / np.where(ans == 0, 1.0, ans))
defvjp(np.fabs, lambda g, ans, x: g * np.sign(x))
defjvp(np.fabs, lambda t, ans, x: t * np.sign(x))
defvjp(np.conjugate, lambda g, ans, x: unbroadcast(np.conj(g), x))
defjvp(np.conjugate, lambda t, ans, x: np.conj(t))
# JAX: real(z) pulls g back to g, imag(z) to -1j g, in val's dtype (complex g + 0j for a
# complex val; the real part, so 0 for imag, for a real val)
defvjp(np.real, lambda g, ans, val: cast_vjp(np.real(g), val))
defjvp(np.real, lambda t, ans, val: np.real(t))
defvjp(np.imag, lambda g, ans, val: cast_vjp(-1j * np.real(g), val))
defjvp(np.imag, lambda t, ans, val: np.imag(t))
# angle(z) = atan2(Im z, Re z): d angle = Im(conj(z) dz) / |z|^2 (0 for real z; 0 at 0);
# z_bar = -1j Re(g) conj(z) / |z|^2 (JAX's conjugate convention), times 180/pi if deg
defvjp(np.angle, lambda g, ans, z, deg=False: cast_vjp(
    -1j * np.real(g) * np.conj(z) / np.where(z == 0, 1.0, np.real(z * np.conj(z)))
    * (1.0 + deg * (180.0 / np.pi - 1.0)), z))
defjvp(np.angle, lambda t, ans, z, deg=False: np.imag(np.conj(z) * t)
       / np.where(z == 0, 1.0, np.real(z * np.conj(z))) * (1.0 + deg * (180.0 / np.pi - 1.0)))
defvjp(np.deg2rad, lambda g, ans, x: g * (np.pi / 180))
defjvp(np.deg2rad, lambda t, ans, x: t * (np.pi / 180))
defvjp(np.rad2deg, lambda g, ans, x: g * (180 / np.pi))
defjvp(np.rad2deg, lambda t, ans, x: t * (180 / np.pi))
# sinc'(x) = (cos(pi x) - sinc(x)) / x; near 0 its series -pi^2 x / 3 + pi^4 x^3 / 30 (exact
# to rounding for |x| < 1e-3, no cancellation, and right at 0 to second order: -pi^2 / 3)
defvjp(np.sinc, lambda g, ans, x: g * np.where(
    np.abs(x) < 1e-3, np.pi ** 2 * x * (np.pi ** 2 * x * x / 30 - 1 / 3),
    (np.cos(np.pi * x) - ans) / np.where(x == 0, 1.0, x)))
defjvp(np.sinc, lambda t, ans, x: t * np.where(
    np.abs(x) < 1e-3, np.pi ** 2 * x * (np.pi ** 2 * x * x / 30 - 1 / 3),
    (np.cos(np.pi * x) - ans) / np.where(x == 0, 1.0, x)))

# --- numpy binary ---------------------------------------------------------
defvjp(np.add, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: unbroadcast(g, y))
defjvp(np.add, lambda t, ans, x, y: broadcast_like(t, ans),
       lambda t, ans, x, y: broadcast_like(t, ans))
defvjp(np.subtract, lambda g, ans, x, y: unbroadcast(g, x),
       lambda g, ans, x, y: -unbroadcast(g, y))
defjvp(np.subtract, lambda t, ans, x, y: broadcast_like(t, ans),
       lambda t, ans, x, y: broadcast_like(-t, ans))
defvjp(np.multiply, lambda g, ans, x, y: unbroadcast(g * y, x),
       lambda g, ans, x, y: unbroadcast(g * x, y))
defjvp(np.multiply, lambda t, ans, x, y: t * y,
       lambda t, ans, x, y: x * t)
defvjp(np.divide, lambda g, ans, x, y: unbroadcast(np.divide(g, y), x),
       lambda g, ans, x, y: -unbroadcast(np.divide(g * ans, y), y))
defjvp(np.divide, lambda t, ans, x, y: np.divide(t, y),
       lambda t, ans, x, y: np.divide(-t * ans, y))
defvjp(np.power, lambda g, ans, x, y: unbroadcast(g * y * np.power(x, y - 1 + (y == 0)), x),
       lambda g, ans, x, y: unbroadcast(g * ans * np.log(np.where(x == 0, 1.0, x)), y))
defjvp(np.power, lambda t, ans, x, y: t * y * np.power(x, y - 1 + (y == 0)),
       lambda t, ans, x, y: t * ans * np.log(np.where(x == 0, 1.0, x)))
defvjp(np.float_power, lambda g, ans, x, y: unbroadcast(g * y * np.float_power(x, y - 1 + (y == 0)), x),
       lambda g, ans, x, y: unbroadcast(g * ans * np.log(np.where(x == 0, 1.0, x)), y))
defjvp(np.float_power, lambda t, ans, x, y: t * y * np.float_power(x, y - 1 + (y == 0)),
       lambda t, ans, x, y: t * ans * np.log(np.where(x == 0, 1.0, x)))
defvjp(np.arctan2, lambda g, ans, y, x: unbroadcast(np.divide(g * x, x * x + y * y), y),
       lambda g, ans, y, x: unbroadcast(np.divide(-g * y, x * x + y * y), x))
defjvp(np.arctan2, lambda t, ans, y, x: np.divide(t * x, x * x + y * y),
       lambda t, ans, y, x: np.divide(-t * y, x * x + y * y))
defvjp(np.hypot, lambda g, ans, x, y: unbroadcast(g * x / ans, x),
       lambda g, ans, x, y: unbroadcast(g * y / ans, y))
defjvp(np.hypot, lambda t, ans, x, y: t * x / ans,
       lambda t, ans, x, y: t * y / ans)
defvjp(np.logaddexp, lambda g, ans, x, y: unbroadcast(g * np.exp(x - ans), x),
       lambda g, ans, x, y: unbroadcast(g * np.exp(y - ans), y))
defjvp(np.logaddexp, lambda t, ans, x, y: t * np.exp(x - ans),
       lambda t, ans, x, y: t * np.exp(y - ans))
defvjp(np.logaddexp2, lambda g, ans, x, y: unbroadcast(g * np.exp2(x - ans), x),
       lambda g, ans, x, y: unbroadcast(g * np.exp2(y - ans), y))
defjvp(np.logaddexp2, lambda t, ans, x, y: t * np.exp2(x - ans),
       lambda t, ans, x, y: t * np.exp2(y - ans))
# max/min: the cotangent goes to the selected argument (half to each on ties, like JAX)
defvjp(np.maximum,
       lambda g, ans, x, y: unbroadcast(g * np.where(x > y, 1.0, np.where(x == y, 0.5, 0.0)), x),
       lambda g, ans, x, y: unbroadcast(g * np.where(y > x, 1.0, np.where(x == y, 0.5, 0.0)), y))
defjvp(np.maximum, lambda t, ans, x, y: t * np.where(x > y, 1.0, np.where(x == y, 0.5, 0.0)),
       lambda t, ans, x, y: t * np.where(y > x, 1.0, np.where(x == y, 0.5, 0.0)))
defvjp(np.minimum,
       lambda g, ans, x, y: unbroadcast(g * np.where(x < y, 1.0, np.where(x == y, 0.5, 0.0)), x),
       lambda g, ans, x, y: unbroadcast(g * np.where(y < x, 1.0, np.where(x == y, 0.5, 0.0)), y))
defjvp(np.minimum, lambda t, ans, x, y: t * np.where(x < y, 1.0, np.where(x == y, 0.5, 0.0)),
       lambda t, ans, x, y: t * np.where(y < x, 1.0, np.where(x == y, 0.5, 0.0)))
# fmax/fmin ignore NaNs: the non-NaN argument is the selected one
defvjp(np.fmax,
       lambda g, ans, x, y: unbroadcast(g * np.where((x > y) | np.isnan(y), 1.0, np.where(x == y, 0.5, 0.0)), x),
       lambda g, ans, x, y: unbroadcast(g * np.where((y > x) | np.isnan(x), 1.0, np.where(x == y, 0.5, 0.0)), y))
defjvp(np.fmax,
       lambda t, ans, x, y: t * np.where((x > y) | np.isnan(y), 1.0, np.where(x == y, 0.5, 0.0)),
       lambda t, ans, x, y: t * np.where((y > x) | np.isnan(x), 1.0, np.where(x == y, 0.5, 0.0)))
defvjp(np.fmin,
       lambda g, ans, x, y: unbroadcast(g * np.where((x < y) | np.isnan(y), 1.0, np.where(x == y, 0.5, 0.0)), x),
       lambda g, ans, x, y: unbroadcast(g * np.where((y < x) | np.isnan(x), 1.0, np.where(x == y, 0.5, 0.0)), y))
defjvp(np.fmin,
       lambda t, ans, x, y: t * np.where((x < y) | np.isnan(y), 1.0, np.where(x == y, 0.5, 0.0)),
       lambda t, ans, x, y: t * np.where((y < x) | np.isnan(x), 1.0, np.where(x == y, 0.5, 0.0)))
defvjp(np.where, None,
       lambda g, ans, condition, x, y: unbroadcast(np.where(condition, g, 0.0), x),
       lambda g, ans, condition, x, y: unbroadcast(np.where(condition, 0.0, g), y))
defjvp(np.where, None,
       lambda t, ans, condition, x, y: broadcast_like(np.where(condition, t, 0.0), ans),
       lambda t, ans, condition, x, y: broadcast_like(np.where(condition, 0.0, t), ans))
# clip = minimum(maximum(a, a_min), a_max): g goes to the argument that was selected
# (ties to a; every entry is a_max when a_min > a_max, as numpy)
defvjp(np.clip,
       lambda g, ans, a, a_min=None, a_max=None:
       unbroadcast(g * clip_selected(a, a_min, a_max, 0), a),
       lambda g, ans, a, a_min=None, a_max=None:
       unbroadcast(g * clip_selected(a, a_min, a_max, 1), a_min),
       lambda g, ans, a, a_min=None, a_max=None:
       unbroadcast(g * clip_selected(a, a_min, a_max, 2), a_max))
defjvp(np.clip,
       lambda t, ans, a, a_min=None, a_max=None: broadcast_like(
           t * clip_selected(a, a_min, a_max, 0), ans),
       lambda t, ans, a, a_min=None, a_max=None: broadcast_like(
           t * clip_selected(a, a_min, a_max, 1), ans),
       lambda t, ans, a, a_min=None, a_max=None: broadcast_like(
           t * clip_selected(a, a_min, a_max, 2), ans))

defnondiff(np.sign, np.floor, np.ceil, np.round, np.around, np.rint, np.trunc, np.fix,
           np.floor_divide, np.isnan, np.isinf, np.isfinite, np.signbit, np.less,
           np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
           np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
           np.isclose, np.allclose, np.array_equal)

# nan_to_num: the identity on finite entries, constants elsewhere
defvjp(np.nan_to_num, lambda g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None:
       np.where(np.isfinite(x), g, 0.0))
defjvp(np.nan_to_num, lambda t, ans, x, copy=True, nan=0.0, posinf=None, neginf=None:
       np.where(np.isfinite(x), t, 0.0))
# radians/degrees (the same maps as deg2rad/rad2deg, separate ufuncs)
defvjp(np.radians, lambda g, ans, x: g * (np.pi / 180))
defjvp(np.radians, lambda t, ans, x: t * (np.pi / 180))
defvjp(np.degrees, lambda g, ans, x: g * (180 / np.pi))
defjvp(np.degrees, lambda t, ans, x: t * (180 / np.pi))
# unwrap adds piecewise-constant multiples of the period: the identity derivative
defvjp(np.unwrap, lambda g, ans, p, discont=None, axis=-1, period=2 * np.pi: unbroadcast(g, p))
defjvp(np.unwrap, lambda t, ans, p, discont=None, axis=-1, period=2 * np.pi:
       broadcast_like(t, ans))
