"""The gradient corpus: straight-line functions (plus if/else and conditional
expressions) with example inputs, checked by ``test_corpus.py`` against
finite differences and, for many, a closed form or the complex step.

Every function is a module-level ``def`` (or a lambda bound at module level)
so that s2s can read its source.  ``CASES`` lists them with their inputs:

    Case(fn, args, argnums=0, closed=None, cstep=False)

``closed(*args)`` is a hand-written gradient (a tree shaped like the
``argnums`` result); ``cstep=True`` marks real-analytic code that the
complex step can check (numpy/arithmetic only, no abs/max/comparisons).
"""
from __future__ import annotations

import collections
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np


@dataclass
class Case:
    fn: Callable
    args: tuple
    argnums: Any = 0
    closed: Optional[Callable] = None
    cstep: bool = False
    kwargs: dict = field(default_factory=dict)
    id: str = ""

    def __post_init__(self):
        if not self.id:
            self.id = self.fn.__name__
            if self.argnums != 0:
                self.id += f"-argnums{self.argnums}".replace(" ", "")


rng = np.random.default_rng(1234)


def A(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape)


CASES = []


def case(*a, **k):
    CASES.append(Case(*a, **k))


# ===================================================== scalar arithmetic

def add_sub(x, y):
    return x + y - 2.0 * x + 3.0


def mul_div(x, y):
    return x * y / (x + 2.0) - y / x


def pow_int(x):
    return x ** 3 + x ** 2 - x ** -1


def pow_float(x, y):
    return x ** 2.5 + x ** y


def unary_minus(x, y):
    return -x * -y + (-(x - y)) ** 2


def abs_scalar(x, y):
    return abs(x) * y + abs(x - y)


def poly_horner(x):
    return ((2.0 * x - 3.0) * x + 1.5) * x - 7.0


case(add_sub, (1.3, -0.4), (0, 1), closed=lambda x, y: (-1.0, 1.0), cstep=True)
case(mul_div, (1.3, -0.4), (0, 1),
     closed=lambda x, y: (y * 2.0 / (x + 2.0) ** 2 + y / x ** 2, x / (x + 2.0) - 1.0 / x),
     cstep=True)
case(pow_int, (1.7,), closed=lambda x: 3 * x ** 2 + 2 * x + x ** -2, cstep=True)
case(pow_float, (1.7, 0.6), (0, 1),
     closed=lambda x, y: (2.5 * x ** 1.5 + y * x ** (y - 1), x ** y * math.log(x)), cstep=True)
case(unary_minus, (0.8, -1.1), (0, 1),
     closed=lambda x, y: (y + 2 * (x - y), x - 2 * (x - y)), cstep=True)
case(abs_scalar, (-0.8, 1.1), (0, 1), closed=lambda x, y: (-y - 1.0, abs(x) + 1.0))
case(abs_scalar, (0.8, -1.1), (0, 1), id="abs_scalar-positive",
     closed=lambda x, y: (y + 1.0, abs(x) - 1.0))
case(poly_horner, (0.9,), closed=lambda x: 6 * x ** 2 - 6 * x + 1.5, cstep=True)


# ===================================================== math module

def math_trig(x):
    return math.sin(x) * math.cos(x) + math.tan(x)


def math_inverse_trig(x):
    return math.asin(x) + 2.0 * math.acos(x) + math.atan(x)


def math_hyperbolic(x):
    return math.sinh(x) - math.cosh(x) * math.tanh(x)


def math_exp_log(x):
    return math.exp(x) + math.expm1(x) + math.log(x) + math.log1p(x) + math.log2(x) + math.log10(x)


def math_sqrt_pow(x, y):
    return math.sqrt(x * y) + math.pow(x, y) + math.pow(x, 3.0)


def math_hypot_atan2(x, y):
    return math.hypot(x, y) + math.atan2(y, x)


def math_log_base(x):
    return math.log(x, 3.0)


