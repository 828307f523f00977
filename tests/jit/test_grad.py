"""Derivatives compiled natively, checked against independent oracles: central finite
differences, the corpus's closed forms, the seed's printed numbers and the dot-product
test <u, J v> = <J^T u, v> (J v by finite differences)."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from tests.grad import corpus, corpus_control  # noqa: F401  (registers the cases)
from tests.grad.oracles import assert_tree_close, fd_grad

from . import kernels as K

CASES, _seen = [], set()
for _c in corpus.CASES:
    if _c.fn not in _seen and not _c.kwargs:
        _seen.add(_c.fn)
        CASES.append(_c)

COMPILED = []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_gradient_against_finite_differences(case):
    g = s2s.grad(case.fn, argnums=case.argnums)
    try:
        got = s2s.jit(g)(*case.args)
    except (s2s.S2SError, TypeError) as e:
        assert "jit" in str(e) or "unsupported" in str(e)
        return
    expected = fd_grad(case.fn, case.args, case.argnums)
    assert_tree_close(got, expected, rtol=1e-6, atol=1e-7, what=case.id)
    if case.closed is not None:
        assert_tree_close(got, case.closed(*case.args), rtol=1e-9, atol=1e-11, what=case.id)
    COMPILED.append(case.id)


def test_compiled_gradient_share():
    if len(COMPILED) < 10:
        pytest.skip("run together with the corpus cases")
    assert len(COMPILED) >= 121, len(COMPILED)


def test_seed_try_except_vjp():
    """The seed's example: vjp at 4 is (pi,), at 2 is (24,)."""
    for x0, want in ((4.0, np.pi), (2.0, 24.0)):
        _, f_vjp = s2s.vjp(corpus_control.cf_try_seed, x0)
        got = s2s.jit(f_vjp)(1.0)
        assert isinstance(got, tuple) and len(got) == 1
        assert got[0] == pytest.approx(want, rel=1e-14)


def _fd_jvp(f, args, argnum, v, eps=1e-6):
    plus, minus = list(args), list(args)
    plus[argnum] = args[argnum] + eps * v
    minus[argnum] = args[argnum] - eps * v
    return (np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps)


@pytest.mark.parametrize("fn, args", [
    (K.logsumexp, (np.array([0.3, -1.2, 2.0, 0.7]),)),
    (K.heat, (np.linspace(0.0, 1.0, 8) ** 2, 5)),
    (K.loop_over_rows, (np.random.default_rng(3).normal(size=(3, 4)),)),
])
def test_vjp_dot_product(fn, args):
    rng = np.random.default_rng(11)
    out, f_vjp = s2s.vjp(fn, *args)
    u = rng.normal(size=np.shape(out)) if np.ndim(out) else 0.7
    v = rng.normal(size=np.shape(args[0]))
    (xbar, *_) = s2s.jit(f_vjp)(u)
    lhs = np.sum(u * _fd_jvp(fn, args, 0, v))
    assert np.sum(xbar * v) == pytest.approx(lhs, rel=1e-6, abs=1e-8)


def test_value_and_grad_rk4():
    vg = s2s.jit(s2s.value_and_grad(K.rk4, argnums=(0, 1)))
    value, (d0, dh) = vg(1.0, 0.01, 100)
    assert value == pytest.approx(K.rk4(1.0, 0.01, 100), rel=1e-14)
    fd = fd_grad(K.rk4, (1.0, 0.01, 100), (0, 1))
    assert (d0, dh) == pytest.approx(tuple(map(float, fd)), rel=1e-6)


def test_heat_gradient_in_place_writes():
    u = np.linspace(0.0, 1.0, 10) ** 2

    def loss(u0):
        return np.sum(K.heat(u0, 4) ** 2)

    g = s2s.jit(s2s.grad(K.heat_loss))(u, 4)
    fd = fd_grad(K.heat_loss, (u, 4), 0)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    _ = loss


def test_jvp_inside_jitted_function():
    y, dy = s2s.jit(K.tangent_of_rk4)(1.0, 1.0)
    assert y == pytest.approx(K.rk4_50(1.0), rel=1e-14)
    eps = 1e-6
    assert dy == pytest.approx((K.rk4_50(1.0 + eps) - K.rk4_50(1.0 - eps)) / (2 * eps), rel=1e-7)


def test_grad_inside_jitted_function():
    assert s2s.jit(K.grad_inside)(1.5) == pytest.approx(2 * (3 * 1.5 ** 2 - 2.0), rel=1e-14)


def test_gradient_errors_are_clear():
    with pytest.raises(s2s.S2SError, match="jit"):
        s2s.jit(s2s.grad(K.uses_list))(1.0)


def test_gradient_through_axis_reductions():
    z = np.random.default_rng(5).normal(size=(3, 4))
    g = s2s.jit(s2s.grad(K.softmax_loss))(z)
    np.testing.assert_allclose(g, fd_grad(K.softmax_loss, (z,), 0), rtol=1e-6, atol=1e-8)


def test_jacobian_functions_compile():
    """jit(jacfwd/jacrev/hessian) are native kernels (tests/jit/test_jacobians.py)."""
    x = np.array([0.5, -1.25])
    for tr in (s2s.jacfwd, s2s.jacrev):
        np.testing.assert_allclose(s2s.jit(tr(K.poly))(x), np.diag(3 * x ** 2 - 2.0),
                                   rtol=1e-13)
    np.testing.assert_allclose(s2s.jit(s2s.hessian(K.poly))(1.5), 9.0, rtol=1e-13)
