"""``break`` and ``continue`` under a condition that differs per example: the loop runs
on flags (``batch/control.jumps_as_flags``), so each example stops or skips where its
own condition says.  Checked against a Python loop over the examples, and the
derivatives against central differences."""
import numpy as np
import pytest

import s2s

from tests.compose.finite_differences import fd_gradient


def first_crossing(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] ** 2
        if s > 0.5:
            break
    return s * (i + 1)


def skip_negatives(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s = s + np.sin(v) * v
    return s


def for_else(x):
    acc = 1.0
    for v in x:
        if v > 0.6:
            break
        acc = acc * (1.0 + v)
    else:
        acc = acc + 1.0
    return acc


def while_true(x):
    s = 0.0
    i = 0
    while True:
        s = s + x[i] ** 2 * (i + 1)
        i += 1
        if i >= x.shape[0] or s > 1.0:
            break
    return s


def nested_inner_break(x):
    total = 0.0
    for i in range(3):
        for j in range(x.shape[0]):
            if x[j] * (i + 1) > 0.95:
                break
            total = total + x[j] * (i + 1)
    return total


def fills_then_breaks(x):
    # the loop variable is read only in the loop: it stays one index for every example,
    # so the write at it is a write at a common index (masked), which reverse mode takes
    y = np.zeros(4)
    for i in range(4):
        y[i] = x[i] * 2.0
        if y[i] > 1.0:
            break
    return np.sum(y ** 2)


FUNCTIONS = [first_crossing, skip_negatives, for_else, while_true, nested_inner_break,
             fills_then_breaks]
XS = np.array([[0.31, -0.52, 0.77, 0.18],
               [0.9, 0.1, -0.2, 0.4],
               [-0.1, -0.3, 0.2, 0.25],
               [0.2, 0.3, 0.35, 0.1]])


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_values_per_example(f):
    want = np.array([f(x) for x in XS])
    np.testing.assert_allclose(s2s.vmap(f)(XS), want, rtol=1e-13)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(f))(XS), want, rtol=1e-13)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_derivatives_per_example(f):
    want = np.stack([fd_gradient(f, x) for x in XS])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(XS), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.grad(lambda xs: np.sum(s2s.vmap(f)(xs)))(XS), want,
                               rtol=1e-6, atol=1e-8)
    if f is not nested_inner_break:  # (jit: an inner loop's trips per example, refused)
        np.testing.assert_allclose(s2s.jit(s2s.vmap(s2s.grad(f)))(XS), want, rtol=1e-6,
                                   atol=1e-8)