case(math_trig, (0.7,), closed=lambda x: math.cos(2 * x) + 1.0 / math.cos(x) ** 2)
case(math_inverse_trig, (0.3,),
     closed=lambda x: -1.0 / math.sqrt(1 - x * x) + 1.0 / (1 + x * x))
case(math_hyperbolic, (0.4,),
     closed=lambda x: math.cosh(x) - math.sinh(x) * math.tanh(x) - 1.0 / math.cosh(x))
case(math_exp_log, (1.3,),
     closed=lambda x: (2 * math.exp(x) + 1 / x + 1 / (1 + x) + 1 / (x * math.log(2))
                       + 1 / (x * math.log(10))))
case(math_sqrt_pow, (1.4, 0.7), (0, 1),
     closed=lambda x, y: (0.5 * y / math.sqrt(x * y) + y * x ** (y - 1) + 3 * x ** 2,
                          0.5 * x / math.sqrt(x * y) + x ** y * math.log(x)))
case(math_hypot_atan2, (1.2, -0.5), (0, 1),
     closed=lambda x, y: (x / math.hypot(x, y) - y / (x * x + y * y),
                          y / math.hypot(x, y) + x / (x * x + y * y)))
case(math_log_base, (2.5,), closed=lambda x: 1.0 / (x * math.log(3.0)))


# ===================================================== numpy elementwise

def np_unary(x):
    return np.sum(np.sin(x) + np.cos(x) * np.tan(x) + np.exp(x) + np.log(x + 2.0) + np.sqrt(x + 2.0))


def np_unary2(x):
    return np.sum(np.square(x) + np.reciprocal(x + 3.0) + np.negative(x) + np.tanh(x)
                  + np.arctan(x) + np.expm1(x) + np.log1p(x + 1.5))


def np_inverse(x):
    return np.sum(np.arcsin(x * 0.5) + np.arccos(x * 0.5) * 2.0 + np.sinh(x) + np.cosh(x))


def np_sign_abs(x):
    return np.sum(np.sign(x) * x ** 2 + np.abs(x))


def np_max_min(x, y):
    return np.sum(np.maximum(x, y) * 2.0 + np.minimum(x, y) * 3.0)


def np_fmax_fmin(x, y):
    return np.sum(np.fmax(x, y) + np.fmin(x, y) * 5.0)


def np_where(x, y):
    return np.sum(np.where(x > 0.0, x * y, y ** 2))


def np_clip(x):
    return np.sum(np.clip(x, -0.5, 0.5) * x)


def np_power_arctan2(x, y):
    return np.sum(np.power(x + 2.0, y) + np.arctan2(y, x + 2.0))


def np_logaddexp(x, y):
    return np.sum(np.logaddexp(x, y))


def np_scalar_funcs(x):
    return np.sin(x) * np.exp(x) + np.log(x)


_x5 = A(5)
_y5 = A(5)
case(np_unary, (A(4),), cstep=True,
     closed=lambda x: (np.cos(x) - np.sin(x) * np.tan(x) + np.cos(x) / np.cos(x) ** 2
                       + np.exp(x) + 1 / (x + 2) + 0.5 / np.sqrt(x + 2)))
case(np_unary2, (A(4),), cstep=True,
     closed=lambda x: (2 * x - 1 / (x + 3) ** 2 - 1 + 1 - np.tanh(x) ** 2 + 1 / (1 + x * x)
                       + np.exp(x) + 1 / (x + 2.5)))
case(np_inverse, (A(4),), cstep=True,
     closed=lambda x: -0.5 / np.sqrt(1 - x * x / 4) + np.cosh(x) + np.sinh(x))
case(np_sign_abs, (np.array([-1.5, -0.2, 0.3, 2.0]),),
     closed=lambda x: 2 * np.sign(x) * x + np.sign(x))
case(np_max_min, (_x5, _y5), (0, 1),
     closed=lambda x, y: (np.where(x > y, 2.0, 3.0), np.where(x > y, 3.0, 2.0)))
case(np_fmax_fmin, (_x5, _y5), (0, 1),
     closed=lambda x, y: (np.where(x > y, 1.0, 5.0), np.where(x > y, 5.0, 1.0)))
