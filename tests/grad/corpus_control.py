"""The corpus, continued: control flow, calls, classes, containers and in-place
writes (issue 4).  Every case goes through the same oracles as the rest of
the corpus (``test_corpus.py``: finite differences; ``test_forward_corpus.py``:
jvp, the jvp/vjp dot-product test, linearize, Hessian-vector products and
hessian against differences of gradients, reverse over reverse).

Inputs sit away from the kinks of piecewise code (branch tests, ``break``
conditions), so central differences see one smooth piece.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .corpus import A, case

# ===================================================== for loops


def cf_range_step(x):
    s = 0.0
    for i in range(1, 9, 3):
        s = s + np.sin(x * i)
    return s


def cf_range_negative_step(x):
    s = x
    for i in range(5, 0, -2):
        s = s * 0.5 + np.cos(s) * i
    return s


def cf_over_rows(m):
    s = 0.0
    for row in m:
        s = s + np.sum(np.tanh(row) * row)
    return s


def cf_over_list(x):
    s = 0.0
    for w in [0.5, -1.5, 2.0]:
        s = s + w * x ** 2
    return s


def cf_over_tuple_of_arrays(a, b):
    s = 0.0
    for v in (a, b, a * b):
        s = s + np.sum(v ** 2)
    return s


def cf_zip(a, b):
    s = 0.0
    for u, v in zip(a, b):
        s = s + u * np.exp(v)
    return s


def cf_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + (i + 1.0) * v ** 3
    return s


def cf_reversed(x):
    s = 1.0
    for v in reversed(x):
        s = s * 0.7 + v * s
    return s


def cf_enumerate_zip(a, b):
    s = 0.0
    for i, (u, v) in enumerate(zip(a, b), 1):
        s = s + i * u * np.sin(v)
    return s


def cf_zip_enumerate_reversed(a, b):
    """zip stops at the shorter ``a``; ``reversed(b)`` starts from ``b``'s own end."""
    s = 0.0
    for (i, u), v in zip(enumerate(a), reversed(b)):
        s = s * 0.9 + (i + 1.0) * u * v
    return s


def cf_enumerate_reversed(x):
    s = 0.0
    for i, v in enumerate(reversed(x)):
        s = s + (i + 1.0) * v ** 2
    return s


