"""Compositions over linear algebra, norms and products that each needed a rule of a
derivative helper: the batching of ``trace_vjp`` (axes counted on the matrix, not the
cotangent), the per-example batching of the linear-algebra masks, ``np.linalg.lstsq``
and the second-order helpers of ``prod``/``norm``, the rules of vmap's ``batch_vstack``/
``batch_hstack`` (``grad(vmap(f))``) and of ``vstack_vjp``/``hstack_vjp`` (``vmap(grad(f))``:
their batched forms ``batch_vstack_vjp``/``batch_hstack_vjp``), and the compiled forms of
those helpers (``ops/host_calls.py``, ``rt.batch_loop`` included; ``derivs/pieces.py``).  Every value is checked
against central differences of the primal (Hessians: of the primal's differences)."""
from __future__ import annotations

import numpy as np
import pytest

import s2s

from .finite_differences import (check_derivatives_of_a_vmapped_loss, fd_gradient,
                                 fd_hessian, run_unless_refused)

X = np.array([0.31, -0.52, 0.77, 0.18])
XS = np.stack([X, X * 0.9 + 0.05, X[::-1]])


def det_of_diagonal(x):
    a = np.diag(x) + 0.1 * np.ones((x.shape[0], x.shape[0]))
    return np.linalg.det(a) + np.sum(np.linalg.inv(a) ** 2)


def eigh_spectrum(x):
    a = np.outer(x, x) + np.diag(np.arange(1.0, x.shape[0] + 1))
    w, v = np.linalg.eigh(a)
    return np.sum(w ** 2) + np.sum(v[:, -1] ** 2 * x)


def norms(x):
    return np.linalg.norm(x) * np.linalg.norm(x, 1) + np.max(np.abs(x))


def products(x):
    return np.sum(np.cumsum(np.sort(x)) * np.arange(1.0, x.shape[0] + 1)) + np.prod(x[:3])


def least_squares(x):
    a = np.reshape(np.concatenate([x, x[::-1] ** 2, np.ones_like(x)]), (-1, 2))
    return np.sum(np.linalg.pinv(a)) + np.sum(
        np.linalg.lstsq(a, np.arange(a.shape[0] * 1.0), rcond=None)[0])


def stacked(x):
    z = np.stack([x, x ** 2, np.sin(x)])
    return np.sum(z.T @ z) + np.sum(np.vstack([x, x])[1])


FUNCTIONS = [det_of_diagonal, eigh_spectrum, norms, products, least_squares, stacked]
def _grad_of_vmap(f):
    return s2s.grad(lambda xs: np.sum(s2s.vmap(f)(xs)))(XS)


GRADIENTS = {
    "vmap(grad)": lambda f: s2s.vmap(s2s.grad(f))(XS),
    "grad(vmap)": _grad_of_vmap,
    "jit(vmap(grad))": lambda f: s2s.jit(s2s.vmap(s2s.grad(f)))(XS),
}
HESSIANS = {
    "jacrev(jacfwd)": lambda f: s2s.jacrev(s2s.jacfwd(f))(X),
    "jit(hessian)": lambda f: s2s.jit(s2s.hessian(f))(X),
    "jit(jvp(grad))": lambda f: np.stack([s2s.jit(lambda x, v: s2s.jvp(s2s.grad(f), (x,), (v,))[1])(X, e)
                                          for e in np.eye(X.size)]),
    "vmap(hessian)": lambda f: s2s.vmap(s2s.hessian(f))(XS)[0],
}
#: compositions still refused, with the words of the refusal (a clear error, never a value)
REFUSED = {}


@pytest.mark.parametrize("name", list(GRADIENTS))
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_batched_gradients(f, name):
    got = run_unless_refused(REFUSED, f, name, GRADIENTS[name])
    if got is not None:
        want = np.stack([fd_gradient(f, x) for x in XS])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(HESSIANS))
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_second_derivatives(f, name):
    got = run_unless_refused(REFUSED, f, name, HESSIANS[name])
    if got is not None:
        np.testing.assert_allclose(got, fd_hessian(f, X), rtol=1e-4, atol=1e-4)


def joins(x):
    z = np.vstack([x, np.sin(x)])
    return np.sum(z @ np.hstack([x[:2], x[2:] ** 2])) + np.sum(np.hstack([z, z ** 2]) ** 2)


def test_second_derivatives_through_vmaps_joins():
    check_derivatives_of_a_vmapped_loss(joins, XS)
