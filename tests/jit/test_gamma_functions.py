"""The gamma family under ``s2s.jit`` (``backend/llvm/ops/gamma.py``,
``numerics/gamma.py``): ``scipy.special``'s ``gammaln``, ``digamma`` and ``polygamma``
against SciPy, and ``s2s_runtime``'s ``lgamma``, ``gamma``, ``digamma`` and ``polygamma``
against the runtime, on a grid with the poles, negative values, tiny, huge and
non-finite ones (numbers, float64 and float32 arrays, ints, broadcasting), and compiled
derivatives of ``math.lgamma`` and ``gammaln`` against central finite differences.

Values match to 1e-14 relative (float32: to float32 rounding) and special values (nan,
the infinities and their signs) exactly.  The grid keeps away from the zeros of
log|Gamma| (near 1, 2 and below -2), where SciPy's Cephes ``lgam`` loses relative
precision (libm's ``lgamma``, which the jit calls, does not: checked against mpmath
there), and from the zeros of psi below -1, where the reflection formula loses it in
both (the first negative zero has a Taylor series in both).
"""
import math
import warnings

import numpy as np
import pytest

import s2s
import s2s_runtime as rt
from s2s.cli.dump_llvm import llvm_text

sp = pytest.importorskip("scipy.special")

POLES = [0.0, -0.0, -1.0, -2.0, -3.0, -50.0, -1e20, -np.inf]
NON_FINITE = [np.inf, np.nan]
TINY = [5e-324, 1e-310, 5.57e-309, 1e-300, 1e-8, -1e-300, -1e-310, -5e-324]
HUGE = [171.7, 1e5, 1e8, 2e8, 1e17, 1e100, 1e308]
#: a huge negative non-integer: zeta(n+1, x)'s direct sum (SciPy's method, and the
#: jit's) takes about |x| terms there, so only the one-argument functions see it
HUGE_NEGATIVE = [-1e15 - 0.5, -1e16 - 2.0]
# psi's zeros (1.4616..., -0.5040...) and their neighbourhoods, the edges of the
# Taylor series about them, the recurrence's and asymptotic series' ranges
NEAR_ZEROS = [1.4616321449683622, 1.46, 1.0616, 1.8617, 1.07, 1.86, -0.5040830082644554,
              -0.504, -0.3041, -0.7041, -0.31, -0.70, 0.4616321449683622]
ORDINARY = list(np.linspace(0.05, 30.0, 41)) + [1.0, 2.0, 3.0, 9.99, 10.0, 10.01, 0.5,
                                                  2.5, 7.3] + \
    [-0.1, -0.25, -0.9, -1.1, -1.9, -3.3, -5.5, -7.9, -20.25]
GRID = np.array(POLES + NON_FINITE + TINY + HUGE + NEAR_ZEROS + ORDINARY)
MODERATE = GRID[np.isfinite(GRID) & (np.abs(GRID) < 1e6)]  # the runtime's loops end

gammaln = s2s.jit(lambda x: sp.gammaln(x))
digamma = s2s.jit(lambda x: sp.digamma(x))
polygamma = s2s.jit(lambda n, x: sp.polygamma(n, x))


def assert_matches(got, want, rtol=1e-14, atol=0.0):
    """Same dtype and shape, nan where ``want`` is, the same infinities, else close."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    infinite = np.isinf(want)
    np.testing.assert_array_equal(got[infinite], want[infinite])
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol)


def quietly(f, *args):
    """``f(*args)`` without numpy's and SciPy's warnings (overflow, poles)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args)


@pytest.mark.parametrize("name", ["gammaln", "digamma"])
def test_one_argument_functions_match_scipy(name):
    compiled, reference = {"gammaln": (gammaln, sp.gammaln),
                           "digamma": (digamma, sp.digamma)}[name]
    grid = np.concatenate([GRID, HUGE_NEGATIVE])
    assert_matches(compiled(grid), quietly(reference, grid))
    single = quietly(grid.astype, np.float32)  # float32 in, float32 out (rounded from float64)
    assert_matches(compiled(single), quietly(reference, single), rtol=2.0 ** -23)
    ints = np.arange(-3, 12)
    assert_matches(compiled(ints), quietly(reference, ints))
    for x in (0.0, -0.0, -2.0, 2.5, -0.5040830082644554, 1e-300, np.inf, -np.inf, np.nan):
        got, want = compiled(x), quietly(reference, x)
        assert type(got) is np.float64
        assert_matches(got, want)
    assert_matches(compiled(4), quietly(reference, 4))


def test_polygamma_matches_scipy():
    for n in (0, 1, 2, 3, 4, 7, -1, 200):
        assert_matches(polygamma(n, GRID), quietly(sp.polygamma, n, GRID))
    orders = np.arange(-1, 6)[:, None]  # an array of orders broadcast against x
    assert_matches(polygamma(orders, GRID), quietly(sp.polygamma, orders, GRID))
    assert_matches(polygamma(np.arange(5), 2.5), quietly(sp.polygamma, np.arange(5), 2.5))
    single = quietly(GRID.astype, np.float32)  # float64 out; psi (n = 0) of float32 is float32
    for n in (0, 2):
        assert_matches(polygamma(n, single), quietly(sp.polygamma, n, single))
    for n, x in ((1, 2.0), (2, 0.0), (2, -0.0), (1, -np.inf), (3, np.inf), (0, 0.0)):
        assert_matches(polygamma(n, x), quietly(sp.polygamma, n, x)[()])
    assert polygamma(1, 1.0) == pytest.approx(math.pi ** 2 / 6, rel=1e-15)


