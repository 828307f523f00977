"""Forward mode (jvp, linearize), vjp, jacfwd and jacrev against independent oracles.

Oracles: central finite differences in float64, closed forms, and the
cookbook's checks (shared/seeds/jax-autodiff-cookbook-part8.txt); the
dot-product test <u, J v> == <J^T u, v> ties jvp and vjp together, on top of
each being checked against finite differences.
"""
import math
from collections import namedtuple

import numpy as np
import pytest

import s2s

RNG = np.random.default_rng(7)
EPS = 1e-6


def fd_jvp(f, primals, tangents):
    plus = f(*[p + EPS * t for p, t in zip(primals, tangents)])
    minus = f(*[p - EPS * t for p, t in zip(primals, tangents)])
    return (np.asarray(plus) - np.asarray(minus)) / (2 * EPS)


def poly(x, y):
    z = np.sin(x) * y
    z = z + x ** 2
    return z


def vector_fn(x):
    y = np.tanh(x) * x[0]
    return np.exp(y) / (1.0 + np.sum(x * x))


def with_loops(x):
    """Forward mode keeps loops, while loops and in-place writes as they are."""
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * x[(i + 1) % 3]
    s = 0.0
    k = 0
    while k < 3:
        s = s + np.sin(y[k])
        k += 1
    return s


def branchy(x):
    if x > 0.5:
        return x ** 3
    return -2.0 * x


def pytree_fn(p, x):
    h = np.tanh(p['w'] @ x + p['b'])
    return np.sum(h * h), h


Pair = namedtuple("Pair", "a b")


def namedtuple_fn(pt):
    return pt.a * pt.b ** 2


SCALAR_CASES = [(poly, (1.0, 2.0)), (branchy, (0.7,)), (branchy, (0.2,))]
ARRAY_CASES = [(vector_fn, (RNG.normal(size=4),)), (with_loops, (RNG.normal(size=3),))]


@pytest.mark.parametrize("f, primals", SCALAR_CASES + ARRAY_CASES,
                         ids=lambda v: getattr(v, "__name__", ""))
def test_jvp_matches_finite_differences(f, primals):
    tangents = tuple(RNG.normal(size=np.shape(p)) if np.ndim(p) else float(RNG.normal())
                     for p in primals)
    out, tout = s2s.jvp(f, primals, tangents)
    np.testing.assert_allclose(out, f(*primals), rtol=1e-13)
    np.testing.assert_allclose(tout, fd_jvp(f, primals, tangents), rtol=1e-6, atol=1e-8)


def test_jvp_closed_form():
    out, t = s2s.jvp(poly, (1.0, 2.0), (1.0, 0.0))
    assert math.isclose(t, 2 * math.cos(1.0) + 2.0, rel_tol=1e-14)
    _, t = s2s.jvp(poly, (1.0, 2.0), (0.0, 1.0))
    assert math.isclose(t, math.sin(1.0), rel_tol=1e-14)


@pytest.mark.parametrize("f, primals", ARRAY_CASES[:1], ids=lambda v: getattr(v, "__name__", ""))
def test_dot_product_test_between_jvp_and_vjp(f, primals):
    v = RNG.normal(size=np.shape(primals[0]))
    _, jv = s2s.jvp(f, primals, (v,))
    out, pull = s2s.vjp(f, *primals)
    u = RNG.normal(size=np.shape(out)) if np.ndim(out) else 1.3
    (jtu,) = pull(u)
    assert math.isclose(np.sum(u * jv), np.sum(jtu * v), rel_tol=1e-10)


def test_reverse_and_forward_mode_agree_on_in_place_writes_in_loops():
    x, v = RNG.normal(size=3), RNG.normal(size=3)
    _, jv = s2s.jvp(with_loops, (x,), (v,))
    (g,) = s2s.vjp(with_loops, x)[1](1.0)
    assert math.isclose(jv, np.dot(g, v), rel_tol=1e-10)
    eps = 1e-6
    fd = (with_loops(x + eps * v) - with_loops(x - eps * v)) / (2 * eps)
    assert math.isclose(jv, fd, rel_tol=1e-6)


def test_vjp_returns_one_cotangent_per_primal_and_is_reusable():
    out, pull = s2s.vjp(poly, 1.0, 2.0)
    assert math.isclose(out, poly(1.0, 2.0))
    for ct in (1.0, -2.5):
        gx, gy = pull(ct)
        assert math.isclose(gx, ct * (2 * math.cos(1.0) + 2.0), rel_tol=1e-14)
        assert math.isclose(gy, ct * math.sin(1.0), rel_tol=1e-14)


