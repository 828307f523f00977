"""``x += v`` where ``x`` holds a number: Python rebinds ``x`` (a number never changes in
place), whatever made the number (a reduction, an item, an argument) and whatever
transform reads the code; derivatives against central differences, batched results
against a loop over the examples.  Found by random programs under composed
transforms (the accumulator of a reduction was written as ``acc[...] = t`` of a numpy
scalar; vmap's lifted numbers were changed in place through an alias)."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from tests.compose.finite_differences import fd_gradient, fd_hessian

X = np.array([0.3, 0.5, -0.4])


def from_a_reduction(x):
    acc = np.sum(x)
    for i in range(2):
        acc += x[1] * x[0]
    return acc


def from_a_norm(x):
    acc = np.linalg.norm(x)
    acc *= x[2]
    acc -= np.mean(x)
    return acc


def twice_in_straight_code(x):
    c = x[0] * 1.0
    c += x[1]
    c += np.sin(c)
    return c


TRANSFORMS = {
    "grad": lambda f: s2s.grad(f)(X),
    "jit(grad)": lambda f: s2s.jit(s2s.grad(f))(X),
    "vjp": lambda f: s2s.vjp(f, X)[1](1.0)[0],
    "jacfwd": lambda f: s2s.jacfwd(f)(X),
    "vmap(grad)": lambda f: s2s.vmap(s2s.grad(f))(np.stack([X, X]))[1],
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.parametrize("f", [from_a_reduction, from_a_norm, twice_in_straight_code])
def test_gradients_of_numbers_changed_in_place(f, name):
    np.testing.assert_allclose(TRANSFORMS[name](f), fd_gradient(f, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [from_a_reduction, from_a_norm, twice_in_straight_code])
def test_second_derivatives_of_numbers_changed_in_place(f):
    want = fd_hessian(f, X)
    for h in (s2s.hessian(f), s2s.jacrev(s2s.jacfwd(f)), s2s.jit(s2s.hessian(f))):
        np.testing.assert_allclose(h(X), want, rtol=1e-4, atol=1e-6)


def alias_of_an_argument(x, y):
    acc = y
    for i in range(2):
        acc -= y * 0.3
        if x[0] > 0.2:  # differs per example
            acc = acc * 0.5
    return acc * x[0]


def alias_of_a_reduction(x, y):
    s = np.sum(y ** 2)  # one number per example, not elementwise
    acc = s
    acc += 1.0
    return acc * s * x[0]


XS = np.array([[0.1, 0.2], [0.0, 0.1], [0.4, 0.4]])
YS = np.array([[0.5, 0.7], [0.2, 0.1], [1.0, 2.0]])


def total_of_argument_aliases(xs):
    return np.sum(s2s.vmap(alias_of_an_argument, in_axes=(0, None))(xs, 0.7))


def total_of_reduction_aliases(xs):
    return np.sum(s2s.vmap(alias_of_a_reduction)(xs, YS))


@pytest.mark.parametrize("f, y, axes, total", [
    (alias_of_an_argument, 0.7, (0, None), total_of_argument_aliases),
    (alias_of_a_reduction, YS, (0, 0), total_of_reduction_aliases)])
def test_a_batch_of_numbers_two_names_hold_is_not_changed_in_place(f, y, axes, total):
    ys = [y] * len(XS) if axes[1] is None else list(y)
    np.testing.assert_allclose(s2s.vmap(f, in_axes=axes)(XS, y),
                               [f(x, v) for x, v in zip(XS, ys)], rtol=1e-13)
    want = np.stack([fd_gradient(lambda x, v=v: f(x, v), x) for x, v in zip(XS, ys)])
    np.testing.assert_allclose(s2s.grad(total)(XS), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f), in_axes=axes)(XS, y), want,
                               rtol=1e-6, atol=1e-8)


def item_changed_under_a_branch(x):
    s = x[0]  # a number per example (x: a vector per example)
    if x[1] > 0:  # differs per example
        s += 1.0
    s *= x[2]
    return s


def loop_item_accumulated_then_copied(x):
    acc = 0.0
    for v in x:  # numbers per example
        acc += v * v
    t = acc  # another name for the number: unchanged by the next line
    acc -= 1.0
    return t * acc


XS3 = np.array([[0.3, 0.5, -0.4], [0.1, -0.2, 0.7]])


@pytest.mark.parametrize("f", [item_changed_under_a_branch, loop_item_accumulated_then_copied])
def test_per_example_numbers_read_from_vectors_are_never_changed_in_place(f):
    want = np.stack([fd_gradient(f, x) for x in XS3])
    np.testing.assert_allclose(s2s.vmap(f)(XS3), [f(x) for x in XS3], rtol=1e-13)
    total = lambda xs: np.sum(s2s.vmap(f)(xs))  # noqa: E731
    np.testing.assert_allclose(s2s.grad(total)(XS3), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.grad(total))(XS3), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(XS3), want, rtol=1e-6, atol=1e-8)
