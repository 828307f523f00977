"""Loops over tuples and dicts whose items differ in type compile (unrolled).

Compiled code holds a tuple as a struct, so ``t[k]`` of a run-time ``k`` has no one
type when the items differ; a loop whose counter indexes such a tuple over a range
known when compiling is unrolled (``backend/llvm/passes/tuple_loops.py``).  Each
case is checked against the same function run by Python.
"""
import numpy as np
import pytest

import s2s
from s2s.errors import UnsupportedSyntaxError
from tests.compose.finite_differences import fd_gradient


def items_by_name(x, params):
    s = 0.0
    for name, p in params.items():
        if name == "w":
            s = s + np.sum(p * x)
        else:
            s = s + p
    return s


def enumerate_mixed(x):
    t = (x, x[0], 2)
    out = 0.0
    for i, v in enumerate(t):
        out = out + i * np.sum(v)
    return out, i


def zip_mixed(x):
    a = (x[0], x[1:])
    b = (2.0, np.ones(2))
    s = 0.0
    for u, w in zip(a, b):
        s = s + np.sum(u * w)
    return s


def keys_in_outer_loop(x):
    d = {"a": x[0], "b": x[1:] * 2.0}
    s = 0.0
    for step in range(3):
        for k in d:
            s = s + np.sum(d[k]) * step
    return s


def new_dict_from_items(x):
    d = {"a": x[0], "b": x[1:] * 2.0}
    out = {}
    for k, v in d.items():
        out[k] = v * 2
    return out["a"] + np.sum(out["b"])


def break_continue_else(x, limit):
    t = (x[0], x[1:], 3.0, x * 2.0)
    s = 0.0
    for v in t:
        if np.sum(v) < 0:
            continue
        if np.sum(v) > limit:
            break
        s = s + np.sum(v)
    else:
        s = s * 10.0
    return s


def counter_after_loop(x):
    t = (x[0], x[1:])
    for v in t:
        pass
    return np.sum(v) + x[0]


def values_of_argument(t):
    s = 0.0
    for v in t:
        s = s + np.sum(v * v)
    return s


def float_and_numpy_float(x):
    t = (x[0], x[1] * 2.0, 3.0)
    s = 0.0
    for v in t:
        s = s + v ** 2
    return s


X = np.array([0.3, -0.5, 0.7])
CASES = [
    (items_by_name, (X, {"w": X * 2, "b": 1.5})),
    (enumerate_mixed, (X,)),
    (zip_mixed, (X,)),
    (keys_in_outer_loop, (X,)),
    (new_dict_from_items, (X,)),
    (break_continue_else, (X, 100.0)),  # runs to the end: else
    (break_continue_else, (X, 1.0)),  # breaks
    (counter_after_loop, (X,)),
    (values_of_argument, ((X, 2.0, np.ones((2, 2))),)),
    (float_and_numpy_float, (X,)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_jit_matches_python(fn, args):
    want = fn(*args)
    got = s2s.jit(fn)(*args)
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float), rtol=1e-12)


@pytest.mark.parametrize("fn", [float_and_numpy_float],
                         ids=lambda f: f.__name__)
def test_jit_grad_against_finite_differences(fn):
    def scalar(x):
        out = fn(x)
        return out[0] if isinstance(out, tuple) else out

    def f(x):
        return scalar(x)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(X), fd_gradient(scalar, X), rtol=1e-6,
                               atol=1e-8)


def test_variable_index_of_mixed_tuple_names_the_line():
    def f(x, k):
        t = (x[0], x[1:])
        return np.sum(t[k])

    with pytest.raises(UnsupportedSyntaxError, match=r"indexing a tuple .* with a variable"):
        s2s.jit(f)(X, 1)
