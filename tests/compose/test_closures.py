"""Transforms of local functions inside transformed code (JAX's idiom:
``vmap(lambda y: k(x, y))(ys)``, ``grad(lambda t: f(t, y))(x)``): the local function is
lifted to take what it captures as trailing arguments (``passes/callables.py``), so the
enclosing transform differentiates or compiles through the captured values too.  Every
value against a loop or central/second differences of the primal."""
import numpy as np
import pytest

import s2s

from tests.grad.oracles import fd_grad

RNG = np.random.default_rng(11)
X = RNG.normal(size=(4, 3))
X0, Y0 = X[0], X[1]


def kernel(x, y):
    return np.exp(-np.sum((x - y) ** 2)) * (1.0 + x[0] * y[1])


def gram_row(x, ys):
    return s2s.vmap(lambda y: kernel(x, y))(ys)


def row_energy(x, ys):
    def against(y):
        return kernel(x, y) ** 2

    return np.sum(s2s.vmap(against)(ys))


def inner_grad(x, y):
    return s2s.grad(lambda t: kernel(t, y))(x)


def inner_value_and_grad(x, y):
    v, g = s2s.value_and_grad(lambda t: kernel(t, y) * np.sum(y))(x)
    return v + np.sum(g * x)


def _second_differences(f, x, h=1e-4):
    n = x.shape[0]
    e = np.eye(n) * h
    return np.array([[(f(x + e[i] + e[j]) - f(x + e[i] - e[j]) - f(x - e[i] + e[j])
                       + f(x - e[i] - e[j])) / (4 * h * h) for j in range(n)] for i in range(n)])


def test_vmap_of_a_lambda_capturing_a_variable():
    want = np.array([kernel(X0, y) for y in X])
    np.testing.assert_allclose(gram_row(X0, X), want, rtol=1e-13)
    np.testing.assert_allclose(s2s.jit(gram_row)(X0, X), want, rtol=1e-13)
    total = lambda x: np.sum(gram_row(x, X) ** 2)  # noqa: E731
    np.testing.assert_allclose(s2s.grad(total)(X0), fd_grad(total, (X0,)), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.grad(total))(X0), fd_grad(total, (X0,)),
                               rtol=1e-6, atol=1e-8)


def test_vmap_of_a_nested_def_under_grad():
    g = s2s.grad(row_energy, argnums=(0, 1))(X0, X)
    fd = fd_grad(row_energy, (X0, X), (0, 1))
    for a, b in zip(g, fd):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


def test_grad_of_a_lambda_capturing_a_variable_and_its_derivatives():
    fd = fd_grad(kernel, (X0, Y0), 0)
    np.testing.assert_allclose(inner_grad(X0, Y0), fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(inner_grad)(X0, Y0), fd, rtol=1e-6, atol=1e-8)
    hess = _second_differences(lambda x: kernel(x, Y0), X0)
    np.testing.assert_allclose(s2s.jacfwd(inner_grad)(X0, Y0), hess, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s2s.jacrev(inner_grad)(X0, Y0), hess, rtol=1e-5, atol=1e-6)
    # through the captured variable: d/dy of d kernel/dx
    mixed = np.array([fd_grad(lambda y: fd_grad(kernel, (X0, y), 0)[i], (Y0,), 0)
                      for i in range(3)])
    np.testing.assert_allclose(s2s.jacfwd(inner_grad, argnums=1)(X0, Y0), mixed,
                               rtol=1e-4, atol=1e-5)
    f = inner_value_and_grad
    np.testing.assert_allclose(s2s.grad(f, argnums=1)(X0, Y0), fd_grad(f, (X0, Y0), 1),
                               rtol=1e-6, atol=1e-8)


def test_a_call_the_lifting_does_not_cover_is_refused_by_name():
    def with_default(x, y):
        return s2s.grad(lambda t, s=2.0: kernel(t, y) * s)(x)

    with pytest.raises(s2s.S2SError, match=r"test_closures.py:\d+:\d+: .*grad of the lambda"):
        s2s.jit(with_default)(X0, Y0)


# -- jvp, vjp and linearize called with a local function (its captures take no tangent
#    and give no cotangent: they are constants of the function, not its primals)

def hvp_closure(x, v, y):
    return s2s.jvp(lambda t: s2s.grad(kernel)(t, y), (x,), (v,))[1]


def vjp_closure(x, w, y):
    out, pull = s2s.vjp(lambda t: np.sin(t * y), x)
    return pull(w)[0] + out


def linearize_closure(x, v, y):
    out, jvp_fun = s2s.linearize(lambda t: np.cos(t) * y ** 2, x)
    return jvp_fun(v) + out


def jvp_capturing_a_tuple(x, v, *rest):
    # the lambda captures ``rest``, a tuple: its tangent is a tuple of no tangents
    return s2s.jvp(lambda t: kernel(t, *rest) * t, (x,), (v,))[1]


def vjp_capturing_a_tuple(x, w, *rest):
    out, pull = s2s.vjp(lambda t: np.sin(t * rest[0]), x)
    return pull(w)[0] + out


def linearize_capturing_a_tuple(x, v, *rest):
    out, jvp_fun = s2s.linearize(lambda t: np.cos(t) * rest[0] ** 2, x)
    return jvp_fun(v) + out


V0 = RNG.normal(size=3)


