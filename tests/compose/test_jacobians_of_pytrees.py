"""Jacobians and Hessians of functions of dicts, lists and nested tuples, met by another
transform (``jacfwd(jacrev(f))``, ``vmap(hessian(f))``, ``grad`` of code calling
``jacrev(f)``) or compiled (``jit(hessian(f))``): the Jacobian of the function of the
leaves, regrouped as JAX lays it out (``core/transform_code.py``).  Every block against
central differences of the primal over the flattened leaves."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.tree_util import tree_flatten, tree_unflatten
from tests.compose.finite_differences import fd_gradient, fd_hessian

P = {"w": np.array([0.3, 0.5]), "b": np.array([0.2, -0.1]), "s": 0.7}


def of_a_dict(p):
    return np.sum(p["w"] ** 2 * p["b"]) + np.sin(p["b"][0]) * p["s"]


def of_a_list_of_tuples(layers):
    h = np.array([0.4, -0.3])
    for w, b in layers:
        h = np.tanh(w * h + b)
    return np.sum(h ** 2)


LAYERS = [(np.array([0.5, -0.2]), np.array([0.1, 0.3])),
          (np.array([1.1, 0.4]), np.array([-0.2, 0.05]))]


def _flat(f, tree):
    leaves, treedef = tree_flatten(tree)
    shapes = [np.shape(v) for v in leaves]
    sizes = [int(np.prod(s)) for s in shapes]

    def unravel(v):
        parts = np.split(v, np.cumsum(sizes)[:-1])
        return tree_unflatten(treedef, [p.reshape(s) if s else p[0]
                                        for p, s in zip(parts, shapes)])
    return (lambda v: f(unravel(v))), np.concatenate([np.ravel(v) for v in leaves]), \
        leaves, treedef


def _hessian_as_matrix(h, tree):
    """The blocks ``h[i][j]`` (a tree of the input's structure whose leaves are trees of
    that structure, as JAX lays a Hessian out) as one matrix over the flat leaves."""
    leaves, treedef = tree_flatten(tree)
    rows = tree_flatten(h, is_leaf=lambda v: tree_flatten(v)[1] == treedef)[0]
    assert len(rows) == len(leaves)
    return np.concatenate([
        np.concatenate([np.reshape(b, (int(np.size(x)), -1)) for b in tree_flatten(row)[0]],
                       axis=1) for x, row in zip(leaves, rows)], axis=0)


NESTS = {
    "jacfwd(jacrev)": lambda f: s2s.jacfwd(s2s.jacrev(f)),
    "jacrev(jacrev)": lambda f: s2s.jacrev(s2s.jacrev(f)),
    "jacrev(jacfwd)": lambda f: s2s.jacrev(s2s.jacfwd(f)),
    "jacfwd(jacfwd)": lambda f: s2s.jacfwd(s2s.jacfwd(f)),
    "jit(hessian)": lambda f: s2s.jit(s2s.hessian(f)),
    "hessian": s2s.hessian,
}


@pytest.mark.parametrize("name", sorted(NESTS))
@pytest.mark.parametrize("f, tree", [(of_a_dict, P), (of_a_list_of_tuples, LAYERS)],
                         ids=["dict", "list of tuples"])
def test_second_derivatives_of_pytrees(f, tree, name):
    flat_f, v, _, _ = _flat(f, tree)
    h = NESTS[name](f)(tree)
    np.testing.assert_allclose(_hessian_as_matrix(h, tree), fd_hessian(flat_f, v),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("jac", ["jit(jacrev)", "jit(jacfwd)", "jacrev", "jacfwd"])
def test_first_derivatives_compiled_and_plain_agree_with_differences(jac):
    flat_f, v, leaves, treedef = _flat(of_a_dict, P)
    fn = {"jit(jacrev)": s2s.jit(s2s.jacrev(of_a_dict)),
          "jit(jacfwd)": s2s.jit(s2s.jacfwd(of_a_dict)),
          "jacrev": s2s.jacrev(of_a_dict), "jacfwd": s2s.jacfwd(of_a_dict)}[jac]
    got = fn(P)
    assert sorted(got) == sorted(P)
    flat = np.concatenate([np.ravel(x) for x in tree_flatten(got)[0]])
    np.testing.assert_allclose(flat, fd_gradient(flat_f, v), rtol=1e-6, atol=1e-8)


def outputs_a_dict(p, x):
    return {"y": np.tanh(p["w"] * x), "z": (np.sum(p["b"]) * x[0], x ** 2)}


def test_tree_outputs_and_argnums_tuples_nest_as_in_jax():
    x = np.array([0.5, 0.7])
    inner = s2s.jacrev(outputs_a_dict, argnums=(0, 1))

    def loss(p):  # a block of the Jacobian, read through the code that computes it
        return np.sum(inner(p, x)["y"][0]["w"] ** 2)
    flat_f, v, _, _ = _flat(lambda p: np.sum((1 - np.tanh(p["w"] * x) ** 2) ** 2 * x ** 2),
                            P)  # the closed form: d tanh(w x)/dw = diag((1 - tanh^2) x)
    flat = np.concatenate([np.ravel(t) for t in tree_flatten(s2s.grad(loss)(P))[0]])
    np.testing.assert_allclose(flat, fd_gradient(flat_f, v), rtol=1e-5, atol=1e-7)
    assert loss(P) == pytest.approx(flat_f(v))
    nested = s2s.jacfwd(inner)(P, x)  # inner's tree (out tree -> (p tree, x)) -> p tree
    assert set(nested) == {"y", "z"} and len(nested["z"]) == 2 and len(nested["y"]) == 2
    assert set(nested["y"][0]["w"]) == set(P) and set(nested["y"][1]) == set(P)


def test_vmap_of_a_hessian_of_dicts_matches_a_loop():
    ps = {"w": np.stack([P["w"], P["w"] * 0.5]), "b": np.stack([P["b"], -P["b"]]),
          "s": np.array([0.7, -0.2])}
    out = s2s.vmap(s2s.hessian(of_a_dict))(ps)
    for k in range(2):
        pk = {key: v[k] for key, v in ps.items()}
        want = s2s.hessian(of_a_dict)(pk)
        for a in P:
            for b in P:
                np.testing.assert_allclose(out[a][b][k], want[a][b], rtol=1e-12)


def test_keys_that_are_not_strings_or_ints_are_refused_by_name():
    q = {(1, 2): np.array([0.3])}
    with pytest.raises(s2s.S2SError, match="dict"):
        s2s.jacfwd(s2s.jacrev(lambda d: np.sum(d[(1, 2)] ** 3)))(q)
