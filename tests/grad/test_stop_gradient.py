"""``s2s.stop_gradient`` in every transform.

Oracle: every derivative of ``f(x) = F(x, stop_gradient(c(x)))`` is the partial
derivative of ``F(x, c)`` in ``x`` with ``c`` held at ``c(x0)`` (the marker freezes its
argument at every order), computed by central differences of ``F`` in float64;
plus closed forms (``x * stop_gradient(x)`` has derivative ``x``, second derivative 0).
"""
import math

import numpy as np
import pytest

import s2s
from s2s import stop_gradient as sg

from .oracles import assert_tree_close, fd_grad


def fd_jac(F, x, eps=1e-6):
    """Central-difference Jacobian of an array function (columns: inputs)."""
    x = np.asarray(x, float)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        cols.append((np.asarray(F(x + e)) - np.asarray(F(x - e))) / (2 * eps))
    return np.stack(cols, axis=-1)


# (f using stop_gradient, its frozen form F(x, c), c(x)) on vectors
def vec_f(x):
    s = np.sum(np.sin(x) * sg(np.exp(x)))
    return s * s + np.sum(x ** 3 * sg(x) ** 2)


def vec_F(x, c):
    e, v = c
    s = np.sum(np.sin(x) * e)
    return s * s + np.sum(x ** 3 * v ** 2)


def vec_c(x):
    return (np.exp(x), x.copy())


def loop_f(x, n):
    """A recurrence whose state is detached every other step (truncated BPTT)."""
    h = 0.5
    for i in range(n):
        h = math.tanh(x * h + 0.3)
        if i % 2 == 1:
            h = sg(h)
    return h * x


def loop_F(x, n, frozen):
    h = 0.5
    k = 0
    for i in range(n):
        h = math.tanh(x * h + 0.3)
        if i % 2 == 1:
            h = frozen[k]
            k += 1
    return h * x


def loop_c(x, n):
    h, out = 0.5, []
    for i in range(n):
        h = math.tanh(x * h + 0.3)
        if i % 2 == 1:
            out.append(h)
    return out


X = np.array([0.3, -0.7, 1.1])


def test_closed_form_scalar():
    f = lambda x: x * sg(x)  # noqa: E731
    for x in (1.7, -0.4):
        assert s2s.grad(f)(x) == pytest.approx(x)
        assert s2s.jvp(f, (x,), (1.0,)) == pytest.approx((x * x, x))
        assert s2s.vjp(f, x)[1](2.0)[0] == pytest.approx(2 * x)
        assert s2s.grad(s2s.grad(f))(x) == pytest.approx(0.0)
        assert s2s.jit(s2s.grad(f))(x) == pytest.approx(x)
        assert s2s.jit(f)(x) == pytest.approx(x * x)


def test_identity_outside_transforms():
    tree = {"a": X, "b": (1.0, [2, None])}
    assert sg(tree) is tree
    assert sg(3.0) == 3.0


def test_reverse_and_forward_against_frozen_differences():
    c0 = vec_c(X)
    expected = fd_grad(lambda x: vec_F(x, c0), (X,))
    assert_tree_close(s2s.grad(vec_f)(X), expected, rtol=1e-6)
    value, pull = s2s.vjp(vec_f, X)
    assert value == pytest.approx(vec_F(X, c0))
    assert_tree_close(pull(1.0)[0], expected, rtol=1e-6)
    v = np.array([0.2, -1.0, 0.5])
    _, tangent = s2s.jvp(vec_f, (X,), (v,))
    assert tangent == pytest.approx(float(expected @ v), rel=1e-6)
    assert_tree_close(s2s.jit(s2s.grad(vec_f))(X), expected, rtol=1e-6)


