"""JAX's ``vmap`` semantics beyond the basics (``tests/batch/test_api.py``): keyword-only
arguments mapped on axis 0, out-of-range per-example indices (IndexError in an example
that runs the access, clamped in examples a condition has finished), ``out_axes=None``
for parts of the result that are not mapped, and ``axis_size``.  Values are checked
against the function run on each example in a Python loop; derivatives against central
finite differences (``tests/grad/oracles.py``)."""
import numpy as np
import pytest

import s2s
from tests.grad.oracles import assert_tree_close, fd_grad

rng = np.random.default_rng(5)


# -- keyword-only arguments ----------------------------------------------------------
def scaled(x, *, s, shift=1.0):
    return np.sum(x * s) + shift


def test_keyword_only_arguments_are_mapped_on_axis_0():
    X, S, T = rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=4)
    want = np.array([scaled(X[k], s=S[k]) for k in range(4)])
    np.testing.assert_allclose(s2s.vmap(scaled)(X, s=S), want, rtol=1e-12)
    # in_axes covers the positional arguments only
    want = np.array([scaled(X[k], s=S[k], shift=T[k]) for k in range(4)])
    np.testing.assert_allclose(s2s.vmap(scaled, in_axes=1)(X.T, s=S, shift=T), want,
                               rtol=1e-12)
    # an unmapped positional argument, a mapped keyword-only one
    want = np.array([scaled(X[0], s=S[k]) for k in range(4)])
    np.testing.assert_allclose(s2s.vmap(scaled, in_axes=None)(X[0], s=S), want, rtol=1e-12)
    # a keyword argument the same for every example: close over it
    np.testing.assert_allclose(s2s.vmap(lambda x: scaled(x, s=2.0))(X),
                               [scaled(X[k], s=2.0) for k in range(4)], rtol=1e-12)


def test_keyword_only_arguments_errors_name_the_keyword():
    X = rng.normal(size=(4, 3))
    with pytest.raises(ValueError, match="rank should be at least 1.*keyword argument 's'"):
        s2s.vmap(scaled)(X, s=2.0)
    with pytest.raises(ValueError, match="keyword argument 's' of shape \\(3,\\) has size 3"):
        s2s.vmap(scaled)(X, s=np.ones(3))


def kw_loss(w, *, x, t):
    return (np.tanh(np.dot(x, w)) - t) ** 2


def test_per_example_gradients_with_keyword_only_data():
    w = rng.normal(size=3)
    X, T = rng.normal(size=(5, 3)), rng.normal(size=5)
    got = s2s.vmap(s2s.grad(kw_loss), in_axes=None)(w, x=X, t=T)
    for k in range(5):
        assert_tree_close(got[k], fd_grad(lambda v: kw_loss(v, x=X[k], t=T[k]), [w]),
                          rtol=1e-6, atol=1e-9)
    looped = s2s.vmap(s2s.grad(kw_loss), in_axes=None, fallback="loop")
    np.testing.assert_allclose(looped(w, x=X, t=T), got, rtol=1e-12)


def convolved(x, *, k):
    return np.convolve(x, k)


def test_loop_fallback_maps_keyword_only_arguments():
    X, K = rng.normal(size=(3, 4)), rng.normal(size=(3, 2))
    got = s2s.vmap(convolved, fallback="loop")(X, k=K)
    np.testing.assert_allclose(got, [convolved(X[j], k=K[j]) for j in range(3)], rtol=1e-12)


# -- indices out of range -----------------------------------------------------------
def read(x, i):
    return x[i] * 2.0


def guarded(x, i):
    if i < 3:
        return np.sin(x[i])
    return 0.0


def read_while(x, n):
    s = 0.0
    k = 0
    while k < n:
        s = s + x[k] * x[k]
        k = k + 1
    return s


def write(x, i):
    y = np.zeros(3)
    y[i] = x[0]
    return y


X4 = np.arange(12.0).reshape(4, 3) / 7.0


def test_an_index_out_of_range_in_a_running_example_raises_index_error():
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 0 with size 3 "
                                         r"\(example 1 of the vmap batch"):
        s2s.vmap(read)(X4, np.array([0, 3, 1, 0]))
    with pytest.raises(IndexError, match="index -4 is out of bounds"):
        s2s.vmap(read)(X4, np.array([0, 1, 1, -4]))
    with pytest.raises(IndexError, match="index 9 .*example 2"):
        s2s.vmap(read, in_axes=(None, 0))(X4[0], np.array([0, 2, 9]))
    with pytest.raises(IndexError, match="example 1"):  # the loop reads x[3] in example 1
        s2s.vmap(read_while)(X4, np.array([0, 4, 1, 2]))
    with pytest.raises(IndexError, match="index 3 .*example 1"):
        s2s.vmap(write)(X4, np.array([0, 3, 1, 0]))
    with pytest.raises(IndexError):  # as the function itself does on that example
        read(X4[1], 3)


