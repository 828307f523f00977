"""vmap of custom_vjp/custom_jvp functions: the primal code batched, and in derivative
code the user's rules batched like user code (the rules are deliberately wrong, so a
bypassed rule shows).  Oracles: closed forms and a Python loop over the examples."""
import numpy as np
import pytest

import s2s
from tests.custom_progs import (f, grad_ck_closed, grad_jvp_closed, grad_sum_grad_jvp,
                                grad_two_closed, grad_vjp_closed, loop_ck, loss_ck,
                                loss_jvp, loss_two, loss_vjp, second_ck_closed,
                                second_closed, short_tangent, sum_grad_ck, tangent_jvp)
from tests.grad.oracles import fd_grad

X = np.stack([np.linspace(0.1, 1.0, 4), np.linspace(-1.0, 0.5, 4), np.full(4, 0.3)])


@pytest.mark.parametrize("loss", [loss_vjp, loss_jvp])
def test_vmap_primal_equals_loop(loss):
    out = s2s.vmap(loss)(X)
    np.testing.assert_allclose(out, [loss(x) for x in X], rtol=1e-13)


@pytest.mark.parametrize("loss,closed", [(loss_vjp, grad_vjp_closed),
                                         (loss_jvp, grad_jvp_closed)])
def test_vmap_grad_uses_rule(loss, closed):
    out = s2s.vmap(s2s.grad(loss))(X)
    np.testing.assert_allclose(out, np.stack([closed(x) for x in X]), rtol=1e-12)
    loop = np.stack([s2s.grad(loss)(x) for x in X])
    np.testing.assert_allclose(out, loop, rtol=1e-13)


def test_vmap_jvp_of_custom_jvp_uses_rule():
    from tests.custom_progs import h

    def tangent(x, t):
        return s2s.jvp(h, (x,), (t,))[1]

    T = np.ones_like(X) * 0.5
    out = s2s.vmap(tangent)(X, T)
    np.testing.assert_allclose(out, 3.0 * np.exp(X) * T, rtol=1e-13)


def _weighted(v, w):
    return np.sum(f(v) * w)


def _grad_at(w, v):
    return s2s.grad(_weighted)(v, w)


def test_vmap_grad_with_unbatched_primal_and_batched_cotangent():
    x = np.linspace(0.1, 1.0, 4)
    W = np.stack([np.ones(4), 2 * np.ones(4), np.linspace(0, 1, 4)])
    out = s2s.vmap(_grad_at, in_axes=(0, None))(W, x)
    np.testing.assert_allclose(out, np.stack([2 * np.cos(x) * w for w in W]), rtol=1e-13)
    np.testing.assert_allclose(out, np.stack([_grad_at(w, x) for w in W]), rtol=1e-13)


def test_vmap_grad_bad_bwd_shape_raises():
    @s2s.custom_vjp
    def k(x):
        return np.sin(x)

    k.defvjp(lambda x: (np.sin(x), x), lambda c, g: (np.sum(c * g),))
    with pytest.raises(ValueError, match="cotangent of argument 0"):
        s2s.vmap(s2s.grad(lambda x: np.sum(k(x))))(X)


def test_vmap_jvp_code_uses_rule():
    np.testing.assert_allclose(s2s.vmap(tangent_jvp)(X),
                               [np.sum(grad_jvp_closed(x)) for x in X], rtol=1e-13)


def test_vmap_two_outputs():
    A, B = X, X + 1.0
    ga, gb = s2s.vmap(s2s.grad(loss_two, argnums=(0, 1)))(A, B)
    np.testing.assert_allclose(ga, grad_two_closed(A, B)[0], rtol=1e-13)
    np.testing.assert_allclose(gb, grad_two_closed(A, B)[1], rtol=1e-13)
    np.testing.assert_allclose(s2s.vmap(loss_two)(A, B),
                               [loss_two(a, b) for a, b in zip(A, B)], rtol=1e-13)


def test_vmap_second_order_uses_rule():
    out = s2s.vmap(s2s.grad(grad_sum_grad_jvp))(X)
    np.testing.assert_allclose(out, second_closed(X), rtol=1e-12)


