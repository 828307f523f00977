"""``try``/``except``/``raise`` in both modes (``s2s/ad/tries.py``).

Oracles: the cookbook's printed numbers for its try/except example
(shared/seeds/jax-autodiff-cookbook-part8.txt: ``vjp(f, 4.)`` pulls 1.0 back
to π, ``vjp(f, 2.)`` to 24), central finite differences, and forward mode.
"""
import math

import numpy as np
import pytest

import s2s


def cookbook(x):
    try:
        if x < 3:
            return 2 * x ** 3
        else:
            raise ValueError
    except ValueError:
        return np.pi * x


def test_the_cookbook_example_in_both_modes():
    y, f_vjp = s2s.vjp(cookbook, 4.)
    assert y == pytest.approx(4 * np.pi) and f_vjp(1.) == pytest.approx((np.pi,))
    y, f_vjp = s2s.vjp(cookbook, 2.)
    assert y == 16. and f_vjp(1.) == pytest.approx((24.,))
    assert s2s.jvp(cookbook, (4.,), (1.,)) == pytest.approx((4 * np.pi, np.pi))
    assert s2s.jvp(cookbook, (2.,), (1.,)) == pytest.approx((16., 24.))


def partial_body(x, y):
    s = x * 2.0
    try:
        s = s * y
        z = 1.0 / (y - 1.0)      # ZeroDivisionError when y == 1: s * y already ran
        s = s + z * x
    except ZeroDivisionError:
        s = s + x ** 2
    else:
        s = s * 3.0
    return s


def math_domain(x, a):
    r = x * 2.0
    try:
        r = r * math.sqrt(a - x)   # ValueError (math domain error) when x > a
        r = r + x
    except ValueError:
        r = x * x * 5.0 + r
    return r + np.sin(x)


def handler_overwrites(x):
    t = x * 3.0
    try:
        t = t * t
        if t > 1.0:
            raise ValueError("big")
        t = t + 1.0
    except ValueError:
        t = t * x
    return t


def fd(f, args, i, eps=1e-6):
    up, down = list(args), list(args)
    up[i] = up[i] + eps
    down[i] = down[i] - eps
    return (f(*up) - f(*down)) / (2 * eps)


@pytest.mark.parametrize("f, args", [
    (partial_body, (0.7, 2.0)),          # no exception: body and else
    (partial_body, (0.7, 1.0)),          # exception after the first assignment
    (handler_overwrites, (0.2,)),        # no exception
    (handler_overwrites, (0.5,)),        # raise after an assignment, handler reads it
    (math_domain, (0.3, 1.0)),
    (math_domain, (0.3, 0.1)),           # an error raised inside a call: the handler
], ids=["no-exception", "exception-midway", "small", "raise-in-if", "sqrt", "sqrt-error"])
def test_gradient_matches_differences_and_forward_mode(f, args):
    scalar = tuple(i for i, a in enumerate(args) if np.ndim(a) == 0)
    grads = s2s.grad(f, argnums=scalar)(*args)
    for g, i in zip(grads, scalar):
        if not (f is partial_body and i == 1 and args[1] == 1.0):  # y = 1 is the kink
            assert math.isclose(g, fd(f, args, i), rel_tol=1e-6, abs_tol=1e-8)
        tangents = tuple(1.0 if j == i else (0.0 if np.ndim(a) == 0 else np.zeros_like(a))
                         for j, a in enumerate(args))
        assert math.isclose(g, s2s.jvp(f, args, tangents)[1], rel_tol=1e-12, abs_tol=1e-14)
    value, _ = s2s.value_and_grad(f, argnums=scalar)(*args)
    assert value == pytest.approx(f(*args), rel=1e-13)


def test_pullback_reused_and_second_order():
    out, pull = s2s.vjp(handler_overwrites, 0.5)
    assert pull(1.0) == pull(1.0) and pull(2.0)[0] == pytest.approx(2 * pull(1.0)[0])
    g = s2s.grad(handler_overwrites)
    x = 0.5
    second = (g(x + 1e-5) - g(x - 1e-5)) / 2e-5
    assert s2s.jvp(g, (x,), (1.0,))[1] == pytest.approx(second, rel=1e-6)


def raise_after_assignment(x):
    y = x * 1.0
    try:
        y = y * 0.5
        raise ValueError
    except ValueError:
        y = np.sin(y)
    return y


def partial_body_of_x(x):
    return partial_body(x, 1.0)


@pytest.mark.parametrize("f, x", [
    (raise_after_assignment, 0.9423),
    (handler_overwrites, 0.5),      # raise in an if; the handler reads what the body set
    (handler_overwrites, 0.2),      # no exception
    (partial_body_of_x, 0.7),
], ids=["raise", "raise-in-if", "no-exception", "exception-midway"])
def test_reverse_over_reverse(f, x):
    # grad(grad(f)): the gradient code's handler pops what its body pushed, so the
    # second adjoint must reach the body's assignments through the handler (it once
    # gave 0 here: the handler's needs did not flow into the body)
    g = s2s.grad(f)
    second = (g(x + 1e-5) - g(x - 1e-5)) / 2e-5
    assert s2s.grad(g)(x) == pytest.approx(second, rel=1e-6, abs=1e-9)
    assert s2s.grad(g)(x) == pytest.approx(s2s.jvp(g, (x,), (1.0,))[1], rel=1e-12)


def try_in_loop(x):
    s = x
    for i in range(3):
        try:
            s = s * x
        except ValueError:
            s = s + 1.0
    return s


def try_with_finally(x):
    try:
        y = x * 2.0
    finally:
        y = x * 3.0
    return y


@pytest.mark.parametrize("f", [try_in_loop, try_with_finally], ids=lambda f: f.__name__)
def test_a_try_inside_a_loop_and_finally(f):
    # more of both in test_control_returns.py
    for x in (0.5, 1.3):
        g = s2s.grad(f)(x)
        assert math.isclose(g, fd(f, (x,), 0), rel_tol=1e-6)
        assert math.isclose(g, s2s.jvp(f, (x,), (1.0,))[1], rel_tol=1e-12)
