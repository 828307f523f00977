"""Compositions that meet run-time helpers of derivative code in another mode, checked
directly on several functions (not only the matrix's corpus), each against central finite
differences of the primal: third derivatives and Hessian-vector products through
products (``rt.dot_vjp_vjp``, ``inner_vjp_jvp``, ``tensordot_vjp_transpose``...) and
broadcasting sums (``rt.add_vjp``, ``add_jvp``), ``vmap`` of the pullback of ``grad(f)``,
``vmap`` of ``hessian`` and of ``jacfwd`` over in-place writes and containers, ``jit`` of
a nested list display.  The helpers are read as code where the mode has no rule of its own
(``s2s/rules/helper_code.py``)."""
import numpy as np
import pytest

import s2s

_A = np.array([[1.5, 0.2, -0.3], [0.1, 0.9, 0.4], [-0.2, 0.3, 1.2]])


def f_dot(x):
    return np.dot(np.sin(x), np.dot(_A, x * x)) + np.dot(x, x) * x[0]


def f_inner(x):
    return np.inner(np.exp(0.3 * x), x) * np.inner(x, np.cos(x))


def f_tensordot(x):
    m = np.outer(x, np.tanh(x))
    return np.tensordot(m, _A, axes=2) + np.tensordot(x, np.dot(m, x), axes=1)


def f_broadcast(x):
    return np.sum(np.sin(x) + x[0] * x[1]) * np.sum(x + 2.0)


def f_inplace(x):
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = x[i] * x[(i + 1) % x.shape[0]]
    y[1:] += np.sin(x[:-1])
    y *= x[0]
    return np.sum(y * y)


def f_solve(x):
    a = _A + np.outer(x, x) * 0.1
    return np.linalg.slogdet(a)[1] + np.dot(np.linalg.solve(a, x), x)


def f_containers(x):
    parts = {"a": x[0] * x[1], "b": [np.sin(x[2]), x[0] ** 2]}
    acc = []
    for v in (parts["a"], parts["b"][0] + parts["b"][1]):
        acc.append(v * 2.0)
    return acc[0] + acc[1] * parts["a"]


FUNCTIONS = [f_dot, f_inner, f_tensordot, f_broadcast, f_inplace, f_solve, f_containers]
X = np.array([0.4, -0.6, 0.9])
T = np.array([0.3, 0.8, -0.5])


def fd(f, x, h):
    """Central differences of ``f`` (any output shape) at ``x``: ``out.shape + (n,)``."""
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(cols, axis=-1)


def fd_hessian(f, x, h=1e-4):
    return fd(lambda y: fd(f, y, h), x, h)


@pytest.mark.parametrize("f", FUNCTIONS)
def test_third_derivative_against_finite_differences_of_the_hessian(f):
    """``grad(lambda x: grad(lambda y: grad(f)(y) @ t)(x) @ t)``: reverse over reverse over
    reverse, ``d^3 f [t, t, .]``."""
    t = T
    g1 = s2s.grad(f)
    g2 = s2s.grad(lambda y: np.dot(g1(y), t))
    got = s2s.grad(lambda x: np.dot(g2(x), t))(X)
    want = fd(lambda y: fd_hessian(f, y) @ t @ t, X, 1e-3)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("f", FUNCTIONS)
