"""Run-time helpers read as code where a transform has no rule for them
(``rules/helper_code.py``, ``passes/helpers.py``).

Each composition below used to stop at a helper the outer transform had no rule
for (``vmap`` meeting ``rt.as_columns``, ``grad`` meeting ``rt.batch_setitem`` /
``rt.batch_solve``, ``jit`` meeting ``rt.batch_select_replayed``); each is checked
against an independent oracle: central finite differences of the primal, a loop
over the batch, the Python result.
"""
import numpy as np
import pytest

import s2s
from s2s.cli import modes
from s2s.rules.registry import inlined
from s2s_runtime import batching, batching_numpy, linalg


def f_linalg(x):
    a = np.outer(x, x) + 3.0 * np.eye(x.shape[0])
    return np.linalg.slogdet(a)[1] + np.sum(np.linalg.solve(a, x))


def f_inplace(x):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[i] = x[i] ** 2
    return np.sum(y * x)


def f_masked(x):
    y = x * 1.0
    if x[0] > 0:
        y[1] = np.sin(x[2])
    return np.sum(y * y)


def f_solve_matrix(x):
    a = np.diag(x) + 2.0
    b = np.stack([x, x * x], axis=1)
    return np.sum(np.linalg.solve(a, b) ** 2)


def fd_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


X = np.array([[0.3, 0.7, 1.1], [-0.2, 0.4, 0.9], [0.5, -0.6, 0.2], [1.2, 0.1, -0.3]])


@pytest.mark.parametrize("f", [f_linalg, f_solve_matrix, f_inplace, f_masked])
def test_vmap_of_grad_against_finite_differences_per_example(f):
    got = s2s.vmap(s2s.grad(f))(X)
    want = np.stack([fd_grad(f, row) for row in X])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", [f_linalg, f_solve_matrix, f_inplace, f_masked])
def test_grad_of_vmap_against_finite_differences(f):
    def total(xs):
        return np.sum(s2s.vmap(f)(xs))

    got = s2s.grad(total)(X)
    want = fd_grad(lambda xs: sum(f(row) for row in xs), X)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_jvp_of_vmap_against_finite_differences():
    t = np.cos(np.arange(X.size)).reshape(X.shape)
    _, got = s2s.jvp(lambda xs: s2s.vmap(f_linalg)(xs), (X,), (t,))
    h = 1e-6
    want = np.array([(f_linalg(r + h * tr) - f_linalg(r - h * tr)) / (2 * h)
                     for r, tr in zip(X, t)])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def none_test(x, y=None):
    return (y is None) * x + (y is not None) * 2.0 * x


def test_jit_compiles_is_none_from_the_types():
    for args in ((1.5,), (1.5, 2.0), (np.ones(2),)):
        np.testing.assert_allclose(s2s.jit(none_test)(*args), none_test(*args))


def test_the_helpers_are_marked_and_the_inventory_says_so():
    for fn in (linalg.as_columns, linalg.from_columns, batching.batch_select_replayed,
               batching.batch_setitem, batching_numpy.batch_solve):
        assert inlined(fn)
    m = modes.modes(batching_numpy.batch_solve)
    assert m["vjp"].status == "inlined" and m["jvp"].status == "inlined"
    assert modes.modes(linalg.as_columns)["vmap"].status == "inlined"


def test_reverse_mode_keeps_the_call_of_a_helper_it_has_a_rule_for():
    """Reading a helper as code is for the transforms that lack a rule: reverse mode has
    the rules of ``as_columns`` and keeps the call (the generated Python calls it)."""
    from s2s.ir import nodes as ir

    gen, _ = s2s.grad(f_linalg).generated([X[0]])
    func, _ = gen.__s2s_ir__()
    called = {getattr(s.value, "fn", None) for s in ir.walk(func.body)
              if isinstance(getattr(s, "value", None), ir.Call)}
    assert linalg.as_columns in called


@pytest.mark.skipif(not hasattr(np, "matvec"), reason="numpy without matvec/vecmat")
@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_generalized_ufuncs_batch_on_their_loop_dimensions(in_axes):
    """``np.matvec``/``np.vecmat`` (core dimensions ``(m,n),(n)->(m)``) were batched like
    elementwise ufuncs, pairing the batch axis with a core axis: wrong values."""
    def f(a, b):
        return np.sum(np.vecmat(np.matvec(a, b), a) ** 2)

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 2, 4)), rng.normal(size=(3, 4))
    args = [a if in_axes[0] == 0 else a[0], b if in_axes[1] == 0 else b[0]]
    got = s2s.vmap(f, in_axes=in_axes)(*args)
    want = [f(a[i] if in_axes[0] == 0 else a[0], b[i] if in_axes[1] == 0 else b[0])
            for i in range(3)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    if in_axes == (0, 0):
        g = s2s.grad(lambda a: np.sum(s2s.vmap(f)(a, b)))(a)
        np.testing.assert_allclose(g, fd_grad(lambda a: sum(f(a[i], b[i]) for i in range(3)), a),
                                   rtol=1e-6, atol=1e-7)