def test_second_order_against_frozen_differences():
    c0 = vec_c(X)
    grad_F = lambda x: fd_grad(lambda y: vec_F(y, c0), (x,), rel_step=1e-5)  # noqa: E731
    H = fd_jac(grad_F, X, eps=1e-4)
    assert_tree_close(s2s.hessian(vec_f)(X), H, rtol=1e-4, atol=1e-5)
    assert_tree_close(s2s.jacfwd(s2s.grad(vec_f))(X), H, rtol=1e-4, atol=1e-5)
    assert_tree_close(s2s.jacrev(s2s.grad(vec_f))(X), H, rtol=1e-4, atol=1e-5)
    v = np.array([1.0, 0.5, -2.0])
    _, hvp = s2s.jvp(s2s.grad(vec_f), (X,), (v,))
    assert_tree_close(hvp, H @ v, rtol=1e-4, atol=1e-5)
    assert_tree_close(s2s.jit(s2s.hessian(vec_f))(X), H, rtol=1e-4, atol=1e-5)
    # third order, closed form: d^3/dx^3 of x^4 * sg(x) is 24 x * sg(x)
    assert s2s.grad(s2s.grad(s2s.grad(lambda x: x ** 4 * sg(x))))(1.3) == pytest.approx(24 * 1.3 * 1.3)


def test_jacobians():
    f = lambda x: np.sin(x) * sg(np.cos(x)) + sg(x) * x[0]  # noqa: E731
    J = fd_jac(lambda x: np.sin(x) * np.cos(X) + X * x[0], X)
    for jac in (s2s.jacfwd, s2s.jacrev):
        assert_tree_close(jac(f)(X), J, rtol=1e-6, atol=1e-9)
        assert_tree_close(s2s.jit(jac(f))(X), J, rtol=1e-6, atol=1e-9)


def test_vmap_and_batched_derivatives():
    f = lambda x: x * sg(x) + np.sin(sg(x) * x)  # noqa: E731
    xs = np.linspace(-1.0, 1.5, 5)
    values = np.array([x * x + np.sin(x * x) for x in xs])
    assert_tree_close(s2s.vmap(f)(xs), values)
    per_example = np.array([x + x * np.cos(x * x) for x in xs])  # d/dx with sg(x) frozen
    assert_tree_close(s2s.vmap(s2s.grad(f))(xs), per_example, rtol=1e-10)
    assert_tree_close(s2s.jit(s2s.vmap(s2s.grad(f)))(xs), per_example, rtol=1e-10)
    assert_tree_close(s2s.jit(s2s.vmap(f))(xs), values)


def test_pytrees():
    def loss(p):
        frozen = sg(p)  # the whole dict, as jax.lax.stop_gradient(params)
        return p["w"] * frozen["b"] + np.sum(p["v"] * sg(p["v"])) + frozen["w"] ** 2

    p = {"w": 2.0, "b": 3.0, "v": np.array([1.0, -2.0])}
    g = s2s.grad(loss)(p)
    F = lambda q: q["w"] * 3.0 + np.sum(q["v"] * p["v"]) + 4.0  # noqa: E731
    assert_tree_close(g, fd_grad(F, (p,)), rtol=1e-6)
    assert_tree_close(s2s.jit(s2s.grad(loss))(p), g, rtol=1e-12)
    tup = lambda a, b: np.sum(a * sg((a, b))[1]) + b * sg((a, b))[0][0]  # noqa: E731
    ga, gb = s2s.grad(tup, argnums=(0, 1))(X, 0.5)
    assert_tree_close((ga, gb), (np.full(3, 0.5), X[0]), rtol=1e-12)
    assert_tree_close(s2s.jit(s2s.grad(tup, argnums=(0, 1)))(X, 0.5), (ga, gb), rtol=1e-12)


@pytest.mark.parametrize("x", [0.4, 1.3])
def test_loop_detaches_state(x):
    n = 6
    frozen = loop_c(x, n)
    expected = fd_grad(lambda y: loop_F(y, n, frozen), (x,))
    assert s2s.grad(loop_f)(x, n) == pytest.approx(expected, rel=1e-6)
    assert s2s.jit(s2s.grad(loop_f))(x, n) == pytest.approx(expected, rel=1e-6)
    assert s2s.jvp(loop_f, (x, n), (1.0, 0))[1] == pytest.approx(expected, rel=1e-6)
    assert s2s.value_and_grad(loop_f)(x, n)[0] == pytest.approx(loop_F(x, n, frozen))


def test_write_into_the_result_is_refused():
    def f(x):
        y = sg(x)
        y[0] = x[1] * 2.0
        return np.sum(y * x)

    with pytest.raises(s2s.S2SError, match="shared"):
        s2s.grad(f)(X.copy())