def test_examples_a_condition_has_finished_still_clamp():
    idx = np.array([0, 5, 2, 7])
    np.testing.assert_allclose(s2s.vmap(guarded)(X4, idx),
                               [guarded(X4[k], int(idx[k])) for k in range(4)], rtol=1e-12)
    n = np.array([0, 3, 1, 2])
    np.testing.assert_allclose(s2s.vmap(read_while)(X4, n),
                               [read_while(X4[k], int(n[k])) for k in range(4)], rtol=1e-12)
    np.testing.assert_allclose(s2s.vmap(read)(X4, np.array([0, 2, 1, -1])),
                               [read(X4[k], i) for k, i in enumerate([0, 2, 1, -1])])
    np.testing.assert_allclose(s2s.vmap(write)(X4, np.array([0, 2, 1, 0])),
                               [write(X4[k], i) for k, i in enumerate([0, 2, 1, 0])])
    got = s2s.vmap(s2s.grad(guarded))(X4, idx)
    for k in range(4):
        assert_tree_close(got[k], fd_grad(guarded, [X4[k], int(idx[k])]), rtol=1e-6,
                          atol=1e-9)
    got = s2s.vmap(s2s.grad(read_while))(X4, n)
    for k in range(4):
        assert_tree_close(got[k], fd_grad(read_while, [X4[k], int(n[k])]), rtol=1e-6,
                          atol=1e-9)


# -- out_axes=None, axis_size ---------------------------------------------------------
def with_constant(x):
    return np.sin(x), 2.0, {"c": x.shape[0] * 1.0, "v": x * 3.0}


def test_out_axes_none_for_parts_of_the_result_that_are_not_mapped():
    X = rng.normal(size=(4, 3))
    y, c, d = s2s.vmap(with_constant, out_axes=(0, None, {"c": None, "v": 1}))(X)
    np.testing.assert_allclose(y, np.sin(X), rtol=1e-12)
    assert np.ndim(c) == 0 and c == 2.0
    assert np.ndim(d["c"]) == 0 and d["c"] == 3.0
    np.testing.assert_allclose(d["v"], (X * 3.0).T, rtol=1e-12)
    with pytest.raises(ValueError, match="mapped output but out_axes is None"):
        s2s.vmap(with_constant, out_axes=None)(X)
    with pytest.raises(ValueError, match="mapped output but out_axes is None"):
        s2s.vmap(with_constant, out_axes=(None, None, 0))(X)


def affine(p, x):
    return p["w"] * x + p["b"], p["b"] * 2.0


def test_out_axes_none_for_a_result_of_an_unmapped_leaf():
    # in_axes prefix: "b" the same for every example, so "b" * 2 may be unmapped
    p = {"w": rng.normal(size=3), "b": 0.5}
    X = rng.normal(size=(3, 2))
    y, b2 = s2s.vmap(affine, in_axes=({"w": 0, "b": None}, 0), out_axes=(0, None))(p, X)
    np.testing.assert_allclose(y, p["w"][:, None] * X + 0.5, rtol=1e-12)
    assert np.ndim(b2) == 0 and b2 == 1.0
    with pytest.raises(ValueError, match="mapped output but out_axes is None"):
        s2s.vmap(affine, in_axes=({"w": 0, "b": 0}, 0), out_axes=(0, None))(
            {"w": p["w"], "b": np.array([0.5, 0.6, 0.7])}, X)


def test_axis_size_when_nothing_is_mapped():
    out = s2s.vmap(lambda x: x * 2.0, in_axes=None, axis_size=3)(1.5)
    np.testing.assert_array_equal(out, [3.0, 3.0, 3.0])
    out = s2s.vmap(lambda x: (x, x + 1.0), in_axes=None, axis_size=2, out_axes=(0, 1))(
        np.ones(3))
    assert out[0].shape == (2, 3) and out[1].shape == (3, 2)
    np.testing.assert_allclose(s2s.vmap(np.sin, axis_size=3)(np.ones(3)), np.sin(np.ones(3)))
    with pytest.raises(ValueError, match="axis_size=4 but the mapped axes have size 3"):
        s2s.vmap(np.sin, axis_size=4)(np.ones(3))
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        s2s.vmap(lambda x: x, in_axes=None)(1.0)
    with pytest.raises(TypeError, match="axis_size"):
        s2s.vmap(np.sin, axis_size=2.5)


@pytest.mark.parametrize("fn", [np.sin, np.sum, np.cumsum, np.sort, np.linalg.det, np.dot])
def test_vmap_of_a_numpy_function(fn):
    A = rng.normal(size=(4, 3, 3))
    args = (A, A) if fn is np.dot else (A,)
    np.testing.assert_allclose(s2s.vmap(fn)(*args), [fn(*(a[k] for a in args))
                                                      for k in range(4)], rtol=1e-12)
    # a keyword argument is mapped on axis 0, an unmapped one passed positionally
    np.testing.assert_allclose(s2s.vmap(np.sum, in_axes=(0, None))(A, 1), A.sum(axis=2))


def with_default(x, y=2.0):
    return x * y + np.sin(x)


def test_per_example_gradients_of_a_function_with_defaults():
    x = rng.normal(size=4)
    got = s2s.vmap(s2s.grad(with_default))(x)
    for k in range(4):
        assert_tree_close(got[k], fd_grad(with_default, [x[k]]), rtol=1e-7, atol=1e-9)


def test_nested_vmap_with_keyword_arguments_is_a_clear_error():
    with pytest.raises(TypeError, match="pass the arguments positionally"):
        s2s.vmap(s2s.vmap(scaled))(np.ones((2, 3, 4)), s=np.ones((2, 3)))
