"""``s2s.jit`` of numpy's and Python's everyday functions that had no lowering:
layout (``np.transpose`` with axes, ``rollaxis``, ``matrix_transpose``,
``array``/``asarray`` with ``dtype=``, ``asfortranarray``, ``flatten``), scans
(``cumulative_sum``/``cumulative_prod``, the NaN-ignoring ones), the vector gufuncs
(``vecdot``, ``matvec``, ``vecmat``), elementwise functions (``reciprocal``, ``angle``,
``ldexp``, ``isclose``, ``heaviside``, ``gcd``, ``spacing``, the shifts), spaced samples,
windows and triangles (``logspace``, ``geomspace``, ``hamming``, ``tri``,
``triu_indices``), searching and selecting (``digitize``, ``isin``, ``argwhere``,
``extract``, ``compress``, ``delete``, ``insert``, ``resize``), polynomials,
``unwrap``, quantiles, ``any``/``all`` (with ``axis=``) and ``math``'s integer functions.  Each
compiled result equals numpy's (Python's) in value, dtype and shape; a view stays a
view (writes through it reach the array); numpy's errors are raised at the user's line;
gradients through the views match central differences."""
from __future__ import annotations

import math

import numpy as np
import pytest

import s2s

RNG = np.random.default_rng(7)
A3 = RNG.standard_normal((2, 3, 4))
M = RNG.standard_normal((3, 4))
V = RNG.standard_normal(4)
NANS = M.copy()
NANS[0, 1] = NANS[2, 3] = np.nan
C = M + 1j * RNG.standard_normal((3, 4))
PHASES = np.linspace(0, 20, 30) % 6.0 - 3.0
INTS = np.array([1, -5, 7, 2 ** 40, -1])
COUNTS = np.array([0, 3, 63, 64, 100])
EDGES = np.array([1.0, np.inf, -np.inf, np.nan, 0.0, -0.0, -2.5, 1e-9])
EDGES_B = np.array([1.0 + 1e-6, np.inf, np.inf, np.nan, 1e-9, 0.0, -2.5, 0.0])


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


