"""Small fixed-size numpy and math functions under jit (issue 20, item 4): ``np.cross``,
``divmod``/``np.divmod``, ``math.modf``/``np.modf``, ``math.frexp``, ``math.nextafter``/
``np.nextafter``, ``math.cbrt``, ``math.exp2``.

The oracle is the uncompiled call: the same values, dtypes and exception classes; the
derivatives of ``jit(grad)`` are checked against central finite differences.
"""
import math
import warnings

import numpy as np
import pytest

import s2s
from s2s.errors import UnsupportedSyntaxError


def cross(a, b):
    return np.cross(a, b)


def cross_loss(a, b, w):
    return np.sum(np.cross(a, b) * w)


def cross_in_a_loop(ws, p):
    total = 0.0
    for i in range(ws.shape[0]):
        q = np.cross(ws[i], p) + p
        total = total + q[0] * q[1] - q[2]
    return total


def divmod_py(x, y):
    return divmod(x, y)


def divmod_np(a, b):
    return np.divmod(a, b)


def modf_math(x):
    return math.modf(x)


def modf_np(a):
    return np.modf(a)


def frexp_math(x):
    return math.frexp(x)


def nextafter_math(x, y):
    return math.nextafter(x, y)


def nextafter_np(a, b):
    return np.nextafter(a, b)


def cbrt_math(x):
    return math.cbrt(x)


def exp2_math(x):
    return math.exp2(x)


def smooth(x):
    f, i = math.modf(x * 3.0)
    q, r = divmod(x * 5.0, 1.5)
    m, e = math.frexp(x + 2.0)
    return math.cbrt(x + 4.0) * math.exp2(x) + f + r + m * e + i * q


RNG = np.random.default_rng(3)


def _same(got, want):
    got_t, want_t = isinstance(got, tuple), isinstance(want, tuple)
    assert got_t == want_t
    for g, w in zip(got, want) if got_t else [(got, want)]:
        assert np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-15, atol=0)


