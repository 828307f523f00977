"""np.linalg compiled natively: values against numpy, derivatives against central finite
differences (float64) and the dot-product test, numpy's errors, deterministic modules."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.core.jit import Jitted
from s2s.backend.llvm.driver.compile import param_types
from s2s.backend.llvm.driver.module import build_module
from tests.grad.oracles import assert_tree_close, fd_directional, fd_grad

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 4)) + 4.0 * np.eye(4)
B1 = RNG.standard_normal(4)
B2 = RNG.standard_normal((4, 3))
SPD = A @ A.T + np.eye(4)


def solve(a, b):
    return np.linalg.solve(a, b)


def inv(a):
    return np.linalg.inv(a)


def det(a):
    return np.linalg.det(a)


def slogdet(a):
    return np.linalg.slogdet(a)


def chol(a):
    return np.linalg.cholesky(a)


def chol_upper(a):
    return np.linalg.cholesky(a, upper=True)


@pytest.mark.parametrize("fn,args", [
    (solve, (A, B1)), (solve, (A, B2)), (solve, (A.T, B2[:, 1])),  # strided operands
    (solve, (A.astype(np.float32), B1.astype(np.float32))),
    (solve, (np.array([[2, 1], [1, 3]]), np.array([1, 2]))),       # ints compute in float64
    (inv, (A,)), (inv, (A[::-1, ::-1],)), (inv, (np.zeros((0, 0)),)),
    (det, (A,)), (det, (A[[1, 0, 2, 3]],)), (det, (np.ones((3, 3)),)), (det, (np.zeros((0, 0)),)),
    (det, (A.astype(np.float32),)),
    (chol, (SPD,)), (chol_upper, (SPD,)), (chol, (SPD.astype(np.float32),)),
    (chol, (np.tril(SPD) + np.triu(np.full((4, 4), 7.0), 1),)),  # numpy reads the lower part
    (chol_upper, (np.triu(SPD) - np.tril(np.full((4, 4), 7.0), -1),)),  # upper=True: the upper
    (chol, (np.zeros((0, 0)),)),
])
def test_values_match_numpy(fn, args):
    got, want = s2s.jit(fn)(*args), fn(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    tol = 1e-4 if np.asarray(want).dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("a", [A, -A, A[[1, 0, 2, 3]], np.ones((3, 3)), np.zeros((0, 0))])
def test_slogdet_matches_numpy(a):
    sign, log = s2s.jit(slogdet)(a)
    want = np.linalg.slogdet(a)
    assert sign == want[0]
    assert log == pytest.approx(want[1], rel=1e-12, abs=1e-12)


#: ord is read at compile time, so each is written in the source (a free variable is a
#: run-time value, refused by name)
NORMS = {None: lambda v: np.linalg.norm(v), 2: lambda v: np.linalg.norm(v, 2),
         1: lambda v: np.linalg.norm(v, 1), -1: lambda v: np.linalg.norm(v, -1),
         np.inf: lambda v: np.linalg.norm(v, np.inf), -np.inf: lambda v: np.linalg.norm(v, -np.inf),
         0: lambda v: np.linalg.norm(v, 0), 3: lambda v: np.linalg.norm(v, ord=3),
         0.5: lambda v: np.linalg.norm(v, 0.5), "fro": lambda v: np.linalg.norm(v, "fro")}


def norm_of(x, ord):
    return s2s.jit(NORMS[ord])(x)


@pytest.mark.parametrize("x,ord", [
    (B1, None), (B1, 2), (B1, 1), (B1, np.inf), (B1, -np.inf), (B1, 0), (B1, 3), (B1, 0.5),
    (A, None), (A, "fro"), (A, 1), (A, -1), (A, np.inf), (A, -np.inf),
    (RNG.standard_normal((2, 3, 2)), None), (np.arange(5), None), (B1.astype(np.float32), 1),
])
def test_norm_matches_numpy(x, ord):
    got, want = norm_of(x, ord), np.linalg.norm(x, ord)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert got == pytest.approx(want, rel=1e-6 if x.dtype == np.float32 else 1e-13)


def test_errors_are_numpys():
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        s2s.jit(solve)(np.ones((3, 3)), np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        s2s.jit(inv)(np.zeros((2, 2)))
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        s2s.jit(inv)(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        s2s.jit(det)(np.ones((3, 2)))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        s2s.jit(chol)(-SPD)
    with pytest.raises(ValueError, match="right-hand side has 3 rows"):
        s2s.jit(solve)(A, np.ones(3))
    with pytest.raises(ValueError, match="zero-size"):
        norm_of(np.zeros(0), np.inf)


def test_nan_propagates_as_in_numpy():
    nan = np.full((2, 2), np.nan)
    np.testing.assert_array_equal(s2s.jit(chol)(nan), np.linalg.cholesky(nan))
    np.testing.assert_array_equal(s2s.jit(solve)(nan, np.ones(2)), [np.nan, np.nan])
    assert np.isnan(s2s.jit(det)(nan))
    sign, log = s2s.jit(slogdet)(nan)
    assert sign == 1.0 and np.isnan(log)


def caught(a, b):
    try:
        return np.sum(np.linalg.solve(a, b))
    except np.linalg.LinAlgError:
        return -1.0


def test_linalg_error_caught_in_compiled_code():
    assert s2s.jit(caught)(np.zeros((2, 2)), np.ones(2)) == -1.0
    assert s2s.jit(caught)(A, B1) == pytest.approx(np.sum(np.linalg.solve(A, B1)), rel=1e-12)


def test_refused_constructs_name_the_call_and_line():
    with pytest.raises(s2s.S2SError, match=r"test_linalg.py:\d+:\d+: jit does not compile np.linalg.cholesky: a 1-d array"):
        s2s.jit(lambda a: np.linalg.cholesky(a))(np.ones(3))
    # what the native kernels refuse, numpy runs (a host call: ops/host_calls.py)
    np.testing.assert_array_equal(s2s.jit(solve)(A.astype(complex), B1),
                                  np.linalg.solve(A.astype(complex), B1))
    np.testing.assert_array_equal(norm_of(A, 2), np.linalg.norm(A, 2))
    np.testing.assert_array_equal(s2s.jit(lambda v, p: np.linalg.norm(v, p))(B1, 3),
                                  np.linalg.norm(B1, 3))
    p = 2  # a closure's int is a compile-time constant, as Numba's globals
    np.testing.assert_allclose(s2s.jit(lambda v: np.linalg.norm(v, p))(B1),
                               np.linalg.norm(B1, 2), rtol=1e-14)


# -- stacks of matrices (det, slogdet, inv, solve, trace over the last two axes) -------------
STACK = RNG.standard_normal((2, 3, 4, 4)) + 3.0 * np.eye(4)
STACK[1, 2] = 0.0  # a singular matrix in the stack: det 0, slogdet (0, -inf)


@pytest.mark.parametrize("fn, args", [
    (det, (STACK,)), (lambda a: np.linalg.slogdet(a), (STACK,)), (inv, (STACK[:, :2],)),
    (solve, (STACK[:, :2], RNG.standard_normal((2, 2, 4, 3)))),
    (solve, (STACK[:, :2], RNG.standard_normal(4))),
    (solve, (STACK[:, :2], RNG.standard_normal((4, 2)))),
    (solve, (STACK[:, :2], RNG.standard_normal((1, 2, 4, 3)))),
    (lambda a: np.trace(a, 1, -1, -2), (STACK,)), (lambda a: np.trace(a, 0, -2, -1), (STACK,)),
    (det, (np.zeros((0, 3, 3)),)),
])
def test_stacks_match_numpy(fn, args):
    got, want = s2s.jit(fn)(*args), fn(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.shape(got) == np.shape(want)


def test_stack_errors_are_numpys():
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        s2s.jit(det)(np.ones((2, 3, 4)))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        s2s.jit(inv)(STACK)


SPD_STACK = STACK[:, :2] @ np.swapaxes(STACK[:, :2], -1, -2) + 0.5 * np.eye(4)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_of_stacks_and_a_run_time_flag(upper):
    """Each matrix of a stack factored; ``upper`` a constant or a run-time flag (a
    primitive passed to jit directly takes it as an argument)."""
    want = np.linalg.cholesky(SPD_STACK, upper=upper)
    fixed = chol_upper if upper else chol
    np.testing.assert_allclose(s2s.jit(fixed)(SPD_STACK), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s2s.jit(np.linalg.cholesky)(SPD_STACK, upper=upper), want,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s2s.jit(np.linalg.cholesky)(SPD_STACK[0, 1], upper=upper),
                               want[0, 1], rtol=1e-12, atol=1e-12)

    def loss(a, up):
        return np.sum(np.sin(np.linalg.cholesky(a, upper=up)) * np.linalg.cholesky(a))

    # cholesky reads sym(a): differences along symmetric directions are the oracle
    g = s2s.jit(s2s.grad(loss))(SPD_STACK, upper)
    for seed in range(2):
        d = np.random.default_rng(seed).standard_normal(SPD_STACK.shape)
        d = d + np.swapaxes(d, -1, -2)
        eps = 1e-6
        fd = (loss(SPD_STACK + eps * d, upper) - loss(SPD_STACK - eps * d, upper)) / (2 * eps)
        assert np.sum(g * d) == pytest.approx(fd, rel=1e-6)
    bad = SPD_STACK.copy()
    bad[1, 0] = -np.eye(4)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        s2s.jit(fixed)(bad)


def loss_stack(a, b):
    sign, logdet = np.linalg.slogdet(a)
    x = np.linalg.solve(a, b)
    return np.sum(logdet * sign) + np.sum(x ** 2) + np.sum(np.linalg.inv(a) ** 2) \
        + np.sum(np.trace(a, 1, -2, -1) ** 2) + np.sum(np.linalg.det(a))


def test_stack_gradients_against_finite_differences():
    a, b = STACK[:, :2] + 0.1, RNG.standard_normal((2, 2, 4, 2))
    got = s2s.jit(s2s.grad(loss_stack, argnums=(0, 1)))(a, b)
    assert_tree_close(got, fd_grad(loss_stack, (a, b), (0, 1), max_entries=200), rtol=1e-6,
                      atol=1e-7, what="loss_stack")


# -- derivatives -----------------------------------------------------------------------
def loss_solve(a, b):
    x = np.linalg.solve(a, b)
    return np.sum(x * x) + np.sum(x[0])


def loss_inv(a):
    return np.sum(np.linalg.inv(a) * np.sin(a))


def loss_det(a):
    return np.linalg.det(a) * np.sum(a)


def loss_slogdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign * logdet + logdet ** 2


def loss_chol(a):
    """cholesky reads sym(a) (JAX's convention, rules/linalg.py): symmetrised here so that
    finite differences of numpy's (lower-triangle) function see the same map"""
    low = np.linalg.cholesky(0.5 * (a + a.T))
    return np.sum(low * low * low) + np.sum(low[:, 0])


def loss_chol_upper(a):
    return np.sum(np.linalg.cholesky(0.5 * (a + a.T), upper=True) ** 3)


def loss_loop(a, b):
    x = b
    for _ in range(3):
        x = np.linalg.solve(a, x) + 0.5 * b
    return np.linalg.norm(x) + np.linalg.slogdet(a @ a)[1]


@pytest.mark.parametrize("fn,args,argnums", [
    (loss_solve, (A, B1), (0, 1)), (loss_solve, (A, B2), (0, 1)), (loss_inv, (A,), 0),
    (loss_det, (A,), 0), (loss_slogdet, (-A,), 0), (loss_chol, (SPD,), 0),
    (loss_chol_upper, (SPD,), 0), (loss_loop, (A, B1), (0, 1)),
])
def test_gradients_against_finite_differences(fn, args, argnums):
    got = s2s.jit(s2s.grad(fn, argnums=argnums))(*args)
    want = fd_grad(fn, args, argnums)
    assert_tree_close(got, want, rtol=1e-6, atol=1e-7, what=fn.__name__)


@pytest.mark.parametrize("x,ord", [(B1, None), (B1, 1), (B1, np.inf), (B1, -np.inf), (B1, 3),
                                   (A, "fro"), (RNG.standard_normal((2, 3, 2)), None)])
def test_norm_gradient_against_finite_differences(x, ord):
    norm = NORMS[ord]

    def f(v):
        return norm(v * v)
    got = s2s.jit(s2s.grad(f))(x)
    np.testing.assert_allclose(got, fd_grad(f, (x,)), rtol=1e-6, atol=1e-7)


def test_norm_gradient_of_zero_vector_is_zero():
    np.testing.assert_array_equal(s2s.jit(s2s.grad(lambda v: np.linalg.norm(v)))(np.zeros(3)),
                                  np.zeros(3))


def tangent_det(a, t):
    return s2s.jvp(loss_det, (a,), (t,))


def tangent_solve(a, b, ta, tb):
    return s2s.jvp(loss_solve, (a, b), (ta, tb))


def norm3(v):
    return np.linalg.norm(v, 3)


def tangent_norm(x, t):
    return s2s.jvp(norm3, (x,), (t,))


def test_jvp_compiled_against_directional_differences():
    ta, tb = RNG.standard_normal((4, 4)), RNG.standard_normal(4)
    value, tangent = s2s.jit(tangent_det)(A, ta)
    assert value == pytest.approx(loss_det(A), rel=1e-12)
    assert tangent == pytest.approx(fd_directional(loss_det, (A,), 0, ta), rel=1e-6)
    value, tangent = s2s.jit(tangent_solve)(A, B1, ta, tb)
    want = fd_directional(loss_solve, (A, B1), 0, ta) + fd_directional(loss_solve, (A, B1), 1, tb)
    assert tangent == pytest.approx(want, rel=1e-6)
    _, tangent = s2s.jit(tangent_norm)(B1, tb)
    assert tangent == pytest.approx(
        fd_directional(norm3, (B1,), 0, tb), rel=1e-6)


def tangent_inv(a, t):
    return s2s.jvp(loss_inv, (a,), (t,))


def tangent_slogdet(a, t):
    return s2s.jvp(loss_slogdet, (a,), (t,))


def tangent_chol(a, t):
    return s2s.jvp(loss_chol, (a,), (t,))


def tangent_chol_upper(a, t):
    return s2s.jvp(loss_chol_upper, (a,), (t,))


@pytest.mark.parametrize("tangent_fn,fn,a", [
    (tangent_inv, loss_inv, A), (tangent_slogdet, loss_slogdet, -A), (tangent_chol, loss_chol, SPD),
    (tangent_chol_upper, loss_chol_upper, SPD)])
def test_more_jvps_against_directional_differences(tangent_fn, fn, a):
    t = RNG.standard_normal(a.shape)
    value, tangent = s2s.jit(tangent_fn)(a, t)
    assert value == pytest.approx(fn(a), rel=1e-12)
    assert tangent == pytest.approx(fd_directional(fn, (a,), 0, t), rel=1e-6, abs=1e-8)


def test_vjp_compiled_passes_dot_product_test():
    """<u, J v> (J v by central differences) = <J^T u, v> (the compiled pullback)."""
    y, pullback = s2s.vjp(inv, A)
    u, v = RNG.standard_normal((4, 4)), RNG.standard_normal((4, 4))
    (jt_u,) = s2s.jit(pullback)(u)
    eps = 1e-6
    jv = (inv(A + eps * v) - inv(A - eps * v)) / (2 * eps)
    assert np.sum(u * jv) == pytest.approx(np.sum(jt_u * v), rel=1e-7)
    np.testing.assert_allclose(y, np.linalg.inv(A), rtol=1e-12)


def test_modules_are_deterministic():
    for fn, args in ((loss_loop, (A, B1)), (s2s.grad(loss_chol), (SPD,))):
        j = Jitted(fn)
        texts = []
        for _ in range(2):
            func, load_free = j.source_ir(args)
            types = param_types(func, list(args) + load_free(), j.describe)
            texts.append(build_module(func, types, True).text)
        assert texts[0] == texts[1]
        assert "s2s.lu.f8" in texts[0] or "s2s.chol.f8" in texts[0]


# -- norms along an axis ---------------------------------------------------------------
AXIS_NORMS = [lambda v: np.linalg.norm(v, axis=1), lambda v: np.linalg.norm(v, 1, axis=0),
              lambda v: np.linalg.norm(v, np.inf, axis=-1, keepdims=True),
              lambda v: np.linalg.norm(v, -np.inf, axis=0), lambda v: np.linalg.norm(v, 3, 1),
              lambda v: np.linalg.norm(v, keepdims=True), lambda v: np.linalg.norm(v, 0, axis=1)]
M = RNG.standard_normal((3, 5))


@pytest.mark.parametrize("k", range(len(AXIS_NORMS)))
def test_axis_norms_match_numpy(k):
    norm = AXIS_NORMS[k]
    got, want = s2s.jit(norm)(M), norm(M)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13)
    x3 = RNG.standard_normal((2, 3, 4))
    np.testing.assert_allclose(s2s.jit(norm)(x3), norm(x3), rtol=1e-13)


