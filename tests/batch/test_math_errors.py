"""vmap of ``math`` functions raises what the loop over the examples raises.

Batched code computes ``math.exp(x)`` with ``np.exp`` for every example at once;
where ``math`` raises (``ValueError("math domain error")``, ``OverflowError("math
range error")``) numpy returns nan or inf.  The record's result check
(``s2s_runtime.math_checks``) raises instead, for the first example that would have
raised.  Oracles: the loop over the examples (values, exception type and message),
and central finite differences for the derivatives through the checks."""
import math

import numpy as np
import pytest

import s2s

#: (function, examples of which at least one raises in math)
RAISING = [
    (lambda x: math.sqrt(x), [1.0, -1.0]),
    (lambda x: math.log(x), [2.0, 0.0]),
    (lambda x: math.log(x, 2.0), [2.0, -3.0]),
    (lambda x: math.log10(x), [2.0, 0.0]),
    (lambda x: math.exp(x), [1.0, 1000.0]),
    (lambda x: math.expm1(x), [1.0, 1000.0]),
    (lambda x: math.cosh(x), [1.0, -1000.0]),
    (lambda x: math.sinh(x), [1.0, 1000.0]),
    (lambda x: math.asin(x), [0.5, 2.0]),
    (lambda x: math.acosh(x), [2.0, 0.5]),
    (lambda x: math.atanh(x), [0.5, 1.0]),
    (lambda x: math.log1p(x), [0.5, -1.0]),
    (lambda x: math.tan(x), [0.5, math.inf]),
    (lambda x: math.gamma(x), [2.5, -2.0]),
    (lambda x: math.gamma(x), [2.5, 200.0]),
    (lambda x: math.lgamma(x), [2.5, 0.0]),
    (lambda x: math.pow(x, 0.5), [4.0, -1.0]),
    (lambda x: math.pow(x, -1.0), [4.0, 0.0]),
    (lambda x: math.pow(10.0, x), [4.0, 400.0]),
    (lambda x: math.pow(x, 400.0), [-10.0, 0.5]),      # the first example overflows
    (lambda x: math.fmod(x, 0.0), [1.0, 2.0]),
    (lambda x: math.fmod(x, 2.0), [1.0, math.inf]),
    (lambda x: math.ldexp(x, 5000), [0.0, 1.0]),
]

#: (function, examples where math raises nothing: inf/nan in, or no error possible)
QUIET = [
    (lambda x: math.exp(x), [math.nan, -math.inf, math.inf]),
    (lambda x: math.sqrt(x), [-0.0, math.inf, math.nan]),
    (lambda x: math.ldexp(x, 5000), [math.inf, 0.0, math.nan]),
    (lambda x: math.pow(x, 2.0), [math.inf, math.nan, -3.0]),
    (lambda x: math.atan(x), [math.inf, -math.inf, 0.5]),
    (lambda x: math.gamma(x), [math.inf, 0.5, -0.5]),
]


def _loop(f, xs):
    try:
        return np.array([f(x) for x in xs]), None
    except (ValueError, OverflowError) as exc:
        return None, exc


def _check_like_loop(g, f, xs):
    want, exc = _loop(f, xs)
    if exc is None:
        np.testing.assert_array_equal(g(np.array(xs)), want)
        return
    with pytest.raises(type(exc)) as got:
        g(np.array(xs))
    assert str(got.value) == str(exc)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("k", range(len(RAISING) + len(QUIET)))
def test_vmap_of_math_raises_as_the_loop(k):
    f, xs = (RAISING + QUIET)[k]
    assert k >= len(RAISING) or _loop(f, xs)[1] is not None  # the case raises in math
    _check_like_loop(s2s.vmap(f), f, xs)
    _check_like_loop(s2s.vmap(f), f, xs[::-1])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("k", [0, 4, 8, 12, 16, 18, 20, 22])
