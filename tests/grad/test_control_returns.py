"""``return`` anywhere, ``try`` inside loops and ``finally``, in both modes.

``passes/single_exit.py`` turns a return inside a loop (or a ``try``) into a
result, a ``returned`` flag and a ``break``; ``passes/loop_jumps.py`` turns the
break into a flag the tape records; ``ad/tries.py`` records, per iteration,
how far a ``try`` body got and which handler ran.

Oracles (independent of s2s): central finite differences in float64 of the
function (first order) and of s2s's gradient (second order), checked to be
smooth at each point by two step sizes; the jvp/vjp dot-product test between
forward and reverse mode; the cookbook's printed numbers for its try/except
example.  Every case runs at several points so that each path (the early
return, the exception, falling through) is taken at one of them; the
``paths`` test checks that it is.
"""
import math

import numpy as np
import pytest

import s2s
from s2s.emit.load import load
from s2s.emit.python import emit_function
from s2s.frontend.lower import lower
from s2s.ir import nodes as ir
from s2s.passes.single_exit import single_exit

# --- return inside loops ------------------------------------------------------------------


def return_in_for(x):
    for i in range(5):
        x = x * 1.1
        if x > 3.0:
            return x * 2
    return x


def return_in_while(x):
    n = 0
    while x < 10.0:
        x = x * 1.7 + 0.1
        n += 1
        if n > 3:
            return np.sin(x) + x
    else:
        x = x - 1.0
    return x * x


def return_in_nested_loops(x):
    s = x
    for i in range(3):
        for j in range(3):
            s = s * x + 0.1
            if s > 2.0:
                return s * 3.0
        s = s + 1.0
    s = s * 0.5
    return s


def return_from_for_else(x):
    for i in range(3):
        for j in range(3):
            x = x * 1.2 + 0.05 * j
            if x > 2.5:
                return x * x
        else:
            x = x + 0.1
    else:
        return -x
    return x


def return_with_break_and_continue(x):
    s = x
    for i in range(6):
        if i == 1:
            continue
        s = np.tanh(s) * 2.0 + x
        if s > 5.0:
            break
        if s * x > 1.5:
            return s * i
    return s - x


def return_of_an_array_value(x):
    y = x * 1.0
    for i in range(4):
        y = np.sin(y) * 2.0
        if np.sum(y) > 1.5:
            return np.sum(y * y)
    return np.sum(y)


def helper_returning_in_a_loop(v, n):
    for i in range(n):
        v = v * 1.3
        if v > 2.0:
            return v * v
    return v


def calls_a_helper_in_a_loop(x):
    s = helper_returning_in_a_loop(x, 4) * 0.5
    for k in range(3):
        s = s + helper_returning_in_a_loop(x + k * 0.1, 3)
    return s


# --- try inside loops, finally, returns inside try ----------------------------------------


def try_in_loop(x):
    s = x
    for i in range(4):
        try:
            s = s * 1.7
            if s > 2.0:
                raise ValueError
            s = s + x * x
        except ValueError:
            s = np.sin(s) + x
    return s


def try_in_loop_else_finally(x):
    s = x
    for i in range(4):
        try:
            t = s * x
            if t > 1.0:
                raise ValueError
            s = t + 0.5
        except ValueError:
            s = s * 0.5 + t
        else:
            s = s * 1.1
        finally:
            s = s + 0.1 * x
    return s


def error_inside_a_call_in_loop(x):
    s = 0.0
    for i in range(5):
        try:
            s = s + math.sqrt(1.5 - x * i)   # ValueError once x * i > 1.5
        except ValueError:
            s = s * x
    return s


def try_in_while(x):
    s = x
    n = 0
    while n < 6:
        n += 1
        try:
            s = s * x + 0.3
            if s > 1.0:
                raise ArithmeticError
        except ArithmeticError:
            s = s / 2.0
    return s


def return_in_try_in_loop(x):
    s = x
    for i in range(5):
        try:
            s = s * 1.5
            if s > 2.0:
                return s * x
        except ValueError:
            s = s + 1.0
    return s


def return_in_handler_in_loop(x):
    s = x
    for i in range(5):
        try:
            s = s * 1.5
            if s > 2.0:
                raise ValueError
            s = s + 0.1 * x
        except ValueError:
            return s * x + 1.0
    return s


def break_in_try(x):
    s = x
    for i in range(5):
        try:
            s = s * 1.5
            if s > 2.0:
                break
            s = s + x
        except ValueError:
            s = 0.0
        else:
            s = s * 0.9
    return s


