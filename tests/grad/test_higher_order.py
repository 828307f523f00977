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


# --- transforms called inside transformed code -------------------------------------

def tanh_sq_hvp(X, V):
    """Closed form of the Hessian of tanh_sq applied to V (the Hessian is diagonal)."""
    t = np.tanh(X)
    return 2 * (1 - t ** 2) * (1 - 3 * t ** 2) * V


def hvp_fwdrev(f, primals, tangents):
    return s2s.jvp(s2s.grad(f), primals, tangents)[1]


def hvp_revfwd(f, primals, tangents):
    g = lambda primals: s2s.jvp(f, primals, tangents)[1]  # noqa: E731
    return s2s.grad(g)(primals)


def hvp_revrev(f, primals, tangents):
    x, = primals
    v, = tangents
    return s2s.grad(lambda x: np.vdot(s2s.grad(f)(x), v))(x)


def test_the_cookbook_hvps_agree_with_each_other_and_the_closed_form():
    X, V = RNG.normal(size=(5, 6)), RNG.normal(size=(5, 6))
    expected = tanh_sq_hvp(X, V)
    np.testing.assert_allclose(hvp_fwdrev(tanh_sq, (X,), (V,)), expected, rtol=1e-12)
    revfwd, = hvp_revfwd(tanh_sq, (X,), (V,))  # grad of a tuple argument: a tuple, as JAX
    np.testing.assert_allclose(revfwd, expected, rtol=1e-12)
    np.testing.assert_allclose(hvp_revrev(tanh_sq, (X,), (V,)), expected, rtol=1e-12)
    # a fresh lambda at every call reuses the IR and the generated code of the first
    X2 = RNG.normal(size=(5, 6))
    np.testing.assert_allclose(hvp_revrev(tanh_sq, (X2,), (V,)), tanh_sq_hvp(X2, V),
                               rtol=1e-12)


def test_reverse_over_reverse_of_a_two_argument_function_matches_finite_differences():
    W, x = RNG.normal(size=(2, 3)), RNG.normal(size=3)
    u = RNG.normal(size=(2, 3))

    def gw_dot_u(x):  # d/dx <dF/dW (W, x), u>
        return np.vdot(s2s.grad(mlp_like)(W, x), u)

    got = s2s.grad(gw_dot_u)(x)
    eps = 1e-6
    fd = np.array([(gw_dot_u(x + eps * e) - gw_dot_u(x - eps * e)) / (2 * eps)
                   for e in np.eye(3)])
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def sin_t(t):
    return math.sin(t) * t


def test_value_and_grad_and_has_aux_inside_differentiated_code():
    def inner(x):
        return x ** 3, x * 2.0

    def outer(x):
        value, slope = s2s.value_and_grad(sin_t)(x)
        g, aux = s2s.grad(inner, has_aux=True)(x)
        return value * slope + g * aux

    x = 0.8
    eps = 1e-6
    fd = (outer(x + eps) - outer(x - eps)) / (2 * eps)
    assert math.isclose(s2s.grad(outer)(x), fd, rel_tol=1e-7)
    # forward mode over the same code
    assert math.isclose(s2s.jvp(outer, (x,), (1.0,))[1], fd, rel_tol=1e-7)


def test_nested_transform_calls_give_third_derivatives():
    def d1(x):
        return s2s.grad(sin_t)(x)

    def d2(x):
        return s2s.grad(d1)(x)

    x = 0.5
    assert math.isclose(s2s.grad(d2)(x), -math.cos(x) * x - 3 * math.sin(x), rel_tol=1e-12)
    assert math.isclose(s2s.grad(lambda y: s2s.grad(d1)(y))(x),
                        -math.cos(x) * x - 3 * math.sin(x), rel_tol=1e-12)


def test_a_transform_call_not_reached_when_specialising_is_a_clear_error_if_reached():
    def f(x):
        if x > 0:
            return x * 2.0
        return s2s.grad(sin_cubic)(x)

    g = s2s.grad(f)
    assert g(1.0) == 2.0
    with pytest.raises(s2s.UnsupportedSyntaxError, match="was not reached"):
        g(-1.0)


def test_a_transform_call_reached_with_different_kinds_is_a_clear_error():
    def f(x):
        total = 0.0
        for i in range(2):
            z = x if i == 0 else x * np.ones(2)
            total = total + np.sum(s2s.grad(tanh_sq)(z))
        return total

    with pytest.raises(s2s.UnsupportedSyntaxError, match="different kinds"):
        s2s.jvp(f, (0.3,), (1.0,))


# --- vjp and linearize closures are transformable -------------------------------------