CASES = [
    ("transpose axes", lambda x: np.transpose(x, (2, 0, 1)), A3),
    ("transpose negative axes", lambda x: np.transpose(x, (-1, 0, 1)) * 2.0, A3),
    ("method transpose", lambda x: x.transpose(1, 0, 2), A3),
    ("method transpose tuple", lambda x: x.transpose((0, 2, 1)), A3),
    ("transpose none", lambda x: np.transpose(x), M),
    ("matrix_transpose", lambda x: np.matrix_transpose(x), A3),
    ("linalg matrix_transpose", lambda x: np.linalg.matrix_transpose(x), M),
    ("rollaxis", lambda x: np.rollaxis(x, 2), A3),
    ("rollaxis start", lambda x: np.rollaxis(x, 0, 3), A3),
    ("rollaxis negative", lambda x: np.rollaxis(x, -1, 1), A3),
    ("rollaxis in place", lambda x: np.rollaxis(x, 1, 1), A3),
    ("array copy", lambda x: np.array(x), M),
    ("array dtype", lambda x: np.array(x, dtype=np.float32), M),
    ("asarray dtype", lambda x: np.asarray(x * 3, dtype=np.int64), M),
    ("asanyarray", lambda x: np.asanyarray(x), M),
    ("asfortranarray", lambda x: np.asfortranarray(x), M),
    ("ascontiguousarray number", lambda x: np.ascontiguousarray(x[0, 0]), M),
    ("array of a number", lambda x: np.array(x[0, 1]), M),
    ("flatten", lambda x: x.flatten(), A3),
    ("reciprocal", lambda x: np.reciprocal(x), M),
    ("reciprocal float32", lambda x: np.reciprocal(x.astype(np.float32)), M),
    ("cumulative_sum 1-d", lambda x: np.cumulative_sum(x), V),
    ("cumulative_sum axis", lambda x: np.cumulative_sum(x, axis=1), M),
    ("cumulative_sum initial", lambda x: np.cumulative_sum(x, axis=0, include_initial=True), M),
    ("cumulative_sum initial 1-d", lambda x: np.cumulative_sum(x, include_initial=True), V),
    ("cumulative_prod initial", lambda x: np.cumulative_prod(x, axis=-1, include_initial=True), M),
    ("cumulative_sum ints", lambda x: np.cumulative_sum(np.arange(12).reshape(3, 4), axis=1,
                                                        include_initial=True) + x[0, 0], M),
    ("nanprod", lambda x: np.nanprod(x), NANS),
    ("nanprod axis keepdims", lambda x: np.nanprod(x, axis=1, keepdims=True), NANS),
    ("nancumsum", lambda x: np.nancumsum(x), NANS),
    ("nancumprod axis", lambda x: np.nancumprod(x, axis=0), NANS),
    ("ediff1d", lambda x: np.ediff1d(x), M),
    ("vecdot", lambda x: np.vecdot(x, V), M),
    ("vecdot complex", lambda x: np.vecdot(x, x * 2.0), C),
    ("matvec", lambda x: np.matvec(x, V), A3),
    ("vecmat", lambda x: np.vecmat(V[:3], x), M),
    ("angle", lambda x: np.angle(x), M),
    ("angle deg complex", lambda x: np.angle(x, deg=True), C),
    ("angle number", lambda x: np.angle(x[0, 0]), M),
    ("ldexp", lambda x: np.ldexp(x, 3), M),
    ("ldexp extremes", lambda x: np.ldexp(x * 1e-300, np.array([1, -1075, 1100, 3])), M),
    ("np.astype", lambda x: np.astype(x * 3, np.int64), M),
    ("append flat", lambda x: np.append(x, V), M),
    ("append axis", lambda x: np.append(x, x, axis=0), M),
    ("searchsorted number", lambda x: np.searchsorted(np.sort(x), x[2]), V),
    ("searchsorted number right", lambda x: np.searchsorted(np.sort(x), x[1], side="right"), V),
    # predicates and steps
    ("isclose", lambda x: np.isclose(x, EDGES), EDGES_B),
    ("isclose equal_nan tolerances", lambda x: np.isclose(x, EDGES, 1e-3, 0.0, True), EDGES_B),
    ("isclose numbers", lambda x: np.isclose(x[0], x[7]), EDGES_B),
    ("allclose", lambda x: np.allclose(x[:2], EDGES[:2]), EDGES_B),
    ("isposinf", lambda x: np.isposinf(x), EDGES),
    ("isneginf", lambda x: np.isneginf(x), EDGES),
    ("fix", lambda x: np.fix(x * 1.7), EDGES),
    ("heaviside", lambda x: np.heaviside(x, EDGES_B), EDGES),
    ("math.gcd", lambda x: math.gcd(12, -18) + math.gcd(0, 0) + math.gcd(-7, 0) + x[0], V),
    # sequences, windows, triangles
    ("linspace endpoint", lambda x: np.linspace(x[0], x[1], 7, endpoint=False), V),
    ("linspace default num", lambda x: np.linspace(x[0], x[1]), V),
    ("logspace", lambda x: np.logspace(0.0, 2.0, 7) + x[0], V),
    ("logspace base", lambda x: np.logspace(x[0], 2.0, 7, base=2.0, endpoint=False), V),
    ("geomspace", lambda x: np.geomspace(1.0, 1000.0, 4) + x[0], V),
    ("geomspace negative", lambda x: np.geomspace(-1.0, -1000.0, 5, endpoint=False), V),
    ("geomspace uneven", lambda x: np.geomspace(0.3, 17.0, 9), V),
    ("hamming", lambda x: np.hamming(7), V),
    ("hanning", lambda x: np.hanning(8), V),
    ("blackman", lambda x: np.blackman(6), V),
    ("bartlett", lambda x: np.bartlett(5), V),
    ("window of one", lambda x: np.hamming(1), V),
    ("window of none", lambda x: np.hanning(0), V),
    ("tri", lambda x: np.tri(3, 4, 1), V),
    ("tri int below", lambda x: np.tri(4, k=-2, dtype=np.int64), V),
    ("tril_indices", lambda x: np.tril_indices(4, -1)[1], V),
    ("triu_indices", lambda x: np.triu_indices(3, 1, 5)[0], V),
    ("triu_indices_from", lambda x: np.triu_indices_from(np.ones((3, 5)), k=2)[1], V),
    ("upper triangle read", lambda x: np.outer(x, x)[np.triu_indices(4, 1)], V),
    # shifts: numpy's results for counts of 64 and more
    ("left shift", lambda x: np.left_shift(INTS, COUNTS) + (INTS << 3), V),
    ("right shift", lambda x: np.right_shift(INTS, COUNTS) + (INTS >> 2), V),
    ("shift numbers", lambda x: (5 << 2) + (-5 >> 1) + (int(x[0] > 0) << 4), V),
    # integers
    ("gcd", lambda x: np.gcd(np.array([[12], [0], [-9]]), np.array([8, 0, -4, 6])), V),
    ("lcm", lambda x: np.lcm(np.array([4, 0, -6]), np.array([6, 5, 4])), V),
    ("spacing", lambda x: np.spacing(EDGES), V),
    ("math integers", lambda x: np.array([math.isqrt(10 ** 18 + 7), math.isqrt(15),
                                          math.comb(66, 33), math.comb(5, 7), math.perm(10, 3),
                                          math.perm(6), math.factorial(20)]), V),
    ("math.isclose", lambda x: np.array([math.isclose(x[0], x[0] * (1 + 1e-10)),
                                         math.isclose(1.0, 1.1, rel_tol=0.2),
                                         math.isclose(math.inf, math.inf),
                                         math.isclose(0.0, 1e-12, abs_tol=1e-9),
                                         math.isclose(math.nan, math.nan)]), V),
    # truth
    ("any", lambda x: any(x > 0), V), ("all", lambda x: all(x > -10), V),
    ("any of a list", lambda x: any([x[0] > 5, x[1] > 5]), V),
    ("all of a tuple", lambda x: all((x[0] > -9, x[1] > -9)), V),
    ("np.any axis", lambda x: np.any(x > 0.5, axis=1), M),
    ("np.all axis keepdims", lambda x: np.all(x, axis=-1, keepdims=True), M),
    ("np.all keepdims", lambda x: np.all(x > -5, keepdims=True), M),
    ("np.any every axis", lambda x: np.any(x > 0, axis=(0, 1)), M),
    ("np.any of empty rows", lambda x: np.any(x[:, :0], axis=1), M),
    ("np.any of floats", lambda x: np.any(x), M),
    ("method any axis", lambda x: x.any(axis=0), M),
    # searching and selecting
    ("digitize", lambda x: np.digitize(x, np.array([-0.5, 0.0, 0.5])), V),
    ("digitize right", lambda x: np.digitize(x, np.array([-0.5, 0.0, 0.5]), right=True), V),
    ("digitize decreasing", lambda x: np.digitize(x, np.array([0.5, 0.0, -1.0])), V),
    ("digitize number", lambda x: np.digitize(x[0], np.array([0.0, 2.0])), V),
    ("isin", lambda x: np.isin(x, x[1:3]), M),
    ("isin invert", lambda x: np.isin(x, x[0], invert=True), M),
    ("array_equal", lambda x: np.array_equal(x, x * 1.0) + np.array_equal(x, x[:2]), M),
    ("array_equal nan", lambda x: np.array_equal(NANS, NANS, equal_nan=True), M),
    ("flatnonzero", lambda x: np.flatnonzero(x > 0), M),
    ("argwhere", lambda x: np.argwhere(x > 0), A3),
    ("extract", lambda x: np.extract(x > 0, x), M),
    ("compress", lambda x: np.compress(x > 0, x), V),
    ("compress axis", lambda x: np.compress([True, False, True], x, axis=0), M),
    ("delete", lambda x: np.delete(x, -1), V),
    ("delete axis", lambda x: np.delete(x, 1, axis=1), M),
    ("insert", lambda x: np.insert(x, 1, 5.0), V),
    ("insert end", lambda x: np.insert(x, 4, -1.0), V),
    ("resize", lambda x: np.resize(x, (3, 5)), M),
    ("resize shorter", lambda x: np.resize(x, 3), M),
    # quantiles (numpy's linear method, to the last bit)
    ("quantile", lambda x: np.quantile(x, 0.3), V),
    ("quantile list axis", lambda x: np.quantile(x, [0.0, 0.25, 1.0], axis=1), M),
    ("quantile array of q", lambda x: np.quantile(x, np.array([[0.1, 0.2], [0.5, 0.99]]), axis=0), M),
    ("quantile of ints", lambda x: np.quantile(np.arange(10), 0.33) + x[0], V),
    ("percentile", lambda x: np.percentile(x, [25, 75], axis=-1), M),
    ("percentile with NaN", lambda x: np.percentile(x, 50, axis=1), NANS),
    ("nanquantile", lambda x: np.nanquantile(x, [0.2, 0.9], axis=1), NANS),
    ("nanpercentile", lambda x: np.nanpercentile(x, 30.0), NANS),
    ("nanmedian", lambda x: np.nanmedian(x, axis=0), NANS),
    # polynomials, unwrapping
    ("polyadd", lambda x: np.polyadd(x, x[:2]) + np.polyadd(x[:1], x), V),
    ("polysub", lambda x: np.polysub(x[:3], x), V),
    ("polymul", lambda x: np.polymul(x, x[:2]), V),
    ("polyder", lambda x: np.polyder(x, 2), V),
    ("polyder of ints", lambda x: np.polyder(np.array([3, 2, 1])), V),
    ("polyint", lambda x: np.polyint(x, 2, 3.0), V),
    ("unwrap", lambda x: np.unwrap(PHASES), V),
    ("unwrap discont period", lambda x: np.unwrap(PHASES * 30, discont=100.0, period=360), V),
    ("unwrap axis", lambda x: np.unwrap(np.vstack((PHASES, PHASES[::-1])), axis=0), V),
]