def return_in_try_with_finally(x):
    s = x
    for i in range(4):
        try:
            s = s * 1.4
            if s > 2.0:
                return s
        finally:
            s = s + x
    return s * 3.0


def finally_after_a_return(x):
    try:
        y = x * 2.0
        if y > 1.0:
            return y * y
    finally:
        x = x * 5.0
    return x


def return_in_try_that_may_fall_through(x):
    try:
        if x > 0.5:
            return x * 3.0
        y = np.exp(x)
    except ValueError:
        y = x
    return y * y


def break_in_the_else_of_an_inner_loop(x):
    s = x
    for i in range(4):
        for j in range(2):
            s = s * 1.3
            if s > 100.0:
                break
        else:
            if s > 1.0:
                break
        s = s + x
    return s


# --- loops inside try -------------------------------------------------------------------

def loop_in_try(x):
    s = x
    try:
        for i in range(5):
            s = s * 1.5 + 0.1
            if s > 2.0:
                raise ValueError
            s = s + x * 0.1
    except ValueError:
        s = s * x
    return s


def for_else_and_continue_in_try(x):
    s = x
    try:
        t = s * 2.0
        for i in range(4):
            s = s * t
            if i == 2:
                continue
            s = np.sin(s) + x
        else:
            s = s + 1.0
        s = s * 2.0
    except ValueError:
        s = s + x
    return s


def error_inside_a_call_in_a_loop_in_try(x):
    s = 0.0
    try:
        for i in range(5):
            s = s + math.sqrt(1.5 - x * i) * x
    except ValueError:
        s = s * x
    return s


def nested_loops_in_try(x):
    s = x
    try:
        for i in range(3):
            for j in range(3):
                s = s * 1.2 + x
                if s > 3.0:
                    raise ValueError
            s = s - 0.1
    except ValueError:
        s = s * s
    return s


def while_in_try(x):
    s = x
    try:
        while s < 3.0:
            s = s * 1.5 + x
            if s * x > 2.0:
                raise ValueError
    except ValueError:
        s = s - x * x
    return s


def while_else_continue_break_in_try(x):
    s = x
    n = 0
    try:
        while n < 4:
            n += 1
            if n == 2:
                continue
            s = np.sin(s) * 2.0 + x
            if s > 2.2:
                break
        else:
            s = s * 3.0
        s = s + 1.0
    except ValueError:
        s = s * x
    return s


def error_inside_a_call_in_a_while_in_try(x):
    s = 0.0
    i = 0
    try:
        while i < 5:
            s = s + math.sqrt(1.5 - x * i) * x
            i += 1
    except ValueError:
        s = s * x
    return s


def while_in_handler(x):
    s = x
    try:
        s = s * 2.0
        if s > 1.0:
            raise ValueError
    except ValueError:
        k = 0
        while k < 3:
            s = s * x
            k += 1
    return s


def loop_in_try_in_loop(x):
    s = x
    for k in range(2):
        try:
            for i in range(3):
                s = s * 1.3 + x
                if s > 2.5:
                    raise ValueError
        except ValueError:
            s = s * 0.5
    return s


def return_in_loop_in_try(x):
    s = x
    try:
        for i in range(4):
            s = s * 1.5
            if s > 2.0:
                return s * x
    except ValueError:
        s = 0.0
    return s


def cookbook(x):
    try:
        if x < 3:
            return 2 * x ** 3
        else:
            raise ValueError
    except ValueError:
        return np.pi * x


POINTS = [0.05, 0.31, 0.73, 1.21, 2.93]

CASES = [
    # returns inside loops
    return_in_for, return_in_while, return_in_nested_loops, return_from_for_else,
    return_with_break_and_continue, calls_a_helper_in_a_loop,
    # try inside loops, finally, returns and jumps inside try
    try_in_loop, try_in_loop_else_finally, error_inside_a_call_in_loop, try_in_while,
    return_in_try_in_loop, return_in_handler_in_loop, break_in_try,
    return_in_try_with_finally, finally_after_a_return, return_in_try_that_may_fall_through,
    break_in_the_else_of_an_inner_loop,
    # loops inside try
    loop_in_try, for_else_and_continue_in_try, error_inside_a_call_in_a_loop_in_try,
    nested_loops_in_try, while_in_try, while_else_continue_break_in_try,
    error_inside_a_call_in_a_while_in_try, while_in_handler, loop_in_try_in_loop,
    return_in_loop_in_try,
    cookbook,
]


