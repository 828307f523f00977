"""``functools.partial`` objects under every transform (``passes/partials.py``): passed
to a transform (``grad(partial(loss, x=X, y=Y))``), called in transformed code as a
global or made there, of a user function, a lambda, a numpy function or a transformed
function; derivatives against central differences, results against Python."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import s2s
from tests.compose.finite_differences import fd_gradient, fd_hessian

RNG = np.random.default_rng(11)
X = RNG.normal(size=(12, 3))
Y = RNG.normal(size=12)
W = RNG.normal(size=3)
WS = RNG.normal(size=(4, 3))


def loss(w, x, y, reg=0.1):
    return np.mean((np.tanh(x @ w) - y) ** 2) + reg * np.sum(w ** 2)


def activated(x, mode, act):
    if mode == "sum":  # a branch on a value the partial holds: taken when transforming
        return np.sum(act(x))
    return np.max(act(x) * x)


DATA_LOSS = partial(loss, x=X, y=Y)  # arrays held: free variables, not literals
STEP = partial(loss, reg=0.5)


def uses_a_global_partial(w):
    return STEP(w, X, Y) * 2.0


TRANSFORMS = {
    "grad": lambda f: s2s.grad(f)(W),
    "jit(grad)": lambda f: s2s.jit(s2s.grad(f))(W),
    "vjp": lambda f: s2s.vjp(f, W)[1](1.0)[0],
    "jvp": lambda f: np.array([s2s.jvp(f, (W,), (e,))[1] for e in np.eye(3)]),
    "vmap(grad)": lambda f: s2s.vmap(s2s.grad(f))(np.stack([W, W]))[1],
    "jit(vmap(grad))": lambda f: s2s.jit(s2s.vmap(s2s.grad(f)))(np.stack([W, W]))[0],
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.parametrize("f", [DATA_LOSS, partial(partial(loss, x=X), y=Y),
                               uses_a_global_partial,
                               partial(activated, mode="max", act=np.tanh)],
                         ids=["arrays held", "nested", "global in code", "constants held"])
def test_derivatives_of_partials_match_finite_differences(f, name):
    np.testing.assert_allclose(TRANSFORMS[name](f), fd_gradient(f, W), rtol=1e-6, atol=1e-8)


def test_hessian_and_primal_of_a_partial():
    np.testing.assert_allclose(s2s.hessian(DATA_LOSS)(W), fd_hessian(DATA_LOSS, W),
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(s2s.jit(DATA_LOSS)(W), DATA_LOSS(W), rtol=1e-14)
    np.testing.assert_allclose(s2s.vmap(DATA_LOSS)(WS), [DATA_LOSS(w) for w in WS],
                               rtol=1e-14)


def test_a_keyword_the_partial_holds_may_not_be_passed_again():
    with pytest.raises(TypeError, match="reg"):  # read as the value held (a constant)
        s2s.grad(partial(loss, x=X, y=Y, reg=0.3))(W, reg=0.2)
    got = s2s.grad(DATA_LOSS)(W, reg=0.3)  # one left free may
    np.testing.assert_allclose(got, fd_gradient(partial(DATA_LOSS, reg=0.3), W),
                               rtol=1e-6, atol=1e-8)


def test_partials_of_numpy_and_of_transformed_functions():
    m = RNG.normal(size=(2, 3))
    np.testing.assert_allclose(s2s.jit(partial(np.sum, axis=1))(m), np.sum(m, axis=1))
    jac = s2s.jacrev(partial(np.sum, axis=0))(m)
    np.testing.assert_array_equal(jac, np.tile(np.eye(3)[:, None, :], (1, 2, 1)))
    per_example = s2s.vmap(partial(s2s.grad(loss), x=X, y=Y))(WS)
    np.testing.assert_allclose(per_example, [fd_gradient(DATA_LOSS, w) for w in WS],
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.grad(partial(s2s.jit(loss), x=X, y=Y))(W),
                               fd_gradient(DATA_LOSS, W), rtol=1e-6, atol=1e-8)


def made_late(w):
    c = 2.0
    g = partial(loss, reg=c)
    c = 100.0  # the partial holds 2.0, the value of when it was made
    return g(w, X, Y) + c * 0.0


def made_of_a_lambda(w):
    s = 3.0
    h = partial(lambda a, b: np.sum(np.sin(a) * b) * s, w)
    return h(w)


def made_twice(w):
    g = partial(loss, y=Y)
    h = partial(g, reg=0.5)
    return h(w, X) + np.sum(partial(np.sum, axis=0)(np.outer(w, w)))


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.parametrize("f", [made_late, made_of_a_lambda, made_twice])
def test_partials_made_in_transformed_code(f, name):
    np.testing.assert_allclose(TRANSFORMS[name](f), fd_gradient(f, W), rtol=1e-6, atol=1e-8)


def test_a_partial_made_in_the_code_that_escapes_is_a_clear_error():
    def returns_one(w):
        g = partial(loss, y=Y)
        return g

    with pytest.raises(s2s.S2SError, match="functools.partial object made in the code"):
        s2s.grad(returns_one)(W)


def test_generated_code_of_a_partial_holds_no_copy_of_its_arrays():
    text = s2s.grad(DATA_LOSS).generated([W])[0].__s2s_source__
    assert "np.array(" not in text and len(text) < 4000
