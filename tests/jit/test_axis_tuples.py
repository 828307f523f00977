"""Reductions over a tuple of axes under ``s2s.jit`` (``np.sum(x, axis=(0, 2))``, mean,
prod, max, min, ``keepdims``, negative axes) and axes computed when compiling
(``tuple(range(1, np.ndim(x)))``, a global int or tuple of ints): each against numpy itself,
``jit(grad)`` against central finite differences in float64, and numpy's refusals
(a repeated axis, an axis out of range) as located s2s errors."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from tests.grad.oracles import fd_grad

RNG = np.random.default_rng(11)
T3 = RNG.normal(size=(2, 3, 4))
T4 = RNG.normal(size=(2, 3, 2, 3))
TIES = np.round(RNG.normal(size=(3, 2, 4)), 0)  # repeated extrema along the axes


def sum_01(x):
    return np.sum(x, axis=(0, 1))


def sum_02_method(x):
    return x.sum(axis=(0, 2))


def mean_neg_keepdims(x):
    return np.mean(x, axis=(-1, 0), keepdims=True)


def max_12(x):
    return np.max(x, axis=(1, 2))


def min_02_keepdims(x):
    return np.min(x, axis=(2, 0), keepdims=True)


def amax_one_item_tuple(x):
    return np.amax(x, (1,))


def sum_no_axes(x):
    return np.sum(x, axis=())


def sum_13_of_4d(x):
    return np.sum(x * x, axis=(1, 3))


def computed_axes(x):
    axes = tuple(range(1, np.ndim(x)))
    return np.sum(np.sin(x), axis=axes)


def computed_axes_inline(x):
    return np.mean(x, axis=tuple(range(np.ndim(x) - 1)))


PRIMAL = [sum_01, sum_02_method, mean_neg_keepdims, max_12, min_02_keepdims,
          amax_one_item_tuple, sum_no_axes, computed_axes, computed_axes_inline]


@pytest.mark.parametrize("f", PRIMAL, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [T3, TIES, T3.astype(np.float32)], ids=["f64", "ties", "f32"])
def test_compiled_reductions_over_several_axes_match_numpy(f, x):
    got, want = s2s.jit(f)(x), f(x)
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if x.dtype == np.float32 else 1e-13)


def test_four_dimensional_reduction_matches_numpy():
    np.testing.assert_allclose(s2s.jit(sum_13_of_4d)(T4), sum_13_of_4d(T4), rtol=1e-13)


@pytest.mark.parametrize("f", PRIMAL + [sum_13_of_4d], ids=lambda f: f.__name__)
def test_compiled_gradient_against_finite_differences(f):
    x = T4 if f is sum_13_of_4d else T3

    def loss(x):
        return np.sum(np.cos(f(x)) * np.arange(1.0, 1.0 + np.size(f(x))).reshape(np.shape(f(x))))

    want = fd_grad(loss, (x,))
    np.testing.assert_allclose(s2s.jit(s2s.grad(loss))(x), want, rtol=1e-6, atol=1e-8)


AXES = (0, 2)


def reads_global_axes(x):
    return np.sum(x, axis=AXES)


def test_a_global_tuple_of_ints_is_a_constant_and_a_new_value_compiles_again():
    global AXES
    j = s2s.jit(reads_global_axes)
    np.testing.assert_allclose(j(T3), np.sum(T3, axis=(0, 2)), rtol=1e-13)
    AXES = (1,)
    try:
        np.testing.assert_allclose(j(T3), np.sum(T3, axis=1), rtol=1e-13)
    finally:
        AXES = (0, 2)


AXIS = 1


def reads_global_axis(x):
    return np.sum(x, axis=AXIS) + np.moveaxis(x, AXIS, 0)[0, 0, 0]


def test_a_global_int_is_a_constant_and_a_new_value_compiles_again():
    global AXIS
    j = s2s.jit(reads_global_axis)
    np.testing.assert_allclose(j(T3), reads_global_axis(T3), rtol=1e-13)
    AXIS = 2
    try:
        np.testing.assert_allclose(j(T3), reads_global_axis(T3), rtol=1e-13)
        assert len(j.signatures()) == 1  # one signature, compiled again for the new value
    finally:
        AXIS = 1


def repeated_axis(x):
    return np.sum(x, axis=(0, -3))


def axis_out_of_range(x):
    return np.max(x, axis=(0, 3))


@pytest.mark.parametrize("f, words", [(repeated_axis, "duplicate value in 'axis'"),
                                      (axis_out_of_range, r"axis \(0, 3\) of a 3-d array")])
def test_bad_axes_are_located_errors(f, words):
    with pytest.raises(s2s.S2SError, match=words) as info:
        s2s.jit(f)(T3)
    assert "test_axis_tuples.py" in str(info.value)