def cf_nested_loops(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(i, m.shape[1]):
            s = s + m[i, j] * m[j % m.shape[0], i]
    return s


def cf_loop_carried_array(x):
    h = np.zeros(3)
    for _ in range(4):
        h = np.tanh(h + x)
    return np.sum(h)


def cf_loop_else(x):
    s = x
    for i in range(3):
        s = s * 1.1
    else:
        s = s + 1.0
    return s * s


# ===================================================== while, break, continue


def cf_while_data_dependent(x):
    k = 0
    while x < 5.0:
        x = x * 1.3 + 0.1
        k += 1
    return x * k


def cf_while_tolerance(a):
    """Newton's square root: the trip count depends on the input."""
    r = a
    while abs(r * r - a) > 1e-12 * a:
        r = 0.5 * (r + a / r)
    return r


def cf_break(x):
    s = 0.0
    for i in range(10):
        s = s + np.sin(x + i)
        if s > 1.3:
            break
    return s * x


def cf_continue(x):
    s = 0.0
    for i in range(6):
        if i % 2 == 0:
            continue
        s = s + x ** i
    return s


def cf_while_break_else(x):
    k = 0
    while k < 10:
        x = x * 1.2
        if x > 3.0:
            break
        k += 1
    else:
        x = -x
    return x


# ===================================================== branches


def cf_elif(x):
    if x < -1.0:
        y = x ** 2
    elif x < 1.0:
        y = np.sin(x)
    else:
        y = np.log(x)
    return y * x


def cf_conditional_expression(x):
    y = x * 2.0 if x > 0.0 else x ** 3
    return y + (np.cos(y) if y < 1.0 else y)


def cf_branch_in_loop(x):
    s = 0.0
    for i in range(5):
        if (i + x) % 2.0 > 1.0:
            s = s + x * i
        else:
            s = s - np.exp(x / (i + 1))
    return s


def cf_early_return(x):
    if x > 0.5:
        return x ** 3
    y = np.exp(x)
    return y * x


def cf_assert(x):
    assert x > 0.0, "needs a positive x"
    return np.sqrt(x) * x


# ===================================================== try / except


def cf_try_seed(x):
    """The seed's example: vjp at 4 is pi, at 2 is 24."""
    try:
        if x < 3:
            return 2 * x ** 3
        else:
            raise ValueError
    except ValueError:
        return np.pi * x


def cf_try_else(x):
    try:
        y = x * 2.0
        if y > 10.0:
            raise ArithmeticError("too big")
    except ArithmeticError:
        y = 0.0
    else:
        y = y * y
    return y + x


# ===================================================== calls


def _helper_poly(x, a=2.0, *, b=1.0):
    return a * x ** 2 + b * x


def cf_call_defaults_keywords(x):
    return _helper_poly(x) + _helper_poly(x, 3.0, b=-0.5) + _helper_poly(b=x, x=2.0)


def _helper_loop(x, n):
    for _ in range(n):
        x = np.sin(x) + x
    return x


def cf_call_with_loop(x):
    return _helper_loop(x, 3) * _helper_loop(x * 0.5, 2)


def _helper_pair(x):
    return np.sin(x), np.cos(x)


def cf_call_returning_tuple(x):
    s, c = _helper_pair(x)
    return s * c + s ** 2


# ===================================================== classes


class _Affine:
    scale = 2.0

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return self.w * x + self.b

    @property
    def norm(self):
        return self.w ** 2 + self.b ** 2

    @staticmethod
    def act(z):
        return np.tanh(z)

    def forward(self, x):
        return self.act(self(x)) * self.scale


def cf_class_built_inside(w, b, x):
    layer = _Affine(w, b)
    return np.sum(layer.forward(x)) + layer.norm


class _Counter:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total = self.total + v


def cf_object_state(x):
    c = _Counter()
    for i in range(3):
        c.add(x * i)
    return c.total * x


class _Pair(NamedTuple):
    a: float
    b: float


def cf_namedtuple_built_inside(x):
    p = _Pair(x, x * 2.0)
    return p.a * p.b + p[0]


# ===================================================== in-place writes


def cf_fill_in_loop(x):
    y = np.zeros(4)
    for i in range(4):
        y[i] = x[i % 3] * x[(i + 1) % 3]
    return np.sum(np.sin(y))


def cf_recurrence_in_place(x):
    y = x.copy()
    for i in range(1, 4):
        y[i] += y[i - 1] * x[i]
    return np.sum(y ** 2)


def cf_row_writes(w, xs):
    h = np.zeros((4, 3))
    for t in range(3):
        h[t + 1] = np.tanh(w @ h[t] + xs[t])
    return np.sum(h ** 2)


def cf_slice_and_mask_writes(x):
    y = np.ones(5)
    y[1:4] = x[:3] * 2.0
    y[y > 1.0] = np.sqrt(y[y > 1.0])
    y[0] += x[4]
    return np.sum(y * x)


def cf_matrix_entries(x):
    m = np.eye(3)
    for i in range(3):
        for j in range(3):
            m[i, j] += x[i] * x[j]
    return np.trace(m @ m)


def cf_write_then_read_whole(x):
    y = np.zeros(3)
    s = 0.0
    for i in range(3):
        s = s + np.sum(y * x)
        y[i] = x[i] ** 2
    return s


def cf_while_writes(x):
    y = np.zeros(6)
    k = 0
    s = x[0]
    while s < 3.0 and k < 6:
        y[k] = s
        s = s * 1.5 + x[1]
        k += 1
    return np.sum(y ** 2) + s


# ===================================================== ODE / numerics


def cf_rk4(theta):
    y, t, dt = 1.0, 0.0, 0.1
    for _ in range(20):
        k1 = -theta * y + math.sin(t)
        k2 = -theta * (y + 0.5 * dt * k1) + math.sin(t + 0.5 * dt)
        k3 = -theta * (y + 0.5 * dt * k2) + math.sin(t + 0.5 * dt)
        k4 = -theta * (y + dt * k3) + math.sin(t + dt)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + dt
    return y


def cf_fixed_point(a):
    x = 1.0
    for _ in range(30):
        x = math.cos(a * x)
    return x


def cf_horner(c, x):
    r = 0.0
    for k in reversed(range(c.shape[0])):
        r = r * x + c[k]
    return r


def cf_softmax_loop(z):
    m = np.max(z)
    total = 0.0
    for v in z:
        total = total + np.exp(v - m)
    return np.log(total) + m


# ===================================================== returns and try inside loops


def cf_return_in_loop(x):
    for i in range(6):
        x = x * 1.1 + 0.05 * i
        if x > 1.4:
            return x * 2.0
    return x


def cf_return_in_nested_loops(x):
    s = 0.0
    for i in range(4):
        for j in range(4):
            s = s + x * (i + j)
            if s > 3.0:
                return s * s
    return s


def cf_try_in_loop(x):
    for i in range(4):
        try:
            if x > 2.0:
                raise ValueError
            x = x * 1.5
        except ValueError:
            x = x - 0.25 * i
    return x


def cf_finally(x):
    try:
        y = np.sin(x)
        if y > 0.9:
            raise RuntimeError
    except RuntimeError:
        y = 0.9 * x
    finally:
        y = y * x + 1.0
    return y


# ===================================================== comprehensions, lambdas, closures


def cf_generator_sum(x):
    return sum(x[i] ** 2 * i for i in range(x.shape[0]))


def cf_list_comprehension(x):
    ys = [np.sin(v) * v for v in x if v > -0.9]
    return sum(ys) + np.sum(np.stack([x * k for k in range(3)]))


def cf_nested_comprehension(m):
    return sum(m[i, j] * m[j, i] for i in range(m.shape[0]) for j in range(i + 1))


def cf_lambda_closure(x):
    scale = x * 2.0
    g = lambda z: z * scale + np.cos(z)  # noqa: E731
    return g(x) + g(0.5)


def cf_nested_def(x):
    def step(z, k=0.5):
        return z + k * np.tanh(z * x)

    y = x
    for _ in range(3):
        y = step(y)
    return step(y, k=2.0)


def _apply_twice(f, x):
    return f(f(x))


def cf_function_argument(x):
    return _apply_twice(np.sin, x) + _apply_twice(lambda z: z * z, x)


def _weighted(x, *args, scale=1.0, **kwargs):
    return x * scale + sum(args) + kwargs["bias"]


def cf_star_args(x):
    return _weighted(x, x ** 2, 1.0, scale=3.0, bias=x * 0.5)


def _depth(x, n):
    if n == 0:
        return x
    return np.sin(_depth(x, n - 1)) + x


def cf_recursion(x):
    return _depth(x, 4)


# ===================================================== lists, dicts, records


def cf_list_methods(x):
    out = []
    for i in range(4):
        out.append(x * i)
    out.extend([x ** 2, np.sin(x)])
    last = out.pop()
    return sum(out) * last


def cf_dict_methods(x):
    d = {"a": x}
    d["b"] = x * 3.0
    d.update({"c": np.exp(x)})
    return d.get("a", 0.0) * d["b"] + d.get("missing", 1.0) * d["c"]


@dataclass
class _Params:
    w: float
    b: float


def cf_records(p, x):
    """A NamedTuple argument, a dataclass made inside (dataclass arguments: test_containers)."""
    q = _Params(p.a * 2.0, p.b)
    return np.sum(np.tanh(q.w * x + q.b))


class _Module:
    """A PyTorch-style module passed in: its arrays are constants."""

    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.tanh(self.w @ x)


_MODULE = _Module(A(3, 3))


def cf_module(x):
    """A module object held in a global (objects as arguments: test_calls)."""
    return np.sum(_MODULE(x) ** 2)


# ------------------------------------------------------------------ the cases

_v3, _v4, _v5 = A(3), A(4), A(5)
case(cf_range_step, (0.3,), cstep=True)
case(cf_range_negative_step, (0.4,), cstep=True)
case(cf_over_rows, (A(3, 4),), cstep=True)
case(cf_over_list, (0.7,), closed=lambda x: 2 * 1.0 * x, cstep=True)
case(cf_over_tuple_of_arrays, (_v3, A(3)), argnums=(0, 1), cstep=True)
case(cf_zip, (_v4, A(4)), argnums=(0, 1), cstep=True)
case(cf_enumerate, (_v5,), closed=lambda x: 3 * np.arange(1.0, 6.0) * x ** 2, cstep=True)
case(cf_reversed, (_v4,), cstep=True)
case(cf_enumerate_zip, (_v4, A(4)), argnums=(0, 1), cstep=True)
case(cf_zip_enumerate_reversed, (_v3, _v5), argnums=(0, 1), cstep=True)
case(cf_enumerate_reversed, (_v4,), closed=lambda x: 2 * np.arange(4.0, 0.0, -1.0) * x,
     cstep=True)
case(cf_nested_loops, (A(3, 3),), cstep=True)
case(cf_loop_carried_array, (_v3,), cstep=True)
case(cf_loop_else, (0.6,), closed=lambda x: 2 * (x * 1.1 ** 3 + 1.0) * 1.1 ** 3, cstep=True)
case(cf_while_data_dependent, (0.77,))
case(cf_while_tolerance, (2.3,), closed=lambda a: 0.5 / math.sqrt(a))
case(cf_break, (0.2,))
case(cf_continue, (0.8,), closed=lambda x: 1 + 3 * x ** 2 + 5 * x ** 4, cstep=True)
case(cf_while_break_else, (0.9,))
case(cf_elif, (-1.7,), id="cf_elif-low")
case(cf_elif, (0.4,), id="cf_elif-mid")
case(cf_elif, (1.9,), id="cf_elif-high")
case(cf_conditional_expression, (0.3,), id="cf_conditional_expression-pos")
case(cf_conditional_expression, (-0.6,), id="cf_conditional_expression-neg")
case(cf_branch_in_loop, (0.35,))
case(cf_early_return, (0.8,), closed=lambda x: 3 * x ** 2, id="cf_early_return-taken")
case(cf_early_return, (0.2,), closed=lambda x: np.exp(x) * (1 + x), id="cf_early_return-not")
case(cf_assert, (1.7,), closed=lambda x: 1.5 * np.sqrt(x))
case(cf_try_seed, (4.0,), closed=lambda x: np.pi, id="cf_try_seed-4")
case(cf_try_seed, (2.0,), closed=lambda x: 24.0, id="cf_try_seed-2")
case(cf_try_else, (1.5,), closed=lambda x: 8 * x + 1, id="cf_try_else-small")
case(cf_try_else, (6.0,), closed=lambda x: 1.0, id="cf_try_else-big")
case(cf_call_defaults_keywords, (0.7,), cstep=True)
case(cf_call_with_loop, (0.4,), cstep=True)
case(cf_call_returning_tuple, (0.9,), cstep=True)
case(cf_class_built_inside, (0.5, -0.2, _v3), argnums=(0, 1, 2))
case(cf_object_state, (1.3,), closed=lambda x: 6 * x, cstep=True)
case(cf_namedtuple_built_inside, (0.8,), closed=lambda x: 4 * x + 1, cstep=True)
case(cf_fill_in_loop, (_v3,))
case(cf_recurrence_in_place, (_v4,))
case(cf_row_writes, (A(3, 3) * 0.5, A(3, 3)), argnums=(0, 1))
case(cf_slice_and_mask_writes, (np.array([0.9, 0.2, 0.75, -0.3, 0.5]),))
case(cf_matrix_entries, (_v3,))
case(cf_write_then_read_whole, (_v3,))
case(cf_while_writes, (np.array([0.6, 0.3]),))
case(cf_rk4, (0.8,), cstep=True)
case(cf_fixed_point, (0.6,))
case(cf_horner, (_v5, 0.7), argnums=(0, 1), cstep=True)
case(cf_softmax_loop, (_v5,))
case(cf_return_in_loop, (0.9,), id="cf_return_in_loop-taken")
case(cf_return_in_loop, (0.3,), id="cf_return_in_loop-not")
case(cf_return_in_nested_loops, (0.45,))
case(cf_try_in_loop, (1.1,))
case(cf_finally, (0.4,), id="cf_finally-plain")
case(cf_finally, (1.4,), id="cf_finally-raised")
case(cf_generator_sum, (_v4,), closed=lambda x: 2 * x * np.arange(4.0), cstep=True)
case(cf_list_comprehension, (np.array([0.3, -0.5, 1.2]),))
case(cf_nested_comprehension, (A(3, 3),), cstep=True)
case(cf_lambda_closure, (0.6,), cstep=True)
case(cf_nested_def, (0.7,), cstep=True)
case(cf_function_argument, (0.8,), cstep=True)
case(cf_star_args, (0.9,), closed=lambda x: 3.0 + 2 * x + 0.5, cstep=True)
case(cf_recursion, (0.5,), cstep=True)
case(cf_list_methods, (0.7,))
case(cf_dict_methods, (0.4,))
case(cf_records, (_Pair(0.5, -0.3), _v3), argnums=(0, 1))
case(cf_module, (_v3,))