def test_gammaln_near_its_zeros_keeps_relative_precision():
    # log|Gamma(x)| from mpmath (40 digits); SciPy's values are ~4e-11 relative off here
    x = np.array([0.9999967667212489, 1.9999925064945665, -2.747684837395097, 1.0000001])
    want = np.array([1.8663077422695335e-06, -3.168118604859849e-06, 4.193751039710264e-06,
                     -5.772155829918507e-08])
    np.testing.assert_allclose(gammaln(x), want, rtol=1e-13)  # (libm's ulps)


def test_digamma_near_its_zeros_keeps_relative_precision():
    # psi(x) for x near its zeros is small: its float64 value from mpmath (50 digits)
    x = np.array([1.4616321449683622, 1.4616321449683625, -0.5040830082644554, -0.50408300826,
                  1.47, -0.51])
    psi = np.array([-9.241265521729427e-17, 1.2245374622004068e-16, 7.289763902976895e-17,
                    3.983077340911105e-11, 0.008066489011364869, -0.05293173696963593])
    np.testing.assert_allclose(digamma(x), psi, rtol=1e-14)


def test_runtime_forms_match_the_runtime():
    psi = s2s.jit(lambda x: rt.digamma(x))
    # (the runtime's own psi is less precise near psi's zeros: an absolute tolerance)
    assert_matches(psi(GRID), quietly(rt.digamma, GRID), rtol=1e-13, atol=1e-15)
    assert np.isnan(psi(0.0)) and np.isnan(psi(-0.0)) and np.isnan(psi(-3.0))
    poly = s2s.jit(lambda n, x: rt.polygamma(n, x))
    for n in (0, 1, 3):
        assert_matches(poly(n, MODERATE), quietly(rt.polygamma, n, MODERATE), rtol=1e-12,
                       atol=1e-15)
        assert np.isnan(poly(n, 0.0)) and np.isnan(poly(n, -2.0)) and np.isnan(poly(n, -np.inf))
    with pytest.raises(ValueError, match="non-negative integer, got -1"):
        poly(-1, 2.0)
    lgamma = s2s.jit(lambda x: rt.lgamma(x))
    gamma = s2s.jit(lambda x: rt.gamma(x))
    x = np.array([0.5, 2.5, -2.5, -0.1, 1e-300, 100.0, 170.5, np.inf, np.nan])
    # (CPython's lgamma/gamma are its own, libm's a few ulps apart)
    assert_matches(lgamma(x), rt.lgamma(x), rtol=1e-13)
    assert_matches(gamma(x), rt.gamma(x), rtol=1e-13)
    assert_matches(lgamma(np.float32(2.5)), rt.lgamma(np.float32(2.5)), rtol=1e-13)
    assert lgamma(-np.inf) == math.lgamma(-math.inf)
    for f in (lgamma, gamma):
        for bad in (0.0, -2.0, np.array([1.0, -3.0])):
            with pytest.raises(ValueError, match="math domain error"):
                f(bad)
        with pytest.raises(OverflowError, match="math range error"):
            f(1e308)
    with pytest.raises(ValueError, match="math domain error"):
        gamma(-np.inf)


def central(f, x, h):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_compiled_derivatives_against_finite_differences():
    points = [0.3, 2.5, 7.25, -1.5, -0.25]
    first = s2s.jit(s2s.grad(lambda x: math.lgamma(x) * x))
    second = s2s.jit(s2s.grad(s2s.grad(math.lgamma)))
    for x in points:
        fd = central(lambda v: math.lgamma(v) * v, x, 1e-6)
        assert first(x) == pytest.approx(fd, rel=1e-7)
        h = 1e-3  # five-point second difference: O(h^4) + O(eps / h^2)
        fd2 = (-math.lgamma(x + 2 * h) + 16 * math.lgamma(x + h) - 30 * math.lgamma(x)
               + 16 * math.lgamma(x - h) - math.lgamma(x - 2 * h)) / (12 * h * h)
        assert second(x) == pytest.approx(fd2, rel=1e-7)
    total = s2s.jit(s2s.grad(lambda v: np.sum(sp.gammaln(v))))
    x = np.array(points)
    fd = np.array([central(lambda v: sp.gammaln(v), xi, 1e-6) for xi in x])
    np.testing.assert_allclose(total(x), fd, rtol=1e-7)


def test_defined_once_per_module():
    text = llvm_text(lambda x: sp.digamma(x) + sp.digamma(2 * x) + sp.polygamma(1, x)
                     + sp.polygamma(2, x), (np.ones(3),), stage="unopt")
    defines = [line for line in text.splitlines() if line.startswith("define")]
    for name in ("s2s.digamma", "s2s.hurwitz_zeta", "s2s.polygamma"):
        (line,) = [d for d in defines if f'@"{name}"' in d]
        assert "internal" in line and "noinline" in line
