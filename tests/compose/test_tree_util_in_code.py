"""``tree_map`` and ``tree_leaves`` called inside transformed or compiled code, as JAX
code is written (``jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)`` in a
jitted update step): where the first tree's structure is an argument's (a list of
tuples, a dict, a dataclass) or what ``tree_map`` made of one, the call is one call of
the function per leaf, rebuilt in that structure.  Results against the same steps in
plain Python with central differences for the gradients."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import s2s
from s2s.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten
from tests.compose.finite_differences import fd_gradient

RNG = np.random.default_rng(3)
LAYERS = [(RNG.normal(size=(3, 2)), RNG.normal(size=3)),
          (RNG.normal(size=(1, 3)), RNG.normal(size=1))]
X = np.array([0.4, -0.2])
Y = np.array([0.3])


@dataclass
class Params:
    w: np.ndarray
    b: float


def predict_layers(params, x):
    h = x
    for w, b in params:
        h = np.tanh(w @ h + b)
    return h


def predict_dict(params, x):
    return np.tanh(params["w"] @ x + params["b"])


def predict_record(params, x):
    return np.tanh(params.w @ x + params.b)


def loss_of(predict):
    def loss(params, x, y):
        return np.sum((predict(params, x) - y) ** 2)
    return loss


def update_of(loss):
    def update(params, x, y):
        grads = s2s.grad(loss)(params, x, y)
        return tree_map(lambda p, g: p - 0.05 * g, params, grads)
    return update


def squared_norm(params):
    return sum(tree_leaves(tree_map(lambda p: np.sum(p ** 2), params)))


def fd_tree(f, tree):
    leaves, treedef = tree_flatten(tree)
    out = []
    for i, leaf in enumerate(leaves):
        def along(v, i=i, shape=np.shape(leaf)):
            changed = list(leaves)
            changed[i] = v.reshape(shape) if shape else v[0]
            return f(tree_unflatten(treedef, changed))
        out.append(fd_gradient(along, np.ravel(leaf).astype(float)).reshape(np.shape(leaf)))
    return tree_unflatten(treedef, out)


def assert_trees_close(got, want, tol=1e-6):
    g, gt = tree_flatten(got)
    w, wt = tree_flatten(want)
    assert gt == wt
    for a, b in zip(g, w):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


TREES = {"list of tuples": (LAYERS, predict_layers),
         "dict": ({"w": RNG.normal(size=(1, 2)), "b": RNG.normal(size=1)}, predict_dict),
         "dataclass": (Params(RNG.normal(size=(1, 2)), 0.2), predict_record)}


@pytest.mark.parametrize("name", sorted(TREES))
@pytest.mark.parametrize("transform", ["python", "jit"])
def test_an_update_step_maps_over_the_parameters(name, transform):
    params, predict = TREES[name]
    loss = loss_of(predict)
    grads = fd_tree(lambda p: loss(p, X, Y), params)
    want = tree_map(lambda p, g: p - 0.05 * g, params, grads)
    update = update_of(loss)
    step = update if transform == "python" else s2s.jit(update)
    assert_trees_close(step(params, X, Y), want)


@pytest.mark.parametrize("name", sorted(TREES))
def test_gradients_through_tree_map_and_tree_leaves(name):
    params, predict = TREES[name]
    update = update_of(loss_of(predict))
    assert_trees_close(s2s.grad(squared_norm)(params), tree_map(lambda p: 2.0 * p, params))
    assert_trees_close(s2s.jit(s2s.grad(squared_norm))(params),
                       tree_map(lambda p: 2.0 * p, params))
    composed = lambda p: squared_norm(update(p, X, Y))  # noqa: E731
    assert_trees_close(s2s.grad(composed)(params), fd_tree(composed, params), tol=1e-5)


def test_per_example_updates_batched_and_compiled():
    update = update_of(loss_of(predict_layers))
    xs, ys = np.stack([X, X * 0.5, -X]), np.stack([Y, Y * 2.0, -Y])
    want = [update(LAYERS, xs[i], ys[i]) for i in range(3)]
    for f in (s2s.vmap(update, in_axes=(None, 0, 0)),
              s2s.jit(s2s.vmap(update, in_axes=(None, 0, 0)))):
        got = f(LAYERS, xs, ys)
        for i in range(3):
            assert_trees_close(tree_map(lambda a: a[i], got), want[i], tol=1e-12)


def test_a_tree_of_unknown_structure_is_refused_by_name():
    def grown(x, n):
        parts = []
        for i in range(n):
            parts.append(x * i)
        return sum(tree_map(lambda a: a * 2.0, parts))

    with pytest.raises(s2s.S2SError, match="tree_map of a value whose tree structure"):
        s2s.grad(grown)(1.0, 3)