case(np_where, (np.array([-1.0, 0.5, 2.0, -0.3]), np.array([0.2, -0.7, 1.1, 3.0])), (0, 1),
     closed=lambda x, y: (np.where(x > 0, y, 0.0), np.where(x > 0, x, 2 * y)))
case(np_clip, (np.array([-1.0, -0.2, 0.3, 0.9]),),
     closed=lambda x: np.where(np.abs(x) < 0.5, 2 * x, np.clip(x, -0.5, 0.5)))
case(np_power_arctan2, (A(4), A(4, lo=0.5, hi=2.0)), (0, 1))
case(np_logaddexp, (A(4), A(4)), (0, 1),
     closed=lambda x, y: (1 / (1 + np.exp(y - x)), 1 / (1 + np.exp(x - y))))
case(np_scalar_funcs, (1.3,), cstep=True,
     closed=lambda x: np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x) + 1 / x)


# ===================================================== reductions

def red_sum_axes(x):
    return np.sum(np.sum(x, axis=0) ** 2) + np.sum(np.sum(x, axis=-1) ** 3) + np.sum(x)


def red_sum_tuple_keepdims(x):
    s = np.sum(x, axis=(0, 2), keepdims=True)
    return np.sum((x - s) ** 2)


def red_mean(x):
    return np.mean(np.mean(x, axis=1) ** 2) + np.mean(x, axis=(0, 1)) ** 2 * 0.0 + np.mean(x) ** 2


def red_mean_keepdims(x):
    return np.sum((x - np.mean(x, axis=-1, keepdims=True)) ** 2)


def red_prod(x):
    return np.prod(x) + np.sum(np.prod(x, axis=1) ** 2) + np.sum(np.prod(x, axis=0, keepdims=True))


def red_max_min(x):
    return np.max(x) * 2.0 + np.sum(np.max(x, axis=0)) + np.sum(np.min(x, axis=-1) ** 2)


def red_max_keepdims(x):
    return np.sum(x - np.max(x, axis=1, keepdims=True))


_x34 = A(3, 4)
_x234 = A(2, 3, 4)
case(red_sum_axes, (_x34,), cstep=True,
     closed=lambda x: (2 * np.sum(x, axis=0)[None, :] + 3 * np.sum(x, axis=1)[:, None] ** 2 + 1))
case(red_sum_tuple_keepdims, (_x234,), cstep=True)
case(red_mean, (_x34,), cstep=True)
case(red_mean_keepdims, (_x34,), cstep=True,
     closed=lambda x: 2 * (x - np.mean(x, axis=-1, keepdims=True)))
case(red_prod, (A(3, 4, lo=0.5, hi=1.5),), cstep=True)
case(red_max_min, (_x34,))
case(red_max_keepdims, (_x34,),
     closed=lambda x: 1.0 - 4.0 * (x == np.max(x, axis=1, keepdims=True)))


# ===================================================== products

def prod_dot(x, y):
    return np.dot(x, y) + np.vdot(x, y) * 2.0


def prod_matmul(a, b):
    return np.sum(np.tanh(a @ b)) + np.sum(np.matmul(a, b) ** 2)


def prod_matvec(a, v):
    return np.sum(np.dot(a, v) ** 2)


def prod_outer_inner(x, y):
    return np.sum(np.outer(x, y) ** 2) + np.inner(x, y)


def prod_tensordot(a, b):
    return np.sum(np.tensordot(a, b, axes=([1, 2], [0, 1])) ** 2)


def prod_tensordot_int(a, b):
    return np.sum(np.sin(np.tensordot(a, b, axes=1)))


case(prod_dot, (A(4), A(4)), (0, 1), closed=lambda x, y: (3 * y, 3 * x), cstep=False)
case(prod_matmul, (A(3, 4), A(4, 2)), (0, 1), cstep=True)
case(prod_matvec, (A(3, 4), A(4)), (0, 1),
     closed=lambda a, v: (2 * np.outer(a @ v, v), 2 * a.T @ (a @ v)), cstep=True)
