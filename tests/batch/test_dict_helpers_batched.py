"""vmap of code that keeps state in a dict, under every derivative: the dict helpers
(``rt.dict_set``, ``rt.old_item``, ``d.get``/``d.update`` and their cotangents) batched
on the whole batch, dicts and values lifted where they are the same for every example,
against central differences of the plain function."""
import numpy as np
import pytest

import s2s

from tests.compose.finite_differences import fd_gradient, fd_hessian

X = np.array([0.31, -0.52, 0.77, 0.18])
XS = np.stack([X, X * 0.9 + 0.05, X[::-1]])
V = np.array([0.3, -0.2, 0.5, 0.1])


def state_updates(x):
    state = {"a": x[0], "b": x[1:]}
    for _ in range(2):
        state["a"] = state["a"] * 0.5 + np.sum(state["b"] ** 2)
        state["b"] = state["b"] * state["a"]
    return state["a"] + np.sum(state["b"])


def get_and_update(x):
    d = {"u": x[0] * 2.0}
    d.update({"v": np.sin(x)})
    w = d.get("w", x[1:])
    return d["u"] * np.sum(d["v"]) + np.sum(w ** 2) + np.sum(list(d.values())[1])


@pytest.mark.parametrize("f", [state_updates, get_and_update], ids=lambda f: f.__name__)
def test_batched_values_and_derivatives(f):
    want = np.stack([fd_gradient(f, x) for x in XS])
    np.testing.assert_allclose(s2s.vmap(f)(XS), [f(x) for x in XS], rtol=1e-13)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(XS), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.grad(lambda xs: np.sum(s2s.vmap(f)(xs)))(XS), want,
                               rtol=1e-6, atol=1e-8)
    tangents = s2s.vmap(lambda v: s2s.jvp(f, (X,), (v,))[1])(np.stack([V, 2 * V]))
    np.testing.assert_allclose(tangents, [want[0] @ V, 2 * want[0] @ V], rtol=1e-6)
    np.testing.assert_allclose(s2s.vmap(s2s.hessian(f))(XS)[0], fd_hessian(f, X), rtol=1e-4,
                               atol=1e-4)


def test_compiled_batched_gradient_of_dict_state():
    want = np.stack([fd_gradient(state_updates, x) for x in XS])
    np.testing.assert_allclose(s2s.jit(s2s.vmap(s2s.grad(state_updates)))(XS), want,
                               rtol=1e-6, atol=1e-8)
