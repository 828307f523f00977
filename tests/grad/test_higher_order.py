"""Transforms of transforms: the outer transform differentiates the code the inner
one generated (no special path).  Oracles: closed forms, finite differences of the
(independently checked) gradient, and the cookbook's HVP-vs-Hessian check."""
import math

import numpy as np
import pytest

import s2s

RNG = np.random.default_rng(3)


def sin_cubic(x):
    return math.sin(x) * x ** 3


def tanh_sq(X):
    return np.sum(np.tanh(X) ** 2)


def mlp_like(W, x):
    return np.sum(np.tanh(W @ x) ** 2) + np.max(x) + np.mean(W[0, :] * x)


def test_second_and_third_derivatives_closed_form():
    x = 0.7
    second = -math.sin(x) * x ** 3 + 6 * math.cos(x) * x ** 2 + 6 * math.sin(x) * x
    assert math.isclose(s2s.grad(s2s.grad(sin_cubic))(x), second, rel_tol=1e-12)
    g3 = s2s.grad(s2s.grad(s2s.grad(lambda t: math.sin(t) * t)))
    assert math.isclose(g3(0.5), -math.cos(0.5) * 0.5 - 3 * math.sin(0.5), rel_tol=1e-12)


def test_forward_over_reverse_hvp_matches_finite_differences_of_the_gradient():
    X = RNG.normal(size=(3, 4))
    V = RNG.normal(size=(3, 4))
    g = s2s.grad(tanh_sq)
    eps = 1e-6
    fd = (g(X + eps * V) - g(X - eps * V)) / (2 * eps)
    _, hv = s2s.jvp(g, (X,), (V,))
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-8)
    # closed form: d2/dx2 tanh(x)^2 = 2 (1 - t^2)(1 - 3 t^2), t = tanh(x)
    t = np.tanh(X)
    np.testing.assert_allclose(hv, 2 * (1 - t ** 2) * (1 - 3 * t ** 2) * V, rtol=1e-12)


def test_cookbook_hvp_agrees_with_the_full_hessian():
    X = RNG.normal(size=(30, 40))
    V = RNG.normal(size=(30, 40))
    ans1 = s2s.jvp(s2s.grad(tanh_sq), (X,), (V,))[1]
    ans2 = np.tensordot(s2s.hessian(tanh_sq)(X), V, 2)
    assert np.allclose(ans1, ans2, 1e-4, 1e-4)


def test_hessian_with_two_arguments_matches_finite_differences():
    W, x = RNG.normal(size=(2, 3)), RNG.normal(size=3)
    (hww, hwx), (hxw, hxx) = s2s.hessian(mlp_like, argnums=(0, 1))(W, x)
    assert hww.shape == (2, 3, 2, 3) and hwx.shape == (2, 3, 3) and hxx.shape == (3, 3)
    gx = s2s.grad(mlp_like, argnums=1)
    eps = 1e-6
    fd = np.stack([(gx(W, x + eps * e) - gx(W, x - eps * e)) / (2 * eps)
                   for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(hxx, fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hwx.transpose(2, 0, 1), hxw, rtol=1e-10, atol=1e-12)


def test_calls_of_transforms_inside_differentiated_code_are_a_clear_error():
    v = np.ones(3)
    f = lambda x: np.vdot(s2s.grad(tanh_sq)(x), v)  # noqa: E731  (reverse over reverse)
    with pytest.raises(s2s.S2SError):
        s2s.grad(f)(np.ones(3))
