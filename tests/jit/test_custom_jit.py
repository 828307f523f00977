"""jit of custom_vjp/custom_jvp functions: the primal code compiled, and in derivative
code the user's rules (deliberately wrong, so a bypassed rule shows) with their checks.
Oracles: closed forms, and the uncompiled program."""
import numpy as np
import pytest

import s2s
from tests.custom_progs import (grad_ck_closed, grad_jvp_closed, grad_sum_grad_jvp,
                                grad_two_closed, grad_vjp_closed, loop_ck, loss_ck,
                                loss_jvp, loss_two, loss_vjp, second_ck_closed,
                                second_closed, short_tangent, sum_grad_ck, tangent_jvp)
from tests import custom_progs as P
from tests.grad.oracles import fd_grad

x = np.linspace(0.1, 1.0, 5)


@pytest.mark.parametrize("loss", [loss_vjp, loss_jvp])
def test_jit_primal(loss):
    assert s2s.jit(loss)(x) == pytest.approx(loss(x), rel=1e-13)


@pytest.mark.parametrize("loss,closed", [(loss_vjp, grad_vjp_closed),
                                         (loss_jvp, grad_jvp_closed)])
def test_jit_grad_uses_rule(loss, closed):
    np.testing.assert_allclose(s2s.jit(s2s.grad(loss))(x), closed(x), rtol=1e-12)


def test_jit_none_cotangent_is_zero():
    @s2s.custom_vjp
    def two(a, b):
        return a * b

    two.defvjp(lambda a, b: (a * b, (a, b)), lambda r, g: (3.0 * r[1] * g, None))
    out = s2s.jit(s2s.grad(lambda a, b: np.sum(two(a, b)), argnums=(0, 1)))(x, 2 * x)
    np.testing.assert_allclose(out[0], 6.0 * x, rtol=1e-13)
    np.testing.assert_allclose(out[1], np.zeros_like(x))


def test_jit_bwd_wrong_length_raises_at_run_time():
    @s2s.custom_vjp
    def k(v):
        return np.sin(v)

    k.defvjp(lambda v: (np.sin(v), v), lambda c, g: (c[:-1] * g[:-1],))
    with pytest.raises(ValueError, match="cotangent of argument 0"):
        s2s.jit(s2s.grad(lambda v: np.sum(k(v))))(x)


def test_jit_fwd_not_a_pair_raises():
    @s2s.custom_vjp
    def k(v):
        return np.sin(v)

    k.defvjp(lambda v: np.sin(v), lambda c, g: (g,))
    with pytest.raises(TypeError, match="pair"):
        s2s.jit(s2s.grad(lambda v: np.sum(k(v))))(x)


def test_jit_jvp_code_uses_rule():
    assert s2s.jit(tangent_jvp)(x) == pytest.approx(np.sum(grad_jvp_closed(x)), rel=1e-13)


def test_jit_two_outputs():
    a, b = x, x + 1.0
    ga, gb = s2s.jit(s2s.grad(loss_two, argnums=(0, 1)))(a, b)
    np.testing.assert_allclose(ga, grad_two_closed(a, b)[0], rtol=1e-13)
    np.testing.assert_allclose(gb, grad_two_closed(a, b)[1], rtol=1e-13)
    assert s2s.jit(loss_two)(a, b) == pytest.approx(loss_two(a, b), rel=1e-13)


def test_jit_second_order_uses_rule():
    np.testing.assert_allclose(s2s.jit(s2s.grad(grad_sum_grad_jvp))(x), second_closed(x),
                               rtol=1e-12)


def test_jit_scalar_argument():
    from tests.custom_progs import f
    s = 0.3
    out = s2s.jit(s2s.grad(lambda v: f(v) * v))(s)
    assert out == pytest.approx(2.0 * np.cos(s) * s + np.sin(s), rel=1e-13)


def test_jit_checkpoint_primal_grad_and_second_order():
    assert s2s.jit(loss_ck)(x) == pytest.approx(loss_ck(x), rel=1e-13)
    np.testing.assert_allclose(s2s.jit(s2s.grad(loss_ck))(x), grad_ck_closed(x), rtol=1e-12)
    np.testing.assert_allclose(s2s.jit(s2s.grad(sum_grad_ck))(x), second_ck_closed(x),
                               rtol=1e-12)


def test_jit_checkpoint_loop():
    assert s2s.jit(loop_ck)(x, 7) == pytest.approx(loop_ck(x, 7), rel=1e-13)
    np.testing.assert_allclose(s2s.jit(s2s.grad(loop_ck))(x, 7), fd_grad(loop_ck, (x, 7)),
                               rtol=1e-7, atol=1e-9)


def test_jit_checkpoint_loop_bad_levels_is_an_error():
    from tests.custom_progs import s2s as _s2s

    def bad(v, n):
        for i in _s2s.checkpoint_loop(range(n), levels=0):
            v = v * 2.0
        return np.sum(v)

    with pytest.raises(ValueError, match="levels"):
        s2s.jit(bad)(x, 3)


def test_jit_jvp_rule_wrong_tangent_shape_raises_at_run_time():
    with pytest.raises(ValueError, match="tangent output"):
        s2s.jit(short_tangent)(x)
    with pytest.raises(ValueError, match="tangent output"):
        short_tangent(x)  # the same error without jit


def test_jit_and_vmap_of_a_rule_with_nondiff_argnums():
    """The bwd rule gets the nondiff argument first; its (deliberate) 3 k x is what
    jit and vmap return."""
    x = np.linspace(0.5, 2.0, 4)
    want = 3.0 * 2.0 * x
    np.testing.assert_allclose(s2s.grad(P.loss_nondiff)(x), want)
    np.testing.assert_allclose(s2s.jit(s2s.grad(P.loss_nondiff))(x), want)
    X = np.stack([x, 2 * x])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(P.loss_nondiff))(X), 3.0 * 2.0 * X)
