"""Python operators and builtins: ``+ - * / ** @ // %``, unary minus, ``abs``.

JAX's convention for complex numbers: the VJP of a holomorphic primitive
multiplies by the (unconjugated) derivative, ``x_bar = g * f'(x)``.
Broadcasting is undone by ``unbroadcast``.
"""
import operator

import numpy as np

from s2s_runtime import (cast_vjp, getattr_vjp, matmul_vjp_lhs, matmul_vjp_rhs,
                         sum_builtin_vjp, unbroadcast)

from .registry import defnondiff, defvjp

defvjp(operator.add, lambda g, ans, x, y: unbroadcast(g, x),
       lambda g, ans, x, y: unbroadcast(g, y))
defvjp(operator.sub, lambda g, ans, x, y: unbroadcast(g, x),
       lambda g, ans, x, y: unbroadcast(-g, y))
defvjp(operator.mul, lambda g, ans, x, y: unbroadcast(g * y, x),
       lambda g, ans, x, y: unbroadcast(g * x, y))
defvjp(operator.truediv, lambda g, ans, x, y: unbroadcast(g / y, x),
       lambda g, ans, x, y: unbroadcast(-g * ans / y, y))
# d(x**y) = y x**(y-1) dx + log(x) x**y dy   (log taken as 0 where x == 0)
defvjp(operator.pow, lambda g, ans, x, y: unbroadcast(g * y * x ** (y - 1), x),
       lambda g, ans, x, y: unbroadcast(g * ans * np.log(np.where(x == 0, 1.0, x)), y))
defvjp(operator.matmul, lambda g, ans, x, y: matmul_vjp_lhs(g, x, y),
       lambda g, ans, x, y: matmul_vjp_rhs(g, x, y))
# x % y = x - floor(x/y) y
defvjp(operator.mod, lambda g, ans, x, y: unbroadcast(g, x),
       lambda g, ans, x, y: unbroadcast(-g * np.floor_divide(x, y), y))
defvjp(operator.neg, lambda g, ans, x: -g)
defvjp(operator.pos, lambda g, ans, x: g)
# |x|' = conj(x)/|x| (sign(x) for reals; 0 at 0)
defvjp(abs, lambda g, ans, x: g * np.conj(x) / np.where(ans == 0, 1.0, ans))
# obj.name of a namedtuple: g placed at that field
defvjp(getattr, lambda g, ans, obj, name: getattr_vjp(g, obj, name))
defvjp(float, lambda g, ans, x: unbroadcast(g, x))
# casts to a numpy scalar type: the cotangent goes back in the input's type
for _cast in (np.float64, np.float32, np.float16, np.longdouble, np.complex128, np.complex64):
    defvjp(_cast, lambda g, ans, x: cast_vjp(g, x))
# pow(x, y) is x ** y
defvjp(pow, lambda g, ans, base, exp, mod=None: unbroadcast(g * exp * base ** (exp - 1), base),
       lambda g, ans, base, exp, mod=None: unbroadcast(
           g * ans * np.log(np.where(base == 0, 1.0, base)), exp))
# max(a, b) / min(a, b) of two numbers: g goes to the selected one (half each on a tie,
# like np.maximum); the one-iterable and 3+-argument forms do not bind and are errors
defvjp(max, lambda g, ans, a, b: unbroadcast(g * np.where(a > b, 1.0, np.where(a == b, 0.5, 0.0)), a),
       lambda g, ans, a, b: unbroadcast(g * np.where(b > a, 1.0, np.where(a == b, 0.5, 0.0)), b))
defvjp(min, lambda g, ans, a, b: unbroadcast(g * np.where(a < b, 1.0, np.where(a == b, 0.5, 0.0)), a),
       lambda g, ans, a, b: unbroadcast(g * np.where(b < a, 1.0, np.where(a == b, 0.5, 0.0)), b))
# sum(items, start): every item (and start) receives g
defvjp(sum, lambda g, ans, iterable, start=0: sum_builtin_vjp(g, iterable),
       lambda g, ans, iterable, start=0: unbroadcast(g, start))
defvjp(complex, lambda g, ans, real, imag=0.0: unbroadcast(np.real(g), real),
       lambda g, ans, real, imag=0.0: unbroadcast(-np.imag(g), imag))

defnondiff(operator.floordiv, operator.lt, operator.le, operator.gt, operator.ge,
           operator.eq, operator.ne, operator.is_, operator.is_not, operator.not_,
           operator.and_, operator.or_, operator.xor, operator.invert, operator.lshift,
           operator.rshift, int, bool, len, round, isinstance, str, range, slice, divmod)
