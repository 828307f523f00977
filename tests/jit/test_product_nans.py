"""Compiled matrix products keep numpy's IEEE results: a zero multiplier may be skipped
for speed (one-hot cotangents) only where that changes nothing, so ``0 * inf`` and
``0 * nan`` still make NaN, as in numpy."""
import numpy as np
import pytest

import s2s


def matvec(W, x):
    return W @ x


def vecmat(x, W):
    return x @ W


def transposed(W, x):
    return W.T @ x


def matmat(A, B):
    return A @ B


def same(got, want, rtol=1e-12):
    """NaN and infinities where numpy has them; other entries up to summation order."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)


def _sparse_cases(rng):
    W = rng.normal(size=(6, 5))
    for bad in (np.inf, -np.inf, np.nan):
        for dense in (False, True):
            x = rng.normal(size=5) if dense else np.eye(5)[2] * 1.5
            Wb = W.copy()
            Wb[3, 0] = bad  # a column the sparse x multiplies by zero
            yield Wb, x


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_matrix_vector_products_match_numpy_with_nonfinite_entries(layout):
    rng = np.random.default_rng(0)
    for W, x in _sparse_cases(rng):
        if layout == "F":
            W = np.asfortranarray(W)
        elif layout == "strided":
            W = np.repeat(W, 2, axis=1)[:, ::2]
        with np.errstate(invalid="ignore"):
            same(s2s.jit(matvec)(W, x), W @ x)
            same(s2s.jit(transposed)(W.T.copy(), x), W @ x)
            same(s2s.jit(vecmat)(x, W.T), x @ W.T)
            same(s2s.jit(matmat)(W, np.outer(x, x)), W @ np.outer(x, x))


def test_float32_products_match_numpy_with_nonfinite_entries():
    rng = np.random.default_rng(1)
    for W, x in _sparse_cases(rng):
        W32, x32 = W.astype(np.float32), x.astype(np.float32)
        with np.errstate(invalid="ignore"):
            same(s2s.jit(matvec)(W32, x32), W32 @ x32, rtol=1e-5)


def test_one_hot_products_are_exact():
    rng = np.random.default_rng(2)
    W = rng.normal(size=(40, 50))
    for k in range(50):
        e = np.zeros(50)
        e[k] = 1.0
        np.testing.assert_array_equal(s2s.jit(matvec)(W, e), W @ e)
