"""vmap composed with the derivative transforms, each checked against an independent
oracle (central finite differences in float64, ``tests/grad/oracles.py``):
per-example gradients ``vmap(grad(f))``, ``grad`` of a sum over ``vmap(f)``,
``vmap(vjp_fun)`` (matrix-Jacobian products), ``vmap`` of a JVP function
(Jacobian-matrix products), and ``jacfwd``/``jacrev`` built as one batched call."""
import numpy as np
import pytest

import s2s
from s2s.api.batched_jacobians import jacfwd_batched, jacrev_batched
from tests.grad.oracles import assert_tree_close, fd_grad

from .control_kernels import newton_sqrt

rng = np.random.default_rng(11)


def loss(w, x, t):
    return (np.tanh(np.dot(x, w)) - t) ** 2 + 0.1 * np.sum(w * w)


def branchy(w, x):
    z = np.dot(x, w)
    if z > 0.0:
        return z * z
    return np.sin(z)


def sigmoid(x):
    return 0.5 * (np.tanh(x / 2) + 1)


def predict(W, b, inputs):
    return sigmoid(np.dot(inputs, W) + b)


def vec_fn(x, y):
    return np.concatenate([np.sin(x) * y[0], np.cumsum(x) * np.sum(y ** 2)])


def tree_out(p):
    return {"a": p["w"] * np.exp(p["b"]), "b": np.sum(p["w"] ** 2)}


def fd_jacobian(f, x, eps=1e-6):
    """Central differences, one column per input entry (independent of s2s)."""
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))).ravel() / (2 * eps))
    y = np.asarray(f(x))
    return np.stack(cols, axis=-1).reshape(y.shape + x.shape)


@pytest.mark.parametrize("fn", [loss, branchy])
def test_per_example_gradients_match_finite_differences(fn):
    w = rng.normal(size=3)
    X = rng.normal(size=(6, 3))
    T = rng.normal(size=6)
    if fn is loss:
        got = s2s.vmap(s2s.grad(fn), in_axes=(None, 0, 0))(w, X, T)
        want = np.stack([fd_grad(fn, (w, x, t)) for x, t in zip(X, T)])
    else:
        got = s2s.vmap(s2s.grad(fn), in_axes=(None, 0))(w, X)
        want = np.stack([fd_grad(fn, (w, x)) for x in X])
    assert_tree_close(got, want, rtol=1e-6, atol=1e-7)


def test_grad_of_a_sum_over_vmap_matches_finite_differences():
    X, T = rng.normal(size=(7, 3)), rng.normal(size=7)

    def total(w):
        return np.sum(s2s.vmap(loss, in_axes=(None, 0, 0))(w, X, T))

    def total_loop(w):
        return sum(loss(w, x, t) for x, t in zip(X, T))

    w = rng.normal(size=3)
    assert_tree_close(s2s.grad(total)(w), fd_grad(total_loop, (w,)), rtol=1e-6, atol=1e-7)


def test_vmap_of_vjp_fun_is_the_matrix_jacobian_product():
    W, b, inputs = rng.normal(size=3), 0.2, rng.normal(size=(4, 3))
    f = lambda W: predict(W, b, inputs)  # noqa: E731
    y, vjp_fun = s2s.vjp(f, W)
    U = rng.normal(size=(16,) + y.shape)
    outs, = s2s.vmap(vjp_fun)(U)
    np.testing.assert_allclose(outs, U @ fd_jacobian(f, W), rtol=1e-6, atol=1e-8)


