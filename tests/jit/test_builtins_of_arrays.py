"""Python's ``max``/``min`` of a 1-D array and ``list`` of an array under ``s2s.jit``, as the
builtins run them (the first item replaced by each later one that compares greater or
less: a nan first stays, a later one is passed over; ``ValueError`` when empty; ``list``
of a matrix is its rows), and their derivatives (the first item equal to the extreme
takes it; a list's cotangent stacked back into the array's shape) against central
differences."""
import numpy as np
import pytest

import s2s

from tests.compose.finite_differences import fd_gradient

X = np.array([0.31, -0.52, 0.77, 0.18])
CASES = {
    "max and min": lambda x: max(x) * min(x ** 2) + max(x[0], x[1]),
    "list of numbers": lambda x: sum(list(x * 2.0)) * list(x)[1],
    "list grown": lambda x: (lambda l: (l.append(x[0] * 3.0), sum(l) * l[-1])[1])(list(x)),
    "rows": lambda x: sum(np.sum(r ** 2) * r[0] for r in list(np.outer(x, x[:2]))),
    "max of a generator": lambda x: max(float(v) * v for v in x),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients(name):
    f = CASES[name]
    np.testing.assert_allclose(s2s.jit(f)(X), f(X), rtol=1e-14)
    want = fd_gradient(f, X)
    np.testing.assert_allclose(s2s.grad(f)(X), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(X), want, rtol=1e-6, atol=1e-9)
    t = np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(s2s.jit(lambda x, t: s2s.jvp(f, (x,), (t,))[1])(X, t),
                               want @ t, rtol=1e-6, atol=1e-9)


def test_nan_and_empty_as_the_builtins():
    for x in (np.array([np.nan, 1.0, 0.5]), np.array([1.0, np.nan, 0.5])):
        for fn in (min, max):
            got, want = s2s.jit(lambda a: fn(a))(x), fn(x)
            assert got == want or (np.isnan(got) and np.isnan(want))
    with pytest.raises(ValueError, match=r"max\(\) iterable argument is empty"):
        s2s.jit(lambda a: max(a))(np.zeros(0))
    with pytest.raises(s2s.S2SError, match="ambiguous truth value"):
        s2s.jit(lambda a: min(a))(np.zeros((2, 2)))


def step_limit(h, t):
    return min(h * 1.5, 0.2, 1.0 - t + 1e-12) + max(h, 2, t) * 0.5


def limited_product(x):
    return min(x[0] * 1.5, 0.2, 1.0 - x[1]) * max(x[0], 0.15, x[1] ** 2)


def test_max_and_min_of_several_numbers():
    """``min(a, b, c)`` of numbers (a tuple's scan) compiles, with its derivatives (it was
    refused: "jit does not compile min_of((float, float, float))"); ints stay ints."""
    import math
    for args in [(0.1, 0.3), (0.5, 0.95), (3.0, 0.0), (math.nan, 0.1), (0.1, math.nan)]:
        want = step_limit(*args)
        got = s2s.jit(step_limit)(*args)
        assert got == want or (math.isnan(got) and math.isnan(want))
    assert type(s2s.jit(lambda: max(1, 3, 2))()) is int
    for x in (np.array([0.1, 0.3]), np.array([0.05, 0.9]), np.array([0.3, 0.2])):
        want = fd_gradient(limited_product, x)
        np.testing.assert_allclose(s2s.jit(s2s.grad(limited_product))(x), want, rtol=1e-6,
                                   atol=1e-9)
        t = np.array([1.0, -2.0])
        assert s2s.jit(lambda x, t: s2s.jvp(limited_product, (x,), (t,))[1])(x, t) == \
            pytest.approx(want @ t, rel=1e-6, abs=1e-9)