@pytest.mark.parametrize("name,fn,arg", CASES, ids=[c[0] for c in CASES])
def test_compiled_equals_numpy(name, fn, arg):
    _same(s2s.jit(fn)(arg), fn(arg))


def test_asfortranarray_is_fortran_ordered():
    out = s2s.jit(lambda x: np.asfortranarray(x))(M)
    assert out.flags.f_contiguous and not out.flags.c_contiguous


def test_in_place_shifts():
    def f(a):
        a <<= 2
        a >>= 1
        return a

    np.testing.assert_array_equal(s2s.jit(f)(INTS.copy()), f(INTS.copy()))


def test_views_write_through():
    def f(x):
        y = np.transpose(x, (1, 0))
        y[0, 1] = 7.0
        z = np.rollaxis(x, 1)
        z[1, 0] += 1.0
        w = np.matrix_transpose(x)
        w[2, 1] = -3.0
        return x

    _same(s2s.jit(f)(M.copy()), f(M.copy()))


BAD = [
    (lambda x: x.transpose(1, 0), ValueError, "axes don't match array"),
    (lambda x: x.transpose(0, 0, 1), ValueError, "repeated axis in transpose"),
    (lambda x: x.transpose(0, 5, 1), np.exceptions.AxisError, "axis 5 is out of bounds"),
    (lambda x: np.matrix_transpose(x[0, 0]), ValueError, "at least 2-dimensional"),
    (lambda x: np.rollaxis(x, 3), np.exceptions.AxisError, "axis 3 is out of bounds"),
    (lambda x: np.cumulative_sum(x), ValueError, "``axis`` argument is required"),
    (lambda x: np.vecdot(x, x[:, :, :3]), ValueError, "mismatch in its core dimension 0"),
    (lambda x: np.matvec(x, x[0, 0, :3]), ValueError, "mismatch in its core dimension 0"),
    (lambda x: 5 << (int(x[0, 0, 0] > 99) - 1), ValueError, "negative shift count"),
    (lambda x: -5 >> (int(x[0, 0, 0] > 99) - 1), ValueError, "negative shift count"),
    (lambda x: np.delete(x, 30), IndexError, "index 30 is out of bounds for axis 0 with size 24"),
    (lambda x: np.digitize(x[0, 0], np.array([0.0, 2.0, 1.0])), ValueError, "monotonically"),
    (lambda x: math.isqrt(-1 - int(x[0, 0, 0] > 99)), ValueError, "nonnegative"),
    (lambda x: np.quantile(x, 1.5), ValueError, r"Quantiles must be in the range \[0, 1\]"),
    (lambda x: np.percentile(x, -5), ValueError, r"Percentiles must be in the range"),
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_numpy_errors_at_the_users_line(k):
    fn, exc, text = BAD[k]
    with pytest.raises(exc, match=text):
        fn(A3)
    with pytest.raises(exc, match=text) as info:
        s2s.jit(fn)(A3)
    where = str(info.value) + "".join(getattr(info.value, "__notes__", []))
    assert "test_numpy_functions_compiled.py" in where


def test_integers_beyond_int64_are_refused_not_wrapped():
    """Python's integers do not overflow; compiled ones are int64: a factorial, binomial
    or permutation count beyond it raises ``OverflowError`` rather than wrapping."""
    for fn in (lambda n: math.factorial(n), lambda n: math.comb(4 * n, 2 * n),
               lambda n: math.perm(n + 10, n)):
        assert fn(21) > 2 ** 63  # Python's exact answer
        with pytest.raises(OverflowError, match="int64"):
            s2s.jit(fn)(21)


def _objective(x):
    t = np.transpose(x, (2, 0, 1)) * np.arange(24.0).reshape(4, 2, 3) ** 2
    r = np.rollaxis(x, 2, 1)[0] ** 3
    m = np.matrix_transpose(x[0]) @ x[1]
    return np.sum(t) + np.sum(r) + np.sum(m * np.reciprocal(1.5 + x[0, 0, 0] ** 2)) + \
        np.sum(np.cumulative_sum(x, axis=1, include_initial=True) ** 2)


def test_gradient_through_the_views_matches_central_differences():
    got = s2s.jit(s2s.grad(_objective))(A3)
    np.testing.assert_allclose(got, s2s.grad(_objective)(A3), rtol=1e-12, atol=1e-12)
    fd = np.zeros_like(A3)
    eps = 1e-6
    for i in np.ndindex(A3.shape):
        e = np.zeros_like(A3)
        e[i] = eps
        fd[i] = (_objective(A3 + e) - _objective(A3 - e)) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-6)
