"""Derivatives that are infinite where the function is finite: ``inf`` (or ``nan``), as in
numpy and JAX, not an exception from the generated code.

``x ** 0.5`` at 0 is 0 but its derivative ``0.5 * 0 ** -0.5`` is infinite; on Python
floats Python's ``0.0 ** -0.5`` raises ZeroDivisionError.  Derivative code calls
``rt.power`` (``**`` with numpy's value there), and the derivatives of numpy functions
divide with ``np.divide`` where a denominator is made of the raw operand (``np.log``'s
``g / x``).  Oracles: the closed-form limits (``+inf``; ``inf * 0 = nan`` for
``|x| ** 0.2``, which is JAX's value too), numpy evaluating the same closed form, and
finite differences away from the singular point.  The user's own code keeps Python's
semantics: a primal that raises still raises.
"""
import math
import warnings

import numpy as np
import pytest

import s2s

ZEROS = [0.0, np.float64(0.0), np.array(0.0)]


def _derivatives(f, x):
    """grad and jvp (tangent 1) of f at x, numpy's warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(s2s.grad(f)(x)), float(s2s.jvp(f, (x,), (1.0,))[1])


CASES = [  # (name, f, x0 where the derivative is infinite, the derivative there)
    ("x ** 0.5", lambda x: x ** 0.5, 0.0, np.inf),
    ("3 * x ** 0.25", lambda x: 3.0 * x ** 0.25, 0.0, np.inf),
    ("(x + 1) ** 0.5", lambda x: (x + 1.0) ** 0.5, -1.0, np.inf),
    ("np.log(x)", lambda x: np.log(x), 0.0, np.inf),
    ("np.log1p(x)", lambda x: np.log1p(x), -1.0, np.inf),
    ("np.log2(x)", lambda x: np.log2(x), 0.0, np.inf),
    ("np.log10(x)", lambda x: np.log10(x), 0.0, np.inf),
    ("np.arctanh(x)", lambda x: np.arctanh(x), 1.0, np.inf),
    ("np.divide(1, x)", lambda x: np.divide(1.0, x), 0.0, -np.inf),
    ("|x| ** 0.2", lambda x: abs(x) ** 0.2, 0.0, np.nan),  # inf * sign(0): nan (JAX too)
]


@pytest.mark.parametrize("name, f, x0, want", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("kind", [float, np.float64, np.array], ids=["float", "float64", "0-d"])
def test_infinite_derivative_is_inf_not_an_error(name, f, x0, want, kind):
    for got in _derivatives(f, kind(x0)):
        if np.isnan(want):
            assert np.isnan(got)
        else:
            assert got == want


@pytest.mark.parametrize("name, f, x0, want", CASES[:-1], ids=[c[0] for c in CASES[:-1]])
def test_near_the_singular_point_the_derivative_matches_finite_differences(name, f, x0, want):
    x = x0 + 0.3 if name != "np.arctanh(x)" else 0.7
    eps = 1e-6
    fd = (f(x + eps) - f(x - eps)) / (2 * eps)
    for got in _derivatives(f, x):
        assert got == pytest.approx(fd, rel=1e-6)


def test_power_with_a_variable_exponent_at_zero():
    f = lambda x, y: x ** y  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        dx, dy = s2s.grad(f, argnums=(0, 1))(0.0, 0.5)
    assert dx == np.inf and dy == 0.0  # y * 0 ** (y - 1); log taken as 0 at x == 0


def test_second_derivative_and_other_transforms_at_zero():
    f = lambda x: x ** 0.5  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert s2s.grad(s2s.grad(f))(0.0) == -np.inf  # -0.25 * 0 ** -1.5
        assert s2s.jit(s2s.grad(f))(0.0) == np.inf
        batched = s2s.vmap(s2s.grad(f))(np.array([0.0, 4.0]))
    np.testing.assert_array_equal(batched, [np.inf, 0.25])
    assert s2s.grad(s2s.grad(f))(4.0) == pytest.approx(-0.25 * 4.0 ** -1.5, rel=1e-14)


def test_users_code_keeps_python_semantics():
    """The primal raising is the user's code raising: the gradient raises the same error."""
    with pytest.raises(ZeroDivisionError):
        s2s.grad(lambda x: 1.0 / x)(0.0)
    with pytest.raises(ZeroDivisionError):
        s2s.grad(lambda x: x ** -0.5)(0.0)
    with pytest.raises(ValueError):
        s2s.grad(math.log)(0.0)


def test_a_power_whose_exponent_is_a_nonnegative_constant_stays_plain():
    """``rt.power`` only where a ZeroDivisionError is possible: x ** 3 -> 3 * x ** 2."""
    g = s2s.grad(lambda x: x ** 3 + x ** 0.5)
    gen, _ = g.generated(g._bind((2.0,), {}))
    import inspect
    text = inspect.getsource(gen)
    assert "x ** 2" in text and "rt.power(x, -0.5)" in text
    assert g(2.0) == pytest.approx(3 * 4.0 + 0.5 * 2.0 ** -0.5, rel=1e-14)
