"""``np.linalg``'s array-API names (``rules/numpy_code/array_api.py``) under ``s2s.jit``
and ``vmap``: values against numpy, errors with numpy's type and words, batched values
against a loop, compiled gradients against central differences."""
import numpy as np
import pytest

import s2s
from tests.grad.oracles import fd_grad

pytestmark = pytest.mark.skipif(not hasattr(np.linalg, "matmul"), reason="numpy < 2.0")

RNG = np.random.default_rng(7)
A, B = RNG.normal(size=(2, 3, 3)), RNG.normal(size=(3, 4))
V, W = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
v, w = RNG.normal(size=3), RNG.normal(size=5)
CASES = {
    "matmul": (lambda a, b: np.linalg.matmul(a, b), (A, B)),
    "matmul-vector": (lambda a, b: np.linalg.matmul(a, b), (B.T.copy(), v)),
    "outer": (lambda a, b: np.linalg.outer(a, b), (v, w)),
    "cross": (lambda a, b: np.linalg.cross(a, b), (V, W)),
    "cross-axis0": (lambda a, b: np.linalg.cross(a, b, axis=0), (V.T.copy(), W.T.copy())),
    "cross-broadcast": (lambda a, b: np.linalg.cross(a, b), (V, v)),
    "diagonal": (lambda a: np.linalg.diagonal(a), (A,)),
    "diagonal-offset": (lambda a: np.linalg.diagonal(a, offset=1), (A,)),
    "trace": (lambda a: np.linalg.trace(a), (A,)),
    "trace-offset": (lambda a: np.linalg.trace(a, offset=-1), (B,)),
    "tensordot": (lambda a, b: np.linalg.tensordot(a, b, axes=1), (A, B)),
    "vecdot": (lambda a, b: np.linalg.vecdot(a, b), (V, W)),
}


@pytest.mark.parametrize("name", CASES)
def test_compiled_equals_numpy(name):
    f, args = CASES[name]
    want = f(*args)
    got = s2s.jit(f)(*args)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("f, args", [
    (lambda a, b: np.linalg.outer(a, b), (V, w)),
    (lambda a, b: np.linalg.cross(a, b), (np.ones(2), np.ones(3))),
    (lambda a: np.linalg.diagonal(a), (v,)),
    (lambda a: np.linalg.trace(a), (v,)),
    (lambda a, b: np.linalg.matmul(a, b), (2.0, v)),
    (lambda a, b: np.linalg.matmul(a, b), (v, 2.0)),
], ids=["outer-2d", "cross-2-vectors", "diagonal-1d", "trace-1d", "matmul-number",
        "matmul-number-second"])
def test_what_the_array_api_refuses_is_numpys_error(f, args):
    with pytest.raises(ValueError) as numpy_error:
        f(*args)
    with pytest.raises(ValueError) as compiled:
        s2s.jit(f)(*args)
    assert str(compiled.value) == str(numpy_error.value)


@pytest.mark.parametrize("name", ["outer", "cross"])
def test_batched_against_a_loop(name):
    f = getattr(np.linalg, name)
    want = np.stack([f(a, b) for a, b in zip(V, W)])
    np.testing.assert_allclose(s2s.vmap(f)(V, W), want, rtol=1e-13)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(lambda a, b: f(a, b)))(V, W), want,
                               rtol=1e-13)


@pytest.mark.parametrize("name", ["outer", "cross", "cross-axis0", "trace", "matmul-vector"])
def test_compiled_gradients_match_differences(name):
    f, args = CASES[name]
    weights = RNG.normal(size=np.shape(f(*args)))

    def loss(*xs):
        return np.sum(f(*xs) * weights)

    argnums = tuple(range(len(args)))
    got = s2s.jit(s2s.grad(loss, argnums=argnums))(*args)
    want = fd_grad(loss, args, argnums)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)
