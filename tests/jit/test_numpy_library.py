"""numpy library functions compiled by ``s2s.jit`` from their plain Python code
(``s2s/rules/numpy_code``): each against numpy itself on several shapes, dtypes and
axes; the differentiable ones' ``jit(grad)`` against central finite differences in
float64; bad input raising numpy's exception type."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from tests.grad.oracles import fd_grad

RNG = np.random.default_rng(7)
M = RNG.normal(size=(4, 5))
T3 = RNG.normal(size=(2, 3, 4))
V = RNG.normal(size=6)
I2 = RNG.integers(-5, 6, size=(3, 4))
W = RNG.normal(size=(4, 5))
WITH_NAN = M.copy()
WITH_NAN[1, 2] = np.nan
TIES = np.array([[1.0, 3.0, 1.0, 2.0, 3.0], [0.5, 0.5, -1.0, 2.0, -1.0]])
SORTED = np.sort(RNG.normal(size=9))
ZEROS = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 0.5], [2.0, 1.0, -0.5, 4.0]])


def _case(name, fn, *args):
    return pytest.param(fn, args, id=name)


PRIMAL = [
    _case("cumsum-flat", lambda a: np.cumsum(a), M),
    _case("cumsum-ax0", lambda a: np.cumsum(a, axis=0), M),
    _case("cumsum-ax1-3d", lambda a: np.cumsum(a, axis=1), T3),
    _case("cumsum-neg-int", lambda a: np.cumsum(a, axis=-1), I2),
    _case("cumsum-empty", lambda a: np.cumsum(a, axis=0), np.zeros((0, 3))),
    _case("cumprod-flat", lambda a: np.cumprod(a), V),
    _case("cumprod-ax1", lambda a: np.cumprod(a, axis=1), ZEROS),
    _case("cumprod-ax2-3d", lambda a: np.cumprod(a, 2), T3),
    _case("flip-all", lambda a: np.flip(a), T3),
    _case("flip-ax0", lambda a: np.flip(a, axis=0), M),
    _case("flip-ax-1-int", lambda a: np.flip(a, -1), I2),
    _case("roll-flat", lambda a: np.roll(a, 3), M),
    _case("roll-ax1", lambda a: np.roll(a, 2, axis=1), M),
    _case("roll-neg-3d", lambda a: np.roll(a, -5, axis=2), T3),
    _case("roll-int", lambda a: np.roll(a, 1, 0), I2),
    _case("triu", lambda a: np.triu(a), M),
    _case("triu-k1-3d", lambda a: np.triu(a, 1), T3),
    _case("tril-k-1", lambda a: np.tril(a, -1), M),
    _case("tril-int", lambda a: np.tril(a, 2), I2),
    _case("argmax-flat", lambda a: np.argmax(a), M),
    _case("argmax-ax0", lambda a: np.argmax(a, axis=0), M),
    _case("argmax-ties", lambda a: np.argmax(a, axis=1), TIES),
    _case("argmax-nan", lambda a: np.argmax(a, axis=1), WITH_NAN),
    _case("argmin-ax2-3d", lambda a: np.argmin(a, axis=2), T3),
    _case("argmin-int", lambda a: np.argmin(a, 0), I2),
    _case("argmin-nan-flat", lambda a: np.argmin(a), WITH_NAN),
    _case("count_nonzero", lambda a: np.count_nonzero(a), ZEROS),
    _case("count_nonzero-ax0", lambda a: np.count_nonzero(a, axis=0), ZEROS),
    _case("count_nonzero-bool", lambda a: np.count_nonzero(a > 0), M),
    _case("round-2", lambda a: np.round(a, 2), M * 10),
    _case("round-0", lambda a: np.round(a), M * 3),
    _case("round-neg", lambda a: np.round(a, -1), M * 100),
    _case("around-half-even", lambda a: np.around(a), np.array([0.5, 1.5, 2.5, -0.5, -1.5])),
    _case("searchsorted-left", lambda a, v: np.searchsorted(a, v), SORTED, M),
    _case("searchsorted-right", lambda a, v: np.searchsorted(a, v, side="right"),
          np.array([1.0, 2.0, 2.0, 2.0, 3.0]), np.array([2.0, 0.0, 3.5, 1.0])),
    _case("sort-last", lambda a: np.sort(a), M),
    _case("sort-ax0-nan", lambda a: np.sort(a, axis=0), WITH_NAN),
    _case("sort-flat", lambda a: np.sort(a, axis=None), T3),
    _case("sort-int", lambda a: np.sort(a, axis=1), I2),
    _case("sort-1d", lambda a: np.sort(a), RNG.normal(size=37)),
    _case("argsort-ties", lambda a: np.argsort(a, kind="stable"), TIES),
    _case("argsort-ax1-3d", lambda a: np.argsort(a, axis=1), T3),
    _case("argsort-flat", lambda a: np.argsort(a, axis=None), M),
    _case("concatenate-ax0", lambda a, b: np.concatenate((a, b)), M, M[:2]),
    _case("concatenate-ax1-list", lambda a, b: np.concatenate([a, b, a], axis=1), M, M),
    _case("concatenate-neg-3d", lambda a, b: np.concatenate((a, b), axis=-2), T3, T3),
    _case("concatenate-flat", lambda a, b: np.concatenate((a, b), axis=None), M, M[:1]),
    _case("concatenate-int", lambda a, b: np.concatenate((a, b)), I2, I2),
    _case("stack-ax0", lambda a, b: np.stack((a, b)), M, W),
    _case("stack-ax2", lambda a, b: np.stack([a, b, a], axis=2), M, W),
    _case("stack-neg-1d", lambda a, b: np.stack((a, b), axis=-1), V, V),
    _case("vstack-1d", lambda a, b: np.vstack((a, b)), V, V),
    _case("vstack-2d", lambda a, b: np.vstack((a, b)), M, M[:1]),
    _case("hstack-1d", lambda a, b: np.hstack((a, b)), V, V[:2]),
    _case("hstack-2d-int", lambda a, b: np.hstack((a, b)), I2, I2[:, :1]),
    _case("atleast_2d", lambda a: np.atleast_2d(a), V),
    _case("atleast_3d", lambda a: np.atleast_3d(a), M),
    _case("diff-last", lambda a: np.diff(a), M),
    _case("diff-ax0-n2", lambda a: np.diff(a, 2, axis=0), M),
    _case("diff-3d-int", lambda a: np.diff(a, axis=1), RNG.integers(0, 9, size=(2, 3, 4))),
    _case("diff-n-too-big", lambda a: np.diff(a, 8), V),
    _case("repeat-flat", lambda a: np.repeat(a, 2), M),
    _case("repeat-ax1", lambda a: np.repeat(a, 3, axis=1), I2),
    _case("repeat-neg-3d", lambda a: np.repeat(a, 2, axis=-2), T3),
    _case("broadcast_to", lambda a: np.broadcast_to(a, (2, 4, 5)), M),
    _case("broadcast_to-1d-int", lambda a: np.broadcast_to(a, (3, 4)), I2[0]),
    _case("nonzero-1d", lambda a: np.nonzero(a > 0), V),
    _case("nonzero-int", lambda a: np.nonzero(a), I2[1]),
    _case("median-odd", lambda a: np.median(a), V[:5]),
    _case("median-even-ax0", lambda a: np.median(a, axis=0), M),
    _case("median-ax1-3d", lambda a: np.median(a, axis=1), T3),
    _case("median-nan", lambda a: np.median(a, axis=1), WITH_NAN),
    _case("unique", lambda a: np.unique(np.round(a)), M * 2),
    _case("unique-int", lambda a: np.unique(a), I2),
    _case("tensordot-1", lambda a, b: np.tensordot(a, b, 1), M, W.T),
    _case("tensordot-2-3d", lambda a, b: np.tensordot(a, b), T3, RNG.normal(size=(3, 4, 2))),
    _case("tensordot-full", lambda a, b: np.tensordot(a, b, axes=2), M, W),
    _case("kron", lambda a, b: np.kron(a, b), M[:2, :3], W[:3, :2]),
    _case("kron-int", lambda a, b: np.kron(a, b), I2[:2, :2], I2[:3, :3]),
]


@pytest.mark.parametrize("fn,args", PRIMAL)
def test_compiled_equals_numpy(fn, args):
    got = s2s.jit(fn)(*args)
    want = fn(*args)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got if isinstance(want, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        if np.issubdtype(w.dtype, np.floating):  # products may sum in another order
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-14)
        else:
            np.testing.assert_array_equal(g, w)


def _fd_case(name, fn, x):
    return pytest.param(fn, x, id=name)


GRAD = [
    _fd_case("cumsum", lambda a: np.sum(np.cumsum(a, axis=1) ** 2), M),
    _fd_case("cumsum-flat", lambda a: np.sum(np.sin(np.cumsum(a))), M),
    _fd_case("cumprod", lambda a: np.sum(np.cumprod(a, axis=0) * W), M),
    _fd_case("cumprod-zeros", lambda a: np.sum(np.cumprod(a, axis=1) * W[:3, :4]), ZEROS),
    _fd_case("cumprod-flat", lambda a: np.sum(np.cumprod(a) * np.arange(6.0)), V),
    _fd_case("flip", lambda a: np.sum(np.flip(a, axis=1) * W), M),
    _fd_case("flip-all", lambda a: np.sum(np.flip(a) * W), M),
    _fd_case("roll", lambda a: np.sum(np.roll(a, 2, axis=1) * W), M),
    _fd_case("roll-flat", lambda a: np.sum(np.roll(a, -3) * W), M),
    _fd_case("triu-tril", lambda a: np.sum(np.triu(a, 1) * W) + np.sum(np.tril(a) ** 2), M),
    _fd_case("sort", lambda a: np.sum(np.sort(a, axis=0) * W), M),
    _fd_case("sort-flat", lambda a: np.sum(np.sort(a, axis=None) * np.arange(20.0)), M),

    _fd_case("concatenate", lambda a: np.sum(np.concatenate((a, np.sin(a[:2])), axis=0) ** 2), M),
    _fd_case("concatenate-ax1", lambda a: np.sum(np.concatenate([a, a * a], axis=1)
                                                 * np.concatenate((W, W), axis=1)), M),
    _fd_case("stack", lambda a: np.sum(np.stack((a, np.cos(a)), axis=1) ** 2), M),
    _fd_case("vstack-1d", lambda a: np.sum(np.vstack((a, a ** 2)) * np.arange(12.0).reshape(2, 6)), V),
    _fd_case("hstack-2d", lambda a: np.sum(np.hstack((a, np.exp(a))) ** 2), M),
    _fd_case("hstack-1d", lambda a: np.sum(np.hstack((a, a[:2])) * np.arange(8.0)), V),
    _fd_case("repeat", lambda a: np.sum(np.repeat(a, 2, axis=0) ** 3), M),
    _fd_case("repeat-flat", lambda a: np.sum(np.repeat(a, 3) * np.arange(18.0)), V),
    _fd_case("broadcast_to", lambda a: np.sum(np.sin(np.broadcast_to(a, (3, 4, 5)))), M),
    _fd_case("diff", lambda a: np.sum(np.diff(a, axis=1) ** 2), M),
    _fd_case("diff-n2-ax0", lambda a: np.sum(np.sin(np.diff(a, 2, axis=0))), M),
    _fd_case("diff-flat-1d", lambda a: np.sum(np.diff(a) * np.arange(5.0)), V),
    _fd_case("tensordot-lhs", lambda a: np.sum(np.tensordot(a, W.T, 1) ** 2), M),
    _fd_case("tensordot-rhs", lambda a: np.sum(np.sin(np.tensordot(T3, a, 2))),
             RNG.normal(size=(3, 4, 2))),
]


@pytest.mark.parametrize("fn,x", GRAD)
def test_compiled_gradient_against_finite_differences(fn, x):
    got = s2s.jit(s2s.grad(fn))(x)
    want = fd_grad(fn, (x,))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


ERRORS = [
    _case("cumsum-axis", lambda a: np.cumsum(a, axis=2), M),
    _case("sort-axis", lambda a: np.sort(a, axis=-3), M),
    _case("argmax-axis", lambda a: np.argmax(a, axis=5), M),
    _case("roll-axis", lambda a: np.roll(a, 1, axis=2), M),
    _case("flip-axis", lambda a: np.flip(a, 3), M),
    _case("concatenate-axis", lambda a: np.concatenate((a, a), axis=2), M),
    _case("stack-axis", lambda a: np.stack((a, a), axis=3), M),
]


@pytest.mark.parametrize("fn,args", ERRORS)
def test_bad_axis_raises_numpy_axis_error(fn, args):
    with pytest.raises(np.exceptions.AxisError):
        fn(*args)
    with pytest.raises(np.exceptions.AxisError) as info:
        s2s.jit(fn)(*args)
    assert "axis" in str(info.value) and "test_numpy_library.py" in str(info.value)


def test_joining_mismatched_shapes_raises_value_error():
    f = lambda a, b: np.concatenate((a, b), axis=1)  # noqa: E731
    with pytest.raises(ValueError):
        f(M, M[:2])
    with pytest.raises(ValueError, match="must match"):
        s2s.jit(f)(M, M[:2])
    g = lambda a, b: np.stack((a, b))  # noqa: E731
    with pytest.raises(ValueError):
        g(M, M[:2])
    with pytest.raises(ValueError, match="same shape"):
        s2s.jit(g)(M, M[:2])


@pytest.mark.parametrize("fn,args", [
    _case("repeat-negative", lambda a: np.repeat(a, -1), V),
    _case("diff-negative-order", lambda a: np.diff(a, -1), V),
    _case("broadcast_to-incompatible", lambda a: np.broadcast_to(a, (3, 2)), M),
    _case("tensordot-mismatch", lambda a: np.tensordot(a, a, 1), M),
])
def test_bad_sizes_raise_value_error(fn, args):
    with pytest.raises(ValueError):
        fn(*args)
    with pytest.raises(ValueError):
        s2s.jit(fn)(*args)


@pytest.mark.parametrize("fn,args", [
    _case("nonzero-2d", lambda a: np.nonzero(a), M),
    _case("diff-prepend", lambda a: np.diff(a, prepend=0.0), M),
    _case("tensordot-outer", lambda a: np.tensordot(a, a, 0), M),
    _case("grad-median", s2s.grad(lambda a: np.median(a)), M),
])
def test_what_is_not_compiled_says_so(fn, args):
    with pytest.raises((NotImplementedError, s2s.S2SError), match="s2s"):
        s2s.jit(fn)(*args)


def test_argmax_of_empty_raises_value_error():
    f = s2s.jit(lambda a: np.argmax(a))
    with pytest.raises(ValueError):
        np.argmax(np.zeros(0))
    with pytest.raises(ValueError, match="empty"):
        f(np.zeros(0))


def test_searchsorted_bad_side_raises_value_error():
    with pytest.raises(ValueError):
        np.searchsorted(SORTED, 0.5, side="middle")
    with pytest.raises(ValueError, match="side"):
        s2s.jit(lambda a, v: np.searchsorted(a, v, side="middle"))(SORTED, M)