@pytest.mark.parametrize("k", range(len(AXIS_NORMS) - 1))
def test_axis_norm_gradients_against_finite_differences(k):
    norm = AXIS_NORMS[k]

    def f(v):
        return np.sum(np.cos(norm(v * v)))
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(M), fd_grad(f, (M,)), rtol=1e-6, atol=1e-7)


def tied_max(v):
    n = np.linalg.norm(v, np.inf, axis=1)
    return n[0] + 2.0 * n[1]


def test_axis_norm_ties_share_the_cotangent():
    """|v| ties at the maximum of row 0: numpy's subgradient convention, shared (1/2 each)."""
    v = np.array([[3.0, -3.0, 1.0], [0.5, 2.0, -1.0]])
    np.testing.assert_allclose(s2s.jit(s2s.grad(tied_max))(v),
                               [[0.5, -0.5, 0.0], [0.0, 2.0, 0.0]])


def tangent_axis_norm(x, t):
    return s2s.jvp(axis_norm_sum, (x,), (t,))


def axis_norm_sum(v):
    return np.linalg.norm(v, axis=0) * np.linalg.norm(v, 3, axis=1, keepdims=True)


def test_axis_norm_jvp_against_directional_differences():
    t = RNG.standard_normal(M.shape)
    value, tangent = s2s.jit(tangent_axis_norm)(M, t)
    np.testing.assert_allclose(value, axis_norm_sum(M), rtol=1e-13)
    eps = 1e-6
    want = (axis_norm_sum(M + eps * t) - axis_norm_sum(M - eps * t)) / (2 * eps)
    np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-8)


