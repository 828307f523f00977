"""Independent derivative oracles for the gradient corpus.

Nothing here imports s2s: the oracles are central finite differences in
float64, the complex step, and a pytree-aware closeness assertion.  The
pytree walk is a deliberately small re-implementation (dict in sorted key
order, list, tuple, namedtuple, None) so that a bug in ``s2s.tree_util``
cannot hide a bug in a gradient.
"""
from __future__ import annotations

import numpy as np

# ---------------------------------------------------------------- pytrees


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def flatten(tree):
    """Leaves of ``tree`` in JAX order, and a function rebuilding a tree from leaves."""
    if tree is None:
        return [], lambda leaves: None
    if isinstance(tree, dict) and type(tree) is dict:
        keys = sorted(tree)
        parts = [flatten(tree[k]) for k in keys]

        def build(leaves, parts=parts, keys=keys):
            out, i = {}, 0
            for k, (ls, b) in zip(keys, parts):
                out[k] = b(leaves[i:i + len(ls)])
                i += len(ls)
            return out
        return [l for ls, _ in parts for l in ls], build
    if type(tree) in (list, tuple) or _is_namedtuple(tree):
        parts = [flatten(c) for c in tree]

        def build(leaves, parts=parts, tree=tree):
            out, i = [], 0
            for ls, b in parts:
                out.append(b(leaves[i:i + len(ls)]))
                i += len(ls)
            if _is_namedtuple(tree):
                return type(tree)(*out)
            return type(tree)(out)
        return [l for ls, _ in parts for l in ls], build
    return [tree], lambda leaves: leaves[0]


def _is_float_leaf(x):
    return np.issubdtype(np.asarray(x).dtype, np.inexact)


# ------------------------------------------------------- finite differences


def _replace(args, argnum, new):
    args = list(args)
    args[argnum] = new
    return tuple(args)


def fd_grad(f, args, argnums=0, kwargs=None, rel_step=1e-6, max_entries=64):
    """Central finite-difference gradient of scalar ``f`` w.r.t. ``args[argnums]``.

    The differentiated arguments are pytrees; integer and boolean leaves get
    zero gradients (arrays of their shape, float64).  Each scalar entry of a
    floating leaf is perturbed by ``h = rel_step * max(1, |x|)`` in float64.
    Returns one gradient tree for an int ``argnums``, a tuple for a tuple.
    """
    kwargs = kwargs or {}
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    out = []
    for a in nums:
        leaves, build = flatten(args[a])
        grads = []
        for li, leaf in enumerate(leaves):
            if not _is_float_leaf(leaf):
                grads.append(np.zeros(np.shape(leaf)))
                continue
            base = np.array(leaf, dtype=np.float64)
            g = np.zeros(base.shape)
            if base.size > max_entries:
                raise ValueError("leaf too large for entrywise FD; use fd_directional")
            for idx in np.ndindex(*base.shape):
                h = rel_step * max(1.0, abs(base[idx]))
                vals = []
                for sgn in (1.0, -1.0):
                    pert = base.copy()
                    pert[idx] += sgn * h
                    new_leaves = list(leaves)
                    new_leaves[li] = _like_f64(leaf, pert)
                    vals.append(float(np.real(f(*_replace(args, a, build(new_leaves)), **kwargs))))
                g[idx] = (vals[0] - vals[1]) / (2 * h)
            grads.append(g)
        out.append(build(grads))
    return out[0] if single else tuple(out)


def _like_f64(leaf, value):
    """A perturbed leaf in float64 (so FD is not limited by float32 rounding)."""
    if isinstance(leaf, np.ndarray):
        return value.reshape(leaf.shape)
    return float(value)


def fd_directional(f, args, argnum, v, eps=1e-6, kwargs=None):
    """(f(x + eps v) - f(x - eps v)) / (2 eps) for ``x = args[argnum]`` (one array leaf)."""
    kwargs = kwargs or {}
    x = np.asarray(args[argnum], dtype=np.float64)
    fp = f(*_replace(args, argnum, x + eps * v), **kwargs)
    fm = f(*_replace(args, argnum, x - eps * v), **kwargs)
    return float((fp - fm) / (2 * eps))


def check_directional(f, args, argnum, grad, n=3, seed=0, rtol=1e-6, atol=1e-8):
    """Compare <grad, v> with a directional central difference for ``n`` random ``v``."""
    rng = np.random.default_rng(seed)
    x = np.asarray(args[argnum])
    for _ in range(n):
        v = rng.standard_normal(x.shape)
        expected = fd_directional(f, args, argnum, v)
        actual = float(np.sum(np.asarray(grad) * v))
        assert np.isclose(actual, expected, rtol=rtol, atol=atol), (
            f"directional derivative mismatch: <grad, v> = {actual!r}, FD = {expected!r}")


# ------------------------------------------------------------- complex step


def complex_step_grad(f, args, argnums=0, h=1e-20):
    """Complex-step gradient ``Im f(x + i h e_k) / h`` for real-analytic ``f``.

    Only for functions built from analytic operations (no abs, max, comparisons
    on the perturbed value); exact to rounding, so it allows tight tolerances.
    Differentiated arguments must be float scalars or float arrays.
    """
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    out = []
    for a in nums:
        x = args[a]
        base = np.array(x, dtype=np.complex128)
        g = np.zeros(base.shape)
        for idx in np.ndindex(*base.shape):
            pert = base.copy()
            pert[idx] += 1j * h
            new = pert if isinstance(x, np.ndarray) else complex(pert)
            g[idx] = np.imag(f(*_replace(args, a, new))) / h
        out.append(g if isinstance(x, np.ndarray) else float(g))
    return out[0] if single else tuple(out)


# -------------------------------------------------------------- closeness


def assert_tree_close(actual, expected, rtol=1e-6, atol=1e-8, check_dtype=None, what="gradient"):
    """Assert two pytrees have the same structure, leaf shapes and close values.

    ``check_dtype``: when given, every leaf of ``actual`` must have that dtype.
    """
    a_leaves, _ = flatten(actual)
    e_leaves, _ = flatten(expected)
    assert _structure(actual) == _structure(expected), (
        f"{what}: structure {_structure(actual)} != expected {_structure(expected)}")
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        assert np.shape(a) == np.shape(e), (
            f"{what} leaf {i}: shape {np.shape(a)} != expected {np.shape(e)}")
        if check_dtype is not None:
            assert np.asarray(a).dtype == check_dtype, (
                f"{what} leaf {i}: dtype {np.asarray(a).dtype} != {np.dtype(check_dtype)}")
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol,
                                   err_msg=f"{what} leaf {i}")


def _structure(tree):
    if tree is None:
        return "None"
    if type(tree) is dict:
        return {k: _structure(tree[k]) for k in sorted(tree)}
    if _is_namedtuple(tree):
        return (type(tree).__name__, tuple(_structure(c) for c in tree))
    if type(tree) is tuple:
        return ("tuple", tuple(_structure(c) for c in tree))
    if type(tree) is list:
        return ("list", tuple(_structure(c) for c in tree))
    return "*"