def test_vmap_of_a_jvp_function_is_the_jacobian_matrix_product():
    W, b, inputs = rng.normal(size=3), 0.2, rng.normal(size=(4, 3))
    f = lambda W: predict(W, b, inputs)  # noqa: E731
    S = rng.normal(size=(16, 3))
    J = fd_jacobian(f, W)
    got = s2s.vmap(lambda s: s2s.jvp(f, (W,), (s,))[1])(S)
    np.testing.assert_allclose(got, S @ J.T, rtol=1e-6, atol=1e-8)
    _, lin = s2s.linearize(f, W)
    np.testing.assert_allclose(s2s.vmap(lin)(S), S @ J.T, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("build", [jacfwd_batched, jacrev_batched])
def test_batched_jacobians_match_finite_differences(build):
    x, y = rng.normal(size=3), rng.normal(size=2)
    jx = build(vec_fn, (x, y), (0,), True)
    assert jx is not None  # built as one batched call, not the loop
    np.testing.assert_allclose(jx, fd_jacobian(lambda v: vec_fn(v, y), x), rtol=1e-6, atol=1e-8)
    jx, jy = build(vec_fn, (x, y), (0, 1), False)
    np.testing.assert_allclose(jy, fd_jacobian(lambda v: vec_fn(x, v), y), rtol=1e-6, atol=1e-8)
    p = {"w": rng.normal(size=3), "b": 0.3}
    jt = build(tree_out, (p,), (0,), True)
    assert jt is not None
    fw = lambda w: tree_out({"w": w, "b": p["b"]})["a"]  # noqa: E731
    np.testing.assert_allclose(jt["a"]["w"], fd_jacobian(fw, p["w"]), rtol=1e-6, atol=1e-8)
    fb = lambda b: tree_out({"w": p["w"], "b": float(b)})["a"]  # noqa: E731
    np.testing.assert_allclose(jt["a"]["b"], fd_jacobian(fb, np.array(p["b"])), rtol=1e-6,
                               atol=1e-8)


def test_public_jacobians_and_hessian_of_a_branchy_function():
    w, x = rng.normal(size=3), rng.normal(size=3)
    f = lambda w: np.array([branchy(w, x), branchy(w * 2.0, x)])  # noqa: E731
    want = fd_jacobian(f, w)
    np.testing.assert_allclose(s2s.jacfwd(f)(w), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jacrev(f)(w), want, rtol=1e-6, atol=1e-8)


def _cubic(x, y):
    return np.array([np.sum(x ** 2 * y[0]), x[0] * x[1] * y[1] ** 3])


def test_hessian_is_one_batched_call_and_matches_closed_forms(monkeypatch):
    from s2s.api import jacobians

    calls = []
    real = jacobians.hessian_blocks_batched
    monkeypatch.setattr(jacobians, "hessian_blocks_batched",
                        lambda *a: calls.append(real(*a)) or calls[-1])
    x = rng.normal(size=(2, 3))
    t = np.tanh(x)
    H = s2s.hessian(lambda x: np.sum(np.tanh(x) ** 2))(x)
    want = np.zeros((2, 3, 2, 3))
    for idx in np.ndindex(2, 3):
        want[idx + idx] = 2 * (1 - t[idx] ** 2) * (1 - 3 * t[idx] ** 2)
    np.testing.assert_allclose(H, want, rtol=1e-10, atol=1e-12)
    xs, ys = rng.normal(size=2), rng.normal(size=2)
    (hxx, hxy), (hyx, hyy) = s2s.hessian(_cubic, argnums=(0, 1))(xs, ys)
    # output 0: sum(x^2) y0;  output 1: x0 x1 y1^3
    np.testing.assert_allclose(hxx[0], 2 * ys[0] * np.eye(2), atol=1e-12)
    np.testing.assert_allclose(hxx[1], [[0, ys[1] ** 3], [ys[1] ** 3, 0]], atol=1e-12)
    np.testing.assert_allclose(hxy[0], [[2 * xs[0], 0], [2 * xs[1], 0]], atol=1e-12)
    np.testing.assert_allclose(hyx[1], [[0, 0], [3 * ys[1] ** 2 * xs[1],
                                                 3 * ys[1] ** 2 * xs[0]]], atol=1e-12)
    np.testing.assert_allclose(hyy[1], [[0, 0], [0, 6 * ys[1] * xs[0] * xs[1]]], atol=1e-12)
    # the batched path ran and batched (it returns None only where it cannot batch)
    assert calls and all(c is not None for c in calls)


def test_grad_of_vmap_through_batched_branches_matches_finite_differences():
    X = rng.normal(size=(6, 3))

    def total(w):
        return np.sum(s2s.vmap(branchy, in_axes=(None, 0))(w, X))

    def total_loop(w):
        return sum(branchy(w, x) for x in X)

    w = rng.normal(size=3)
    assert_tree_close(s2s.grad(total)(w), fd_grad(total_loop, (w,)), rtol=1e-6, atol=1e-7)
    # and forward mode through the batched code: jvp of the vmapped function
    v = rng.normal(size=3)
    _, tangent = s2s.jvp(lambda w: s2s.vmap(branchy, in_axes=(None, 0))(w, X), (w,), (v,))
    eps = 1e-6
    fd = (np.array([branchy(w + eps * v, x) for x in X]) -
          np.array([branchy(w - eps * v, x) for x in X])) / (2 * eps)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)


def test_grad_of_vmap_through_a_masked_while_loop_matches_finite_differences():
    A = np.array([2.0, 9.0, 30.0, 0.5])

    def total(w):
        return np.sum(s2s.vmap(newton_sqrt)(A * w))

    def total_loop(w):
        return sum(newton_sqrt(a * w) for a in A)

    assert_tree_close(s2s.grad(total)(1.3), fd_grad(total_loop, (1.3,)), rtol=1e-6,
                      atol=1e-8)
    # the gradient code of a data-dependent loop: per-example trip counts replayed by one
    # batched adjoint loop (tests/batch/test_vmap_grad_control.py), or a loop when asked
    for fallback in (None, "loop"):
        got = s2s.vmap(s2s.grad(newton_sqrt), fallback=fallback)(A)
        np.testing.assert_allclose(got, 0.5 / np.sqrt(A), rtol=1e-8)


@pytest.mark.parametrize("build", [jacfwd_batched, jacrev_batched])
def test_batched_jacobians_in_chunks_match_finite_differences(build, monkeypatch):
    from s2s.api import batched_jacobians as jacobian
    monkeypatch.setattr(jacobian, "CHUNK", 3)  # 7 basis vectors: chunks of 3, 3, 1
    x, y = rng.normal(size=7), rng.normal(size=2)
    f = lambda v: np.concatenate([np.sin(v) * y[0], np.cumsum(v)[:5] * y[1]])  # noqa: E731
    np.testing.assert_allclose(build(f, (x,), (0,), True), fd_jacobian(f, x), rtol=1e-6,
                               atol=1e-8)
