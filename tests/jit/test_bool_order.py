"""The jit orders booleans as Python and numpy do: ``False < True``.

A bool is an ``i1`` in LLVM, which a signed comparison reads as -1 for True; the jit
compared bools signed, so ``True > False`` was False and ``np.max``/``np.argmax`` of
a boolean array found False.  Oracles: Python's and numpy's results."""
import operator

import numpy as np
import pytest

import s2s

PAIRS = [(True, False), (False, True), (True, True), (False, False),
         (np.True_, np.False_), (np.False_, np.True_)]


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.gt, operator.ge,
                                operator.eq, operator.ne, max, min])
def test_scalar_bool_comparisons(op):
    f = s2s.jit(lambda a, b: op(a, b))
    for a, b in PAIRS:
        assert f(a, b) == op(a, b), (op, a, b)


MASKS = [np.array([False, True, False]), np.array([True, False]), np.array([False, False]),
         np.array([[False, True], [True, False]])]


@pytest.mark.parametrize("name, fn", [
    ("max", np.max), ("min", np.min), ("argmax", np.argmax), ("argmin", np.argmin),
    ("sort", np.sort), ("argsort", lambda m: np.argsort(m, kind="stable")),
    ("max axis 0", lambda m: np.max(m, axis=0)), ("argmax axis -1", lambda m: np.argmax(m, axis=-1)),
    ("compare", lambda m: m > m[..., ::-1]), ("maximum", lambda m: np.maximum(m, m[..., ::-1])),
    ("first true", lambda m: np.argmax(np.ravel(m) != 0)),
])
def test_bool_array_order(name, fn):
    f = s2s.jit(fn)
    for m in MASKS:
        np.testing.assert_array_equal(f(m), fn(m), err_msg=f"{name} of {m}")