def test_vmap_checkpoint_primal_grad_and_second_order():
    np.testing.assert_allclose(s2s.vmap(loss_ck)(X), [loss_ck(x) for x in X], rtol=1e-13)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(loss_ck))(X), grad_ck_closed(X), rtol=1e-12)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(sum_grad_ck))(X), second_ck_closed(X),
                               rtol=1e-12)


def test_vmap_checkpoint_loop():
    np.testing.assert_allclose(s2s.vmap(loop_ck, in_axes=(0, None))(X, 7),
                               [loop_ck(x, 7) for x in X], rtol=1e-13)
    out = s2s.vmap(s2s.grad(loop_ck), in_axes=(0, None))(X, 7)
    np.testing.assert_allclose(out, np.stack([fd_grad(loop_ck, (x, 7)) for x in X]),
                               rtol=1e-7, atol=1e-9)


def test_vmap_jvp_rule_checks_per_example():
    with pytest.raises(ValueError, match="tangent output"):
        s2s.vmap(short_tangent)(X)


# -- derivatives of vmap: the batched custom function keeps the rule ------------------------
@pytest.mark.parametrize("loss,closed", [(loss_vjp, grad_vjp_closed),
                                         (loss_jvp, grad_jvp_closed)])
def test_grad_of_vmap_uses_rule(loss, closed):
    total = lambda xs: np.sum(s2s.vmap(loss)(xs))  # noqa: E731
    want = np.stack([closed(x) for x in X])
    np.testing.assert_allclose(s2s.grad(total)(X), want, rtol=1e-12)
    ct = np.linspace(0.5, 1.5, X.shape[0])
    got = s2s.vjp(s2s.vmap(loss), X)[1](ct)[0]
    np.testing.assert_allclose(got, want * ct[:, None], rtol=1e-12)


def test_jvp_of_vmap_uses_the_custom_jvp_rule_and_refuses_a_custom_vjp():
    t = np.ones_like(X)
    got = s2s.jvp(s2s.vmap(loss_jvp), (X,), (t,))[1]
    np.testing.assert_allclose(got, [np.sum(grad_jvp_closed(x)) for x in X], rtol=1e-12)
    with pytest.raises(s2s.S2SError, match="custom_vjp"):
        s2s.jvp(s2s.vmap(loss_vjp), (X,), (t,))


def test_grad_of_vmap_with_an_unbatched_argument_sums_its_rule_cotangents():
    a, b = X, X[0] * 0.5 + 0.2
    total = lambda a, b: np.sum(s2s.vmap(loss_two, in_axes=(0, None))(a, b))  # noqa: E731
    ga, gb = s2s.grad(total, argnums=(0, 1))(a, b)
    pairs = [grad_two_closed(x, b) for x in a]
    np.testing.assert_allclose(ga, np.stack([p[0] for p in pairs]), rtol=1e-12)
    np.testing.assert_allclose(gb, np.sum([p[1] for p in pairs], axis=0), rtol=1e-12)


def test_jit_of_grad_of_vmap_of_an_elementwise_custom_vjp_uses_rule():
    total = lambda xs: np.sum(s2s.vmap(f)(xs))  # noqa: E731
    np.testing.assert_allclose(s2s.jit(s2s.grad(total))(X), 2.0 * np.cos(X), rtol=1e-12)


@pytest.mark.parametrize("loss,closed", [(loss_vjp, grad_vjp_closed),
                                         (loss_jvp, grad_jvp_closed)])
def test_jit_of_grad_of_vmap_reduced_per_example_uses_rule(loss, closed):
    # each example's custom result is summed (a reduction over batch_axes in the batched
    # code, compiled in its per-example form inside the gradient's code)
    total = lambda xs: np.sum(s2s.vmap(loss)(xs))  # noqa: E731
    np.testing.assert_allclose(s2s.jit(s2s.grad(total))(X), np.stack([closed(x) for x in X]),
                               rtol=1e-12)


def test_jit_of_vmap_of_a_custom_function_matches_the_loop():
    for loss in (loss_vjp, loss_jvp):
        np.testing.assert_allclose(s2s.jit(s2s.vmap(loss))(X), [loss(x) for x in X],
                                   rtol=1e-13)