case(prod_outer_inner, (A(3), A(3)), (0, 1),
     closed=lambda x, y: (2 * x * np.sum(y ** 2) + y, 2 * y * np.sum(x ** 2) + x), cstep=True)
case(prod_tensordot, (A(2, 3, 4), A(3, 4, 2)), (0, 1), cstep=True)
case(prod_tensordot_int, (A(2, 3), A(3, 4)), (0, 1), cstep=True)


# ===================================================== shape ops

def shape_transpose_reshape(x):
    y = np.transpose(x) * np.arange(3.0)
    z = np.reshape(y, (2, 6))
    return np.sum(z[0] * z[1])


def shape_squeeze_expand(x):
    y = np.expand_dims(x, 0) * np.ones((3, 1, 4))
    return np.sum(np.squeeze(y[:, :1, :], axis=1) ** 2) + np.sum(np.squeeze(x) ** 3)


def shape_transpose_axes(x):
    return np.sum(np.transpose(x, (2, 0, 1)) * np.arange(24.0).reshape(4, 2, 3))


def shape_concatenate(x, y):
    z = np.concatenate([x, y * 2.0], axis=0)
    return np.sum(z ** 2 * np.arange(1.0, 8.0)[:, None])


def shape_stack(x, y):
    z = np.stack([x, y, x * y], axis=1)
    return np.sum(z * np.array([1.0, 2.0, 3.0]))


def shape_split(x):
    a, b = np.split(x, 2)
    c, d, e = np.split(x, [1, 3])
    return np.sum(a * b) + np.sum(c) * 2.0 + np.sum(d ** 2) + np.sum(e ** 3)


def shape_array_from_scalars(a, b):
    v = np.array([a, b, a * b])
    return np.sum(v ** 2)


case(shape_transpose_reshape, (A(3, 4),), cstep=True)
case(shape_squeeze_expand, (A(1, 4),), cstep=True)
case(shape_transpose_axes, (_x234,), closed=lambda x: np.transpose(
    np.arange(24.0).reshape(4, 2, 3), (1, 2, 0)), cstep=True)
case(shape_concatenate, (A(3, 2), A(4, 2)), (0, 1), cstep=True,
     closed=lambda x, y: (2 * x * np.arange(1.0, 4.0)[:, None],
                          8 * y * np.arange(4.0, 8.0)[:, None]))
case(shape_stack, (A(4), A(4)), (0, 1), closed=lambda x, y: (1 + 3 * y, 2 + 3 * x), cstep=True)
case(shape_split, (A(4),), cstep=True,
     closed=lambda x: np.array([x[2] + 2, x[3] + 2 * x[1], x[0] + 2 * x[2], x[1] + 3 * x[3] ** 2]))
case(shape_array_from_scalars, (1.5, -0.5), (0, 1),
     closed=lambda a, b: (2 * a + 2 * a * b * b, 2 * b + 2 * a * a * b), cstep=True)


# ===================================================== indexing and slicing

def idx_basic(x):
    return x[0] * x[-1] + x[2] ** 2


def idx_slices(x):
    return np.sum(x[1:5:2] ** 2) + np.sum(x[::-1] * np.arange(8.0)) + np.sum(x[-3:])


def idx_2d(x):
    return np.sum(x[1, :] * x[:, 2][:3]) + x[-1, -1] * x[0, 1] + np.sum(x[::2, 1::2])


def idx_none_ellipsis(x):
    return np.sum(x[None, :, 0] * x[..., 1][:, None]) + np.sum(x[..., -1])


def idx_int_arg(x, i):
    return x[i] ** 2 + x[i + 1]


def idx_tuple_index(x):
    return np.sum(x[0, 1:3, ::-1] ** 2) + x[1, 2, 3]


case(idx_basic, (A(5),), cstep=True,
     closed=lambda x: np.array([x[-1], 0, 2 * x[2], 0, x[0]]))