def _id(v):
    return getattr(v, "__name__", "")


def _diff(f, x, h):
    return (f(x + h) - f(x - h)) / (2 * h)


def _smooth(f, x, h):
    """Differences with steps h and 10 h agree: no branch switches near x."""
    a, b = _diff(f, x, h), _diff(f, x, 10 * h)
    return abs(a - b) <= 1e-4 * (1 + abs(a))


@pytest.mark.parametrize("f", CASES, ids=_id)
@pytest.mark.parametrize("x", POINTS)
def test_first_order_in_both_modes_matches_differences(f, x):
    assert _smooth(f, x, 1e-6), "pick points away from the branch switches"
    fd = _diff(f, x, 1e-6)
    value, g = s2s.value_and_grad(f)(x)
    assert value == pytest.approx(f(x), rel=1e-13)
    assert g == pytest.approx(fd, rel=1e-6, abs=1e-7)
    y, t = s2s.jvp(f, (x,), (1.0,))
    assert y == pytest.approx(f(x), rel=1e-13)
    assert t == pytest.approx(fd, rel=1e-6, abs=1e-7)
    out, pull = s2s.vjp(f, x)
    # dot product: <pull(ct), t> = <ct, jvp(t)> for a random tangent and cotangent
    rng = np.random.default_rng(7)
    tan, ct = float(rng.normal()), float(rng.normal())
    assert pull(ct)[0] * tan == pytest.approx(ct * s2s.jvp(f, (x,), (tan,))[1], rel=1e-12)
    assert pull(ct) == pull(ct)  # popping the tape changes nothing


@pytest.mark.parametrize("f", CASES, ids=_id)
@pytest.mark.parametrize("x", POINTS)
def test_second_order_matches_differences_of_the_gradient(f, x):
    g = s2s.grad(f)
    assert _smooth(g, x, 1e-5), "pick points away from the branch switches"
    fd = _diff(g, x, 1e-5)
    assert s2s.grad(g)(x) == pytest.approx(fd, rel=1e-5, abs=1e-6)
    assert float(s2s.hessian(f)(x)) == pytest.approx(fd, rel=1e-5, abs=1e-6)
    assert s2s.jvp(g, (x,), (1.0,))[1] == pytest.approx(fd, rel=1e-5, abs=1e-6)


def test_an_array_value_returned_from_a_loop():
    x = np.array([0.3, -0.2, 0.5])
    for scale in (0.2, 1.0):  # falls through / returns from inside the loop
        xs = x * scale
        g = s2s.grad(return_of_an_array_value)(xs)
        fd = np.array([_diff(lambda v, i=i: return_of_an_array_value(
            xs + v * np.eye(3)[i]), 0.0, 1e-6) for i in range(3)])
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
        tan = np.array([0.7, -1.1, 0.4])
        assert s2s.jvp(return_of_an_array_value, (xs,), (tan,))[1] == pytest.approx(
            float(g @ tan), rel=1e-12)


def aux_from_a_loop(x):
    for i in range(5):
        x = x * 1.3
        if x > 2.0:
            return x * x, {"i": i, "x": x}
    return x, {"i": -1, "x": x}


def pair_from_a_loop(x, y):
    for i in range(4):
        x = x * y
        if x > 2.0:
            return (x, y * x)
    return (x + y, x)


@pytest.mark.parametrize("x", [0.3, 1.9])  # falls through / returns in the loop
def test_containers_returned_from_a_loop(x):
    (v, aux), g = s2s.value_and_grad(aux_from_a_loop, has_aux=True)(x)
    assert (v, aux) == aux_from_a_loop(x)
    assert g == pytest.approx(_diff(lambda u: aux_from_a_loop(u)[0], x, 1e-6), rel=1e-6)
    out, pull = s2s.vjp(pair_from_a_loop, x, 1.1)
    assert out == pair_from_a_loop(x, 1.1)
    ct = (0.7, -0.3)
    for i, g in enumerate(pull(ct)):  # dot product with forward mode, per argument
        tangent = (1.0, 0.0) if i == 0 else (0.0, 1.0)
        t = s2s.jvp(pair_from_a_loop, (x, 1.1), tangent)[1]
        assert g == pytest.approx(ct[0] * t[0] + ct[1] * t[1], rel=1e-12)


def test_the_cookbook_example():
    y, pull = s2s.vjp(cookbook, 4.)
    assert y == pytest.approx(4 * np.pi) and pull(1.) == pytest.approx((np.pi,))
    y, pull = s2s.vjp(cookbook, 2.)
    assert y == 16. and pull(1.) == pytest.approx((24.,))


