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


# -- an integer array per example (numpy's advanced indexing of each example) -----------------
def gather_rows(x, idx):
    return x[idx] * 2.0


def gather_then_guarded(x, idx):
    if idx[0] < 3:
        return np.sum(x[idx] ** 2)
    return x[0]


IDX = np.array([[0, 2, -1], [1, 1, 0], [2, -3, 1], [0, 0, 0], [-2, 2, 1]])


@pytest.mark.parametrize("x_batched", [True, False], ids=["batched", "shared"])
def test_integer_arrays_per_example_gather_like_numpy(x_batched):
    x = X if x_batched else X[0]
    axes = (0 if x_batched else None, 0)
    want = np.stack([gather_rows(X[k] if x_batched else x, IDX[k]) for k in range(5)])
    np.testing.assert_array_equal(s2s.vmap(gather_rows, axes)(x, IDX), want)
    np.testing.assert_array_equal(s2s.jit(s2s.vmap(gather_rows, axes))(x, IDX), want)
    m = np.arange(24.0).reshape(2, 3, 4)  # a gathered row per example, each an array
    got = s2s.jit(s2s.vmap(lambda a, i: a[i, 1:] + 0.5, (None, 0)))(m[0], IDX)
    np.testing.assert_array_equal(got, np.stack([m[0][i, 1:] + 0.5 for i in IDX]))


def test_integer_arrays_per_example_out_of_range_raise_where_read():
    bad = IDX.copy()
    bad[3] = [0, 5, 0]  # example 3 reads it
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3 "
                                         r"\(example 3"):
        s2s.jit(s2s.vmap(gather_rows))(X, bad)
    skipped = IDX.copy()
    skipped[3] = [7, 9, -8]  # example 3 skips the read: any index, clamped
    want = np.array([gather_then_guarded(x, i) for x, i in zip(X, skipped)])
    np.testing.assert_allclose(s2s.vmap(gather_then_guarded)(X, skipped), want)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(gather_then_guarded))(X, skipped), want)


def test_integer_arrays_per_example_gradients_against_finite_differences():
    from tests.grad.oracles import fd_grad
    f = gather_then_guarded
    want = np.stack([fd_grad(f, (x, i), 0) for x, i in zip(X, IDX)])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(X, IDX), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(s2s.grad(f)))(X, IDX), want, rtol=1e-6,
                               atol=1e-8)


# -- slices beside an index that differs per example --------------------------------------
M3 = np.arange(60.0).reshape(3, 4, 5)
READS = [
    lambda a, i: a[i, 1:] * 2.0,
    lambda a, i: a[:, i] * 2.0,  # the integers after a slice: the slice's axis first
    lambda a, i: a[1:, i, :3] * 2.0,
    lambda a, i: a[..., i] * 2.0,
    lambda a, i: a[:, i, 2] * 2.0,
    lambda a, i: a[i, :, i % 3] * 2.0,  # integers apart: their axis first
    lambda a, i: a[:, [i, 0]] * 2.0,  # an integer array per example after a slice
]


@pytest.mark.parametrize("x_batched", [True, False], ids=["batched", "shared"])
@pytest.mark.parametrize("f", READS, ids=[f"read{k}" for k in range(len(READS))])
def test_slices_beside_a_batched_index_read_like_each_example(f, x_batched):
    idx = np.array([0, 2, -1, 1])
    m = np.stack([M3 + k for k in range(4)]) if x_batched else M3
    axes = (0 if x_batched else None, 0)
    want = np.stack([f(m[k] if x_batched else m, i) for k, i in enumerate(idx)])
    got = s2s.vmap(f, axes)(m, idx)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(s2s.jit(s2s.vmap(f, axes))(m, idx), want)
    g = s2s.vmap(s2s.grad(lambda a, i: np.sum(f(a, i) ** 2)), axes)(m, idx)
    g_want = np.stack([8.0 * (m[k] if x_batched else m) * _reads(f, m[k] if x_batched else m, i)
                       for k, i in enumerate(idx)])  # d/da sum((2 a[idx]) ** 2), by hand
    np.testing.assert_allclose(g, g_want)
    # grad of the batched function: each example's cotangent (summed for a shared array)
    g_of_vmap = s2s.grad(lambda a: np.sum(s2s.vmap(f, axes)(a, idx) ** 2))(m)
    np.testing.assert_allclose(g_of_vmap, g_want if x_batched else g_want.sum(axis=0))


def _reads(f, a, i):
    """How many times ``f(a, i)`` reads each place of ``a`` (``f`` doubles what it reads)."""
    counts = np.zeros(a.size)
    np.add.at(counts, f(np.arange(a.size).reshape(a.shape) * 0.5, i).astype(int).ravel(), 1.0)
    return counts.reshape(a.shape)


def write_column(a, i, v):
    b = a.copy()
    b[:, i] = v
    b[1:, i, 0] += 2.0 * v[:2]
    return b


def test_writes_beside_a_batched_index_like_each_example():
    idx = np.array([0, 2, -1])
    m = np.stack([M3 + k for k in range(3)])
    v = np.arange(15.0).reshape(3, 5)
    want = np.stack([write_column(m[k], i, v[k]) for k, i in enumerate(idx)])
    np.testing.assert_array_equal(s2s.vmap(write_column)(m, idx, v), want)
    np.testing.assert_array_equal(s2s.jit(s2s.vmap(write_column))(m, idx, v), want)
