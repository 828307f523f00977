"""Property-based tests over randomly generated programs (``progen``).

Every generated program is differentiated by s2s and checked against
independent oracles: central finite differences in float64 always (with a
second step size to recognise points where the program is not smooth, e.g.
on a branch threshold), and the complex step when the program is
real-analytic (no comparisons, np.* functions only).  A third property:
emitting the gradient code of one program twice gives the same text.

All hypothesis tests are derandomized, so a CI run is reproducible; the
regression tests at the bottom pin programs that once exposed bugs.
"""
import copy
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import s2s
from s2s import pipeline

from . import progen
from .progen import complex_step, fd, leaves, load

SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       HealthCheck.data_too_large])

BIG = 1e6
floats = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)


def _primal(f, args):
    """f(*args), or reject the example when it overflows or is huge."""
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            y = f(*args)
    except (OverflowError, ValueError, ZeroDivisionError, FloatingPointError,
            RuntimeWarning):
        assume(False)
    assume(np.isfinite(y) and abs(y) < BIG)
    return float(y)


def _close(actual, expected, scale, what, rtol=1e-5, atol=1e-6):
    a_l, e_l = leaves(actual), leaves(expected)
    assert len(a_l) == len(e_l), what
    for a, e in zip(a_l, e_l):
        assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol * scale, err_msg=what)


def _fd_checked(f, args, i, scale):
    """FD gradient at two step sizes; reject points where they disagree (kinks)."""
    g1 = fd(f, args, i, 1e-6)
    g2 = fd(f, args, i, 1e-5)
    for a, b in zip(leaves(g1), leaves(g2)):
        assume(np.allclose(a, b, rtol=1e-4, atol=1e-5 * scale))
    return g1


def _args(prog, data):
    if prog.kind == "array":
        x = np.array(data.draw(st.lists(floats, min_size=prog.size, max_size=prog.size)))
        return (x, data.draw(floats))
    if prog.kind == "dict":
        args = [{k: data.draw(floats) for k in prog.keys}]
        args += [data.draw(floats) for _ in prog.params[1:]]
        return tuple(args)
    return tuple(data.draw(floats) for _ in prog.params)


def check_program(prog, args):
    """The full check of one program at one point; returns nothing, asserts."""
    raw = load(prog.source)

    def f(*a):
        # generated code may update an input array in place (``x += v``)
        return raw(*copy.deepcopy(a))

    y = _primal(f, args)
    scale = 1.0 + abs(y)
    argnums = tuple(range(len(args)))
    what = "\n" + prog.source + f"\nargs={args!r}"
    try:
        val, grads = s2s.value_and_grad(raw, argnums=argnums)(*copy.deepcopy(args))
    except Exception as e:  # report the program with the error
        raise AssertionError(f"s2s failed on {what}\n{type(e).__name__}: {e}") from e
    assert math.isclose(float(val), y, rel_tol=1e-12, abs_tol=1e-12), (
        f"value_and_grad value {val!r} != f(x) {y!r}{what}")
    assert isinstance(grads, tuple) and len(grads) == len(args), what
    g_only = s2s.grad(raw, argnums=argnums)(*copy.deepcopy(args))
    for i in argnums:
        _close(g_only[i], grads[i], scale, f"grad != value_and_grad, argnum {i}{what}",
               rtol=1e-12, atol=1e-14)
    if prog.analytic:
        for i in argnums:
            if isinstance(args[i], dict):
                continue
            cs = complex_step(f, args, i)
            if not all(np.all(np.isfinite(l)) for l in leaves(cs)):
                continue
            _close(grads[i], cs, scale, f"complex step, argnum {i}{what}",
                   rtol=1e-9, atol=1e-10)
    for i in argnums:
        _close(grads[i], _fd_checked(f, args, i, scale), scale,
               f"finite differences, argnum {i}{what}")


@settings(max_examples=60, **SETTINGS)
@given(st.data())
def test_scalar_programs(data):
    prog = data.draw(progen.scalar_program(), label="program")
    check_program(prog, _args(prog, data))


@settings(max_examples=25, **SETTINGS)
@given(st.data())
def test_analytic_scalar_programs(data):
    """Branch-free programs: the complex step is exact, so tolerances are tight."""
    prog = data.draw(progen.scalar_program(analytic=True), label="program")
    check_program(prog, _args(prog, data))


@settings(max_examples=20, **SETTINGS)
@given(st.data())
def test_dict_input_programs(data):
    prog = data.draw(progen.scalar_program(dict_input=True), label="program")
    check_program(prog, _args(prog, data))


@settings(max_examples=50, **SETTINGS)
@given(st.data())
def test_array_programs(data):
    prog = data.draw(progen.array_program(), label="program")
    check_program(prog, _args(prog, data))


def _emit(f, args):
    return pipeline.emit(s2s.grad(f, argnums=tuple(range(len(args)))).specialised(
        list(args))).source


@settings(max_examples=25, **SETTINGS)
@given(st.one_of(progen.scalar_program(), progen.array_program()))
def test_emit_is_deterministic(prog):
    args = ((np.linspace(-1.0, 1.0, prog.size), 0.5) if prog.kind == "array" else
            ({k: 0.5 for k in prog.keys},) + (0.5,) * (len(prog.params) - 1)
            if prog.kind == "dict" else (0.5,) * len(prog.params))
    f = load(prog.source)
    first = _emit(f, args)
    assert _emit(f, args) == first, prog.source
    # the same source loaded again as another module gives the same code too
    assert _emit(load(prog.source), args) == first, prog.source


# ------------------------------------------------------------ regressions
# Programs the generator once found failing, pinned as explicit examples.

REGRESSIONS = [
]


@pytest.mark.parametrize("src,args,kind", REGRESSIONS)
def test_regressions(src, args, kind):
    prog = progen.Program(progen.HEADER + src, [], kind, analytic="if" not in src)
    check_program(prog, args)
