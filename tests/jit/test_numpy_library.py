"""numpy library functions compiled by ``s2s.jit`` from their plain Python code
(``s2s/rules/numpy_code``): each against numpy itself on several shapes, dtypes and
axes; the differentiable ones' ``jit(grad)`` against central finite differences in
float64; bad input raising numpy's exception type."""
from __future__ import annotations

import math

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
SPECIAL = np.array([0.3, -1.2, np.nan, 0.7, np.inf, -0.0, 0.0, -np.inf])
ALL_NAN_ROW = WITH_NAN.copy()
ALL_NAN_ROW[0] = np.nan
SQUARE = 0.4 * RNG.normal(size=(3, 3)) + np.eye(3)
XP = np.array([0.0, 1.0, 2.5, 4.0])
FP = np.array([1.0, -1.0, 2.0, 0.5])
XQ = np.array([-1.0, 0.0, 0.5, 1.0, 3.0, 4.0, 5.0, np.nan])
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
    _case("tensordot-lists", lambda a, b: np.tensordot(a, b, axes=([1], [1])), M, W),
    _case("tensordot-lists-2", lambda a, b: np.tensordot(a, b, axes=([2, 0], [0, 2])), T3,
          RNG.normal(size=(4, 5, 2))),
    _case("tensordot-pair-neg", lambda a, b: np.tensordot(a, b, axes=(-1, 1)), T3,
          RNG.normal(size=(3, 4, 2))),
    _case("kron", lambda a, b: np.kron(a, b), M[:2, :3], W[:3, :2]),
    _case("kron-int", lambda a, b: np.kron(a, b), I2[:2, :2], I2[:3, :3]),
    # elementwise predicates and conversions (numpy_code/elementwise.py)
    _case("isnan", lambda a: np.isnan(a), SPECIAL),
    _case("isinf", lambda a: np.isinf(a), SPECIAL),
    _case("isfinite-f32", lambda a: np.isfinite(a), SPECIAL.astype(np.float32)),
    _case("isnan-int", lambda a: np.isnan(a), I2),
    _case("signbit", lambda a: np.signbit(a), SPECIAL),
    _case("deg2rad", lambda a: np.deg2rad(a), M),
    _case("radians-int", lambda a: np.radians(a), I2),
    _case("rad2deg", lambda a: np.rad2deg(a), M),
    _case("fmax", lambda a, b: np.fmax(a, b), SPECIAL, SPECIAL[::-1]),
    _case("fmin-scalar", lambda a: np.fmin(a, 0.5), SPECIAL),
    _case("sinc", lambda a: np.sinc(a), np.append(V, 0.0)),
    _case("logaddexp2", lambda a, b: np.logaddexp2(a, b), SPECIAL, SPECIAL[::-1]),
    _case("float_power-int", lambda a: np.float_power(a, 2), I2),
    _case("nan_to_num", lambda a: np.nan_to_num(a), SPECIAL),
    _case("nan_to_num-kw", lambda a: np.nan_to_num(a, nan=-1.0, posinf=7.0, neginf=-7.0), SPECIAL),
    _case("nan_to_num-f32", lambda a: np.nan_to_num(a), SPECIAL.astype(np.float32)),
    _case("select", lambda a: np.select([a > 0.5, a < -0.5], [a, -a]), M),
    _case("select-default", lambda a: np.select([a > 0], [a * 2], default=-1.0), M),
    _case("astype-f32", lambda a: a.astype(np.float32), M),
    _case("astype-str", lambda a: a.astype("float64"), I2),
    _case("astype-like", lambda a, b: a.astype(b.dtype), I2, M),
    _case("astype-bool", lambda a: a.astype(bool), I2),
    _case("bitwise-masks", lambda a: (a > 0) & (a < 1) | ~(a != a), M),
    _case("bitwise-int", lambda a: (a & 3) ^ ~a, I2),
    _case("logical_xor", lambda a, b: np.logical_xor(a > 0, b), M, W),
    # statistics (numpy_code/statistics.py)
    _case("var", lambda a: np.var(a), M),
    _case("var-ax1-ddof", lambda a: np.var(a, axis=1, ddof=1, keepdims=True), M),
    _case("var-axes-3d", lambda a: a.var(axis=(0, 2)), T3),
    _case("var-int", lambda a: np.var(a, axis=0), I2),
    _case("var-f32", lambda a: np.var(a), M.astype(np.float32)),
    _case("var-complex", lambda a: np.var(a, axis=0), M + 1j * W),
    _case("std", lambda a: np.std(a, axis=0), M),
    _case("ptp", lambda a: np.ptp(a, axis=1), M),
    _case("nansum", lambda a: np.nansum(a, axis=1), WITH_NAN),
    _case("nanmean", lambda a: np.nanmean(a), WITH_NAN),
    _case("nanmean-f32", lambda a: np.nanmean(a, axis=0), WITH_NAN.astype(np.float32)),
    _case("nanmax", lambda a: np.nanmax(a, axis=1), ALL_NAN_ROW),
    _case("nanmin-int", lambda a: np.nanmin(a), I2),
    # shapes (numpy_code/shapes.py)
    _case("fliplr", lambda a: np.fliplr(a), M),
    _case("flipud", lambda a: np.flipud(a), V),
    _case("rot90", lambda a: np.rot90(a), M),
    _case("rot90-k", lambda a: np.rot90(a, -3), T3),
    _case("squeeze", lambda a: np.squeeze(a, axis=1), T3[:, :1]),
    _case("diagonal", lambda a: np.diagonal(a, 1), M),
    _case("diagonal-far", lambda a: a.diagonal(-7), M),
    _case("take", lambda a: np.take(a, np.array([0, 3, -1])), M),
    _case("take-axis", lambda a: np.take(a, np.array([2, 0]), axis=1), M),
    _case("take-int", lambda a: np.take(a, 1, axis=0), I2),
    _case("take_along_axis", lambda a: np.take_along_axis(a, np.argsort(a, axis=0), axis=0), M),
    _case("tile", lambda a: np.tile(a, 3), I2),
    _case("identity", lambda a: np.identity(3) * a[0], V),
    _case("full_like", lambda a: np.full_like(a, 2.5), I2),
    _case("meshgrid", lambda a, b: np.meshgrid(a, b), V, V[:4]),
    _case("meshgrid-ij", lambda a, b: np.meshgrid(a, b, indexing="ij"), V, V[:4]),
    # joins and products
    _case("column_stack", lambda a, b: np.column_stack((a, b)), V, V),
    _case("dstack", lambda a, b: np.dstack((a, b)), M, W),
    _case("split", lambda a: np.split(a, 2, axis=0)[1], V),
    _case("split-indices", lambda a: np.split(a, (1, 3), axis=1)[2], M),
    _case("inner", lambda a, b: np.inner(a, b), M, W),
    _case("inner-1d", lambda a: np.inner(a, a), V),
    _case("vdot", lambda a, b: np.vdot(a, b), M, W),
    _case("matrix_power", lambda a: np.linalg.matrix_power(a, 5), SQUARE),
    _case("matrix_power-neg", lambda a: np.linalg.matrix_power(a, -2), SQUARE),
    _case("matrix_power-int", lambda a: np.linalg.matrix_power(a, 3), I2[:3, :3]),
    _case("nanvar", lambda a: np.nanvar(a, axis=1, ddof=1), WITH_NAN),
    _case("nanstd", lambda a: np.nanstd(a, axis=0, keepdims=True), WITH_NAN),
    _case("cov", lambda a: np.cov(a), M),
    _case("cov-columns-bias", lambda a: np.cov(a, rowvar=False, bias=True), M),
    _case("cov-1d", lambda a: np.cov(a), V),
    _case("corrcoef", lambda a: np.corrcoef(a), M),
    _case("corrcoef-1d", lambda a: np.corrcoef(a), V),
    _case("vector_norm", lambda a: np.linalg.vector_norm(a), M),
    _case("vector_norm-axes-inf", lambda a: np.linalg.vector_norm(a, axis=(0, 2), ord=np.inf), T3),
    _case("vector_norm-p-keepdims", lambda a: np.linalg.vector_norm(a, axis=1, ord=3, keepdims=True), M),
    _case("diagonal-3d", lambda a: np.diagonal(a, 1, 1, 2), T3),
    _case("diagonal-axes-swapped", lambda a: a.diagonal(-1, 2, 0), T3),
    _case("diagflat", lambda a: np.diagflat(a, -1), M[:2, :2]),
    _case("vander", lambda a: np.vander(a), V),
    _case("vander-increasing", lambda a: np.vander(a, 3, increasing=True), I2[0]),
    _case("moveaxis-tuples", lambda a: np.moveaxis(a, (0, 1), (-1, -2)), T3),
    # series (numpy_code/series.py)
    _case("polyval", lambda p, x: np.polyval(p, x), V, M),
    _case("polyval-scalar", lambda p: np.polyval(p, 0.3), V),
    _case("interp", lambda x: np.interp(x, XP, FP), XQ),
    _case("interp-scalar", lambda: np.interp(2.0, XP, FP)),
    _case("interp-left-right", lambda x: np.interp(x, XP, FP, left=-9.0, right=9.0), XQ),
    _case("trapezoid", lambda y: np.trapezoid(y), V),
    _case("trapezoid-x-ax0", lambda y: np.trapezoid(y, XP[:3], axis=0), M[:3]),
    _case("convolve", lambda a, b: np.convolve(a, b), V, V[:3]),
    _case("convolve-same", lambda a, b: np.convolve(a, b, "same"), V[:3], V),
    _case("convolve-valid", lambda a, b: np.convolve(a, b, mode="valid"), V, V[:3]),
    _case("correlate", lambda a, b: np.correlate(a, b), V, V[:3]),
    _case("correlate-full", lambda a, b: np.correlate(a, b, "full"), V[:3], V),
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
    _fd_case("tensordot-lists", lambda a: np.sum(np.tensordot(a, a, axes=([1], [1])) ** 2),
             M),
    _fd_case("tensordot-lists-both", lambda a: np.sum(np.cos(
        np.tensordot(T3, a, axes=([2, 1], [0, 2])))), RNG.normal(size=(4, 2, 3))),
    _fd_case("var", lambda a: np.var(a) + np.sum(np.var(a, axis=0) ** 2), M),
    _fd_case("var-ddof-keepdims", lambda a: np.sum(np.sin(np.var(a, 1, ddof=1, keepdims=True))), M),
    _fd_case("std", lambda a: np.sum(np.std(a, axis=1) * np.arange(4.0)), M),
    _fd_case("var-axes", lambda a: np.sum(np.var(a, axis=(0, 2)) ** 2), T3),
    _fd_case("ptp", lambda a: np.sum(np.ptp(a, axis=0) ** 2), M),
    _fd_case("nansum-nanmean", lambda a: np.nansum(a * a) + np.sum(np.nanmean(a, axis=1) ** 2), M),
    _fd_case("nanmax-nanmin", lambda a: np.nanmax(a) + np.sum(np.nanmin(a, axis=0) ** 3), M),
    _fd_case("sinc-deg2rad", lambda a: np.sum(np.sinc(a) + np.deg2rad(a) ** 2), M),
    _fd_case("fmax-logaddexp2", lambda a: np.sum(np.fmax(a, 0.1) ** 2 + np.logaddexp2(a, a.T.ravel()[:20].reshape(4, 5))), M),
    _fd_case("float_power", lambda a: np.sum(np.float_power(a * a + 1.0, 1.5)), M),
    _fd_case("astype", lambda a: np.sum(a.astype(np.float64) ** 3), M),
    _fd_case("take", lambda a: np.sum(np.take(a, np.array([0, 3, -1, 3])) ** 2), M),
    _fd_case("tile", lambda a: np.sum(np.tile(a, 2) * np.arange(10.0)), M),
    _fd_case("squeeze-rot90-fliplr", lambda a: np.sum(np.rot90(np.squeeze(a[None], 0)) * W.T)
             + np.sum(np.fliplr(a) * W), M),
    _fd_case("polyval", lambda a: np.sum(np.polyval(a[0], a[1])), M),
    _fd_case("polyfit", lambda a: np.sum(np.polyfit(np.arange(5.0), a[0], 2) ** 2)
             + np.sum(np.polyfit(a[1], a[2], 1, w=a[0] ** 2) ** 2), M),
    _fd_case("meshgrid", lambda a: np.sum(np.meshgrid(a[0], a[1][:3])[0] * np.sin(
        np.meshgrid(a[0], a[1][:3])[1])), M),
    _fd_case("meshgrid-ij", lambda a: np.sum(np.meshgrid(a[0][:2], a[1][:3],
                                                         indexing="ij")[1] ** 2), M),
    _fd_case("vdot", lambda a: np.vdot(a, np.sin(a)) + np.vdot(np.cos(a), a * a), M),
    _fd_case("matrix_power", lambda a: np.sum(np.linalg.matrix_power(a, 3))
             + np.sum(np.linalg.matrix_power(a, -1)), SQUARE),
    _fd_case("nan_to_num", lambda a: np.sum(np.nan_to_num(a) ** 2), M),
    _fd_case("full_like", lambda a: np.sum(a * np.full_like(a, 2.0)), M),
    # stacks of matrices (matmul_vjp_lhs/rhs of 3-d operands, broadcast stacks summed)
    _fd_case("matmul-stacks", lambda a: np.sum(np.sin(a.reshape(2, 2, 5)[:, :, :2]
                                                      @ a.reshape(2, 2, 5))), M),
    _fd_case("matmul-stack-matrix", lambda a: np.sum((a.reshape(2, 2, 5) @ W.T[:, :3]) ** 2), M),
    _fd_case("matmul-broadcast-stacks", lambda a: np.sum(np.tanh(
        T3[:, None, :, :2] @ a.reshape(1, 5, 2, 2))), M),
    # shape helpers run in numpy (trapezoid's weights, polyder/polyint's factors)
    _fd_case("trapezoid", lambda a: np.sum(np.trapezoid(a ** 2, axis=0))
             + np.trapezoid(a[0], x=np.linspace(0.0, 1.0, 5)), M),
    _fd_case("polyder-polyint", lambda a: np.polyval(np.polyder(a[0], 2), 0.3)
             + np.polyval(np.polyint(a[1]), 0.7), M),
    _fd_case("diagonal-offsets", lambda a: np.sum(np.diagonal(a, 1) ** 2)
             + np.sum(np.diagonal(a, -2) ** 3) + np.sum(np.diag(a, 2)), M),
    _fd_case("diagonal-stack", lambda a: np.sum(np.diagonal(a.reshape(5, 2, 2), 0, -2, -1)
                                                ** 2), M),
    # a list or tuple display given to a ufunc is an array
    _fd_case("ufunc-of-displays", lambda a: np.sum(np.sin([a[0, 0], a[1, 1] * 2]))
             + np.sum(np.divide([25, 75], 100) * a[0, :2]) + np.sum(np.exp((a[2, 0], a[3, 1]))),
             M),
    _fd_case("percentiles-list", lambda a: np.sum(np.percentile(a, [25, 75], axis=0)), M),
    # np.select's mask of "no condition holds" (a loop over the list of conditions)
    _fd_case("select-default", lambda a: np.sum(np.select([a > 0.5, a < -0.5],
                                                          [a ** 2, np.sin(a)], default=a * 3)), M),
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
    _case("squeeze-no-axis", lambda a: np.squeeze(a), T3),
    _case("round-ndigits", lambda a: round(a[0], 2), V),
    _case("astype-int32", lambda a: a.astype(np.int32), M),
    _case("interp-period", lambda x: np.interp(x, XP, FP, period=2.0), XQ),
    _case("nonzero-2d", lambda a: np.nonzero(a), M),
    _case("diff-prepend", lambda a: np.diff(a, prepend=0.0), M),
    _case("tensordot-outer", lambda a: np.tensordot(a, a, 0), M),
    _case("grad-quantile-nearest",
          s2s.grad(lambda a: np.quantile(a, 0.3, method="nearest") * np.sum(a)), M),
])
def test_what_is_not_compiled_says_so(fn, args):
    with pytest.raises((NotImplementedError, s2s.S2SError), match="s2s|jit does not compile"):
        s2s.jit(fn)(*args)


