"""numpy's elementwise functions of complex numbers under ``s2s.jit``
(``backend/llvm/values/complex_math.py``): values against numpy's on a grid of special
points (zeros of both signs, the branch cut on the negative real axis, the unit circle,
overflow thresholds, infinities, nan) and on random points; compiled gradients of real
functions of complex intermediates against central differences."""
import cmath
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


# -- cmath ---------------------------------------------------------------------------------
CMATH = ["exp", "log", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "phase",
         "isnan", "isinf", "isfinite"]
CMATH_POINTS = [complex(a, b) for a in PARTS for b in PARTS] + PARTS


def _outcome(fn, z):
    try:
        return "ok", fn(z)
    except (ValueError, OverflowError) as e:
        return type(e).__name__, str(e).split(" (in jit")[0]


@pytest.mark.parametrize("name", CMATH)
def test_compiled_cmath_gives_pythons_values_and_errors(name):
    """Python's results (a Python complex; CPython's special values, its signed zeros of
    nan operands included) and its errors (cmath.log(0), cmath.exp(710), cmath.sin(inf))."""
    fn = getattr(cmath, name)
    compiled = s2s.jit(lambda z: fn(z))
    for z in CMATH_POINTS:
        (kind, want), (got_kind, got) = _outcome(fn, z), _outcome(compiled, z)
        assert kind == got_kind, (z, want, got)
        if kind != "ok":
            assert want == got, z
            continue
        assert type(got) is type(want), (z, want, got)
        if isinstance(want, bool):
            assert got == want, z
            continue
        w, g = complex(want), complex(got)
        scale = abs(np.complex128(w))
        for pw, pg in ((w.real, g.real), (w.imag, g.imag)):
            if math.isnan(pw) or math.isinf(pw) or pw == 0.0:
                assert (math.isnan(pw) and math.isnan(pg)) or \
                    (pw == pg and math.copysign(1, pw) == math.copysign(1, pg)) or \
                    (pw == 0.0 and abs(pg) <= 4e-16 * scale), (z, want, got)
            else:
                assert abs(pg - pw) <= 4e-16 * scale, (z, want, got)


CMATH_DIFF = ["exp", "log", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh",
              "phase"]


@pytest.mark.parametrize("name", CMATH_DIFF)
def test_cmath_derivatives_in_every_mode(name):
    fn = getattr(cmath, name)

    def f(x):  # a complex operand, and a real one (cmath.exp(0.3) is complex)
        w = fn(x[0] + 1j * x[1]) * (0.5 - 0.25j)
        return w.real + 0.3 * w.imag + (fn(x[0] * 2.0) * (1 - 2j)).real

    xs = np.array([[0.3, 0.7], [1.1, -0.4], [0.6, 1.9]])
    want = np.array([fd_grad(f, (x,)) for x in xs])
    for x, w in zip(xs, want):
        assert abs(s2s.jit(f)(x) - f(x)) <= 1e-14 * max(1.0, abs(f(x)))
        np.testing.assert_allclose(s2s.grad(f)(x), w, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(s2s.jit(s2s.grad(f))(x), w, rtol=1e-6, atol=1e-8)
        tangent = np.array([0.4, -1.0])
        np.testing.assert_allclose(s2s.jvp(f, (x,), (tangent,))[1], w @ tangent, rtol=1e-6,
                                   atol=1e-8)
    np.testing.assert_allclose(s2s.vmap(f)(xs), [f(x) for x in xs], rtol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(f))(xs), [f(x) for x in xs], rtol=1e-14)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(xs), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(s2s.grad(f)))(xs), want, rtol=1e-6,
                               atol=1e-8)


def test_cmath_keeps_pythons_errors_under_grad_and_vmap():
    with pytest.raises(ValueError, match="math domain error"):
        s2s.grad(lambda x: abs(cmath.log(x * 0.0)))(1.0)
    with pytest.raises(OverflowError, match="math range error"), np.errstate(over="ignore"):
        s2s.vmap(lambda x: abs(cmath.exp(x)))(np.array([1.0, 710.0]))
    with pytest.raises(ValueError, match="math domain error"):
        s2s.jit(lambda x: abs(cmath.sin(complex(x, 0.0))))(math.inf)
    x = np.array([2.0, 3.0])  # cmath.log(z, base): Python mode and vmap
    f = lambda x: abs(cmath.log(x[0] + 1j, x[1]))  # noqa: E731
    np.testing.assert_allclose(s2s.grad(f)(x), fd_grad(f, (x,)), rtol=1e-6)
    np.testing.assert_allclose(s2s.vmap(f)(np.stack([x, x + 1])), [f(x), f(x + 1)], rtol=1e-14)


@pytest.mark.parametrize("name", ["tan", "sin", "tanh", "sqrt", "log", "exp"])
def test_cmath_under_vmap_is_pythons_own_at_special_values(name):
    """vmap runs cmath itself per example, so operands with a nan or infinite part give
    CPython's values (``cmath.tan(nan + 0j)`` is ``nan + nanj``; numpy's ``nan + 0j``)
    with the sign of every zero, compiled too (finite values to an ulp: the jit's formulas
    are numpy's)."""
    fn = getattr(cmath, name)
    parts = [(math.nan, 0.0), (math.nan, -0.0), (0.0, math.nan), (-0.0, 2.0), (1.5, -0.0),
             (math.nan, math.nan)]
    zs = np.array([complex(a, b) for a, b in parts])

    def pair(z):
        w = fn(z)
        return np.array([w.real, w.imag])

    want = np.array([pair(complex(z)) for z in zs])
    for run in (s2s.vmap(pair), s2s.jit(s2s.vmap(pair))):
        got = run(zs)
        assert got.shape == want.shape
        for g, w in zip(got.ravel(), want.ravel()):
            assert (math.isnan(g) and math.isnan(w)) or (
                abs(g - w) <= 1e-15 * abs(w) and math.copysign(1.0, g) == math.copysign(1.0, w)
            ), (name, got, want)
