"""``functools.reduce(f, xs[, initial])`` in transformed code: the loop
``acc = f(acc, x)`` (``frontend/comprehensions.py``), so a lambda, a local function or
an ``operator`` function passed to it is inlined where it is called.  Checked in every
transform and the jit against Python's values and central differences."""
import functools
import operator
from functools import reduce

import numpy as np
import pytest

import s2s

from tests.compose.finite_differences import fd_gradient, fd_hessian


def with_initial(x):
    return functools.reduce(lambda a, b: a * b + 1.0, x, 1.0)


def initial_and_sine(x):
    return reduce(lambda a, b: a + np.sin(b) * a, x, 0.5)


def first_item_starts(x):
    return reduce(lambda a, b: a * b + 1.0, x)


def operator_add_of_a_list(x):
    return reduce(operator.add, [x[0] ** 2, x[1] * x[2], np.sin(x[0])])


def local_function_over_arrays(x):
    def combine(a, b):
        return np.maximum(a, b) + 0.1 * a * b
    return np.sum(reduce(combine, (x, x[::-1], x * 2.0)))


def matrix_chain(x):
    return reduce(np.matmul, [np.outer(x, x), np.eye(3) + x[0], np.diag(x)]).sum()


X = np.array([0.3, -0.5, 0.7])
FUNCTIONS = [with_initial, initial_and_sine, first_item_starts, operator_add_of_a_list,
             local_function_over_arrays, matrix_chain]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_values_and_derivatives(f):
    np.testing.assert_allclose(s2s.jit(f)(X), f(X), rtol=1e-13)
    want = fd_gradient(f, X)
    np.testing.assert_allclose(s2s.grad(f)(X), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(X), want, rtol=1e-6, atol=1e-8)
    v = np.array([0.2, -0.1, 0.4])
    np.testing.assert_allclose(s2s.jvp(f, (X,), (v,))[1], want @ v, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.hessian(f)(X), fd_hessian(f, X), rtol=1e-4, atol=1e-6)
    xs = np.stack([X, X * 0.5, -X])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(xs),
                               np.stack([fd_gradient(f, x) for x in xs]), rtol=1e-6, atol=1e-8)


def test_empty_iterable_without_initial_is_pythons_type_error():
    def f(x):
        return reduce(lambda a, b: a + b, x[:0])

    for run in (f, s2s.jit(f), s2s.grad(f)):
        with pytest.raises(TypeError, match="reduce\\(\\) of empty iterable with no initial"):
            run(X)


def test_a_call_reduce_does_not_take_is_refused_at_its_line():
    def f(x):
        return reduce(lambda a, b: a + b, x, 0.0, 1.0)

    with pytest.raises(s2s.errors.UnsupportedSyntaxError, match="functools.reduce"):
        s2s.grad(f)(X)