case(idx_slices, (A(8),), cstep=True)
case(idx_2d, (A(4, 3),), cstep=True)
case(idx_none_ellipsis, (A(3, 4),), cstep=True)
case(idx_int_arg, (A(5), 2), closed=lambda x, i: np.array([0, 0, 2 * x[2], 1.0, 0]))
case(idx_tuple_index, (_x234,), cstep=True)


# ===================================================== broadcasting

def bc_scalar_array(s, x):
    return np.sum((s + x) * s)


def bc_col_row(a, b):
    return np.sum(np.sin(a + b) * (a * b))


def bc_vec_mat(v, m):
    return np.sum((v * m) ** 2 + v / (m + 2.0))


case(bc_scalar_array, (0.7, A(4)), (0, 1),
     closed=lambda s, x: (np.sum(2 * s + x), np.full(4, s)), cstep=True)
case(bc_col_row, (A(3, 1), A(1, 4)), (0, 1), cstep=True)
case(bc_vec_mat, (A(4), A(3, 4)), (0, 1), cstep=True)


# ===================================================== assignment forms

def reassign(x):
    x = x * 2.0
    x = x * 2.0 + 1.0
    x = np.sin(x)
    return x * x


def augassign(x, y):
    z = x * 1.0
    z += y
    z *= x
    z -= 3.0 * y
    z /= 2.0
    z **= 2
    return z


def augassign_array(x):
    y = np.zeros(3)
    y += x
    y *= x
    return np.sum(y)


def unpack_swap(a, b):
    a, b = b, a * 2.0
    c, (d, e) = a + b, (a * b, b - a)
    a, b = b, a
    return a * 3.0 + b * 5.0 + c * d * e


def tuple_return_unpack(x):
    p = (x, x * 2.0, x * 3.0)
    u, v, w = p
    return u * v * w


case(reassign, (0.3,), closed=lambda x: 2 * np.sin(4 * x + 1) * np.cos(4 * x + 1) * 4, cstep=True)
case(augassign, (1.2, 0.4), (0, 1), cstep=True,
     closed=lambda x, y: ((2 * x + y - 3 * y) * 0 + ((x + y) * x - 3 * y) * (2 * x + y) / 2,
                          ((x + y) * x - 3 * y) * (x - 3) / 2))
case(augassign_array, (A(3),), closed=lambda x: 2 * x)
case(unpack_swap, (0.6, -1.3), (0, 1), cstep=True)
case(tuple_return_unpack, (0.8,), closed=lambda x: 18 * x ** 2, cstep=True)


# ===================================================== control flow

def cond_expr(x, y):
    return x * y if x > 0 else x - y


def chained_cmp(x, y):
    if 0.0 < x < 1.0 <= y:
        return x * y
    return x + y


def if_elif_else(x):
    if x < -1.0:
        return -x ** 3
    elif x < 1.0:
        y = x * x
        return y * 2.0
    else:
        y = math.exp(x)
    return y + x


def if_no_else(x):
    y = x * 2.0
    if x > 0.5:
        y = y * x
    return y


def nested_if(x, y):
    if x > 0.0:
        if y > 0.0:
            r = x * y
        else:
            r = x - y
    else:
        r = y ** 2 if y > 1.0 else x ** 2
    return r * 2.0


def cond_on_array_sum(x):
    if np.sum(x) > 0.0:
        return np.sum(x ** 2)
    return np.sum(x ** 3)