# --- the paths the points take ------------------------------------------------------------

def _exit_line(f, x):
    """The line of the ``return`` through which f(x) leaves."""
    import sys
    seen = []

    def profile(frame, event, arg):
        if event == "return" and frame.f_code is f.__code__:
            seen.append(frame.f_lineno)
    sys.setprofile(profile)
    try:
        f(x)
    finally:
        sys.setprofile(None)
    return seen[-1]


@pytest.mark.parametrize("f", [return_in_for, return_in_while, return_in_nested_loops,
                               return_from_for_else, return_with_break_and_continue,
                               return_in_try_in_loop, return_in_handler_in_loop,
                               return_in_try_with_finally, finally_after_a_return,
                               return_in_try_that_may_fall_through,
                               return_in_loop_in_try], ids=_id)
def test_the_points_leave_through_more_than_one_return(f):
    assert len({_exit_line(f, x) for x in POINTS}) >= 2


@pytest.mark.parametrize("f, raises", [
    (try_in_loop, ValueError), (error_inside_a_call_in_loop, ValueError),
    (try_in_while, ArithmeticError), (loop_in_try, ValueError),
    (error_inside_a_call_in_a_loop_in_try, ValueError), (nested_loops_in_try, ValueError),
    (loop_in_try_in_loop, ValueError), (while_in_try, ValueError),
    (error_inside_a_call_in_a_while_in_try, ValueError)], ids=_id)
def test_the_points_take_the_handler_at_some_points_only(f, raises):
    import inspect
    lines = inspect.getsource(f).splitlines()
    # count the handler's runs with a copy of the function that counts them
    at = next(i for i, line in enumerate(lines) if f"except {raises.__name__}:" in line)
    indent = lines[at + 1][:len(lines[at + 1]) - len(lines[at + 1].lstrip())]
    lines.insert(at + 1, indent + "hits.append(1)")
    ns = {"np": np, "math": math, "hits": []}
    exec("\n".join(lines), ns)
    counts = []
    for x in POINTS:
        ns["hits"].clear()
        ns[f.__name__](x)
        counts.append(len(ns["hits"]))
    assert 0 in counts and any(c > 0 for c in counts), counts


# --- the shape of the generated code ------------------------------------------------------

def test_single_exit_turns_a_return_in_a_loop_into_a_flag_and_a_break():
    func = single_exit(lower(return_in_nested_loops)[0])
    returns = [s for s in ir.walk(func.body) if isinstance(s, ir.Return)]
    assert returns == [func.body[-1]]
    breaks = [s for s in ir.walk(func.body) if isinstance(s, ir.Break)]
    assert len(breaks) == 2  # the return, and leaving the outer loop after the inner one
    gen = load(emit_function(func), func.name)
    for x in POINTS:
        assert gen(x) == return_in_nested_loops(x)


def test_the_tape_of_a_try_in_a_loop_records_two_ints_per_iteration():
    # steps_done and handler go on ctrl once per iteration; no flag per assignment
    g = s2s.grad(try_in_loop)
    g(0.73)
    src = next(v[0] for v in g.cache.values() if isinstance(v, tuple))
    import inspect
    text = inspect.getsource(src)
    assert text.count("ctrl = (") == 2 + 1  # and ctrl = () at the start
    assert "ctrl = (steps_done, ctrl)" in text and "ctrl = (handler, ctrl)" in text
    assert "if steps_done >= " in text and "if handler == 0:" in text


# --- still unsupported: clear errors -------------------------------------------------------

def return_in_finally(x):
    try:
        x = x * 2.0
    finally:
        return x * 3.0


def break_in_finally(x):
    for i in range(3):
        try:
            x = x * 2.0
        finally:
            break
    return x


def nested_try(x):
    try:
        try:
            x = x * 2.0
        except ValueError:
            x = x + 1.0
        x = x * 3.0
    except ArithmeticError:
        x = x - 1.0
    return x


@pytest.mark.parametrize("f, what", [
    (return_in_finally, "'return' inside 'finally'"),
    (break_in_finally, "'break' inside 'finally'"),
    (nested_try, "a nested 'try'"),
], ids=_id)
def test_what_reverse_mode_does_not_take_is_a_clear_error(f, what):
    with pytest.raises(s2s.UnsupportedSyntaxError, match=what) as info:
        s2s.grad(f)(0.5)
    assert f.__code__.co_filename in str(info.value)