@pytest.mark.parametrize("transform", ["python", "jit"])
def test_jvp_vjp_linearize_of_a_lambda_in_code(transform):
    wrap = s2s.jit if transform == "jit" else (lambda f: f)
    hess = _second_differences(lambda x: kernel(x, Y0), X0)
    np.testing.assert_allclose(wrap(hvp_closure)(X0, V0, Y0), hess @ V0, rtol=1e-5,
                               atol=1e-6)
    closed = np.cos(X0 * Y0) * Y0 * V0 + np.sin(X0 * Y0)
    np.testing.assert_allclose(wrap(vjp_closure)(X0, V0, Y0), closed, rtol=1e-13)
    closed = -np.sin(X0) * Y0 ** 2 * V0 + np.cos(X0) * Y0 ** 2
    np.testing.assert_allclose(wrap(linearize_closure)(X0, V0, Y0), closed, rtol=1e-13)


@pytest.mark.parametrize("f", [hvp_closure, vjp_closure, linearize_closure,
                               jvp_capturing_a_tuple, vjp_capturing_a_tuple,
                               linearize_capturing_a_tuple], ids=lambda f: f.__name__)
def test_derivatives_and_batches_through_the_captured_variable(f):
    w = RNG.normal(size=3)
    scalar = lambda x, v, y: np.sum(f(x, v, y) * w)  # noqa: E731
    for argnums in (0, 2):  # the primal, and the variable the local function captures
        fd = fd_grad(lambda a: scalar(*[a if i == argnums else b
                                        for i, b in enumerate((X0, V0, Y0))]),
                     ((X0, V0, Y0)[argnums],), 0)
        np.testing.assert_allclose(s2s.grad(scalar, argnums=argnums)(X0, V0, Y0), fd,
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s2s.jit(s2s.grad(scalar, argnums=argnums))(X0, V0, Y0),
                                   fd, rtol=1e-5, atol=1e-6)
    want = np.stack([f(x, V0, Y0) for x in X])
    np.testing.assert_allclose(s2s.vmap(f, in_axes=(0, None, None))(X, V0, Y0), want,
                               rtol=1e-12)
    np.testing.assert_allclose(s2s.vmap(f, in_axes=(None, None, 0))(X0, V0, X),
                               np.stack([f(X0, V0, y) for y in X]), rtol=1e-12)


def test_linearize_of_a_named_function_in_code():
    def g(t):
        return np.tanh(t) * t

    def lin(x, v):
        out, jvp_fun = s2s.linearize(g, x)
        return jvp_fun(v) * out

    closed = ((1 - np.tanh(X0) ** 2) * X0 + np.tanh(X0)) * V0 * g(X0)
    np.testing.assert_allclose(s2s.jit(lin)(X0, V0), closed, rtol=1e-13)
    scalar = lambda x: np.sum(lin(x, V0))  # noqa: E731
    np.testing.assert_allclose(s2s.grad(scalar)(X0), fd_grad(scalar, (X0,)), rtol=1e-6,
                               atol=1e-8)


def test_vjp_of_a_nested_def_holding_its_own_lambdas_and_transforms():
    def f(x, y):
        def inner(t):
            h = lambda u: np.sin(u) * y  # noqa: E731
            return h(t) + s2s.grad(lambda s: np.sum(s * y ** 2))(t)

        out, pull = s2s.vjp(inner, x)
        return pull(np.ones_like(x))[0] + out

    closed = np.cos(X0) * Y0 + np.sin(X0) * Y0 + Y0 ** 2
    np.testing.assert_allclose(f(X0, Y0), closed, rtol=1e-13)
    np.testing.assert_allclose(s2s.jit(f)(X0, Y0), closed, rtol=1e-13)
    scalar = lambda y: np.sum(f(X0, y))  # noqa: E731
    np.testing.assert_allclose(s2s.grad(scalar)(Y0), fd_grad(scalar, (Y0,)), rtol=1e-6,
                               atol=1e-8)


# -- local functions that capture no variable of the enclosing code --------------------------
SCALE = 0.7  # a global: read by the lambdas below, not captured


def jvp_capturing_nothing(x, v, y):
    return s2s.jvp(lambda t: np.sin(t * SCALE) * t, (x,), (v,))[1] * y


def vjp_capturing_nothing(x, w, y):
    out, pull = s2s.vjp(lambda t: np.sin(t * SCALE), x)
    return (pull(w)[0] + out) * y


def linearize_capturing_nothing(x, v, y):
    out, jvp_fun = s2s.linearize(lambda t: np.cos(t) ** 2, x)
    return (jvp_fun(v) + out) * y


@pytest.mark.parametrize("f", [jvp_capturing_nothing, vjp_capturing_nothing,
                               linearize_capturing_nothing], ids=lambda f: f.__name__)
def test_transforms_of_a_local_function_capturing_nothing(f):
    # the closure form of jvp/vjp/linearize with no captured variable: the site takes the
    # transform's own arguments (it took a function argument first and refused the call)
    closed = {
        jvp_capturing_nothing: (SCALE * X0 * np.cos(X0 * SCALE) + np.sin(X0 * SCALE)) * V0 * Y0,
        vjp_capturing_nothing: (SCALE * np.cos(X0 * SCALE) * V0 + np.sin(X0 * SCALE)) * Y0,
        linearize_capturing_nothing: (-2 * np.sin(X0) * np.cos(X0) * V0 + np.cos(X0) ** 2) * Y0,
    }[f]
    np.testing.assert_allclose(f(X0, V0, Y0), closed, rtol=1e-13)
    np.testing.assert_allclose(s2s.jit(f)(X0, V0, Y0), closed, rtol=1e-13)
    np.testing.assert_allclose(s2s.vmap(f, in_axes=(0, None, None))(X, V0, Y0),
                               np.stack([f(x, V0, Y0) for x in X]), rtol=1e-12)
    scalar = lambda x, v, y: np.sum(f(x, v, y))  # noqa: E731
    np.testing.assert_allclose(s2s.grad(scalar)(X0, V0, Y0),
                               fd_grad(scalar, (X0, V0, Y0), 0), rtol=1e-5, atol=1e-7)
