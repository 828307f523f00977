"""Derivative checks shared by test_containers.py and test_comprehensions.py.

Oracles, all independent of s2s: central finite differences in float64
(``oracles.fd_grad`` for gradients; directional differences for tangents and
Hessian-vector products) and the jvp/vjp dot-product identity.  Pytrees of
arguments are walked here with dataclasses included (``oracles.flatten``
knows dict, list, tuple and namedtuple only).
"""
from __future__ import annotations

import dataclasses

import numpy as np

import s2s

from .oracles import assert_tree_close, fd_grad

EPS = 1e-6


def leaves(tree):
    """Float leaves in JAX order (dicts by sorted key; dataclass fields in order)."""
    if tree is None:
        return []
    if isinstance(tree, dict):
        return [v for k in sorted(tree) for v in leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [v for item in tree for v in leaves(item)]
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        return [v for f in dataclasses.fields(tree) for v in leaves(getattr(tree, f.name))]
    return [tree]


def tree_map(fn, tree, *rest):
    if tree is None:
        return None
    if isinstance(tree, dict):
        return {k: tree_map(fn, tree[k], *(r[k] for r in rest)) for k in tree}
    if isinstance(tree, (list, tuple)):
        items = [tree_map(fn, v, *(r[i] for r in rest)) for i, v in enumerate(tree)]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        return dataclasses.replace(tree, **{
            f.name: tree_map(fn, getattr(tree, f.name), *(getattr(r, f.name) for r in rest))
            for f in dataclasses.fields(tree) if f.init})
    return fn(tree, *rest)


def random_like(tree, seed=0):
    rng = np.random.default_rng(seed)
    return tree_map(lambda v: rng.standard_normal(np.shape(v)) if np.ndim(v)
                    else float(rng.standard_normal()), tree)


def dot(a, b):
    la, lb = leaves(a), leaves(b)
    assert len(la) == len(lb), (a, b)
    return sum(float(np.sum(np.asarray(u) * np.asarray(w))) for u, w in zip(la, lb))


def shifted(x, t, s):
    return tree_map(lambda u, w: u + s * w, x, t)


def fd_directional(f, x, t, eps=EPS):
    """Central difference of ``f`` (any pytree output) at ``x`` along ``t``."""
    return tree_map(lambda p, m: (np.asarray(p, dtype=float) - np.asarray(m, dtype=float))
                    / (2 * eps), f(shifted(x, t, eps)), f(shifted(x, t, -eps)))


def check_grad(f, x, rtol=1e-5, atol=1e-6):
    """grad and value_and_grad of scalar ``f`` at ``x`` against finite differences."""
    value, g = s2s.value_and_grad(f)(x)
    assert np.isclose(value, f(x))
    if dataclasses.is_dataclass(x) or any(dataclasses.is_dataclass(v) for v in _nodes(x)):
        t = random_like(x, seed=3)  # no entrywise oracle for dataclasses: directions
        for seed in range(3):
            t = random_like(x, seed=seed)
            assert np.isclose(dot(g, t), fd_directional(f, x, t), rtol=rtol, atol=atol)
        assert type(g) is type(x)
        return g
    assert_tree_close(g, fd_grad(f, (x,)), rtol=rtol, atol=atol)
    return g


def _nodes(x):
    if isinstance(x, dict):
        return [n for v in x.values() for n in [v, *_nodes(v)]]
    if isinstance(x, (list, tuple)):
        return [n for v in x for n in [v, *_nodes(v)]]
    return []


def check_jvp(f, x, seed=1, rtol=1e-5, atol=1e-6):
    """jvp against a directional difference, and the jvp/vjp dot-product identity."""
    t = random_like(x, seed)
    out, dout = s2s.jvp(f, (x,), (t,))
    assert_tree_close(out, f(x), what="jvp primal")
    fd = fd_directional(f, x, t)
    for a, e in zip(leaves(dout), leaves(fd)):
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
    value, pullback = s2s.vjp(f, x)
    ct = random_like(value, seed + 10)
    (gx,) = pullback(ct)
    assert np.isclose(dot(gx, t), dot(ct, dout), rtol=1e-9, atol=1e-9)


def check_second_order(f, x, seed=2, rtol=1e-4, atol=1e-5):
    """jvp(grad(f)) (a Hessian-vector product) and, for a float x, grad(grad(f)) against
    differences of s2s's own gradient (itself checked against differences above)."""
    t = random_like(x, seed)
    _, hvp = s2s.jvp(s2s.grad(f), (x,), (t,))
    fd = fd_directional(s2s.grad(f), x, t, eps=1e-5)
    for a, e in zip(leaves(hvp), leaves(fd)):
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
    if isinstance(x, float):
        gg = s2s.grad(s2s.grad(f))(x)
        assert np.isclose(gg, fd_directional(s2s.grad(f), x, 1.0, eps=1e-5),
                          rtol=rtol, atol=atol)


def check_all(f, x, second=True):
    check_grad(f, x)
    check_jvp(f, x)
    if second:
        check_second_order(f, x)