case(cond_expr, (0.5, 1.5), (0, 1), closed=lambda x, y: (y, x), id="cond_expr-true")
case(cond_expr, (-0.5, 1.5), (0, 1), closed=lambda x, y: (1.0, -1.0), id="cond_expr-false")
case(chained_cmp, (0.5, 1.5), (0, 1), closed=lambda x, y: (y, x), id="chained_cmp-true")
case(chained_cmp, (0.5, 0.5), (0, 1), closed=lambda x, y: (1.0, 1.0), id="chained_cmp-false")
case(if_elif_else, (-2.0,), closed=lambda x: -3 * x * x, id="if_elif_else-if")
case(if_elif_else, (0.5,), closed=lambda x: 4 * x, id="if_elif_else-elif")
case(if_elif_else, (1.5,), closed=lambda x: math.exp(x) + 1, id="if_elif_else-else")
case(if_no_else, (0.3,), closed=lambda x: 2.0, id="if_no_else-skip")
case(if_no_else, (0.7,), closed=lambda x: 4 * x, id="if_no_else-taken")
case(nested_if, (0.5, 0.5), (0, 1), closed=lambda x, y: (2 * y, 2 * x), id="nested_if-pp")
case(nested_if, (0.5, -0.5), (0, 1), closed=lambda x, y: (2.0, -2.0), id="nested_if-pn")
case(nested_if, (-0.5, 1.5), (0, 1), closed=lambda x, y: (0.0, 4 * y), id="nested_if-np")
case(nested_if, (-0.5, 0.5), (0, 1), closed=lambda x, y: (4 * x, 0.0), id="nested_if-nn")
case(cond_on_array_sum, (np.array([0.5, 1.0, -0.2]),), closed=lambda x: 2 * x,
     id="cond_on_array_sum-pos")
case(cond_on_array_sum, (np.array([-0.5, 1.0, -0.9]),), closed=lambda x: 3 * x ** 2,
     id="cond_on_array_sum-neg")


# ===================================================== calls, arguments

def with_defaults(x, y=2.0, *, scale=3.0):
    return scale * x ** y


def _helper(x, scale=2.0, shift=0.0):
    return scale * np.sin(x) + shift


def _helper2(a, b):
    return a * b, a + b


def calls_helper(x, y):
    u = _helper(x)
    v = _helper(y, shift=x, scale=0.5)
    p, s = _helper2(u, v)
    return p + s * _helper(x, 3.0)


def kwargs_call(x):
    return np.sum(np.clip(x, a_min=-0.5, a_max=0.5) ** 2) + np.sum(np.sum(x, axis=0, keepdims=True))


case(with_defaults, (1.5,), closed=lambda x: 6 * x, id="with_defaults")
case(with_defaults, (1.5,), kwargs={"scale": 0.5}, closed=lambda x: x, id="with_defaults-kw")
case(with_defaults, (1.5, 3.0), (0, 1), kwargs={"scale": 0.5},
     closed=lambda x, y: (1.5 * x * x, 0.5 * x ** 3 * math.log(x)), id="with_defaults-y")
case(calls_helper, (0.7, -0.4), (0, 1), cstep=True)
case(kwargs_call, (A(2, 3),))


# ===================================================== array attributes & methods

def methods_basic(x):
    return np.sum(x.T * x.T) + x.sum() + x.sum(axis=0)[1] + x.mean() * x.shape[0]


def methods_reshape(x):
    y = x.reshape(2, 3) * np.arange(6.0).reshape(2, 3)
    z = y.reshape((3, 2))
    return z.sum() + z.max()


def methods_dot_copy_astype(x, y):
    z = x.copy()
    w = z.astype(np.float64)
    return w.dot(y).sum() + x.T.dot(y).mean()


def methods_misc(x):
    return x.prod() + x.mean(axis=1).sum() + x.min() + np.sum(x.ravel() ** 2) + x.ndim * 1.0


case(methods_basic, (A(3, 4),), cstep=True,
     closed=lambda x: 2 * x + 1 + np.array([0, 1.0, 0, 0])[None, :] + 3.0 / 12)
case(methods_reshape, (A(6),))
case(methods_dot_copy_astype, (A(3, 3), A(3, 2)), (0, 1))
case(methods_misc, (A(2, 3, lo=0.5, hi=1.5),))


# ===================================================== globals and closures

W_GLOBAL = np.array([1.0, -2.0, 3.0])


def uses_global(x):
    return np.sum(W_GLOBAL * x ** 2)


def make_closure(c):
    k = c * 2.0

    def inner(x):
        return np.sum(np.sin(x) * k) + c * x[0]
    return inner


closure_fn = make_closure(1.5)


def _global_helper(x):
    return x * 2.0


def uses_global_helper(x):
    return _global_helper(x) * x

