"""Issue 19, group 2: a callable s2s accepts in differentiated code has a derivative
checked against finite differences (the systematic table, ``tests/unit``), or is
refused by name with the user's file:line; callables that read variables by name at
run time (``eval``, ``exec``, ``locals``, ``globals``, ``vars``, frame inspection) are
refused in every transform."""
from __future__ import annotations

import inspect
import math
import sys

import numpy as np
import pytest

import s2s
from s2s.errors import NoRuleError, UnsupportedSyntaxError

HERE = __file__


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def _line_of(fn, text):
    src, start = inspect.getsourcelines(fn)
    for i, line in enumerate(src):
        if text in line and not line.lstrip().startswith("def "):
            return start + i
    raise AssertionError(text)


def use_eval(x):
    return eval("x * x")


def use_exec(x):
    exec("y = x * x")
    return x


def use_locals(x):
    return locals()["x"] * x


def use_globals(x):
    return globals()["np"].sin(x)


def use_vars(x):
    return vars()["x"] * x


def use_frame(x):
    return sys._getframe().f_locals["x"] * x


def use_currentframe(x):
    return inspect.currentframe().f_locals["x"] * x


READERS = [(use_eval, "eval"), (use_exec, "exec"), (use_locals, "locals"),
           (use_globals, "globals"), (use_vars, "vars"), (use_frame, "sys._getframe"),
           (use_currentframe, "inspect.currentframe")]
TRANSFORMS = {
    "grad": lambda f: s2s.grad(f)(3.0),
    "jvp": lambda f: s2s.jvp(f, (3.0,), (1.0,)),
    "vjp": lambda f: s2s.vjp(f, 3.0),
    "jacrev": lambda f: s2s.jacrev(f)(3.0),
    "vmap": lambda f: s2s.vmap(f)(np.ones(2)),
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("fn, name", READERS, ids=[n for _, n in READERS])
def test_name_readers_are_refused_with_the_users_line(fn, name, transform):
    with pytest.raises(UnsupportedSyntaxError) as info:
        TRANSFORMS[transform](fn)
    msg = str(info.value)
    assert f"{name}()" in msg and "reads variables by name" in msg
    assert f"{HERE}:{_line_of(fn, name.split('.')[-1] + '(')}:" in msg


def test_name_readers_are_refused_under_jit_too():
    with pytest.raises(UnsupportedSyntaxError, match=r"eval\(\)"):
        s2s.jit(use_eval)(3.0)


# --- the derivatives the issue found wrong, against finite differences -----------------
def divmod_remainder(x):
    return divmod(x, 1.0)[1]


def math_copysign(x):
    return math.copysign(x, -1.0)


def np_nextafter(x):
    return np.nextafter(x, 9.0)


def heaviside_at_zero(h):
    return np.heaviside(0.0, h) * 7.0


def fmod_divisor(y):
    return math.fmod(7.3, y)


@pytest.mark.parametrize("f, x", [(divmod_remainder, 3.3), (math_copysign, 3.0),
                                  (math_copysign, -2.0), (np_nextafter, 3.0),
                                  (heaviside_at_zero, 0.4), (fmod_divisor, 1.3)])
def test_once_wrong_derivatives_match_finite_differences(f, x):
    expected = _fd(f, x)
    assert abs(expected) > 0.5  # the derivative is not zero: a zero would be wrong
    assert s2s.grad(f)(x) == pytest.approx(expected, rel=1e-6)
    assert s2s.jvp(f, (x,), (1.0,))[1] == pytest.approx(expected, rel=1e-6)


def math_dist(x):
    return math.dist((x, 1.0), (0.5, x))


@pytest.mark.parametrize("f, name", [(math_dist, "math.dist")])
def test_callables_without_a_rule_are_refused_by_name(f, name):
    with pytest.raises(NoRuleError) as info:
        s2s.grad(f)(2.0)
    msg = str(info.value)
    assert name in msg and f"{HERE}:{_line_of(f, name + '(')}:" in msg


FLOAT_PARTS = [lambda x: divmod(x, 1.3)[1] + 2.0 * divmod(x, 1.3)[0],
               lambda x: np.divmod(x, 1.3)[1], lambda x: math.fmod(x, 1.3),
               lambda x: math.modf(x)[0] * x, lambda x: np.modf(x)[0] * x,
               lambda x: math.frexp(x)[0] * x, lambda x: np.frexp(x)[0] * x,
               lambda x: math.ldexp(x, 3), lambda x: math.copysign(x, -1.0),
               lambda x: np.nextafter(x, 9.0) * x]


@pytest.mark.parametrize("i", range(len(FLOAT_PARTS)))
def test_float_parts_under_vmap_and_second_order(i):
    f = FLOAT_PARTS[i]
    xs = np.array([0.3, 2.7, 3.4])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(xs), [_fd(f, x) for x in xs], rtol=1e-6)
    g = s2s.grad(f)
    assert s2s.grad(g)(2.7) == pytest.approx(_fd(g, 2.7), rel=1e-5, abs=1e-7)
