"""``s2s.jit`` of numpy's layout functions (``np.transpose`` with axes, ``rollaxis``,
``matrix_transpose``, ``array``/``asarray`` with ``dtype=``, ``asfortranarray``,
``flatten``), scans (``cumulative_sum``/``cumulative_prod``, the NaN-ignoring ones),
the vector gufuncs (``vecdot``, ``matvec``, ``vecmat``) and small elementwise functions
(``reciprocal``, ``angle``, ``ldexp``): each compiled result equals numpy's, in value,
dtype and shape; a view stays a view (writes through it reach the array); numpy's errors
are raised at the user's line; gradients through the views match central differences."""
from __future__ import annotations

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


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0, equal_nan=True)


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
]


@pytest.mark.parametrize("name,fn,arg", CASES, ids=[c[0] for c in CASES])
def test_compiled_equals_numpy(name, fn, arg):
    _same(s2s.jit(fn)(arg), fn(arg))


def test_asfortranarray_is_fortran_ordered():
    out = s2s.jit(lambda x: np.asfortranarray(x))(M)
    assert out.flags.f_contiguous and not out.flags.c_contiguous


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
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_numpy_errors_at_the_users_line(k):
    fn, exc, text = BAD[k]
    with pytest.raises(exc, match=text):
        fn(A3)
    with pytest.raises(exc, match=text) as info:
        s2s.jit(fn)(A3)
    where = str(info.value) + "".join(getattr(info.value, "__notes__", []))
    assert "test_numpy_layout_and_scans.py" in where


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
