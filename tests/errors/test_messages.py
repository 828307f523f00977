"""Issue 19, group 8: bad input is described in the user's words (which argument,
which value, what to do instead), when the transform is made where the problem is
visible then: argnums of the wrong type or out of range and non-callables for every
transform, has_aux on functions that do not return a pair, object arrays, C functions
called through ctypes, ``jit`` of a numpy function."""
from __future__ import annotations

import ctypes
import ctypes.util
import inspect

import math

import numpy as np
import pytest

import s2s
from s2s.errors import UnsupportedSyntaxError

HERE = __file__
ARGNUM_TRANSFORMS = ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian"]


def square(x):
    return x * x


@pytest.mark.parametrize("name", ARGNUM_TRANSFORMS)
@pytest.mark.parametrize("argnums", [1.5, "0", None, [0, 1.0], True])
def test_argnums_of_the_wrong_type_are_refused_when_the_transform_is_made(name, argnums):
    with pytest.raises(TypeError) as info:
        getattr(s2s, name)(square, argnums=argnums)
    msg = str(info.value)
    assert msg.startswith(f"{name}: argnums must be an int or a non-empty tuple of ints")
    assert repr(argnums) in msg


@pytest.mark.parametrize("name", ARGNUM_TRANSFORMS)
@pytest.mark.parametrize("argnums", [3, -2, (0, 5)])
def test_argnums_out_of_range_are_refused_when_the_transform_is_made(name, argnums):
    with pytest.raises(ValueError) as info:
        getattr(s2s, name)(square, argnums=argnums)
    msg = str(info.value)
    assert "out of range for square, which takes 1 positional argument" in msg


@pytest.mark.parametrize("name", ARGNUM_TRANSFORMS)
def test_an_empty_argnums_is_refused(name):
    with pytest.raises(ValueError, match="non-empty tuple"):
        getattr(s2s, name)(square, argnums=())


@pytest.mark.parametrize("name", ARGNUM_TRANSFORMS + ["vmap", "jit", "checkpoint"])
@pytest.mark.parametrize("value", [5, "f", np.ones(2)])  # (None: the decorator form)
def test_a_non_callable_is_refused_when_the_transform_is_made(name, value):
    with pytest.raises(TypeError) as info:
        getattr(s2s, name)(value)
    msg = str(info.value)
    assert f"{name} expects a callable" in msg and type(value).__name__ in msg


@pytest.mark.parametrize("call", [lambda v: s2s.jvp(v, (1.0,), (1.0,)),
                                  lambda v: s2s.vjp(v, 1.0), lambda v: s2s.linearize(v, 1.0)],
                         ids=["jvp", "vjp", "linearize"])
def test_a_non_callable_in_the_one_call_transforms(call):
    with pytest.raises(TypeError, match="expects a callable"):
        call(5)


def returns_a_scalar(x):
    return x * x


def returns_three(x):
    return x * x, x, 1.0


HAS_AUX = {
    "grad": lambda f: s2s.grad(f, has_aux=True)(2.0),
    "value_and_grad": lambda f: s2s.value_and_grad(f, has_aux=True)(2.0),
    "jacfwd": lambda f: s2s.jacfwd(f, has_aux=True)(2.0),
    "jacrev": lambda f: s2s.jacrev(f, has_aux=True)(2.0),
    "hessian": lambda f: s2s.hessian(f, has_aux=True)(2.0),
    "jvp": lambda f: s2s.jvp(f, (2.0,), (1.0,), has_aux=True),
    "vjp": lambda f: s2s.vjp(f, 2.0, has_aux=True),
}


@pytest.mark.parametrize("transform", sorted(HAS_AUX))
@pytest.mark.parametrize("fn", [returns_a_scalar, returns_three])
def test_has_aux_needs_a_pair(transform, fn):
    with pytest.raises(TypeError) as info:
        HAS_AUX[transform](fn)
    msg = str(info.value)
    assert "has_aux=True) requires" in msg and f"{fn.__name__} to return a pair" in msg


def test_has_aux_names_the_return_line():
    with pytest.raises(TypeError) as info:
        s2s.grad(returns_a_scalar, has_aux=True)(2.0)
    line = inspect.getsourcelines(returns_a_scalar)[1] + 1
    notes = "".join(getattr(info.value, "__notes__", [])) + str(info.value)
    assert f"{HERE}:{line}:" in notes


@pytest.mark.parametrize("name", ["grad", "jacfwd", "jacrev"])
def test_an_object_array_is_described_as_such(name):
    with pytest.raises(TypeError) as info:
        getattr(s2s, name)(lambda x: np.sum(x * x))(np.array([1.0, 2.0], dtype=object))
    msg = str(info.value)
    assert "dtype object" in msg and "np.asarray(x, dtype=float)" in msg
    assert "integer/boolean" not in msg


def test_a_ctypes_call_on_a_differentiated_value_is_located():
    libm = ctypes.CDLL(ctypes.util.find_library("m") or None)
    cos = libm.cos
    cos.restype, cos.argtypes = ctypes.c_double, [ctypes.c_double]
    holder = type("Lib", (), {})()
    holder.cos = cos

    def f(x):
        return holder.cos(x) * x

    line = inspect.getsourcelines(f)[1] + 1
    for transform in (lambda: s2s.grad(f)(1.0), lambda: s2s.jvp(f, (1.0,), (1.0,))):
        with pytest.raises(UnsupportedSyntaxError) as info:
            transform()
        msg = str(info.value)
        assert f"{HERE}:{line}:" in msg and "ctypes" in msg and "custom_jvp" in msg


def test_jit_of_a_numpy_function_compiles_it():
    assert s2s.jit(np.sin)(0.5) == pytest.approx(np.sin(0.5))
    np.testing.assert_allclose(s2s.jit(np.add)(np.ones(2), 2.0), [3.0, 3.0])


def test_grad_of_a_per_example_loop_of_vmap():
    """``vmap`` runs ``np.gradient`` once per example (``rt.batch_loop``); the gradient of
    that loop is the loop of ``np.gradient``'s derivatives (it was refused), against
    differences.  A function without a derivative rule run that way is refused with the
    record's reason and the user's line."""
    from s2s.errors import NoRuleError

    def f(x):
        return np.sum(np.gradient(x) ** 2)

    xs = np.random.default_rng(0).uniform(size=(3, 6))
    got = s2s.grad(lambda X: np.sum(s2s.vmap(f)(X)))(xs)
    h = 1e-6
    for row, x in zip(got, xs):
        want = [(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(6)]
        np.testing.assert_allclose(row, want, rtol=1e-6, atol=1e-8)
    opaque = np.frompyfunc(math.sin, 1, 1)  # a ufunc of Python objects: no rule of any kind

    def g(x):
        return np.sum(opaque(x).astype(float) ** 2)

    with pytest.raises(NoRuleError, match=r"once per example.*no derivative rule") as info:
        s2s.grad(lambda X: np.sum(s2s.vmap(g, fallback="loop")(X)))(xs)
    assert "test_messages.py" in str(info.value)