def test_vjp_closure_is_differentiable_and_linear():
    W, x = RNG.normal(size=(2, 3)), RNG.normal(size=3)
    f = lambda x: np.tanh(W @ x)  # noqa: E731
    out, pull = s2s.vjp(f, x)
    ct, dct, w = RNG.normal(size=2), RNG.normal(size=2), RNG.normal(size=3)
    # linear in ct: its JVP is itself
    _, tangent = s2s.jvp(pull, (ct,), (dct,))
    np.testing.assert_allclose(tangent[0], pull(dct)[0], rtol=1e-12)
    # grad of <pull(ct), w> in ct is J w (checked with forward mode)
    g = s2s.grad(lambda c: np.vdot(pull(c)[0], w))(ct)
    np.testing.assert_allclose(g, s2s.jvp(f, (x,), (w,))[1], rtol=1e-12)
    # its vjp is the transpose again
    _, pull2 = s2s.vjp(pull, ct)
    back, = pull2((w,))
    np.testing.assert_allclose(back, s2s.jvp(f, (x,), (w,))[1], rtol=1e-12)


def test_linearized_function_agrees_with_jvp_and_transposes_to_vjp():
    W, x = RNG.normal(size=(2, 3)), RNG.normal(size=3)
    f = lambda x: np.sin(W @ x) * 2.0  # noqa: E731
    out, lin = s2s.linearize(f, x)
    t, u = RNG.normal(size=3), RNG.normal(size=2)
    np.testing.assert_allclose(lin(t), s2s.jvp(f, (x,), (t,))[1], rtol=1e-12)
    _, pull = s2s.vjp(lin, t)
    np.testing.assert_allclose(pull(u)[0], s2s.vjp(f, x)[1](u)[0], rtol=1e-12)
    g = s2s.grad(lambda t: np.sum(lin(t) ** 2))(t)
    J = s2s.jacfwd(f)(x)
    np.testing.assert_allclose(g, 2 * J.T @ (J @ t), rtol=1e-10)


# --- hessian of any output: jacfwd(jacrev(f)) ------------------------------------------

def two_outputs(x, y):
    return np.sin(x) * y[0] + x ** 2 * y[1], np.sum(x * y[0]) ** 2


def test_hessian_of_a_vector_function_matches_finite_differences_of_jacrev():
    x, y = RNG.normal(size=3), RNG.normal(size=2)
    H = s2s.hessian(two_outputs, argnums=(0, 1))(x, y)
    jac = s2s.jacrev(two_outputs, argnums=(0, 1))
    eps = 1e-6
    for o, out_shape in enumerate([(3,), ()]):
        for a, arg in enumerate((x, y)):
            for b, other in enumerate((x, y)):
                assert H[o][a][b].shape == out_shape + arg.shape + other.shape

                def shifted(d):
                    args = [x, y]
                    args[b] = args[b] + d
                    return jac(*args)[o][a]
                fd = np.stack([(shifted(eps * e) - shifted(-eps * e)) / (2 * eps)
                               for e in np.eye(other.size)], axis=-1)
                np.testing.assert_allclose(H[o][a][b], fd, rtol=1e-6, atol=1e-8)


def test_hessian_pytree_layout_and_has_aux():
    p = {"a": RNG.normal(size=3), "b": 1.5}

    def h(p):
        return {"u": p["a"] * p["b"], "v": np.sum(p["a"] ** 3)}, "aux"

    H, aux = s2s.hessian(h, has_aux=True)(p)
    assert aux == "aux"
    assert H["u"]["a"]["a"].shape == (3, 3, 3) and H["u"]["b"]["b"].shape == (3,)
    np.testing.assert_allclose(H["v"]["a"]["a"], np.diag(6 * p["a"]), rtol=1e-12)
    np.testing.assert_allclose(H["u"]["a"]["b"], np.eye(3), rtol=1e-12)
    np.testing.assert_allclose(H["u"]["b"]["b"], np.zeros(3), atol=0)


def test_jacrev_and_jacfwd_with_has_aux_against_finite_differences():
    """``jacrev(f, has_aux=True)`` returned ``(J, aux)`` as JAX does; it raised an
    UnboundLocalError inside s2s (the batched fast path is skipped with aux)."""
    x = RNG.normal(size=3)

    def f(x):
        return np.sin(x) * np.sum(x ** 2), {"m": np.mean(x), "n": len(x)}

    eps = 1e-6
    fd = np.stack([(f(x + eps * e)[0] - f(x - eps * e)[0]) / (2 * eps) for e in np.eye(3)],
                  axis=1)
    for make in (s2s.jacrev, s2s.jacfwd):
        J, aux = make(f, has_aux=True)(x)
        np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-9)
        assert aux["m"] == pytest.approx(np.mean(x), rel=1e-15) and aux["n"] == 3
