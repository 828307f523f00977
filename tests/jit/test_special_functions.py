"""``scipy.special``'s elementwise functions under ``s2s.jit``
(``rules/numpy_code/special.py``): values and dtypes against SciPy on ordinary, extreme
and non-finite inputs, and compiled gradients against central differences."""
import warnings

import numpy as np
import pytest

import s2s
from tests.grad.oracles import fd_grad

sp = pytest.importorskip("scipy.special")

X = np.array([-800.0, -30.0, -1.5, -1e-3, 0.0, 1e-3, 2.0, 40.0, 800.0, np.nan, np.inf,
              -np.inf])
P = np.array([0.0, 1e-12, 0.2, 0.5, 0.9, 1.0, 1.5, -0.1, np.nan])
XX = np.array([0.0, -0.0, 1.5, -2.0, 0.0, 2.0, 0.0, 0.0])
Y = np.array([0.0, 1e-300, 0.5, 2.0, np.nan, np.inf, -1.0, 3.0])
CASES = {
    "erf": (lambda x: sp.erf(x), (X,)),
    "erfc": (lambda x: sp.erfc(x), (X,)),
    "expit": (lambda x: sp.expit(x), (X,)),
    "expit-float32": (lambda x: sp.expit(x), (X.astype(np.float32),)),
    "expit-int": (lambda x: sp.expit(x), (np.arange(-3, 3),)),
    "logit": (lambda p: sp.logit(p), (P,)),
    "xlogy": (lambda x, y: sp.xlogy(x, y), (XX, Y)),
    "xlog1py": (lambda x, y: sp.xlog1py(x, y), (XX, Y)),
    "xlogy-numbers": (lambda x, y: sp.xlogy(x, y), (0.0, 2.0)),
    "erf-number": (lambda x: sp.erf(x), (0.3,)),
}


@pytest.mark.parametrize("name", CASES)
def test_compiled_equals_scipy(name):
    f, args = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.asarray(f(*args))
    got = np.asarray(s2s.jit(f)(*args))
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol = 1e-6 if want.dtype == np.float32 else 1e-15
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
    numbers = ~np.isnan(want)  # signed zeros too (a NaN's sign means nothing)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


@pytest.mark.parametrize("fn, args", [
    (lambda x: np.sum(sp.erf(x) * x), (np.array([-1.2, 0.1, 0.7]),)),
    (lambda x: np.sum(sp.erfc(x) ** 2), (np.array([-1.2, 0.1, 0.7]),)),
    (lambda x: np.sum(sp.expit(x) * x), (np.array([-3.0, 0.1, 2.5]),)),
    (lambda p: np.sum(sp.logit(p)), (np.array([0.1, 0.4, 0.8]),)),
    (lambda x, y: np.sum(sp.xlogy(x, y)), (np.array([0.5, 2.0]), np.array([1.5, 0.3]))),
    (lambda x, y: np.sum(sp.xlog1py(x, y)), (np.array([0.5, 2.0]), np.array([1.5, 0.3]))),
], ids=["erf", "erfc", "expit", "logit", "xlogy", "xlog1py"])
def test_compiled_gradients_match_differences(fn, args):
    argnums = tuple(range(len(args)))
    got = s2s.jit(s2s.grad(fn, argnums=argnums))(*args)
    for g, e in zip(got, fd_grad(fn, args, argnums)):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9)