case(uses_global, (A(3),), closed=lambda x: 2 * W_GLOBAL * x, cstep=True)
case(uses_global_helper, (1.5,), closed=lambda x: 4 * x, cstep=True)
case(closure_fn, (A(3),), closed=lambda x: 3.0 * np.cos(x) + np.array([1.5, 0, 0]), cstep=True,
     id="closure")


# ===================================================== models

def mlp_loss(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    pred = h @ params["w2"] + params["b2"]
    return np.mean((pred - y) ** 2)


def logreg_loss(w, b, x, y):
    logits = x @ w + b
    # log(1 + exp(z)) = logaddexp(0, z), stable
    return np.mean(np.logaddexp(0.0, logits) - y * logits)


def logsumexp_loss(w, x):
    z = x @ w
    m = np.max(z, axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.sum(np.exp(z - m), axis=1))
    return np.sum(lse)


def softmax_xent(logits, labels):
    z = logits - np.max(logits, axis=-1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=-1))


_mlp_params = {"w1": A(3, 4), "b1": A(4), "w2": A(4, 2), "b2": A(2)}
_onehot = np.eye(3)[[0, 2, 1, 1]]
case(mlp_loss, (_mlp_params, A(5, 3), A(5, 2)), cstep=False)
case(logreg_loss, (A(3), 0.2, A(6, 3), (A(6) > 0).astype(float)), (0, 1))
case(logsumexp_loss, (A(3, 4), A(5, 3)))
case(softmax_xent, (A(4, 3), _onehot),
     closed=lambda z, l: (np.exp(z) / np.sum(np.exp(z), axis=-1, keepdims=True) - l) / 4)


# ===================================================== pytrees

Point = collections.namedtuple("Point", ["x", "y"])


def tree_dict(p):
    return p["a"] * p["b"] + np.sum(p["c"] ** 2)


def tree_list_tuple(lst, tup):
    return lst[0] * tup[1] + lst[1] ** 2 * tup[0]


def tree_namedtuple(pt):
    return pt.x ** 2 * pt.y + pt[1]


def tree_nested_int(p):
    return p["w"]["a"] * p["n"] + np.sum(p["w"]["v"]) * p["flag"]


def tree_none_leaf(p):
    return p[0] * 2.0 + p[2] ** 2


case(tree_dict, ({"a": 1.5, "b": -0.5, "c": A(3)},),
     closed=lambda p: {"a": p["b"], "b": p["a"], "c": 2 * p["c"]})
case(tree_list_tuple, ([0.5, 1.5], (2.0, -1.0)), (0, 1),
     closed=lambda l, t: ([t[1], 2 * l[1] * t[0]], (l[1] ** 2, l[0])))
case(tree_namedtuple, (Point(1.5, 2.0),), closed=lambda p: Point(2 * p.x * p.y, p.x ** 2 + 1))
case(tree_nested_int, ({"w": {"a": 1.5, "v": A(3)}, "n": 3, "flag": True},),
     closed=lambda p: {"w": {"a": 3.0, "v": np.ones(3)}, "n": 0.0, "flag": 0.0})
case(tree_none_leaf, ((1.0, None, 2.0),), closed=lambda p: (2.0, None, 4.0))


# ===================================================== lambdas

f1 = lambda x: x * 2.0; f2 = lambda x: x ** 3  # noqa: E702,E731
square_lambda = lambda x, y=2.0: x ** y * np.sin(x)  # noqa: E731

case(f1, (1.5,), closed=lambda x: 2.0, id="lambda_f1")
case(f2, (1.5,), closed=lambda x: 3 * x * x, id="lambda_f2")
case(square_lambda, (0.9,), closed=lambda x: 2 * x * np.sin(x) + x * x * np.cos(x),
     id="lambda_default")


# ===================================================== one-line defs

def oneliner(x): return x * x * 3.0  # noqa: E704


def oneliner_two(x, y): return np.sum(np.sin(x) * y)  # noqa: E704


case(oneliner, (1.5,), closed=lambda x: 6 * x, cstep=True)
case(oneliner_two, (A(3), A(3)), (0, 1), closed=lambda x, y: (np.cos(x) * y, np.sin(x)),
     cstep=True)