@pytest.mark.parametrize("a_shape,b_shape", [((3,), (3,)), ((4, 3), (3,)), ((3,), (5, 3)),
                                             ((2, 1, 3), (4, 3)), ((2, 3), (3,)),
                                             ((2,), (3,)), ((4, 3), (4, 2))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_cross_matches_numpy(a_shape, b_shape, dtype):
    a = (RNG.normal(size=a_shape) * 4).astype(dtype)
    b = (RNG.normal(size=b_shape) * 4).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _same(s2s.jit(cross)(a, b), np.cross(a, b))


def test_cross_errors():
    jf = s2s.jit(cross)
    for a, b in [(np.ones(4), np.ones(3)), (np.ones(3), np.ones(1))]:
        with pytest.raises(ValueError) as want:
            np.cross(a, b)
        with pytest.raises(ValueError, match="incompatible dimensions") as got:
            jf(a, b)
        assert str(want.value).splitlines()[0] in str(got.value)
    with pytest.raises(ValueError):
        np.cross(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError):
        jf(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(UnsupportedSyntaxError, match="two 2-vectors"):
        jf(np.ones(2), np.ones(2))
    with pytest.raises(UnsupportedSyntaxError, match="axisa"):
        s2s.jit(lambda a, b: np.cross(a, b, axisa=0))(np.ones((3, 3)), np.ones(3))


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        g[k] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


@pytest.mark.parametrize("a_shape,b_shape", [((3,), (3,)), ((4, 3), (3,)), ((2, 1, 3), (4, 3))])
def test_jit_grad_of_cross_matches_finite_differences(a_shape, b_shape):
    a, b = RNG.normal(size=a_shape), RNG.normal(size=b_shape)
    w = RNG.normal(size=np.broadcast_shapes(a_shape[:-1], b_shape[:-1]) + (3,))
    ga, gb = s2s.jit(s2s.grad(cross_loss, argnums=(0, 1)))(a, b, w)
    np.testing.assert_allclose(ga, _fd(lambda x: cross_loss(x, b, w), a), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, _fd(lambda x: cross_loss(a, x, w), b), rtol=1e-6, atol=1e-8)


def test_jit_grad_of_cross_in_a_loop():
    ws, p = RNG.normal(size=(6, 3)), RNG.normal(size=3)
    g = s2s.jit(s2s.grad(cross_in_a_loop, argnums=(0, 1)))(ws, p)
    np.testing.assert_allclose(s2s.jit(cross_in_a_loop)(ws, p), cross_in_a_loop(ws, p))
    np.testing.assert_allclose(g[0], _fd(lambda x: cross_in_a_loop(x, p), ws), rtol=1e-6)
    np.testing.assert_allclose(g[1], _fd(lambda x: cross_in_a_loop(ws, x), p), rtol=1e-6)


SCALARS = [7.5, -7.5, 2.0, -0.0, 1e-310, 3.25e17, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("x", SCALARS)
def test_float_parts_match_math(x):
    for f in (modf_math, frexp_math, cbrt_math, exp2_math):
        try:
            want = f(x)
        except OverflowError:
            with pytest.raises(OverflowError):
                s2s.jit(f)(x)
            continue
        got = s2s.jit(f)(x)
        assert type(got) is type(want)
        for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
            assert type(g) is type(w) and (g == w or (g != g and w != w)), (f, x, got, want)
            assert math.copysign(1, g) == math.copysign(1, w) or w != w
    with pytest.raises(OverflowError, match="math range error"):
        s2s.jit(exp2_math)(5000.0)


@pytest.mark.parametrize("x,y", [(7.5, 2.0), (-7.5, 2.0), (7, 2), (-7, 3), (1.0, 0.1),
                                 (5.0, -0.0)])
def test_divmod_and_nextafter_match_python(x, y):
    for f in (divmod_py, nextafter_math):
        if f is nextafter_math and isinstance(x, int):
            continue
        try:
            want = f(x, y)
        except ZeroDivisionError:
            with pytest.raises(ZeroDivisionError):
                s2s.jit(f)(x, y)
            continue
        got = s2s.jit(f)(x, y)
        assert got == want and type(got) is type(want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_numpy_forms_match_numpy(dtype):
    a = (RNG.normal(size=(3, 4)) * 5).astype(dtype)
    b = (RNG.normal(size=4) * 3).astype(dtype)
    b[b == 0] = 1
    _same(s2s.jit(divmod_np)(a, b), np.divmod(a, b))
    _same(s2s.jit(divmod_np)(a, 2.5), np.divmod(a, 2.5))
    _same(s2s.jit(modf_np)(a), np.modf(a))
    if dtype is not np.int64:
        _same(s2s.jit(nextafter_np)(a, b), np.nextafter(a, b))
    with np.errstate(all="ignore"):
        z = np.zeros(4, dtype)
        _same(s2s.jit(divmod_np)(b, z), np.divmod(b, z))


def test_jit_grad_of_the_scalar_functions():
    g = s2s.jit(s2s.grad(smooth))
    for x in (0.37, 1.7, -0.41):  # away from the jumps of modf, divmod and frexp
        fd = (smooth(x + 1e-6) - smooth(x - 1e-6)) / 2e-6
        assert g(x) == pytest.approx(fd, rel=1e-6)


def array_parts(a, w):
    f, i = np.modf(a * 3.0)
    q, r = np.divmod(a, 1.5)
    return np.sum((f + r * r + np.nextafter(a, 10.0)) * w) + np.sum(np.cross(a[:3], w[:3]))


def test_jit_grad_of_the_array_forms():
    a = np.array([0.37, 1.7, -0.41, 2.2, -1.13])
    w = RNG.normal(size=5)
    g = s2s.jit(s2s.grad(array_parts))(a, w)
    np.testing.assert_allclose(g, _fd(lambda x: array_parts(x, w), a), rtol=1e-6)


def cube_root_and_power(x):
    return math.cbrt(x) + math.exp2(x)


def test_vmap_of_math_cbrt_and_exp2_is_numpys():
    xs = np.array([1.0, 8.0, -27.0, 0.5])
    np.testing.assert_allclose(s2s.vmap(cube_root_and_power)(xs), np.cbrt(xs) + np.exp2(xs),
                               rtol=1e-15)


def diag(v):
    return np.diag(v)


def diag_k(v, k):
    return np.diag(v, k)


def diag_loss(a, w):
    m = np.diag(a[0]) + np.diag(a[1], 1)[:3, :3]
    return np.sum(m * w) + np.sum(np.diag(m * m, -1))


@pytest.mark.parametrize("shape", [(4,), (3, 3), (2, 5), (5, 2), (0,)])
@pytest.mark.parametrize("k", [0, 1, -2, 7])
def test_diag_matches_numpy(shape, k):
    v = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float64).reshape(shape)
    _same(s2s.jit(diag_k)(v, k), np.diag(v, k))
    _same(s2s.jit(diag)(v.astype(np.int64)), np.diag(v.astype(np.int64)))


def test_jit_grad_of_diag():
    a, w = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 3))
    g = s2s.jit(s2s.grad(diag_loss))(a, w)
    np.testing.assert_allclose(g, _fd(lambda x: diag_loss(x, w), a), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("a_shape,b_shape,axes", [((5, 3), (3,), (0, None)),
                                                  ((5, 3), (4, 3), (0, None)),
                                                  ((3,), (5, 4, 3), (None, 0)),
                                                  ((5, 2, 3), (5, 3), (0, 0))])
def test_vmap_of_cross_is_a_loop_of_it(a_shape, b_shape, axes):
    a, b = RNG.normal(size=a_shape), RNG.normal(size=b_shape)
    want = np.stack([np.cross(a[i] if axes[0] == 0 else a, b[i] if axes[1] == 0 else b)
                     for i in range(5)])
    np.testing.assert_allclose(s2s.vmap(cross, in_axes=axes)(a, b), want, rtol=1e-15)


def test_vmap_of_the_gradient_of_cross():
    a, b, w = RNG.normal(size=(5, 3)), RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    g = s2s.vmap(s2s.grad(cross_loss), in_axes=(0, None, None))(a, b, w)
    want = np.stack([_fd(lambda x: cross_loss(x, b, w), a[i]) for i in range(5)])
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