def traces(a):
    return np.trace(a, 1) + np.trace(a, -1, 1, 0) * np.trace(a.T @ a) + np.trace(a, 5)


def test_trace_and_its_gradient():
    x = RNG.standard_normal((3, 4))
    assert s2s.jit(traces)(x) == pytest.approx(traces(x), rel=1e-13)
    np.testing.assert_allclose(s2s.jit(s2s.grad(traces))(x), fd_grad(traces, (x,)),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn,args,argnums", [
    (loss_solve, (A, B1), (0, 1)), (loss_det, (A,), 0), (loss_chol, (SPD,), 0)])
def test_float32_gradients_stay_float32(fn, args, argnums):
    """float32 in, float32 out, close to the float64 finite differences (float32 rounding)"""
    got = s2s.jit(s2s.grad(fn, argnums=argnums))(*[x.astype(np.float32) for x in args])
    got = got if isinstance(got, tuple) else (got,)
    want = fd_grad(fn, args, argnums)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-3 * np.max(np.abs(w)))


@pytest.mark.parametrize("sa, sc", [((2, 3, 4, 5), (2, 3, 5, 2)), ((2, 1, 4, 5), (3, 5, 2)),
                                    ((4, 5), (2, 5, 3)), ((2, 4, 5), (5, 3)),
                                    ((0, 4, 5), (0, 5, 3))])
def test_matmul_of_stacks_matches_numpy(sa, sc):
    a, c = RNG.standard_normal(sa), RNG.standard_normal(sc)
    got = s2s.jit(lambda a, c: a @ c)(a, c)
    np.testing.assert_allclose(got, a @ c, rtol=1e-12, atol=1e-12)
    assert got.shape == (a @ c).shape
    with pytest.raises(ValueError, match="do not broadcast"):
        s2s.jit(lambda a, c: np.matmul(a, c))(np.ones((2, 4, 5)), np.ones((3, 5, 2)))
