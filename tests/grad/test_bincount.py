"""``np.bincount`` with weights: linear in the weights (``weights_bar = g[x]``, the tangent
the bincount of the weights' tangent), in every transform; under ``vmap`` once per example
(the length is the largest index's), results of different lengths refused when stacked.
Oracle: central differences of the function run by Python."""
import numpy as np
import pytest

import s2s

from .oracles import fd_grad

W = np.random.default_rng(2).uniform(0.2, 0.9, 6)
IDX = np.array([0, 1, 1, 3, 0, 3])


def counts(w, i):
    return np.sum(np.bincount(i, weights=w ** 2) ** 2) + np.sum(
        np.bincount(i, w, minlength=6) * np.arange(6))


def test_bincount_gradients_and_tangents():
    want = fd_grad(counts, (W, IDX), 0)
    np.testing.assert_allclose(s2s.grad(counts)(W, IDX), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2s.jit(s2s.grad(counts))(W, IDX), want, rtol=1e-6, atol=1e-9)
    t = np.linspace(-1.0, 1.0, 6)
    np.testing.assert_allclose(s2s.jvp(lambda w: counts(w, IDX), (W,), (t,))[1], want @ t,
                               rtol=1e-6)


def test_bincount_batched():
    ws = np.stack([W, W * 1.5, W[::-1]])
    want = np.stack([fd_grad(counts, (w, IDX), 0) for w in ws])
    batched = s2s.vmap(s2s.grad(counts), (0, None))
    np.testing.assert_allclose(batched(ws, IDX), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2s.jit(batched)(ws, IDX), want, rtol=1e-6, atol=1e-9)
    ragged = np.array([[0, 1, 1, 3, 0, 3], [0, 1, 1, 5, 0, 2]])  # lengths 4 and 6
    with pytest.raises(ValueError, match="different structures or shapes per example"):
        s2s.vmap(lambda w, i: np.bincount(i, w), (None, 0))(W, ragged)
