"""Functions of floats' representation and of indices, compiled from plain code
(``rules/numpy_code``): ``math.ldexp``, ``math.ulp``, ``math.lcm``, ``np.ldexp`` at
extreme exponents, ``np.isreal``/``np.iscomplex``, ``np.nanargmax``/``np.nanargmin``
and ``np.argmax``/``np.argmin`` with ``keepdims`` (which the jit once dropped), each
against Python's or numpy's value, dtype and error."""
import math
import warnings

import numpy as np
import pytest

import s2s


def _same(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            want, error = f(*args), None
        except Exception as exc:  # the compiled function must raise the same
            want, error = None, exc
    if error is not None:
        with pytest.raises(type(error)) as got:
            s2s.jit(f)(*args)
        assert str(got.value) == str(error)
        return
    got = s2s.jit(f)(*args)
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("x, i", [(1.5, 3), (1e-300, 1100), (1.0, 1024), (1.0, -1080),
                                  (0.0, 5000), (-0.0, 5000), (math.inf, 2), (math.nan, 1),
                                  (5e-324, 2090)])
def test_math_ldexp(x, i):
    _same(lambda x, i: math.ldexp(x, i), x, i)


def test_np_ldexp_at_extreme_exponents():
    x = np.array([1.0, 0.0, -0.0, 5e-324, -2.0, 1.5, np.inf, 3.0])
    i = np.array([5000, 5000, 5000, 2090, -1070, -1080, -3000, -3000])
    _same(lambda x, i: np.ldexp(x, i), x, i)


@pytest.mark.parametrize("x", [1.5, -2.0, 0.0, 5e-324, 1.7976931348623157e308, math.inf,
                               math.nan, 1e-310])
def test_math_ulp(x):
    _same(lambda x: math.ulp(x), x)


@pytest.mark.parametrize("a, b", [(4, 6), (0, 6), (-4, 6), (6, -4), (7, 7), (1, 1)])
def test_math_lcm(a, b):
    _same(lambda a, b: math.lcm(a, b), a, b)


def test_math_lcm_past_int64_is_an_overflow_error():
    with pytest.raises(OverflowError, match="does not fit int64"):
        s2s.jit(lambda a, b: math.lcm(a, b))(2 ** 40 + 1, 2 ** 40 + 3)


@pytest.mark.parametrize("x", [np.array([1.0, -2.0]), np.array([1 + 2j, 3.0 + 0j]), 2.0])
def test_isreal_and_iscomplex(x):
    _same(lambda x: np.isreal(x), x)
    _same(lambda x: np.iscomplex(x), x)


M = np.array([[1.0, np.nan, 4.0], [np.nan, 2.0, 0.5]])


@pytest.mark.parametrize("f, a", [
    (lambda a: np.nanargmax(a), np.array([1.0, np.nan, 3.0, -2.0])),
    (lambda a: np.nanargmin(a), np.array([1.0, np.nan, 3.0, -2.0])),
    (lambda a: np.nanargmax(a, axis=1), M),
    (lambda a: np.nanargmin(a, axis=0), M),
    (lambda a: np.nanargmin(a, axis=1, keepdims=True), M),
    (lambda a: np.nanargmax(a, axis=1), np.array([[1.0, np.nan], [np.nan, np.nan]])),
    (lambda a: np.nanargmax(a), np.array([3, 1, 7])),
], ids=["max", "min", "max-axis", "min-axis0", "min-keepdims", "all-nan-row", "integers"])
def test_nanargmax_nanargmin(f, a):
    _same(f, a)


@pytest.mark.parametrize("f", [
    lambda a: np.argmin(a, axis=1, keepdims=True),
    lambda a: np.argmax(a, keepdims=True),
    lambda a: np.argmax(a, axis=0, keepdims=True),
    lambda a: np.argmax(a, axis=-2, keepdims=True),
    lambda a: np.argmin(a),
])
def test_argmax_argmin_keep_the_reduced_axes(f):
    _same(f, np.array([[1.0, 3.0, 4.0], [5.0, 2.0, 0.5]]))


def test_vmap_refuses_argmax_of_everything_with_keepdims():
    # the flattened examples would keep one axis where numpy keeps one per axis
    x = np.ones((2, 3, 4))
    with pytest.raises(s2s.S2SError, match="axis=None and keepdims"):
        s2s.vmap(lambda a: np.argmax(a, keepdims=True))(x)
    np.testing.assert_array_equal(s2s.vmap(lambda a: np.argmax(a, axis=1, keepdims=True))(x),
                                  np.argmax(x, axis=2, keepdims=True))