@pytest.mark.parametrize("fn,args", [
    _case("squeeze-not-one", lambda a: np.squeeze(a, axis=0), T3),
    _case("split-unequal", lambda a: np.split(a, 4), V),
    _case("convolve-empty", lambda a: np.convolve(a, a[:0]), V),
    _case("interp-lengths", lambda x: np.interp(x, XP, FP[:3]), XQ),
    _case("select-lengths", lambda a: np.select([a > 0, a < 0], [a]), M),
    _case("diagonal-same-axes", lambda a: np.diagonal(a, 0, 1, -2), T3),
    _case("moveaxis-lengths", lambda a: np.moveaxis(a, (0, 1), (2,)), T3),
])
def test_numpy_value_errors_are_raised(fn, args):
    with pytest.raises(ValueError):
        fn(*args)
    with pytest.raises(ValueError):
        s2s.jit(fn)(*args)


def test_scalar_results_are_numbers_as_numpy_gives_them():
    for fn, args in [(lambda a: np.var(a), (M,)), (lambda a: np.sum(a, axis=0), (V,)),
                     (lambda a: np.trapezoid(a), (V,)), (lambda: np.interp(2.0, XP, FP), ()),
                     (lambda a: np.inner(a, a), (V,)), (lambda a: math.isnan(a[2]), (SPECIAL,)),
                     (lambda a: round(a[1]), (SPECIAL,)), (lambda a: pow(a[0], 2), (V,))]:
        got, want = s2s.jit(fn)(*args), fn(*args)
        assert type(got) is type(want) and got == pytest.approx(want, rel=1e-14)


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
