"""Integer-array and boolean-mask indexing under jit (backend/llvm/values/fancy.py), and
views through ``...`` and ``None`` (values/arrays.py): reads and
writes against numpy running the same Python function, gradients (jit(grad),
jit(value_and_grad), jit(vjp_fun)) against central finite differences and the
dot-product test, bounds errors, and deterministic, verified LLVM IR."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.core.jit import Jitted
from s2s.backend.llvm.driver import engine
from s2s.backend.llvm.driver.compile import param_types
from s2s.backend.llvm.driver.module import build_module
from tests.grad.oracles import fd_grad

RNG = np.random.default_rng(7)
X = RNG.normal(size=6)
M = RNG.normal(size=(4, 5))
C = RNG.normal(size=(2, 3, 4))
IDX = np.array([0, 3, -1, 3, 1])  # negative and repeated entries


# -- reads ---------------------------------------------------------------------------------
def take(x, idx):
    return x[idx]


def take_rows(a, idx):
    return a[idx]


def take_columns(a, idx):
    return a[:, idx]


def take_row_entries(a, idx):
    return a[1, idx]


def take_rows_sliced(a, idx):
    return a[idx, 1:4]


def take_split_group(c, idx):
    return c[0, :, idx]  # advanced indices apart: their axis goes first (numpy)


def take_middle(c, idx):
    return c[1, idx, ::-1]


def mask_read(x, idx):
    return x[x > 0]


def mask_2d(a, idx):
    return a[a > 0.1]


def mask_rows(a, idx):
    return a[a[:, 0] > 0, ::-1]


def mask_inside(c, idx):
    return c[:, c[0, :, 1] < 0.5]


READS = [(take, X, IDX), (take_rows, M, IDX[IDX < 4]), (take_columns, M, IDX),
         (take_row_entries, M, IDX), (take_rows_sliced, M, np.array([3, 0, -4])),
         (take_split_group, C, np.array([1, -1, 1])), (take_middle, C, np.array([2, 0])),
         (mask_read, X, IDX), (mask_2d, M, IDX), (mask_rows, M, IDX), (mask_inside, C, IDX)]


@pytest.mark.parametrize("fn, a, idx", READS, ids=[r[0].__name__ for r in READS])
def test_reads_match_numpy(fn, a, idx):
    want = fn(a, idx)
    got = s2s.jit(fn)(a, idx)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_reads_of_strided_views():
    base = RNG.normal(size=(6, 8))
    view = base[::2, 1::3]  # not contiguous
    idx = np.array([2, 0, 2])
    np.testing.assert_array_equal(s2s.jit(take_rows)(view, idx), view[idx])
    np.testing.assert_array_equal(s2s.jit(take_columns)(view, idx[:2]), view[:, idx[:2]])
    np.testing.assert_array_equal(s2s.jit(mask_2d)(view, idx), view[view > 0.1])


def test_empty_selections():
    np.testing.assert_array_equal(s2s.jit(take)(X, np.zeros(0, dtype=np.int64)), X[[]])
    assert s2s.jit(mask_read)(-np.abs(X), IDX).shape == (0,)


# -- writes --------------------------------------------------------------------------------
def write(x, idx, v):
    y = x.copy()
    y[idx] = v
    return y


def write_add(x, idx, v):
    y = x.copy()
    y[idx] += v  # numpy: a repeated index does not accumulate
    return y


def write_mask(x, idx, v):
    y = x.copy()
    y[x > 0] = v
    return y


def write_mask_values(x, idx, v):
    y = x.copy()
    y[x < 0] = x[x < 0] * v
    return y


def add_at(x, idx, v):
    y = x.copy()
    np.add.at(y, idx, v)  # repeated places accumulate
    return y


def write_columns(a, idx, v):
    b = a.copy()
    b[:, idx] = v
    return b


WRITES = [(write, X, IDX, 2.5), (write, X, IDX, np.arange(5.0)), (write_add, X, IDX, 1.5),
          (write_add, X, IDX, np.arange(5.0)), (write_mask, X, IDX, -3.0),
          (write_mask_values, X, IDX, 2.0), (add_at, X, IDX, np.arange(5.0)),
          (add_at, X, IDX, 1.0), (write_columns, M, IDX, 7.0),
          (write_columns, M, IDX, np.arange(5.0)), (write_columns, M, IDX, np.ones((4, 1)))]


@pytest.mark.parametrize("fn, a, idx, v", WRITES,
                         ids=[f"{w[0].__name__}-{k}" for k, w in enumerate(WRITES)])
def test_writes_match_numpy(fn, a, idx, v):
    np.testing.assert_array_equal(s2s.jit(fn)(a, idx, v), fn(a, idx, v))


def test_write_shape_mismatch_raises():
    with pytest.raises(ValueError):
        s2s.jit(write)(X, IDX, np.arange(3.0))


# -- bounds ---------------------------------------------------------------------------------
def test_out_of_range_index_names_index_and_size():
    with pytest.raises(IndexError, match=r"index 6 is out of bounds for axis 0 with size 6"):
        s2s.jit(take)(X, np.array([1, 6]))
    with pytest.raises(IndexError, match=r"index -7 is out of bounds for axis 0 with size 6"):
        s2s.jit(write)(X, np.array([-7]), 1.0)
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for axis 1 with size 5"):
        s2s.jit(take_columns)(M, np.array([5]))


def test_mask_of_wrong_shape_raises():
    with pytest.raises(IndexError, match="boolean index did not match"):
        s2s.jit(take)(X, np.ones(4, dtype=bool))


def test_boundscheck_false_still_right_in_range():
    np.testing.assert_array_equal(s2s.jit(take, boundscheck=False)(X, IDX), X[IDX])


# -- gradients --------------------------------------------------------------------------------
def loss_gather(x, idx):
    return np.sum(np.sin(x[idx]) * x[idx[::-1]])


def loss_mask(x, idx):
    return np.sum(x[x > 0] ** 3) + np.sum(np.cos(x[np.abs(x) < 1]))


def loss_write(x, idx):
    y = np.zeros(7)
    y[idx] = x[:5] * 2.0  # repeated index: only the last write counts
    y[idx] += x[1:] ** 2
    return np.sum(y ** 3)


def loss_mask_write(x, idx):
    y = x * 1.0
    y[x > 0] = np.sin(x[x > 0])
    y[x < -0.5] = 0.25
    return np.sum(y * x)


def loss_2d(a, idx):
    return np.sum(a[:, idx] ** 2 * a[1, idx]) + np.sum(a[idx[idx < 4], 1:3])


def loss_loop(x, idx):
    total = 0.0
    for k in range(3):
        y = x[idx] * (k + 1.0)
        total = total + np.sum(y * x[idx[::-1]])
    return total


GRADS = [(loss_gather, X, IDX), (loss_mask, X, IDX), (loss_write, X, IDX),
         (loss_mask_write, X, IDX), (loss_2d, M, IDX), (loss_loop, X, IDX)]


@pytest.mark.parametrize("fn, a, idx", GRADS, ids=[g[0].__name__ for g in GRADS])
def test_gradients_against_finite_differences(fn, a, idx):
    fd = fd_grad(fn, (a, idx), 0)
    np.testing.assert_allclose(s2s.jit(s2s.grad(fn))(a, idx), fd, rtol=1e-6, atol=1e-7)
    value, g = s2s.jit(s2s.value_and_grad(fn))(a, idx)
    assert value == pytest.approx(fn(a, idx), rel=1e-12)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def gather_out(x, idx):
    return x[idx] * x[x > 0.2][0] + 0.0 * np.sum(x)


def write_out(x, idx):
    y = x ** 2
    y[idx] = x[:5] * 3.0
    return y


@pytest.mark.parametrize("fn", [gather_out, write_out])
def test_jitted_vjp_dot_product(fn):
    """<u, J v> (J v by central differences) = <J^T u, v> (the jitted pullback)."""
    out, f_vjp = s2s.vjp(fn, X, IDX)
    u = RNG.normal(size=np.shape(out))
    v = RNG.normal(size=X.shape)
    xbar = s2s.jit(f_vjp)(u)[0]
    eps = 1e-6
    jv = (fn(X + eps * v, IDX) - fn(X - eps * v, IDX)) / (2 * eps)
    assert np.sum(xbar * v) == pytest.approx(np.sum(u * jv), rel=1e-7, abs=1e-9)


def gather_fixed(x):
    return loss_gather(x, IDX)


def tangent_of_gather(x, v):
    return s2s.jvp(gather_fixed, (x,), (v,))


def test_jitted_jvp_against_finite_differences():
    v = RNG.normal(size=X.shape)
    eps = 1e-6
    fd = (gather_fixed(X + eps * v) - gather_fixed(X - eps * v)) / (2 * eps)
    y, t = s2s.jit(tangent_of_gather)(X, v)
    assert y == pytest.approx(gather_fixed(X), rel=1e-13)
    assert t == pytest.approx(fd, rel=1e-7)


# -- the module text ---------------------------------------------------------------------------
def _module_text(fn, args):
    j = Jitted(fn)
    func, load_free = j.source_ir(args)
    return build_module(func, param_types(func, list(args) + load_free(), j.describe), True).text


@pytest.mark.parametrize("fn, args", [(loss_write, (X, IDX)), (mask_2d, (M, IDX)),
                                      (s2s.grad(loss_mask_write), (X, IDX))])
def test_ir_is_deterministic_and_verified(fn, args):
    a, b = _module_text(fn, args), _module_text(fn, args)
    assert a == b
    engine.parse_verified(a)


def test_unsupported_index_is_a_clear_error():
    def array_and_mask(a, i):
        return a[i, a[0] > 0]

    with pytest.raises(s2s.S2SError, match=r"jit does not compile operator.getitem"):
        s2s.jit(array_and_mask)(M, IDX[IDX < 4])


# -- a list display as an index is an array (numpy), never a tuple of indices -----------------
def list_index(a, idx):
    return a[[0, 2, -1]]


def list_index_rows(a, idx):
    i = [1, 0, 1]
    return a[i, 1:]


def list_mask(a, idx):
    return a[[True, False, True, False]]


def list_writes(a, idx):
    b = a.copy()
    b[[0, 2, 0]] = 7.0
    b[:, [1, 1]] += 1.0
    return b


@pytest.mark.parametrize("fn", [list_index, list_index_rows, list_mask, list_writes])
def test_list_display_indices_match_numpy(fn):
    np.testing.assert_array_equal(s2s.jit(fn)(M, IDX), fn(M, IDX))


def loss_list_index(a, idx):
    return np.sum(a[[0, 2, 2]] ** 2) + np.sum(a[:, [3, 0]] * a[1, 1:3])


def test_list_display_index_gradient():
    fd = fd_grad(loss_list_index, (M, IDX), 0)
    np.testing.assert_allclose(s2s.jit(s2s.grad(loss_list_index))(M, IDX), fd,
                               rtol=1e-6, atol=1e-7)


def grown_index(a, idx):
    chosen = []
    for i in range(a.shape[0]):
        if a[i, 0] > -0.5:
            chosen.append(i)
    return a[chosen] * 2.0


def test_grown_list_and_list_argument_as_index():
    np.testing.assert_array_equal(s2s.jit(grown_index)(M, IDX), grown_index(M, IDX))
    np.testing.assert_array_equal(s2s.jit(take)(X, [0, -1, 2]), take(X, [0, -1, 2]))
    mask = [True, False] * 3
    np.testing.assert_array_equal(s2s.jit(take)(X, mask), take(X, mask))


def writes_in_loop(x, idx):
    y = np.zeros(7)
    for k in range(3):
        y[idx] = y[idx] * 0.5 + x[:5] * k
        y[y > 1.0] = 1.0
    return np.sum(y ** 2 * np.arange(7.0))


def test_writes_in_a_loop_gradient():
    assert s2s.jit(writes_in_loop)(X, IDX) == pytest.approx(writes_in_loop(X, IDX), rel=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.grad(writes_in_loop))(X, IDX),
                               fd_grad(writes_in_loop, (X, IDX), 0), rtol=1e-6, atol=1e-7)


# -- a value sharing memory with the place written is read first (numpy) -------------------------
def overlapping_fancy(x, idx):
    y = x.copy()
    y[idx] = y[::-1][:5]
    return y


def overlapping_slice(x, idx):
    y = x.copy()
    y[1:] = y[:-1]
    return y


def write_from_argument(y, v):
    y[1:] = v
    return y


def test_overlapping_writes_match_numpy():
    idx = np.array([1, 2, 3, 4, 5])
    for fn in (overlapping_fancy, overlapping_slice):
        np.testing.assert_array_equal(s2s.jit(fn)(X, idx), fn(X, idx))
    a, b = X.copy(), X.copy()
    np.testing.assert_array_equal(s2s.jit(write_from_argument)(a, a[:-1]),
                                  write_from_argument(b, b[:-1]))


# -- Ellipsis and new axes (views), against numpy ------------------------------------------
X34 = np.arange(12.0).reshape(3, 4) / 7.0


@pytest.mark.parametrize("fn", [
    lambda x: x[..., None], lambda x: x[None], lambda x: x[:, None, 1], lambda x: x[..., 1],
    lambda x: x[1, ...], lambda x: x[None, ..., None] * 2.0, lambda x: x[1, 2, ...] + 0.0,
    lambda x: np.sum(x[None, :, None, :] * x[:, None, :, None]),
], ids=["trailing", "leading", "mixed", "ellipsis_int", "int_ellipsis", "both", "element",
        "outer"])
def test_ellipsis_and_new_axes_match_numpy(fn):
    got, want = s2s.jit(fn)(X34), fn(X34)
    np.testing.assert_array_equal(got, want)
    assert np.shape(got) == np.shape(want)


def test_writes_through_ellipsis_and_new_axes_match_numpy():
    def write(x):
        y = np.zeros((3, 4))
        y[..., 1] = x[:, 0]
        y[None, 0] = 5.0
        return y

    np.testing.assert_array_equal(s2s.jit(write)(X34), write(X34))


def test_gradient_through_new_axes_against_finite_differences():
    f = lambda x: np.sum(np.sin(x[..., None] * x[:, None, ...]))  # noqa: E731
    g = s2s.jit(s2s.grad(f))(X34)
    h = 1e-6
    fd = np.zeros_like(X34)
    for i in np.ndindex(X34.shape):
        e = np.zeros_like(X34)
        e[i] = h
        fd[i] = (f(X34 + e) - f(X34 - e)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_ndim_is_known_when_compiling():
    def by_rank(x, y):
        n = np.ndim(x)
        if n - 1 == 1:  # only the branch of this rank compiles (x @ y of vectors is a number)
            r = x @ y
        else:
            r = x * y
        k = n
        while k > 0:  # a compile-time int that a loop changes becomes a run-time one
            k = k - 1
        return r, n, k, np.zeros(n), np.ndim(y) + 1

    for x in (np.ones((2, 2)), np.ones(2)):
        got, want = s2s.jit(by_rank)(x, x), by_rank(x, x)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


# -- several integer arrays together (p[rows, cols]) -----------------------------------------
ROWS = np.array([0, 2, -1, 2, 1])  # negative and repeated entries
COLS = np.array([4, 0, 1, 0, 3])
PAIRED = [
    lambda a, r, c: a[r, c],
    lambda a, r, c: a[r, c[:1]],  # a length-1 array broadcasts
    lambda a, r, c: a[r[:3], 2],
    lambda a, r, c: C[:, r[:3] % 3, c[:3] % 4] * a[0, 0],  # the group in the middle
    lambda a, r, c: C[r[:3] % 2, :, c[:3] % 4] * a[0, 0],  # apart: its axis goes first
    lambda a, r, c: C[1, r[:3] % 3, c[:3] % 4] * a[0, 0],
    lambda a, r, c: C[r[:3] % 2, 1, c[:3] % 4] * a[0, 0],
]


@pytest.mark.parametrize("fn", PAIRED, ids=[f"paired{k}" for k in range(len(PAIRED))])
def test_several_integer_arrays_read_like_numpy(fn):
    got, want = s2s.jit(fn)(M, ROWS, COLS), fn(M, ROWS, COLS)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def cross_entropy(w, x, y):
    logits = x @ w
    logits = logits - np.max(logits, axis=1, keepdims=True)
    p = np.exp(logits) / np.sum(np.exp(logits), axis=1, keepdims=True)
    return -np.mean(np.log(p[np.arange(len(y)), y]))


def paired_writes(a, r, c):
    b = a * 1.0
    b[r, c] = a[0, :5] * 2.0  # repeated places: the last write wins
    b[r[:2], c[:2]] += 1.0
    return np.sum(b ** 2 * a)


def test_several_integer_arrays_gradients_against_finite_differences():
    w, x, y = M[:, :3], RNG.normal(size=(6, 4)), np.array([0, 1, 2, 1, 0, 2])
    np.testing.assert_allclose(s2s.jit(cross_entropy)(w, x, y), cross_entropy(w, x, y),
                               rtol=1e-13)
    np.testing.assert_allclose(s2s.jit(s2s.grad(cross_entropy))(w, x, y),
                               fd_grad(cross_entropy, (w, x, y), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(paired_writes)(M, ROWS, COLS),
                               paired_writes(M, ROWS, COLS), rtol=1e-13)
    np.testing.assert_allclose(s2s.jit(s2s.grad(paired_writes))(M, ROWS, COLS),
                               fd_grad(paired_writes, (M, ROWS, COLS), 0), rtol=1e-6,
                               atol=1e-8)


def test_several_integer_arrays_of_different_lengths_raise_index_error():
    with pytest.raises(IndexError, match="could not be broadcast"):
        s2s.jit(lambda a, r, c: a[r, c[:2]])(M, ROWS, COLS)
    with pytest.raises(IndexError, match="out of bounds"):
        s2s.jit(lambda a, r, c: a[r, c + 3])(M, ROWS, COLS)


# -- integer arrays of any rank, broadcast together (p[np.ix_(r, c)], p[i[:, None], j]) ------
BROADCAST = [
    lambda a, r, c: a[np.ix_(r[:3], c)],  # an outer product of places
    lambda a, r, c: a[r[:, None], c[None, :4]],
    lambda a, r, c: a[r.reshape(5, 1), c[:1]],  # a length-1 axis broadcasts
    lambda a, r, c: a[r.reshape(1, 5), 3],  # an integer joins the group
    lambda a, r, c: a[np.stack([r, r]), 1:],  # one 2-d array, a slice after it
    lambda a, r, c: a[:, np.stack([c, c, c])],  # the group after a slice
    lambda a, r, c: C[1:, (r % 3)[:, None], (c % 4)[None, :3]] * a[0, 0],  # in the middle
    lambda a, r, c: C[(r % 2)[:, None], :, (c % 4)[None, :3]] * a[0, 0],  # apart: first
    lambda a, r, c: C[np.ix_(r[:2] % 2, r % 3, c[:3] % 4)] * a[0, 0],  # three axes
    lambda a, r, c: a[np.ix_(r[:0], c)],  # no places
]


@pytest.mark.parametrize("fn", BROADCAST, ids=[f"broadcast{k}" for k in range(len(BROADCAST))])
def test_integer_arrays_of_any_rank_read_like_numpy(fn):
    got, want = s2s.jit(fn)(M, ROWS, COLS), fn(M, ROWS, COLS)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def broadcast_writes(a, r, c):
    b = a * 1.0
    b[np.ix_(r[:3], c[:2])] = a[:3, :2] * 2.0  # repeated places: the last write wins
    b[r[:, None], c[None, :2]] += 1.0
    np.add.at(b, (r[:, None], c[None, :3]), a[0, :3] * a[1, 1])  # repeats accumulate
    return np.sum(b ** 2 * a) + np.sum(a[np.ix_(r, c)] ** 3)


def test_integer_arrays_of_any_rank_write_and_differentiate():
    np.testing.assert_allclose(s2s.jit(broadcast_writes)(M, ROWS, COLS),
                               broadcast_writes(M, ROWS, COLS), rtol=1e-13)
    np.testing.assert_allclose(s2s.jit(s2s.grad(broadcast_writes))(M, ROWS, COLS),
                               fd_grad(broadcast_writes, (M, ROWS, COLS), 0), rtol=1e-6,
                               atol=1e-8)


def test_integer_arrays_that_do_not_broadcast_raise_numpys_index_error():
    with pytest.raises(IndexError, match=r"shapes \(1, 5\) \(3,\)"):
        s2s.jit(lambda a, r, c: a[r[None, :], c[:3]])(M, ROWS, COLS)
    with pytest.raises(IndexError, match=r"could not be broadcast together \(axis 1 of index "
                                         r"array 1 has length 3 where another has 2\)"):
        s2s.jit(lambda a, r, c: C[r[:4].reshape(2, 2) % 2, c[:3].reshape(1, 3) % 3, 0])(
            M, ROWS, COLS)
    with pytest.raises(IndexError, match="out of bounds"):
        s2s.jit(lambda a, r, c: a[np.ix_(r, c + 3)])(M, ROWS, COLS)
    assert s2s.jit(lambda a, r, c: a[np.ix_(r, c)])(M, ROWS, COLS).shape == (5, 5)
