"""``import`` statements inside transformed functions: the names bound to what Python
binds (a module, a submodule, a function), read as program constants as module-level
imports are, in every transform, in nested lambdas, and in the jit.

Oracle: central differences of the function run by Python (``fd_grad``); the refusals
(relative imports, a name the function also assigns, a name imported as two objects) and a missing module's
``ImportError`` at the import's line.
"""
import numpy as np
import pytest

import s2s

from .oracles import fd_grad

X = np.array([0.3, 0.5, 0.7])


def imports_everywhere(x):
    import math
    import numpy.linalg as la
    from math import exp as e, sqrt
    from numpy import tanh
    import numpy.fft  # binds 'numpy'
    scale = (lambda t: math.cos(t) * e(t))(x[0])  # a nested function reads them too
    scale = scale + numpy.sum(x * 0.0)
    return math.sin(x[0]) * e(x[1]) + sqrt(x[2]) + la.norm(x) + np.sum(tanh(x)) * scale


def import_in_a_branch(x):
    if x[0] > 0:
        from numpy import sinh
        return np.sum(sinh(x) ** 2)
    return np.sum(x)


@pytest.mark.parametrize("f", [imports_everywhere, import_in_a_branch])
def test_gradients_through_local_imports(f):
    want = fd_grad(f, (X,), 0)
    np.testing.assert_allclose(s2s.grad(f)(X), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(X), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2s.jit(f)(X), f(X), rtol=1e-13)
    xs = np.stack([X, X * 1.1])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(xs), np.stack([fd_grad(f, (x,), 0)
                                                                    for x in xs]),
                               rtol=1e-6, atol=1e-9)
    tangent = s2s.jvp(f, (X,), (np.ones(3),))[1]
    np.testing.assert_allclose(tangent, want.sum(), rtol=1e-6)


def relative(x):
    from . import oracles
    return x


def rebinds(x):
    import math
    math = 3.0
    return x * math


def two_objects(x):
    if x > 0:
        from numpy import sinh as act
    else:
        from numpy import cosh as act
    return act(x)


def missing(x):
    import s2s_no_such_module_here
    return x


@pytest.mark.parametrize("f, words", [
    (relative, r"'from \. import' or 'import \*'"),
    (rebinds, "'import' of 'math', a name the function also assigns"),
    (two_objects, "'import' binding 'act' to different objects"),
])
def test_unsupported_imports_are_refused_at_their_line(f, words):
    with pytest.raises(s2s.S2SError, match=words) as info:
        s2s.grad(f)(1.0)
    assert "test_local_imports.py" in str(info.value)


def test_a_missing_module_raises_import_error_at_its_line():
    with pytest.raises(ImportError, match=r"test_local_imports\.py:\d+:\d+: No module named "
                                          "'s2s_no_such_module_here'"):
        s2s.grad(missing)(1.0)
