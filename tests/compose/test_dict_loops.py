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


def target_after_the_loop(d, x):
    for k, v in d.items():
        pass
    return np.sum(v * x) * 2.0


def jumps_in_a_loop_over_items(d, x):
    s = 0.0
    for k, v in d.items():
        if k == "b":
            continue
        if np.sum(v) > 100.0:
            break
        s = s + np.sum(np.sin(v * x))
    else:
        s = s * 1.5
    return s


def nested_loops_over_one_dict(d, x):
    s = 0.0
    for k1, v1 in d.items():
        for k2, v2 in d.items():
            s = s + np.sum(v1 * v2 * x) * (1.0 if k1 == k2 else 0.5)
    return s


def inside_a_while_loop(d, x):
    s = 0.0
    i = 0
    while i < 3:
        for v in d.values():
            s = s + np.sum(v * x) * (i + 1)
        i += 1
    return s


def target_reassigned(d, x):
    s = 0.0
    for k, v in d.items():
        v = v * 2.0
        s = s + np.sum(v ** 2 * x)
    return s + np.sum(v)


def integer_keys_and_a_comprehension(d, x):
    m = {0: x[0], 1: x[1] ** 2, 2: np.sum(x)}
    s = 0.0
    for i in m:
        s = s + m[i] * (i + 1)
    t = {k: v * x for k, v in d.items()}
    return s + sum(np.sum(w ** 2) for w in t.values())


D = {"a": np.array([0.3, -0.2, 0.5]), "b": np.array([0.1, 0.4, -0.3]),
     "c": np.array([0.2, 0.2, 0.1])}
EDGES = [target_after_the_loop, jumps_in_a_loop_over_items, nested_loops_over_one_dict,
         inside_a_while_loop, target_reassigned, integer_keys_and_a_comprehension]


@pytest.mark.parametrize("f", EDGES, ids=lambda f: f.__name__)
def test_edge_cases_of_unrolling(f):
    assert s2s.jit(f)(D, X) == pytest.approx(f(D, X), rel=1e-12)
    want_x = fd_gradient(lambda x: f(D, x), X)
    want_a = fd_gradient(lambda a: f({**D, "a": a}, X), D["a"])
    for grad in (s2s.grad(f, argnums=(0, 1)), s2s.jit(s2s.grad(f, argnums=(0, 1)))):
        gd, gx = grad(D, X)
        np.testing.assert_allclose(gx, want_x, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gd["a"], want_a, rtol=1e-6, atol=1e-8)
    batched = s2s.vmap(s2s.grad(f, argnums=1), in_axes=(None, 0))(D, np.stack([X, -X]))
    np.testing.assert_allclose(batched[1], fd_gradient(lambda x: f(D, x), -X), rtol=1e-6,
                               atol=1e-8)


def escapes_then_grows(x):
    d = {"a": x[0], "b": x[1]}
    holder = [d]
    holder[0]["c"] = x[2] * 3.0  # d gains a key through another name: not unrolled
    s = 0.0
    for k in d:
        s = s + d[k] ** 2
    return s


def argument_grows(p, x):
    p["c"] = x[2] * 3.0  # the argument gains a key: not unrolled
    s = 0.0
    for k in p:
        s = s + p[k] ** 2
    return s


def membership_length_get(x):
    d = {"a": x[0], "b": x[1]}
    s = 0.0
    if "a" in d and "z" not in d and len(d) == 2:
        for k, v in d.items():
            s = s + v ** 2 + d.get(k, 0.0)
    return s


def test_a_dict_that_may_gain_keys_is_not_unrolled():
    x = np.array([0.3, 0.5, 0.7])
    t = np.array([1.0, -0.5, 2.0])
    want = fd_gradient(escapes_then_grows, x) @ t
    assert s2s.jvp(escapes_then_grows, (x,), (t,))[1] == pytest.approx(want, rel=1e-6)
    f = lambda x: argument_grows({"a": 1.0}, x)  # noqa: E731
    assert s2s.jvp(f, (x,), (t,))[1] == pytest.approx(fd_gradient(f, x) @ t, rel=1e-6)


def test_membership_and_length_of_an_unrolled_dict():
    x = np.array([0.3, 0.5, 0.7])
    want = fd_gradient(membership_length_get, x)
    np.testing.assert_allclose(s2s.grad(membership_length_get)(x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.grad(membership_length_get))(x), want, rtol=1e-6,
                               atol=1e-8)
