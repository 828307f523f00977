"""A target of ``a, b = helper(x)`` carries a tangent only where its item does: forward
mode (``ad/forward.py``) read the whole tuple as active, so a constant item's
derivative was computed, and ``np.std`` of a constant array gave NaN (0/0) where every
other mode gives the derivative.  Reverse mode the same: ``for i, row in
enumerate(y)`` unpacks ``(k, y[k])``, and the counter ``i`` (a name an earlier loop
over ``range`` also uses to index a write) carries no derivative.  Against central
differences and reverse mode."""
from __future__ import annotations

import warnings

import pytest

import numpy as np

import s2s
from tests.compose.finite_differences import fd_gradient


def value_and_constant(s):
    return np.cos(s), 2.0


def spread_of_a_constant(x):
    a, b = value_and_constant(x[0])
    z = np.ones(3) * b  # constant: np.std(z) is 0, its derivative 0 (not 0/0)
    return a + np.std(z)


def test_a_constant_item_of_a_returned_tuple_carries_no_tangent():
    x = np.array([0.3, 0.5, -0.4])
    want = fd_gradient(spread_of_a_constant, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 is computed on the tangent side
        np.testing.assert_allclose(s2s.jacfwd(spread_of_a_constant)(x), want, atol=1e-8)
        _, tangent = s2s.jvp(spread_of_a_constant, (x,), (np.ones(3),))
    assert np.isclose(tangent, np.sum(want), atol=1e-8)
    np.testing.assert_allclose(s2s.hessian(spread_of_a_constant)(x)[0, 0], -np.cos(x[0]),
                               rtol=1e-12)


def rows_filled_then_enumerated(x):
    y = np.zeros((2, 3))
    for i in range(2):  # an array whose kind only its first assignment gives
        y[i] = x * (i + 1.0)
    s = 0.0
    for i, row in enumerate(y):  # i: the same name, here the enumerate counter
        s = s + np.sum(row ** 2) * (i + 1)
    return s


@pytest.mark.parametrize("transform", ["grad", "jit(grad)", "jacfwd"])
def test_a_counter_unpacked_with_a_row_carries_no_derivative(transform):
    x = np.array([0.3, 0.5, -0.4])
    f = rows_filled_then_enumerated
    t = {"grad": s2s.grad, "jit(grad)": lambda f: s2s.jit(s2s.grad(f)), "jacfwd": s2s.jacfwd}
    np.testing.assert_allclose(t[transform](f)(x), fd_gradient(f, x), rtol=1e-6, atol=1e-8)


def test_iterators_without_a_sequence_are_refused_with_what_to_do():
    def through_iter(x):
        s = 0.0
        for v in iter(x):
            s = s + v
        return s
    with pytest.raises(s2s.S2SError, match=r"iterator object \(iter\(\.\.\.\)\)"):
        s2s.grad(through_iter)(np.array([0.3, 0.5]))
