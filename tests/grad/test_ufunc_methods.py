"""``np.add.reduce``, ``np.multiply.accumulate`` and the other ufunc reductions: read as
the numpy functions they equal (``rules/numpy_code/ufunc_methods.py``), in every
transform and the jit, against numpy's values and central differences."""
import numpy as np
import pytest

import s2s

from tests.grad.oracles import fd_grad

X = np.array([[0.31, -0.52, 0.77], [0.18, 0.66, -0.25]])
CALLS = {
    "add.reduce": lambda a: np.add.reduce(a),
    "add.reduce axis=1 keepdims": lambda a: np.add.reduce(a, axis=1, keepdims=True),
    "add.reduce axis=None": lambda a: np.add.reduce(a, axis=None),
    "multiply.reduce": lambda a: np.multiply.reduce(a + 2.0),
    "multiply.reduce axis=(0, 1)": lambda a: np.multiply.reduce(a + 2.0, axis=(0, 1)),
    "maximum.reduce": lambda a: np.maximum.reduce(a, axis=1),
    "minimum.reduce": lambda a: np.minimum.reduce(a),
    "add.accumulate": lambda a: np.add.accumulate(a, axis=1),
    "multiply.accumulate": lambda a: np.multiply.accumulate(a + 1.5),
    "logaddexp.reduce": lambda a: np.logaddexp.reduce(a * 3.0),
    "logaddexp.reduce axis=None keepdims": lambda a: np.logaddexp.reduce(a, axis=None,
                                                                          keepdims=True),
    "logaddexp2.reduce axis=1": lambda a: np.logaddexp2.reduce(a, axis=1),
}


def _loss(call):
    def loss(a):
        return np.sum(np.sin(call(a)))
    return loss


def _fd(f, x):
    return fd_grad(f, (x,))


@pytest.mark.parametrize("name", list(CALLS))
def test_values_and_derivatives(name):
    call = CALLS[name]
    np.testing.assert_allclose(s2s.jit(call)(X), call(X), rtol=1e-14)
    loss = _loss(call)
    want = _fd(loss, X)
    np.testing.assert_allclose(s2s.grad(loss)(X), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.grad(loss))(X), want, rtol=1e-6, atol=1e-8)
    xs = np.stack([X, 0.5 * X])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(loss))(xs),
                               np.stack([want, _fd(loss, 0.5 * X)]), rtol=1e-6, atol=1e-8)


def test_logical_reductions_compile():
    def f(a):
        return np.logical_and.reduce(a > 0, axis=1), np.logical_or.reduce(a > 0.5)
    got, want = s2s.jit(f)(X), f(X)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_out_is_written_and_initial_is_refused_by_name():
    def written(a):
        o = np.zeros(3)
        np.add.reduce(a ** 2, out=o)
        return np.sum(o * o)

    np.testing.assert_allclose(s2s.grad(written)(X), _fd(written, X), rtol=1e-6, atol=1e-8)

    def with_initial(a):
        return np.add.reduce(a, initial=1.0)

    for run in (s2s.grad(lambda a: np.sum(with_initial(a))), s2s.jit(with_initial)):
        with pytest.raises(NotImplementedError, match="reduction .* with initial="):
            run(X)


def test_logaddexp_reduce_keeps_numpy_s_values_at_the_edges():
    for a in (np.array([1000.0, 1000.0, -np.inf]), np.array([-np.inf, -np.inf])):
        assert s2s.jit(lambda v: np.logaddexp.reduce(v))(a) == np.logaddexp.reduce(a)
