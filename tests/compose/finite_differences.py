"""The oracles and the runner shared by the composition tables
(``test_linalg_compositions.py``, ``test_user_idioms.py``): central differences of a
function of one vector (gradients), of those differences (Hessians), and a composition
run or, where a table lists it as refused, checked to raise the error it names."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s


def fd_gradient(f, x, h=1e-6):
    """Central differences of the scalar ``f`` at the vector ``x``."""
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def fd_hessian(f, x, h=1e-4):
    """Central differences of ``fd_gradient``."""
    return np.array([(fd_gradient(f, x + e) - fd_gradient(f, x - e)) / (2 * h)
                     for e in h * np.eye(x.size)])


def run_unless_refused(refused, f, name, compute):
    """``compute(f)`` (RuntimeWarnings of the primal's edge values silenced), or, where
    ``refused`` maps ``(f.__name__, name)`` to the words of a refusal, a check that it
    raises them (an s2s error when transforming; vmap's run-time refusal is a located
    ``ValueError``) and None."""
    refusal = refused.get((f.__name__, name))
    if refusal is not None:
        with pytest.raises((s2s.S2SError, ValueError), match=refusal):
            compute(f)
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return compute(f)


def check_derivatives_of_a_vmapped_loss(fn, xs):
    """``grad`` and ``hessian`` of ``sum(vmap(fn)(xs) ** 2)`` against central differences
    of the same loss written as a Python loop over the examples."""
    def loss(batch):
        return np.sum(s2s.vmap(fn)(batch) ** 2)

    def loop(flat):
        return np.sum(np.array([fn(x) for x in flat.reshape(xs.shape)]) ** 2)

    flat = xs.ravel()
    np.testing.assert_allclose(s2s.grad(loss)(xs).ravel(), fd_gradient(loop, flat),
                               rtol=1e-5, atol=1e-6)
    h = s2s.hessian(loss)(xs).reshape(flat.size, flat.size)
    np.testing.assert_allclose(h, fd_hessian(loop, flat), rtol=1e-4, atol=1e-3)
