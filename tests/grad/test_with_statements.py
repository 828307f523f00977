"""``with`` statements on context managers that do not change values, ``raise X from Y``
and f-strings in differentiated code.

Oracle: central differences of the function run by Python (``fd_grad``); the raised
exception and its ``__cause__`` against Python's.
"""
import contextlib
import warnings

import numpy as np
import pytest

import s2s

from .oracles import assert_tree_close, fd_grad


def errstate_log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(x > 0, np.log(np.abs(x)) * x, 0.0)
    with warnings.catch_warnings(), contextlib.nullcontext(3.0) as k:
        z = y * k
    return np.sum(z)


def nested(x):
    total = np.zeros_like(x)
    for i in range(3):
        with np.errstate(over="ignore"):
            with contextlib.nullcontext():
                total = total + np.sin(x * i)
    return np.sum(total)


def wrapped(x):
    try:
        if x > 10.0:
            raise ValueError(f"x = {x:.1f} is too big ({x!r})")
        return x * x
    except ValueError as e:
        raise RuntimeError("wrapped") from e


def suppressed(x):
    if x < 0:
        raise KeyError("negative") from None
    return 3.0 * x


X = np.array([0.5, 2.0, 1.3])


@pytest.mark.parametrize("f", [errstate_log, nested])
def test_neutral_context_managers(f):
    expected = fd_grad(f, (X,))
    assert_tree_close(s2s.grad(f)(X), expected, rtol=1e-6)
    _, t = s2s.jvp(f, (X,), (np.ones(3),))
    assert t == pytest.approx(np.sum(expected), rel=1e-6)
    assert_tree_close(s2s.jit(s2s.grad(f))(X), expected, rtol=1e-6)
    assert_tree_close(s2s.vmap(s2s.grad(f))(np.stack([X, 2 * X])),
                      np.stack([expected, fd_grad(f, (2 * X,))]), rtol=1e-6)


def test_raise_from_keeps_the_cause():
    assert s2s.grad(wrapped)(3.0) == pytest.approx(6.0)
    with pytest.raises(RuntimeError, match="wrapped") as info:
        s2s.grad(wrapped)(11.0)
    assert isinstance(info.value.__cause__, ValueError)
    assert str(info.value.__cause__) == "x = 11.0 is too big (11.0)"
    assert s2s.grad(suppressed)(2.0) == pytest.approx(3.0)
    with pytest.raises(KeyError) as info:
        s2s.grad(suppressed)(-1.0)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_fstrings_are_values_without_derivatives():
    def f(x):
        label = f"{x:.3f}|{2:>3}|{{}}"
        assert label == "1.500|  2|{}", label
        return x * 2.0
    assert s2s.grad(f)(1.5) == 2.0


def _opens(x):
    with open("/dev/null") as fh:  # noqa: F841
        y = x * 2.0
    return y


def _raises_inside(x):
    with np.errstate(all="raise"):
        y = x * 2.0
    return y


def _records(x):
    with warnings.catch_warnings(record=True):
        y = x * 2.0
    return y


def _as_name(x):
    with np.errstate(divide="ignore") as state:  # noqa: F841
        y = x * 2.0
    return y


@pytest.mark.parametrize("f, needle", [
    (_opens, "'with' statement on open"),
    (_raises_inside, "np.errstate(all='raise')"),
    (_records, "catch_warnings(record=True)"),
    (_as_name, "'with ... as' on errstate"),
])
def test_other_context_managers_are_refused_by_name(f, needle):
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(f)(1.0)
    message = str(info.value)
    assert needle in message and "test_with_statements.py:" in message and "^" in message