def test_jit_of_vmap_of_math_raises_as_the_loop(k):
    f, xs = RAISING[k]
    _check_like_loop(s2s.jit(s2s.vmap(f)), f, xs)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nested_vmap_and_vmap_of_grad_raise():
    f = lambda x: math.exp(x) + math.sqrt(x)  # noqa: E731
    with pytest.raises(ValueError, match="math domain error"):
        s2s.vmap(s2s.vmap(f))(np.array([[1.0, 2.0], [3.0, -4.0]]))
    with pytest.raises(OverflowError, match="math range error"):
        s2s.vmap(s2s.grad(f))(np.array([1.0, 1000.0]))


def f_mixed(x, y):
    return (math.exp(x) * math.sqrt(y) + math.pow(y, 1.5) + math.atanh(0.5 * x)
            + math.fmod(x, y) + math.log(y, 2.0) + math.ldexp(x, 3) + math.cosh(y))


XS, YS = np.array([0.3, 0.7, 1.1]), np.array([1.5, 2.5, 0.9])


def _fd(f, x, y, eps=1e-6):
    return ((f(x + eps, y) - f(x - eps, y)) / (2 * eps), (f(x, y + eps) - f(x, y - eps)) / (2 * eps))


@pytest.mark.parametrize("how", ["vmap(grad)", "jit(vmap(grad))", "grad(sum(vmap))",
                                 "jvp(vmap)"])
def test_derivatives_through_the_checks(how):
    fd = np.array([_fd(f_mixed, a, b) for a, b in zip(XS, YS)])
    g = s2s.grad(f_mixed, argnums=(0, 1))
    if how == "vmap(grad)":
        got = np.stack(s2s.vmap(g)(XS, YS), 1)
    elif how == "jit(vmap(grad))":
        got = np.stack(s2s.jit(s2s.vmap(g))(XS, YS), 1)
    elif how == "grad(sum(vmap))":
        got = np.stack(s2s.grad(lambda x, y: np.sum(s2s.vmap(f_mixed)(x, y)),
                                argnums=(0, 1))(XS, YS), 1)
    else:
        got = np.stack([s2s.jvp(s2s.vmap(f_mixed), (XS, YS), t)[1]
                        for t in ((np.ones(3), np.zeros(3)), (np.zeros(3), np.ones(3)))], 1)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.vmap(f_mixed)(XS, YS), [f_mixed(a, b) for a, b in zip(XS, YS)])


@pytest.mark.parametrize("check, args", [
    ("math_domain_checked", (np.array([0.4, 1.2]),)),
    ("math_range_checked", (np.array([0.4, 1.2]),)),
    ("gamma_checked", (np.array([0.4, 1.2]),)),
    ("pow_checked", (np.array([0.4, 1.2]), 2.0)),
    ("fmod_checked", (np.array([0.4, 1.2]), 0.7)),
    ("ldexp_checked", (np.array([0.4, 1.2]), 3)),
])
def test_the_rules_of_the_checks(check, args):
    """Each check is the identity in the result and constant in the arguments: its
    JVP and VJP against central differences, and the dot-product test between them."""
    import s2s_runtime as rt
    fn = getattr(rt, check)
    y = np.array([0.3, -0.8])

    def f(y, a):
        return fn(y * a[0], a, *args[1:])

    a = args[0]
    fd_y = np.array([(f(y + 1e-6 * e, a) - f(y - 1e-6 * e, a)) / 2e-6 for e in np.eye(2)]).T
    fd_a = np.array([(f(y, a + 1e-6 * e) - f(y, a - 1e-6 * e)) / 2e-6 for e in np.eye(2)]).T
    u, t = np.array([0.5, -1.5]), np.array([1.0, 2.0])
    _, pull = s2s.vjp(f, y, a)
    gy, ga = pull(u)
    np.testing.assert_allclose(gy, fd_y.T @ u, rtol=1e-7)
    np.testing.assert_allclose(ga, fd_a.T @ u, rtol=1e-7, atol=1e-9)
    jy = s2s.jvp(f, (y, a), (t, np.zeros(2)))[1]
    np.testing.assert_allclose(jy, fd_y @ t, rtol=1e-7)
    assert np.dot(jy, u) == pytest.approx(np.dot(t, gy), rel=1e-12)
