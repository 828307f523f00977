"""A numpy function passed to a transform directly is a one-call function
(``jit(np.sum)``, ``grad(np.floor)``), as in JAX: what a call leaves out keeps numpy's
default (a constant to the jit), and a function without a derivative rule reads its
parameters from its own signature.  Oracles: numpy's results and closed-form
derivatives (zero for the piecewise-constant functions)."""
import numpy as np
import pytest

import s2s

X = np.array([[1.0, 3.0, -2.0], [0.5, -4.0, 2.5]])
CASES = [np.sum, np.max, np.min, np.mean, np.argmax, np.argmin, np.sort, np.cumsum,
         np.prod, np.floor, np.sign, np.abs, np.ravel]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_jit_of_a_numpy_function(fn):
    np.testing.assert_array_equal(s2s.jit(fn)(X), fn(X))
    np.testing.assert_array_equal(s2s.jit(fn)(X[0]), fn(X[0]))


def test_jit_of_a_numpy_function_with_its_optional_arguments_passed():
    assert s2s.jit(np.argmax)(X, None) == np.argmax(X)
    np.testing.assert_array_equal(s2s.jit(np.sort)(X, None), np.sort(X, None))
    # an axis passed in is a run-time value (JAX: traced, refused): numpy runs the call
    np.testing.assert_array_equal(s2s.jit(np.sum)(X, axis=0), np.sum(X, axis=0))
    np.testing.assert_array_equal(s2s.jit(np.cumsum)(X, 1), np.cumsum(X, 1))


@pytest.mark.parametrize("fn", [np.floor, np.sign, np.ceil, np.rint], ids=lambda f: f.__name__)
def test_grad_of_a_piecewise_constant_numpy_function(fn):
    assert s2s.grad(fn)(1.3) == 0.0
    np.testing.assert_array_equal(s2s.vmap(s2s.grad(fn))(X[0]), np.zeros(3))


def test_grad_of_an_integer_valued_function_is_refused():
    with pytest.raises(TypeError, match="real-valued outputs"):
        s2s.grad(np.argmax)(X[0])
