"""Derivatives of vmap's calls once per example (``rt.batch_loop``: a function with no
batching rule, run for each example and the results stacked).  Differentiated code has
that loop written out (``passes/per_example_loops.py``) so the derivative is the loop
of the function's own derivative rule: ``grad``, ``jvp``, ``vjp`` and ``hessian`` of
``vmap(f)``, and ``jit(grad(vmap(f)))``.  Each against central finite differences of
the function, example by example."""
import math

import numpy as np
import pytest

import s2s
from tests.compose.finite_differences import fd_gradient

RNG = np.random.default_rng(17)
XS = RNG.uniform(0.2, 0.9, (3, 6))
VS = RNG.normal(size=(3, 6))


def least_squares(x):  # np.linalg.lstsq: a tuple per example, stacked leaf by leaf
    t = np.linspace(0.0, 1.0, x.shape[0])
    coef, res, rank, sv = np.linalg.lstsq(np.vander(t, 3), x, rcond=None)
    return np.sum(coef ** 2) + np.sum(sv) * np.sum(x)


def unwrapped(x):
    return np.sum(np.unwrap(x * 7.0) ** 2)


def gradient_of(x):
    return np.sum(np.gradient(x) ** 2)


def exact_sum(x):
    return math.fsum([x[0], x[1] * 2.0, x[2] * x[3]]) * x[4]


def pseudo_inverse(x):
    return np.sum(np.linalg.pinv(x.reshape(2, 3)) ** 2)


FUNCTIONS = [least_squares, unwrapped, gradient_of, exact_sum, pseudo_inverse]
COMPILED = [unwrapped, gradient_of, exact_sum, pseudo_inverse]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_reverse_and_forward_mode_of_a_per_example_call(f):
    want = np.stack([fd_gradient(f, x) for x in XS])
    total = lambda Z: np.sum(s2s.vmap(f)(Z))  # noqa: E731
    np.testing.assert_allclose(s2s.grad(total)(XS), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jvp(s2s.vmap(f), (XS,), (VS,))[1],
                               np.sum(want * VS, axis=1), rtol=1e-6, atol=1e-8)
    pull = s2s.vjp(s2s.vmap(f), XS)[1]
    np.testing.assert_allclose(pull(np.array([1.0, -2.0, 0.5]))[0],
                               want * np.array([1.0, -2.0, 0.5])[:, None], rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("f", [unwrapped, exact_sum], ids=lambda f: f.__name__)
def test_hessian_of_a_per_example_call(f):
    """Examples are independent: the Hessian of the sum is block diagonal, each block the
    example's own (against differences of the example's gradient)."""
    H = s2s.hessian(lambda Z: np.sum(s2s.vmap(f)(Z)))(XS)
    grad = s2s.grad(f)
    for k in range(3):
        block = np.array([fd_gradient(lambda y: grad(y)[i], XS[k]) for i in range(6)])
        np.testing.assert_allclose(H[k, :, k, :], block, rtol=1e-5, atol=1e-7)
        others = [j for j in range(3) if j != k]
        np.testing.assert_array_equal(H[k][:, others], 0.0)


@pytest.mark.parametrize("f", COMPILED, ids=lambda f: f.__name__)
def test_compiled_gradient_of_a_per_example_call(f):
    got = s2s.jit(s2s.grad(lambda Z: np.sum(s2s.vmap(f)(Z))))(XS)
    np.testing.assert_allclose(got, np.stack([fd_gradient(f, x) for x in XS]), rtol=1e-6, atol=1e-8)
