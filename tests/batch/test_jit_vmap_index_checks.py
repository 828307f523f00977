"""Per-example index checks in compiled batched code (``batch_check_index``): an index
out of range raises ``IndexError`` in an example that runs the read, as the function
itself would; an example a branch skips may hold any index (its read is clamped)."""
import numpy as np
import pytest

import s2s


def guarded(x, i):
    if i < 3:
        return x[i] * 2.0
    return x[0]


def unguarded(x, i):
    return x[i] + 1.0


X = np.arange(15.0).reshape(5, 3)


def loop(f, x, idx):
    return np.array([f(xk, ik) for xk, ik in zip(x, idx)])


def test_an_index_a_branch_skips_is_not_checked():
    idx = np.array([0, 2, 7, 1, 9])  # 7 and 9: out of range, in examples that skip the read
    want = loop(guarded, X, idx)
    np.testing.assert_allclose(s2s.vmap(guarded)(X, idx), want)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(guarded))(X, idx), want)


@pytest.mark.parametrize("bad", [3, -4, 100])
def test_an_index_out_of_range_in_an_example_that_reads_raises(bad):
    idx = np.array([0, 1, bad, 1, 0])
    with pytest.raises(IndexError, match=r"index -?\d+ is out of bounds for axis 0 with size 3"):
        unguarded(X[2], bad)  # the function itself
    with pytest.raises(IndexError, match="out of bounds.*example 2"):
        s2s.jit(s2s.vmap(unguarded))(X, idx)
    with pytest.raises(IndexError, match="out of bounds.*example 2"):
        s2s.vmap(unguarded)(X, idx)


def test_negative_indices_in_range_wrap():
    idx = np.array([-1, -3, 0, 2, -2])
    np.testing.assert_allclose(s2s.jit(s2s.vmap(unguarded))(X, idx), loop(unguarded, X, idx))
