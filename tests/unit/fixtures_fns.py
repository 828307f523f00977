"""Fixture functions for the unit tests of the frontend and the passes.

They live in a real file so that s2s can read their source.  Line numbers
are never hard-coded in the tests: the tests find a line by its text (see
``line_of``), so editing this file does not break them.
"""
import functools
import inspect
import math

import numpy
import numpy as np

W = np.array([1.0, 2.0, 3.0])
SCALE = 2.5
CALLS = []  # a log for the short-circuit tests


def line_of(fn, needle, nth=0):
    """(absolute line number, line text) of the nth line of fn's source containing needle."""
    lines, start = inspect.getsourcelines(fn)
    hits = [(start + i, text.rstrip("\n")) for i, text in enumerate(lines) if needle in text]
    return hits[nth]


def log(tag, value):
    CALLS.append(tag)
    return value


def helper(a, b=3.0):
    return a * b + 1.0


# --- exec-equivalence corpus ---------------------------------------------------

def arith(x, y):
    a = x * y + math.sin(x)
    a += 3
    a -= y / 2
    a *= 1.5
    a **= 2
    a //= 0.7
    return a % 5.0 - -a


def swap(a, b):
    a, b = b, a
    return a - 2 * b


def rotate(a, b, c):
    a, b, c = c, a, b
    return a * 100 + b * 10 + c


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def unpack_nested(t):
    (a, b), c = t
    return a * 100 + b * 10 + c


def chained(x):
    return 0 < x <= 10 != x


def boolops(a, b):
    return (a and b) or (not a and 7)


def ifexp(x):
    return x if x > 0 else -x * 2


def defaults(x, y=2.0, z=None):
    if z is None:
        z = 3.0
    return x * y + z


def array_methods(x):
    return np.sum(x.T @ x, axis=0) + x.shape[0] + x.sum(axis=1).mean()


def slicing(x):
    y = x[1:3] * 2 + x[::-1][:2] - x[-1]
    return y[0] + y[1] * x[2:4].prod()


def uses_globals(x):
    return np.dot(W, x) * SCALE + helper(x[0])


def halving(x):
    n = 0
    while x > 1.0:
        x = x / 2.0
        n += 1
    return n, x


def loop_control(x):
    s = 0.0
    for i in range(10):
        if i % 2 == 0:
            continue
        if i > 7:
            break
        s += i * x
    else:
        s = -1.0
    return s


def piecewise(x):
    if x < -1.0:
        return -x
    elif x < 1.0:
        y = x * x
        return y
    else:
        z = 2.0 * x - 1.0
    return z


def inplace(x):
    y = np.zeros(3)
    y[0] = x
    y[1:] += x * 2
    return y


def containers(x):
    d = {"a": x, "b": [x, 2 * x]}
    t = (x, d["b"][1])
    return d["b"][1] + len(d) + t[0] - (x in (1.0, 2.0)) + (x not in [3.0])


def guarded(x):
    try:
        y = 1.0 / x
    except ZeroDivisionError:
        y = 0.0
    assert y == y, "nan"
    return y


def matrix_index(x, i):
    return x[i, 0] + x[i, 1:].sum() + x[:, i].T[0]


def docstring_fn(x):
    """Doubles x."""
    return 2 * x


def calls_helper_kw(x):
    return helper(b=x, a=2.0) + helper(x)


# --- locations -------------------------------------------------------------------

def located(x):
    y = x * 2.0
    z = (y +
         math.sin(x))
    return z


def make_closure(k):
    arr = np.array([1.0, 2.0])

    def inner(x):
        w = x * k + np.sum(arr)
        return math.exp(w) + helper(w)

    return inner


def identity_decorator(fn):
    return fn


@identity_decorator
def decorated(x):
    return x + 1.0


@functools.lru_cache(
    maxsize=None)
@identity_decorator
def decorated_twice(x):
    return x * 3.0


K = 2.0; scale_lambda = lambda x: x * K  # noqa: E702,E731

LAMBDAS_DIFFERENT_OPS = (lambda x: x + 1.0, lambda x: x * 3.0)
LAMBDAS_DIFFERENT_PARAMS = (lambda a: a - 1.0, lambda b: b - 2.0)
LAMBDAS_SAME_SHAPE = (lambda x: x * 2.0, lambda x: x * 3.0)


# --- hygiene -----------------------------------------------------------------------

def hygiene(x):
    np = 2.0  # noqa: F811 (shadows the module on purpose)
    math = x * np  # noqa: F811
    rt = numpy.sin(math)
    x_bar = rt * x
    d = x_bar + 1.0
    _stack = d * d
    t1 = _stack - x
    t2 = numpy.cos(t1) + x_bar
    return t2 * rt + t1


# --- precedence ---------------------------------------------------------------------

def prec_sum_times(a, b, c):
    return (a + b) * c


def prec_neg_pow(x):
    return -(x ** 2)


def prec_pow_neg(x):
    return (-x) ** 2


def prec_pow_neg_exp(x):
    return x ** -1


def prec_pow_right(x):
    return 2 ** x ** 2


def prec_pow_left(x):
    return (2 ** x) ** 2


def prec_sub_right(a, b, c):
    return a - (b - c) - (a / (b * c))


def prec_compare(a, b, c):
    return ((a < b) == (b < c), not a < b, (a + b) < c * 2, -a ** 2 < b)


def prec_subscript(a, b):
    return (a + b)[0] * -(a - b)[1]
