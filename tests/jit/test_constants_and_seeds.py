"""jit: strings, None and tuples of them are compile-time constants (arguments, globals,
closures; a changed global recompiles), and jit(grad(f)) of a function returning a 0-d
array.  Oracles: the same functions run by Python, central differences."""
import numpy as np
import pytest

import s2s

MODE = "fast"
NAMES = ("a", "b", "c")
SCALE = None


def by_mode(x, mode="fast"):
    if mode == "fast":
        return x * 2.0
    elif mode == "slow":
        return x * 3.0
    return x - 1.0


def by_global(x):
    if MODE == "fast" and SCALE is None:
        return x * len(NAMES)
    return x - 1.0


def closure(kind):
    def f(x):
        if kind == "square":
            return x * x
        return x
    return f


def zero_d(x):
    return (np.sum(x * x * x, keepdims=True)).reshape(())


def test_string_and_none_arguments_are_constants():
    j = s2s.jit(by_mode)
    for args in [(1.5,), (1.5, "slow"), (1.5, "other"), (2.0, "fast")]:
        assert j(*args) == by_mode(*args)
    assert s2s.jit(s2s.grad(by_mode))(1.5, "slow") == pytest.approx(3.0)
    assert len(j.signatures()) == 3  # one per string value


def test_globals_and_closures_are_constants_and_recompile_on_change():
    global MODE
    j = s2s.jit(by_global)
    assert j(2.0) == 6.0
    MODE = "slow"
    try:
        assert j(2.0) == 1.0
    finally:
        MODE = "fast"
    assert j(2.0) == 6.0
    assert s2s.jit(closure("square"))(3.0) == 9.0
    assert s2s.jit(closure("identity"))(3.0) == 3.0


def test_grad_of_a_zero_d_array_output():
    x = np.array([1.0, -2.0, 0.5])
    g = s2s.jit(s2s.grad(zero_d))(x)
    np.testing.assert_allclose(g, 3 * x * x, rtol=1e-14)
    np.testing.assert_allclose(g, s2s.grad(zero_d)(x), rtol=1e-14)