def test_vjp_of_vector_output_and_has_aux():
    x = RNG.normal(size=3)
    p = {'w': RNG.normal(size=(2, 3)), 'b': RNG.normal(size=2)}
    (val, pull, aux) = s2s.vjp(pytree_fn, p, x, has_aux=True)
    np.testing.assert_allclose(aux, np.tanh(p['w'] @ x + p['b']))
    gp, gx = pull(1.0)
    h = np.tanh(p['w'] @ x + p['b'])
    dpre = 2 * h * (1 - h * h)
    np.testing.assert_allclose(gp['w'], np.outer(dpre, x), rtol=1e-12)
    np.testing.assert_allclose(gp['b'], dpre, rtol=1e-12)
    np.testing.assert_allclose(gx, p['w'].T @ dpre, rtol=1e-12)


def test_jvp_pytrees_has_aux_and_integer_leaves():
    x = RNG.normal(size=3)
    p = {'w': RNG.normal(size=(2, 3)), 'b': RNG.normal(size=2)}
    tp = {'w': RNG.normal(size=(2, 3)), 'b': RNG.normal(size=2)}
    out, tout, aux = s2s.jvp(pytree_fn, (p, x), (tp, np.zeros(3)), has_aux=True)
    expected = fd_jvp(lambda w, b: pytree_fn({'w': w, 'b': b}, x)[0], (p['w'], p['b']),
                      (tp['w'], tp['b']))
    assert math.isclose(tout, expected, rel_tol=1e-6)
    f = lambda q: q['x'] * q['n']  # noqa: E731
    _, t = s2s.jvp(f, ({'x': 2.0, 'n': 3},), ({'x': 1.0, 'n': None},))
    assert t == 3.0


def test_jvp_structure_and_shape_errors():
    with pytest.raises(TypeError):
        s2s.jvp(poly, [1.0, 2.0], (1.0,))
    with pytest.raises(TypeError):
        s2s.jvp(vector_fn, (np.ones(3),), ({'a': 1.0},))
    with pytest.raises(ValueError):
        s2s.jvp(vector_fn, (np.ones(3),), (np.ones(4),))


def test_linearize_agrees_with_jvp():
    out, lin = s2s.linearize(poly, 1.0, 2.0)
    assert math.isclose(out, poly(1.0, 2.0))
    for t in ((1.0, 0.0), (0.3, -2.0)):
        assert math.isclose(lin(*t), s2s.jvp(poly, (1.0, 2.0), t)[1], rel_tol=1e-14)


def test_jacfwd_and_jacrev_match_finite_differences_and_each_other():
    x = RNG.normal(size=4)
    f = lambda x: np.sin(x) * x[0] + np.sum(x ** 2)  # noqa: E731
    jf = s2s.jacfwd(f)(x)
    jr = s2s.jacrev(f)(x)
    fd = np.stack([fd_jvp(f, (x,), (e,)) for e in np.eye(4)], axis=1)
    assert jf.shape == jr.shape == (4, 4)
    np.testing.assert_allclose(jf, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jr, fd, rtol=1e-6, atol=1e-8)


def test_jacobian_layout_for_pytrees_and_argnums():
    W, b = RNG.normal(size=(2, 3)), RNG.normal(size=2)
    f = lambda W, b: np.tanh(W @ np.ones(3) + b)  # noqa: E731
    jw, jb = s2s.jacfwd(f, argnums=(0, 1))(W, b)
    assert jw.shape == (2, 2, 3) and jb.shape == (2, 2)
    rw, rb = s2s.jacrev(f, argnums=(0, 1))(W, b)
    np.testing.assert_allclose(jw, rw, rtol=1e-12)
    np.testing.assert_allclose(jb, np.diag(1 - f(W, b) ** 2), rtol=1e-12)
    jd = s2s.jacrev(lambda p: p['a'] * p['c'])({'a': 2.0, 'c': np.ones(2)})
    assert jd['a'].shape == (2,) and jd['c'].shape == (2, 2)
    np.testing.assert_allclose(jd['c'], 2.0 * np.eye(2))


def test_namedtuple_tangents():
    _, t = s2s.jvp(namedtuple_fn, (Pair(2.0, 3.0),), (Pair(1.0, 0.0),))
    assert t == 9.0


