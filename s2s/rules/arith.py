"""Python operators and builtins: ``+ - * / ** @ // %``, unary minus, ``abs``.

JAX's convention for complex numbers: the VJP of a holomorphic primitive
multiplies by the (unconjugated) derivative, ``x_bar = g * f'(x)``.
Broadcasting is undone by ``unbroadcast``.  Each ``defjvp`` beside a
``defvjp`` gives the tangent contributions ``t * f'(x)``, broadcast to the
result's shape by ``broadcast_like`` where the parameter can be smaller.
"""
import operator

import numpy as np

from s2s_runtime import (batch_complex, broadcast_like, cast_jvp, cast_vjp, field_tangent,
                         getattr_vjp, matmul_vjp_lhs, matmul_vjp_rhs, power, sum_builtin_jvp,
                         sum_builtin_vjp, unbroadcast)

from .registry import defjvp, defnondiff, defvjp

defvjp(operator.add, lambda g, ans, x, y: unbroadcast(g, x),
       lambda g, ans, x, y: unbroadcast(g, y))
defjvp(operator.add, lambda t, ans, x, y: broadcast_like(t, ans),
       lambda t, ans, x, y: broadcast_like(t, ans))
# (the negation after the sum back to y's shape: one negation of the smaller array)
defvjp(operator.sub, lambda g, ans, x, y: unbroadcast(g, x),
       lambda g, ans, x, y: -unbroadcast(g, y))
defjvp(operator.sub, lambda t, ans, x, y: broadcast_like(t, ans),
       lambda t, ans, x, y: broadcast_like(-t, ans))
defvjp(operator.mul, lambda g, ans, x, y: unbroadcast(g * y, x),
       lambda g, ans, x, y: unbroadcast(g * x, y))
# (a contribution that involves the other operand already has the result's shape)
defjvp(operator.mul, lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t)
defvjp(operator.truediv, lambda g, ans, x, y: unbroadcast(g / y, x),
       lambda g, ans, x, y: -unbroadcast(g * ans / y, y))
defjvp(operator.truediv, lambda t, ans, x, y: t / y, lambda t, ans, x, y: -t * ans / y)
# d(x**y) = y x**(y-1) dx + log(x) x**y dy   (log taken as 0 where x == 0; the exponent
# y - 1 + (y == 0) is y - 1 except where y == 0, whose term y x**(...) is then 0, also at
# x == 0 where x**-1 would be inf, NaN or a ZeroDivisionError; it folds for a constant y).
# ``power`` is ``**`` with numpy's inf where Python raises ZeroDivisionError (x == 0,
# 0 < y < 1: a finite function, an infinite derivative); a constant exponent >= 0 folds
# back to ``**`` (templates.simplify).  ``power`` itself (generated code differentiated
# again) has the same rules.
for _pow in (operator.pow, power):
    defvjp(_pow, lambda g, ans, x, y: unbroadcast(g * y * power(x, y - 1 + (y == 0)), x),
           lambda g, ans, x, y: unbroadcast(g * ans * np.log(np.where(x == 0, 1.0, x)), y))
    defjvp(_pow, lambda t, ans, x, y: t * y * power(x, y - 1 + (y == 0)),
           lambda t, ans, x, y: t * ans * np.log(np.where(x == 0, 1.0, x)))
defvjp(operator.matmul, lambda g, ans, x, y: matmul_vjp_lhs(g, x, y),
       lambda g, ans, x, y: matmul_vjp_rhs(g, x, y))
# d(x @ y) = dx @ y + x @ dy  (numpy's 1-D promotion applies to dx, dy as to x, y)
defjvp(operator.matmul, lambda t, ans, x, y: broadcast_like(np.matmul(t, y), ans),
       lambda t, ans, x, y: broadcast_like(np.matmul(x, t), ans))
# x % y = x - floor(x/y) y
defvjp(operator.mod, lambda g, ans, x, y: unbroadcast(g, x),
       lambda g, ans, x, y: unbroadcast(-g * np.floor_divide(x, y), y))
defjvp(operator.mod, lambda t, ans, x, y: broadcast_like(t, ans),
       lambda t, ans, x, y: -t * np.floor_divide(x, y))
