"""Derivatives of code that calls ``s2s.vmap`` itself, batched again or compiled: the
derivative code holds the inner vmap's batched code (``rt.batch_align``,
``rt.batch_axes``...), which an outer ``vmap`` reads as code and ``jit`` compiles with
its axes as compile-time constants.  Functions other than the matrix's corpus, each
against central finite differences of the plain primal, example by example."""
from __future__ import annotations

import numpy as np
import pytest

import s2s

W = np.array([0.7, -1.2, 0.4])


def _row_energy(r, v):
    return np.sum(np.tanh(r) * v) + r[0] * r[-1]


def rows_of_outer(x):  # a vector: vmap over the rows of a matrix made from it
    m = np.outer(x, x) + np.sin(x)
    return s2s.vmap(_row_energy, in_axes=(0, None))(m, x) * x


def _column_norm(c):
    return np.sqrt(np.sum(c * c) + 1.0)


def columns(x):  # vmap over axis 1 of a matrix, then a reduction over the result
    m = np.outer(W, x) + np.cos(np.outer(x, W)).T
    return np.sum(s2s.vmap(_column_norm, in_axes=1)(m) * W)


def scalar(f):
    return lambda x: np.sum(W * f(x)) if np.ndim(f(x)) else f(x)


def fd_grad(g, x, h=1e-6):
    out = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        out.flat[k] = (g(x + e) - g(x - e)) / (2 * h)
    return out


def fd_jac(g, x, h=1e-6):
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        cols.append((np.asarray(g(x + e)) - np.asarray(g(x - e))) / (2 * h))
    return np.stack(cols, axis=-1)


XS = np.array([[0.6, -0.4, 0.9], [0.2, 0.5, -0.7], [-0.3, 0.8, 0.1]])
FUNCTIONS = [rows_of_outer, columns]


def loss_of(f):
    if f is columns:
        return columns

    def loss(x):
        return np.sum(W * f(x))
    return loss


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("outer", ["vmap", "jit_vmap", "vmap_jit"])
def test_batched_gradient_per_example(f, outer):
    loss = loss_of(f)
    g = s2s.grad(loss)
    batched = {"vmap": lambda: s2s.vmap(g), "jit_vmap": lambda: s2s.jit(s2s.vmap(g)),
               "vmap_jit": lambda: s2s.vmap(s2s.jit(g))}[outer]()
    got = batched(XS)
    for k, x in enumerate(XS):
        np.testing.assert_allclose(got[k], fd_grad(loss, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_batched_jacobians_and_hessians_per_example(f):
    loss = loss_of(f)
    jac = s2s.vmap(s2s.jacfwd(f))(XS)
    hes = s2s.vmap(s2s.hessian(loss))(XS)
    for k, x in enumerate(XS):
        np.testing.assert_allclose(jac[k], fd_jac(f, x), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(hes[k], fd_jac(lambda y: fd_grad(loss, y, 1e-4), x, 1e-4),
                                   rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_compiled_pullback_and_jacobians(f):
    x = XS[0]
    out, pullback = s2s.vjp(f, x)
    u = np.ones_like(np.asarray(out)) * 0.5 if np.ndim(out) else 0.5
    want = fd_jac(f, x)
    np.testing.assert_allclose(s2s.jit(pullback)(u)[0], np.tensordot(u, want, np.ndim(out)),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.jacrev(f))(x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.jacfwd(f))(x), want, rtol=1e-6, atol=1e-8)
