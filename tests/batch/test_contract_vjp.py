"""Derivatives of vmap's batched products (``rt.batch_contract_vjp`` and its second-order
helpers, in Python and compiled): a letter only one operand has (``"ij,j->"``: ``i`` is
summed inside that operand alone) gets the same cotangent all along it, and the
compiled form agrees.  Oracle: central differences of a loop over the examples."""
from __future__ import annotations

import numpy as np
import pytest

import s2s

W = np.array([0.2, 0.4, -0.1, 0.3])
X = np.array([0.31, -0.52, 0.77, 0.18])
XS = np.stack([X, X * 0.9 + 0.05, X[::-1]])


def summed_in_one_operand(x):
    m = np.outer(x, np.cos(x))
    return np.einsum("ij,j->", m, x)


def unbatched_operand(x, w):
    return (np.sum(np.einsum("ij,j->i", np.outer(w, w), x) ** 2)
            + np.einsum("i,jk->", x, np.outer(w, x)))


def products(x, w):
    m = np.outer(x, w) + np.eye(4)
    return np.sum((m @ x) * np.tanh(w @ m)) + np.dot(x, w) ** 2


def loss_summed(xs):
    return np.sum(s2s.vmap(summed_in_one_operand)(xs) ** 2)


def loss_unbatched(xs):
    return np.sum(s2s.vmap(unbatched_operand, in_axes=(0, None))(xs, W) ** 2)


def loss_products(xs):
    return np.sum(s2s.vmap(products, in_axes=(0, None))(xs, W) ** 2)


LOOPS = {loss_summed: lambda xs: np.sum(np.array([summed_in_one_operand(x) for x in xs]) ** 2),
         loss_unbatched: lambda xs: np.sum(np.array([unbatched_operand(x, W) for x in xs]) ** 2),
         loss_products: lambda xs: np.sum(np.array([products(x, W) for x in xs]) ** 2)}


def _central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("loss", list(LOOPS), ids=lambda f: f.__name__)
def test_grad_of_vmap_in_python_and_compiled(loss):
    want = _central(LOOPS[loss], XS)
    np.testing.assert_allclose(s2s.grad(loss)(XS), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.grad(loss))(XS), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("loss", [loss_summed, loss_unbatched], ids=lambda f: f.__name__)
def test_hessian_of_vmap(loss):
    h = s2s.hessian(loss)(XS).reshape(XS.size, XS.size)
    want = np.array([_central(lambda y: _central(LOOPS[loss], y).ravel()[k], XS, 1e-4).ravel()
                     for k in range(XS.size)])
    np.testing.assert_allclose(h, want, rtol=1e-4, atol=1e-5)
