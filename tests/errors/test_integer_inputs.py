"""Issue 19, group 4: JAX's dtype rules in every transform.  A differentiated argument
with only integer/boolean leaves is a TypeError in grad, value_and_grad, jacfwd,
jacrev, hessian (and under vmap and jit); an integer primal with a float tangent (jvp,
the linearized function) is JAX's TypeError; vjp of an integer input is allowed (a
zero cotangent), as in JAX."""
from __future__ import annotations

import numpy as np
import pytest

import s2s


def double(x):
    return x * 2.0


def total(x):
    return np.sum(x * x)


INTS = [3, np.int32(3), True, np.arange(3), np.array([True, False])]


@pytest.mark.parametrize("x", INTS, ids=repr)
@pytest.mark.parametrize("name, transform", [
    ("grad", lambda x: s2s.grad(total)(x)),
    ("value_and_grad", lambda x: s2s.value_and_grad(total)(x)),
    ("jacfwd", lambda x: s2s.jacfwd(double)(x)),
    ("jacrev", lambda x: s2s.jacrev(double)(x)),
    ("jacfwd", lambda x: s2s.hessian(total)(x)),
    ("grad", lambda x: s2s.jit(s2s.grad(total))(x)),
])
def test_integer_differentiated_inputs_are_type_errors(name, transform, x):
    with pytest.raises(TypeError) as info:
        transform(x)
    msg = str(info.value)
    assert msg.startswith(f"{name} requires real") and "argument 0" in msg
    assert "integer" in msg


def test_vmap_of_grad_of_integers_is_a_type_error():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        s2s.vmap(s2s.grad(double))(np.arange(3))


def test_an_integer_argnum_among_floats_is_named():
    with pytest.raises(TypeError, match="jacrev requires real-valued inputs.*argument 1"):
        s2s.jacrev(lambda x, y: x * y, argnums=(0, 1))(2.0, 3)


@pytest.mark.parametrize("primal, tangent", [(3, 1.0), (np.arange(3), np.ones(3)),
                                             (True, 1.0), (3.0, 1), (np.ones(2), np.arange(2))])
def test_jvp_tangent_dtype_must_match_the_primal(primal, tangent):
    with pytest.raises(TypeError) as info:
        s2s.jvp(double, (primal,), (tangent,))
    msg = str(info.value)
    assert "primal and tangent arguments to jvp do not match" in msg and "primal 0" in msg


def test_jvp_accepts_no_tangent_or_float0_for_integer_primals():
    float0 = np.zeros((), dtype=[("float0", "V")]).dtype
    assert s2s.jvp(double, (3,), (None,)) == (6.0, 0.0)
    assert s2s.jvp(double, (3,), (np.zeros((), dtype=float0),))[1] == 0.0
    out, t = s2s.jvp(lambda d: d["x"] * d["n"], ({"x": 2.0, "n": 3},), ({"x": 1.0, "n": None},))
    assert (out, t) == (6.0, 3.0)
    with pytest.raises(TypeError, match="primal 0"):
        s2s.jvp(lambda d: d["x"] * d["n"], ({"x": 2.0, "n": 3},), ({"x": 1.0, "n": 1.0},))


def test_the_linearized_function_checks_tangent_dtypes():
    _, f_jvp = s2s.linearize(double, 3)
    with pytest.raises(TypeError, match="to the linearized function do not match"):
        f_jvp(1.0)
    _, f_jvp = s2s.linearize(double, 3.0)
    assert f_jvp(1.0) == 2.0


def test_vjp_of_an_integer_input_gives_a_zero_cotangent_as_in_jax():
    out, pullback = s2s.vjp(double, 3)
    assert out == 6.0
    (ct,) = pullback(1.0)
    assert ct == 0


@pytest.mark.parametrize("name, transform", [
    ("jacfwd", lambda: s2s.vmap(s2s.jacfwd(double))(np.arange(3))),
    ("jacrev", lambda: s2s.vmap(s2s.jacrev(double))(np.arange(3))),
    ("jacfwd", lambda: s2s.vmap(s2s.hessian(total))(np.arange(6).reshape(2, 3))),
    ("value_and_grad", lambda: s2s.vmap(s2s.value_and_grad(double))(np.arange(3))),
    ("primal and tangent", lambda: s2s.vmap(lambda x: s2s.jvp(double, (x,), (1.0,))[1])(
        np.arange(3))),
])
def test_vmap_of_derivatives_of_integers_is_a_type_error(name, transform):
    with pytest.raises(TypeError, match=f"^{name}"):
        transform()
