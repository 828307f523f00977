"""``jit(f, static_argnums=..., static_argnames=...)`` (JAX's): the static arguments are
compile-time constants, one compiled function per value; results against Python,
gradients against central differences, the errors of bad static arguments."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import s2s
from tests.compose.finite_differences import fd_gradient


def repeated(x, n):
    for _ in range(n):
        x = np.sin(x) * 1.1
    return np.sum(x)


def by_mode(x, mode, act):
    if mode == "sum":  # the result's type depends on the static value
        return np.sum(act(x))
    return act(x) * 2.0


@partial(s2s.jit, static_argnums=(1,))
def filled(x, shape):
    return np.zeros(shape) + x


X = np.linspace(0.1, 0.9, 4)


def test_static_values_are_constants_compiled_once_per_value():
    jitted = s2s.jit(by_mode, static_argnums=(1, 2))
    assert jitted(X, "sum", np.tanh) == pytest.approx(by_mode(X, "sum", np.tanh), rel=1e-14)
    np.testing.assert_allclose(jitted(X, "vec", np.cos), by_mode(X, "vec", np.cos), rtol=1e-14)
    jitted(X * 2.0, "sum", np.tanh)
    assert len(jitted.jitted) == 2
    assert s2s.jit(repeated, static_argnames="n")(X, n=3) == pytest.approx(repeated(X, 3))
    np.testing.assert_array_equal(filled(2.0, (2, 3)), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(filled(1.0, (3,)), np.full(3, 1.0))


def test_gradients_with_static_arguments():
    got = s2s.jit(s2s.grad(repeated), static_argnums=1)(X, 3)
    np.testing.assert_allclose(got, fd_gradient(lambda x: repeated(x, 3), X),
                               rtol=1e-6, atol=1e-9)
    got = s2s.grad(s2s.jit(repeated, static_argnums=1))(X, 2)  # grad(jit(f)) is grad(f)
    np.testing.assert_allclose(got, fd_gradient(lambda x: repeated(x, 2), X),
                               rtol=1e-6, atol=1e-9)

    def uses(x):  # called in transformed code, a static jit is its function
        return np.sum(filled(x, (3,)) * x)

    assert s2s.grad(uses)(2.0) == pytest.approx(12.0, rel=1e-14)  # d/dx 3 x^2
    assert s2s.jit(uses)(2.0) == pytest.approx(12.0, rel=1e-14)


def test_bad_static_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="must be hashable"):
        s2s.jit(repeated, static_argnums=1)(X, [1, 2])
    with pytest.raises(ValueError, match="static_argnums 5 of repeated"):
        s2s.jit(repeated, static_argnums=5)
    with pytest.raises(ValueError, match="static_argnames names 'm'"):
        s2s.jit(repeated, static_argnames="m")


def doubled(v):
    return v * 2.0


def tripled(v):
    return v * 3.0


def with_function_defaults(x, g=doubled, act=np.tanh):
    return np.sum(act(g(x)))


def test_function_arguments_are_compile_time_constants():
    """A function argument or default (``act=np.tanh``, a helper) needs no
    ``static_argnums``: its calls are inlined for it and the compiled code is specialised
    on it, one per function (it was refused: "argument 'g' is a function")."""
    jitted = s2s.jit(with_function_defaults)
    for args in [(), (tripled,), (tripled, np.sin), (doubled,)]:
        assert jitted(X, *args) == pytest.approx(with_function_defaults(X, *args), rel=1e-14)
    got = s2s.jit(s2s.grad(with_function_defaults))(X, tripled, np.sin)
    np.testing.assert_allclose(got, fd_gradient(lambda x: with_function_defaults(
        x, tripled, np.sin), X), rtol=1e-6, atol=1e-9)

    def make(scale):  # a closure: what it captures is read at each call
        state = {"s": scale}
        return (lambda v: v * state["s"]), state

    g, state = make(2.0)
    assert jitted(X, g) == pytest.approx(with_function_defaults(X, g), rel=1e-14)
    state["s"] = 5.0
    assert jitted(X, g) == pytest.approx(with_function_defaults(X, g), rel=1e-14)
