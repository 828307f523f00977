"""Loops over dicts whose keys are known when transforming: one copy per key
(``passes/dict_loops.py``).  A params dict argument's keys are part of the
specialisation, and a dict the function makes from constant keys shows them; every
transform then reads each entry at a constant key.  Checked against central
differences in every composition, and for the absence of a tape."""
import numpy as np
import pytest

import s2s

from tests.compose.finite_differences import fd_gradient, fd_hessian

PARAMS = {"W": np.array([[0.2, -0.4], [0.5, 0.1], [-0.3, 0.6]]), "b": np.array([0.1, -0.2])}
X = np.array([0.3, -0.5, 0.7])


def l2_over_values(params, x):
    h = np.tanh(x @ params["W"] + params["b"])
    return np.sum(h ** 2) + 0.1 * sum(np.sum(w ** 2) for w in params.values())


def branch_on_key(params, x):
    s = 0.0
    for name, p in params.items():
        if name == "W":
            s = s + np.sum((x @ p) ** 2)
        else:
            s = s + np.sum(np.sin(p) * x[:2])
    return s


def keys_and_new_dict(params, x):
    scaled = {}
    for k in params:
        scaled[k] = params[k] * (1.0 + x[0] ** 2)
    return np.sum(scaled["W"] ** 2) + np.sum(scaled["b"] * x[1:])


def local_dict_with_break(params, x):
    d = {"a": x[0] ** 2, "b": x[1:] * 2.0, "c": np.sum(x)}
    s = 0.0
    for key, v in d.items():
        if key == "c":
            break
        s = s + np.sum(v * v)
    else:
        s = s * 3.0
    return s + np.sum(params["b"])


FUNCTIONS = [l2_over_values, branch_on_key, keys_and_new_dict, local_dict_with_break]


def flat(params):
    return np.concatenate([params["W"].ravel(), params["b"]])


def unflat(v):
    return {"W": v[:6].reshape(3, 2), "b": v[6:]}


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_gradients_against_finite_differences(f):
    want_p = fd_gradient(lambda v: f(unflat(v), X), flat(PARAMS))
    want_x = fd_gradient(lambda x: f(PARAMS, x), X)
    for grad in (s2s.grad(f, argnums=(0, 1)), s2s.jit(s2s.grad(f, argnums=(0, 1)))):
        gp, gx = grad(PARAMS, X)
        np.testing.assert_allclose(flat(gp), want_p, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gx, want_x, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_second_order_and_batched(f):
    def of_x(x):
        return f(PARAMS, x)

    want = fd_hessian(of_x, X)
    np.testing.assert_allclose(s2s.hessian(of_x)(X), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(s2s.jit(s2s.hessian(of_x))(X), want, rtol=1e-4, atol=1e-5)
    xs = np.stack([X, 0.5 * X, -X])
    batched = s2s.vmap(s2s.grad(f), in_axes=(None, 0))(PARAMS, xs)
    for k, x in enumerate(xs):
        want = fd_gradient(lambda v: f(unflat(v), x), flat(PARAMS))
        np.testing.assert_allclose(flat({n: batched[n][k] for n in batched}), want,
                                   rtol=1e-6, atol=1e-8)


def test_the_gradient_of_a_loop_over_a_params_dict_keeps_no_tape():
    source = s2s.grad(branch_on_key).generated([PARAMS, X])[0].__s2s_source__
    assert "tape" not in source and "params['W']" in source