defvjp(operator.neg, lambda g, ans, x: -g)
defjvp(operator.neg, lambda t, ans, x: -t)
defvjp(operator.pos, lambda g, ans, x: g)
defjvp(operator.pos, lambda t, ans, x: t)
# |x|' = conj(x)/|x| (sign(x) for reals; 0 at 0)
defvjp(abs, lambda g, ans, x: g * np.conj(x) / np.where(ans == 0, 1.0, ans))
# d|x| = Re(conj(x) dx) / |x|  (sign(x) dx for real x; 0 at 0)
defjvp(abs, lambda t, ans, x: np.real(np.conj(x) * t) / np.where(ans == 0, 1.0, ans))
# obj.name of a namedtuple: g placed at that field
defvjp(getattr, lambda g, ans, obj, name: getattr_vjp(g, obj, name))
# the tangent of obj.name is the same field of obj's tangent (a record alike; a
# property is refused rather than run on the tangent)
defjvp(getattr, lambda t, ans, obj, name: field_tangent(t, name))
defvjp(float, lambda g, ans, x: unbroadcast(g, x))
defjvp(float, lambda t, ans, x: float(t))
# casts to a numpy scalar type: the cotangent goes back in the input's type
for _cast in (np.float64, np.float32, np.float16, np.longdouble, np.complex128, np.complex64):
    defvjp(_cast, lambda g, ans, x: cast_vjp(g, x))
    # the tangent in the result's type (its real part for a real cast of a complex x)
    defjvp(_cast, lambda t, ans, x: cast_jvp(t, ans))
# pow(x, y) is x ** y
defvjp(pow, lambda g, ans, base, exp, mod=None:
       unbroadcast(g * exp * base ** (exp - 1 + (exp == 0)), base),
       lambda g, ans, base, exp, mod=None: unbroadcast(
           g * ans * np.log(np.where(base == 0, 1.0, base)), exp))
defjvp(pow, lambda t, ans, base, exp, mod=None: t * exp * base ** (exp - 1 + (exp == 0)),
       lambda t, ans, base, exp, mod=None: t * ans * np.log(np.where(base == 0, 1.0, base)))
# max(a, b) / min(a, b) of two numbers: g goes to the selected one (half each on a tie,
# like np.maximum): g (a > b) + g/2 (a == b), a number for numbers (scalar code stays
# scalar) in g's dtype (bools scale without promoting float32); the one-iterable and
# 3+-argument forms do not bind and are errors
defvjp(max, lambda g, ans, a, b: unbroadcast((g * (a > b) + g * 0.5 * (a == b)), a),
       lambda g, ans, a, b: unbroadcast((g * (b > a) + g * 0.5 * (a == b)), b))
defjvp(max, lambda t, ans, a, b: (t * (a > b) + t * 0.5 * (a == b)),
       lambda t, ans, a, b: (t * (b > a) + t * 0.5 * (a == b)))
defvjp(min, lambda g, ans, a, b: unbroadcast((g * (a < b) + g * 0.5 * (a == b)), a),
       lambda g, ans, a, b: unbroadcast((g * (b < a) + g * 0.5 * (a == b)), b))
defjvp(min, lambda t, ans, a, b: (t * (a < b) + t * 0.5 * (a == b)),
       lambda t, ans, a, b: (t * (b < a) + t * 0.5 * (a == b)))
# sum(items, start): every item (and start) receives g
defvjp(sum, lambda g, ans, iterable, start=0: sum_builtin_vjp(g, iterable),
       lambda g, ans, iterable, start=0: unbroadcast(g, start))
defjvp(sum, lambda t, ans, iterable, start=0: sum_builtin_jvp(t, ans),
       lambda t, ans, iterable, start=0: broadcast_like(t, ans))
# complex(re, im) = re + 1j im, holomorphic in both (complex arguments are allowed): re_bar =
# g, im_bar = 1j g (unbroadcast keeps the real part for a real argument: Re g, -Im g)
defvjp(complex, lambda g, ans, real, imag=0.0: unbroadcast(g, real),
       lambda g, ans, real, imag=0.0: unbroadcast(1j * g, imag))
# complex(re, im) = re + 1j im  (complex(t) keeps the tangent complex, like ans)
defjvp(complex, lambda t, ans, real, imag=0.0: complex(t),
       lambda t, ans, real, imag=0.0: 1j * t)
# batch_complex(re, im): complex(re, im) elementwise (vmap's form of it), the same maths;
# each tangent made complex by batch_complex itself (exact, as ans's parts)
defvjp(batch_complex, lambda g, ans, real, imag: unbroadcast(g, real),
       lambda g, ans, real, imag: unbroadcast(1j * g, imag))
defjvp(batch_complex, lambda t, ans, real, imag: broadcast_like(batch_complex(t, 0.0), ans),
       lambda t, ans, real, imag: broadcast_like(batch_complex(0.0, t), ans))

defnondiff(operator.floordiv, operator.lt, operator.le, operator.gt, operator.ge,
           operator.eq, operator.ne, operator.is_, operator.is_not, operator.not_,
           operator.and_, operator.or_, operator.xor, operator.invert, operator.lshift,
           operator.rshift, int, bool, len, round, isinstance, str, range, slice,
           print, repr, type, id)