def test_jvp_of_hessian_against_finite_differences(f):
    got = s2s.jvp(s2s.hessian(f), (X,), (T,))[1]
    want = (fd_hessian(f, X + 1e-3 * T) - fd_hessian(f, X - 1e-3 * T)) / 2e-3
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("f", FUNCTIONS)
def test_vmap_of_the_pullback_of_grad_is_rows_of_the_hessian(f):
    _, pullback = s2s.vjp(s2s.grad(f), X)
    cts = np.array([[1.0, 0.2, -0.3], [0.4, -1.0, 0.5], [0.0, 0.3, 0.7]])
    got = s2s.vmap(pullback)(cts)[0]
    np.testing.assert_allclose(got, cts @ fd_hessian(f, X), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("f", FUNCTIONS)
def test_vmap_of_hessian_against_finite_differences_per_example(f):
    xs = np.stack([X, X * 0.9 + 0.05, -X])
    got = s2s.vmap(s2s.hessian(f))(xs)
    want = np.stack([fd_hessian(f, x) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def g_inplace(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * x[(i + 1) % 3]
    y[1:] += np.cos(x[:2])
    y *= 1.5
    y /= 1.0 + x[2] ** 2
    return y


def g_scalar_inplace(x):
    s = x[0] * 1.0
    s *= x[1]
    s += np.sin(x[2])
    return s


@pytest.mark.parametrize("f", [g_inplace, g_scalar_inplace])
def test_jacfwd_of_vmap_of_in_place_operators(f):
    """``jacfwd(vmap(f))`` differentiates the batched in-place operators
    (``rt.batch_inplace``, read as code)."""
    xs = np.stack([X, X * 0.5 + 0.1])
    got = s2s.jacfwd(s2s.vmap(f))(xs)
    want = fd(lambda y: np.stack([f(r) for r in y.reshape(xs.shape)]), xs.ravel(), 1e-6)
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-6, atol=1e-7)


def appended(x):
    acc = []
    for v in (x[0] * x[1], np.sin(x[2])):
        acc.append(v * 2.0)
    return acc[0] + acc[1] * x[0]


def test_vmap_of_a_custom_jvp_function_whose_primal_appends_to_a_list():
    fn = s2s.custom_jvp(appended)
    fn.defjvp(lambda p, t: (appended(p[0]), s2s.jvp(appended, p, t)[1]))
    xs = np.stack([X, X + 0.2, X * 2.0])
    np.testing.assert_allclose(s2s.vmap(fn)(xs), [appended(x) for x in xs], rtol=1e-12)
    got = s2s.vmap(s2s.grad(fn))(xs)
    np.testing.assert_allclose(got, [fd(appended, x, 1e-6) for x in xs], rtol=1e-6)


def is_tuple_or_list(x):
    if isinstance(x, (tuple, list)):
        return x[0] * 2.0
    return x * 3.0


def is_float(x):
    if isinstance(x, float):
        return x * 2.0
    return x * 3.0


def test_vmap_of_isinstance_of_container_classes_and_refusal_of_others():
    xs = np.array([1.0, 2.0, -0.5])
    np.testing.assert_allclose(s2s.vmap(is_tuple_or_list)(xs), xs * 3.0)
    with pytest.raises(s2s.S2SError, match="isinstance"):
        s2s.vmap(is_float)(xs)


def nested_display(x):
    a = np.array([[2.0, x[0], 1], [x[1] * x[2], 1.5, 0.25]])
    return np.sum(a * a) + a[1, 0]


def test_jit_of_a_nested_list_display_matches_python():
    got = s2s.jit(nested_display)(X)
    assert got == pytest.approx(nested_display(X), rel=1e-14)
    three = s2s.jit(lambda x: np.array([[[x[0], 1.0]], [[2, x[1]]]]))(X)
    np.testing.assert_array_equal(three, np.array([[[X[0], 1.0]], [[2, X[1]]]]))


_PRODUCTS = [  # (helper, kind, which, a per example, b per example, extra arguments)
    (np.dot, "dot", None, (3,), (3,), ()), (np.dot, "dot", None, (2, 3), (3,), ()),
    (np.dot, "dot", None, (3,), (3, 2), ()), (np.inner, "inner", None, (2, 3), (3,), ()),
    (np.tensordot, "tensordot", None, (2, 3), (2, 3), (2,)),
    (np.matmul, "matmul", 0, (2, 3), (3, 4), ()), (np.matmul, "matmul", 1, (2, 3), (3, 4), ()),
]
_VJPS = {"dot": "dot_vjp", "inner": "inner_vjp", "tensordot": "tensordot_vjp"}


@pytest.mark.parametrize("product", _PRODUCTS, ids=lambda p: f"{p[1]}-{p[3]}-{p[4]}-{p[2]}")
@pytest.mark.parametrize("flags", [(g, a, b) for g in (0, 1) for a in (0, 1) for b in (0, 1)
                                   if a or b or g])
def test_batched_product_cotangents_match_a_loop_over_the_batch(product, flags):
    """``rt.batch_bilinear_vjp`` (vmap of ``dot_vjp``...) for every choice of batched
    operands, a cotangent the same for every example included, against the unbatched
    helper example by example."""
    import s2s_runtime as rt
    prod, kind, fixed, sa, sb, extra = product
    gb, ab, bb = map(bool, flags)
    rng = np.random.default_rng(3)
    n = 4
    a = rng.normal(size=((n,) if ab else ()) + sa)
    b = rng.normal(size=((n,) if bb else ()) + sb)
    sg = np.shape(prod(np.ones(sa), np.ones(sb), *extra))
    g = rng.normal(size=((n,) if gb else ()) + sg)
    for which in ((fixed,) if fixed is not None else (0, 1)):
        if kind == "matmul":
            helper = rt.matmul_vjp_lhs if which == 0 else rt.matmul_vjp_rhs

            def one(gk, ak, bk):
                return helper(gk, ak, bk)
        else:
            def one(gk, ak, bk, vjp=getattr(rt, _VJPS[kind])):
                return vjp(gk, ak, bk, *extra, which)
        got = rt.batch_bilinear_vjp(kind, which, g, a, b, gb, ab, bb, *extra)
        want = np.stack([one(g[k] if gb else g, a[k] if ab else a, b[k] if bb else b)
                         for k in range(n)])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [f_dot, f_inner, f_tensordot, f_solve])
def test_hessian_of_hessian_against_fourth_differences(f):
    """Forward over reverse over forward over reverse through the product helpers
    (``rt.dot_vjp_jvp`` differentiated again, read as code), checked as the matrix
    checks it (``wraps.py``: nested central differences of the primal)."""
    from .wraps import Case, chain, check
    check(chain(Case(f.__name__, f, lambda y, h: f(y), X), ["hessian", "hessian"]))
