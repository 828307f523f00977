"""Reverse mode through an in-place operator on an array that another read keeps
shared (``v7 = v[0]`` before ``v *= np.tanh(x)``): the operator's product reads the
array before the write, and its adjoint must see those values, not the written ones.

Found by the random program generator (``test_random_programs.py``): the statement
``t = v * w`` that ``index_writes.py`` makes of ``v *= w`` was not known to carry a
derivative, so it read ``v`` after the write (a wrong gradient).  Oracles: central
finite differences in float64 and the complex step; ``jit(grad)`` and ``jvp`` agree."""
import numpy as np
import pytest

import s2s


def times_after_read(x):
    v = np.sin(x)
    first = v[0]
    v *= np.tanh(x)
    return first + np.sum(v)


def divide_after_read(x):
    v = np.cos(x) + 2.0
    first = v[1]
    v /= x + 3.0
    return first * np.sum(v * v)


def power_after_read(x):
    v = np.exp(0.5 * x)
    first = v[-1]
    v **= 2.0
    v *= x
    return first + np.sum(v)


def in_a_loop(x):
    v = x * 1.0
    total = 0.0
    for k in range(3):
        total = total + v[k]
        v *= np.sin(x + k)
    return total + np.sum(v)


def row_read_then_written(x):
    m = np.outer(x, x)
    r = m[0, 1]
    m *= np.cos(x)
    return r + np.sum(m)


CASES = [times_after_read, divide_after_read, power_after_read, in_a_loop,
         row_read_then_written]
X = np.array([0.3, -0.5, 0.9])


def _fd(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


def _complex_step(f, x):
    return np.array([f(x + 1e-30j * e).imag / 1e-30 for e in np.eye(x.size)])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_after_an_in_place_operator_on_a_read_array(f):
    g = s2s.grad(f)(X)
    np.testing.assert_allclose(g, _fd(f, X), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(g, _complex_step(f, X), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(X), g, rtol=1e-12)
    t = np.array([0.2, -1.0, 0.7])
    np.testing.assert_allclose(s2s.jvp(f, (X,), (t,))[1], g @ t, rtol=1e-12)


def power_through_a_view(x):
    v = np.exp(0.3 * x)
    w = v[0:2]
    v **= x  # w sees the new values
    return np.sum(w) + np.sum(v * v)


def power_with_exponent(x):
    v = np.cos(x) + 1.5
    first = v[0]
    v **= x[1]
    return first * np.sum(v)


@pytest.mark.parametrize("f", [power_through_a_view, power_with_exponent],
                         ids=lambda f: f.__name__)
def test_forward_mode_of_an_in_place_power(f):
    """``a **= b`` where ``a`` is shared: the tangent is updated in place by
    d(a**b) = b a**(b-1) da + a**b log(a) db."""
    fd = _fd(f, X)
    for t in np.eye(3):
        np.testing.assert_allclose(s2s.jvp(f, (X,), (t,))[1], fd @ t, rtol=1e-7, atol=1e-9)