# ===================================================== more numpy

def more_var_std(x):
    return np.var(x) + np.sum(np.var(x, axis=0)) + np.sum(np.std(x, axis=1, ddof=1))


def more_cumsum_cumprod(x):
    return np.sum(np.cumsum(x, axis=1) ** 2) + np.sum(np.cumsum(x) ** 2) + np.sum(np.cumprod(x, axis=0))


def more_norm_trace(x):
    return np.linalg.norm(x) + np.sum(np.linalg.norm(x, axis=1)) + np.trace(x[:, :3] @ x[:, :3].T)


def more_hstack_vstack(x):
    return np.sum(np.hstack([x, x * 2.0]) ** 2) + np.sum(np.vstack([x, x[:1]]) ** 3)


def more_flip_swap_move(x):
    c = np.arange(12.0)
    return (np.sum(np.flip(x, axis=1) * c.reshape(3, 4)) + np.sum(np.swapaxes(x, 0, 1) * c.reshape(4, 3))
            + np.sum(np.moveaxis(x[None], 0, 2) ** 2 * 1.5))


def more_broadcast_tile_repeat(v):
    return (np.sum(np.broadcast_to(v, (3, 5)) * np.arange(15.0).reshape(3, 5))
            + np.sum(np.tile(v, 2) * np.arange(10.0)) + np.sum(np.repeat(v, 2) * np.arange(10.0)))


def more_sort_diag(v):
    return np.sum(np.sort(v) * np.arange(5.0)) + np.sum(np.diag(v) @ np.ones((5, 5)) * np.arange(5.0))


def more_methods(x):
    return (x.std() + x.var(axis=0).sum() + x.max(axis=1).sum() + x.min(axis=0, keepdims=True).sum()
            + np.sum(x.cumsum(axis=0) ** 2) + np.sum(x.clip(0.8, 1.2) ** 2) + np.sum(x.flatten() ** 3)
            + x[1:2, 0].item() * 3.0)


def more_where_kw_dtype(x):
    return np.sum(x, where=x > 1.0) + np.sum(x, dtype=np.float64) * np.mean(x, axis=0).sum()


def more_linspace_full(v):
    return np.sum(np.linspace(v[0], v[1], 5) ** 2) + np.sum(np.full((2, 2), v[2]) * v[3])


def more_prod_with_zero(v):
    return np.prod(v)


def more_max_ties(v):
    return np.max(np.array([v[0], v[0], v[1]]))


_xp = A(3, 4, lo=0.5, hi=1.5)
_v5 = A(5)
case(more_var_std, (_xp,))  # np.var uses |.|^2: not analytic
case(more_cumsum_cumprod, (_xp,), cstep=True)
case(more_norm_trace, (_xp,))
case(more_hstack_vstack, (_xp,), cstep=True)
case(more_flip_swap_move, (_xp,), cstep=True)
case(more_broadcast_tile_repeat, (_v5,), cstep=True)
case(more_sort_diag, (_v5,))
case(more_methods, (_xp,))
case(more_where_kw_dtype, (_xp,))
case(more_linspace_full, (_v5,), closed=lambda v: (
    np.array([2 * np.sum(np.linspace(v[0], v[1], 5) * np.linspace(1, 0, 5)),
              2 * np.sum(np.linspace(v[0], v[1], 5) * np.linspace(0, 1, 5)), 4 * v[3], 4 * v[2], 0.0])))
case(more_prod_with_zero, (np.array([0.0, 0.5, -1.5, 2.0, 0.7]),), closed=lambda v: np.array([np.prod(v[1:]), 0, 0, 0, 0]))
# JAX: the max is v[0] twice; each copy gets half the cotangent, so v[0] gets 1.0
case(more_max_ties, (np.array([1.0, 0.5]),), closed=lambda v: np.array([1.0, 0.0]))

# control flow, calls, classes, containers and in-place writes
from . import corpus_control  # noqa: E402,F401  (registers its cases)
