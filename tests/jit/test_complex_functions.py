"""numpy's elementwise functions of complex numbers under ``s2s.jit``
(``backend/llvm/values/complex_math.py``): values against numpy's on a grid of special
points (zeros of both signs, the branch cut on the negative real axis, the unit circle,
overflow thresholds, infinities, nan) and on random points; compiled gradients of real
functions of complex intermediates against central differences."""
import math
import warnings

import numpy as np
import pytest

import s2s

from tests.grad.oracles import fd_grad

NAMES = ["exp", "log", "log2", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh",
         "expm1", "log1p"]
PARTS = [0.0, -0.0, 1e-310, 1e-20, -1e-20, 0.3, -0.5, 0.9999999, 1.0, -1.0, 2.0, -3.1,
         21.9, -22.5, 700.0, 709.5, -710.0, 1420.0, 1e300, -1.7e308, math.inf, -math.inf,
         math.nan]
GRID = np.array([complex(a, b) for a in PARTS for b in PARTS])
RNG = np.random.default_rng(11)
_ANGLES = RNG.uniform(-np.pi, np.pi, 400)
RANDOM = np.concatenate([10.0 ** RNG.uniform(-8, 3, 400) * np.exp(1j * _ANGLES),
                         np.exp(1j * _ANGLES) * (1 + 1e-9 * RNG.standard_normal(400)),
                         3 * RNG.standard_normal(400) + 3j * RNG.standard_normal(400)])


def _numpy(fn, z):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(z)


def _assert_matches(points, got, want, rtol=2e-15):
    """Equal special values (nan where numpy's is, the same infinities and signed zeros),
    else within ``rtol`` of numpy's (relative to the complex magnitude)."""
    for z, g, w in zip(points, got, want):
        for pg, pw in ((g.real, w.real), (g.imag, w.imag)):
            if math.isnan(pw) or math.isinf(pw) or pw == 0.0:
                same = math.isnan(pg) if math.isnan(pw) else \
                    pg == pw and math.copysign(1, pg) == math.copysign(1, pw)
                assert same or (pw == 0.0 and abs(pg) <= rtol * abs(w)), (z, g, w)
            else:
                assert abs(pg - pw) <= rtol * abs(w), (z, g, w)


@pytest.mark.parametrize("name", NAMES)
def test_values_match_numpy_on_special_and_random_points(name):
    fn = getattr(np, name)
    compiled = s2s.jit(lambda z: fn(z))
    _assert_matches(GRID, compiled(GRID), _numpy(fn, GRID))
    _assert_matches(RANDOM, compiled(RANDOM), _numpy(fn, RANDOM))
    z = complex(0.3, -0.7)  # a number: a compiled complex scalar, numpy's type
    out = compiled(z)
    assert isinstance(out, np.complex128) and abs(out - fn(z)) <= 2e-15 * abs(fn(z))


def test_branch_cuts_follow_the_sign_of_a_zero_imaginary_part():
    z = np.array([complex(-4.0, 0.0), complex(-4.0, -0.0), complex(-0.5, 0.0),
                  complex(-0.5, -0.0)])
    for fn in (np.log, np.sqrt, np.log10, np.log1p):
        got = s2s.jit(lambda z: fn(z))(z)
        np.testing.assert_array_equal(np.sign(got.imag), np.sign(_numpy(fn, z).imag))
        _assert_matches(z, got, _numpy(fn, z))


def example(x):
    z = x[0] + 1j * x[1]
    return abs(np.exp(z) + np.log(z) + np.sin(z) * np.cos(z) + np.sqrt(z) + np.tanh(z)
               + z ** 0.5)


def test_the_example_compiles_with_its_gradient():
    x = np.array([0.3, 0.7])
    assert abs(s2s.jit(example)(x) - example(x)) <= 1e-14 * example(x)
    np.testing.assert_allclose(s2s.jit(s2s.grad(example))(x), fd_grad(example, (x,)),
                               rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", NAMES + ["angle", "real", "imag", "conj", "abs"])
def test_gradients_of_real_functions_of_complex_intermediates(name):
    fn = getattr(np, name)

    def number(x):
        w = fn(x[0] + 1j * x[1]) * (0.5 - 0.25j)
        return np.real(w) + 0.3 * np.imag(w)

    def array(x):
        w = fn(x[:2] + 1j * x[2:]) * (0.5 - 0.25j)
        return np.sum(np.real(w) + 0.3 * np.imag(w))

    for f, x in ((number, np.array([0.3, 0.7])), (array, np.array([0.3, -1.2, 0.7, 0.4]))):
        assert abs(s2s.jit(f)(x) - f(x)) <= 1e-14 * max(1.0, abs(f(x)))
        np.testing.assert_allclose(s2s.jit(s2s.grad(f))(x), fd_grad(f, (x,)), rtol=1e-6,
                                   atol=1e-8)
        np.testing.assert_allclose(s2s.jit(s2s.grad(f))(x), s2s.grad(f)(x), rtol=1e-13,
                                   atol=1e-15)