# -- the cookbook's complex-number checks (JVP and VJP of a C -> C function) ---------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cookbook_complex_jvp_and_vjp_checks(seed):
    rng = np.random.default_rng(seed)
    a, b, c, d = rng.uniform(size=4)

    def u(x, y):
        return a * x + b * y

    def v(x, y):
        return c * x + d * y

    def fun(z):
        x, y = np.real(z), np.imag(z)
        return u(x, y) + v(x, y) * 1j

    x, y = rng.uniform(size=2)
    z = x + y * 1j
    tc, td = rng.uniform(size=2)
    _, ans = s2s.jvp(fun, (z,), (tc + td * 1j,))
    # grad(u, 0) = a, grad(u, 1) = b, grad(v, 0) = c, grad(v, 1) = d (closed forms)
    expected = a * tc + b * td + c * tc * 1j + d * td * 1j
    assert np.allclose(ans, expected)
    _, fun_vjp = s2s.vjp(fun, z)
    (ans,) = fun_vjp(np.array(tc + td * 1j))
    expected = a * tc + c * (-td) + b * tc * (-1j) + d * (-td) * (-1j)
    assert np.allclose(ans, expected, atol=1e-12)


def branch_vec(x, y):
    if x[0] > 0:
        z = np.sin(x) * y
    else:
        z = x * 2.0
    return z


@pytest.mark.parametrize("x0", [1.0, -1.0])
def test_vjp_with_explicit_residuals_matches_finite_differences(x0):
    x = np.array([x0, 2.0])
    out, pull = s2s.vjp(branch_vec, x, 3.0)
    np.testing.assert_allclose(out, branch_vec(x, 3.0))
    u = np.array([0.7, -1.3])
    gx, gy = pull(u)
    for k in range(2):
        e = np.eye(2)[k]
        fd = np.sum(u * fd_jvp(lambda a: branch_vec(a, 3.0), (x,), (e,)))
        assert math.isclose(gx[k], fd, rel_tol=1e-6, abs_tol=1e-9)
    fd_y = np.sum(u * fd_jvp(lambda b: branch_vec(x, b), (3.0,), (1.0,)))
    assert math.isclose(gy, fd_y, rel_tol=1e-6, abs_tol=1e-9)


def test_vjp_halves_hand_over_residuals_as_values():
    from s2s.core import pipeline

    x = np.array([1.0, 2.0])
    transform = s2s.core.reverse.ReverseTransform(branch_vec, (0, 1), False, False, "vjp")
    fwd, bwd = pipeline.reverse_split(transform.front, ["x", "y"],
                                      transform._param_info([x, 3.0]))
    fwd_src, bwd_src = pipeline.emit(fwd).source, pipeline.emit(bwd).source
    assert fwd_src.startswith("def vjp_branch_vec_fwd(x, y):")
    assert "_bar" not in fwd_src                      # no adjoint work in the forward sweep
    code = [line for line in bwd_src.splitlines() if not line.strip().startswith("#")]
    assert bwd_src.startswith("def vjp_branch_vec_bwd(")
    assert not any("np.sin(" in line for line in code)  # the primal is not recomputed


def _write_through_view(x):
    y = np.zeros(3)
    v = y[1:]
    v[0] = x * 2.0
    return np.sum(y) + x


def _write_through_alias(x):
    y = np.zeros(3)
    z = y
    z[0] = x * 4.0
    return np.sum(y)


@pytest.mark.parametrize("f, expected", [(_write_through_view, 3.0), (_write_through_alias, 4.0)])
def test_in_place_writes_through_views_and_aliases_reach_the_base_array(f, expected):
    out, t = s2s.jvp(f, (1.5,), (1.0,))
    assert out == f(1.5)
    assert t == expected == fd_jvp(f, (1.5,), (1.0,)).round(6)


def _augmented_in_loops(x):
    s = 0.0
    for i in range(3):
        s += x[i] * x[i]
    p = 1.0
    for i in range(3):
        p *= x[i]
    q = 10.0
    q /= x[0]
    return s + p + q


def _augmented_through_view(x):
    y = x * 1.0
    w = y[1:]
    w += x[:2] * x[:2]
    y *= 2.0
    return np.sum(y * y)


@pytest.mark.parametrize("f", [_augmented_in_loops, _augmented_through_view])
def test_augmented_assignment_in_forward_mode(f):
    x, v = np.array([1.0, 2.0, 3.0]), np.array([0.3, -1.0, 2.0])
    v_before = v.copy()
    out, t = s2s.jvp(f, (x,), (v,))
    np.testing.assert_array_equal(v, v_before)  # the caller's tangent is never changed
    assert math.isclose(out, f(x))
    assert math.isclose(t, fd_jvp(f, (x,), (v,)), rel_tol=1e-7)
