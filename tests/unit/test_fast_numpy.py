"""s2s_runtime.fast_numpy: what generated code calls for np.sum/mean/prod/max/min/split.

The contract is exact equality with numpy (values, dtype, shape, views, errors) for
every argument; and the round trip: generated code names the runtime functions, and
reading that code back (grad of grad, jit of a vjp) sees numpy's functions again.
"""
import numpy as np
import pytest

import s2s
import s2s_runtime as rt
from s2s_runtime.fast_numpy import FAST_EQUIVALENTS, NUMPY_OF

ARRAYS = [np.arange(12.0).reshape(3, 4), np.array([3, 1, 2], dtype=np.int64),
          np.array([1.5, np.nan, -2.0]), np.arange(6, dtype=np.float32)[::2],
          np.array(2.5), np.array([[True, False]]), np.arange(4.0) + 1j]
OTHERS = [[1.0, 2.0, 3.0], (4, 5), 7.0, 3, np.float64(2.0), np.ma.array([1.0, 2.0], mask=[0, 1]),
          np.arange(4.0).view(type("Sub", (np.ndarray,), {}))]


def _same(a, b):
    assert type(a) is type(b)
    if isinstance(a, np.ma.MaskedArray) or a is np.ma.masked:
        assert str(a) == str(b)
        return
    assert np.shape(a) == np.shape(b)
    assert getattr(a, "dtype", None) == getattr(b, "dtype", None)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min"])
@pytest.mark.parametrize("x", ARRAYS + OTHERS, ids=lambda x: type(x).__name__)
def test_reductions_equal_numpy(name, x):
    fast, slow = getattr(rt, name), getattr(np, name)
    with np.errstate(all="ignore"):
        _same(fast(x), slow(x))
        if np.ndim(x) >= 1:
            _same(fast(x, axis=0), slow(x, axis=0))
            _same(fast(x, 0, keepdims=True), slow(x, 0, keepdims=True))


def test_reduction_keywords_and_errors_equal_numpy():
    x = np.arange(6.0).reshape(2, 3)
    _same(rt.sum(x, axis=1, dtype=np.float32), np.sum(x, axis=1, dtype=np.float32))
    _same(rt.max(x, initial=10.0), np.max(x, initial=10.0))
    _same(rt.sum(x, where=x > 2), np.sum(x, where=x > 2))
    out = np.empty(3)
    assert rt.sum(x, axis=0, out=out) is out
    for fast, slow in ((rt.max, np.max), (rt.min, np.min)):
        with pytest.raises(ValueError) as e_fast:
            fast(np.array([]))
        with pytest.raises(ValueError) as e_slow:
            slow(np.array([]))
        assert str(e_fast.value) == str(e_slow.value)


@pytest.mark.parametrize("x,sections,axis", [
    (np.arange(8.0), 4, 0), (np.arange(12.0).reshape(6, 2), 3, 0), (np.arange(0.0), 2, 0),
    (np.arange(12.0).reshape(2, 6), 3, 1), (np.arange(9.0), [2, 5], 0), (np.arange(8.0), 1, 0),
    (np.arange(8.0)[::-1], 2, 0)])
def test_split_equals_numpy(x, sections, axis):
    fast, slow = rt.split(x, sections, axis), np.split(x, sections, axis)
    assert type(fast) is type(slow) and len(fast) == len(slow)
    for a, b in zip(fast, slow):
        _same(a, b)
        if isinstance(x, np.ndarray):
            assert np.shares_memory(a, x) == np.shares_memory(b, x)  # views, as numpy's


def test_split_errors_equal_numpy():
    for args in ((np.arange(7.0), 2), (np.array(3.0), 1), (np.arange(4.0), 0), ([1.0, 2.0], 2)):
        with pytest.raises(Exception) as e_fast:
            rt.split(*args)
        with pytest.raises(Exception) as e_slow:
            np.split(*args)
        assert type(e_fast.value) is type(e_slow.value)
        assert str(e_fast.value) == str(e_slow.value)


def test_tables_are_inverse():
    for numpy_fn, fast in FAST_EQUIVALENTS.items():
        assert NUMPY_OF[id(fast)] in (numpy_fn, getattr(np, fast.__name__))


def _loss(w):
    a, b = np.split(w * w, 2)
    return np.sum(np.sin(a) * b) + np.max(a) - w.mean() + np.prod(b[:2])


def test_generated_code_calls_the_runtime_and_reads_back_as_numpy():
    w = np.linspace(0.1, 1.3, 8)
    g = s2s.grad(_loss)
    src = g.generated([w])[0].__s2s_source__
    src = "\n".join(line for line in src.splitlines() if not line.strip().startswith("#"))
    assert "rt.split(" in src and "rt.sum(" in src and "np.split(" not in src
    # grad of grad differentiates the generated code: rt.split read back as np.split
    h = s2s.hessian(_loss)(w)
    eps = 1e-5
    fd = np.array([(s2s.grad(_loss)(w + eps * e) - s2s.grad(_loss)(w - eps * e)) / (2 * eps)
                   for e in np.eye(len(w))])
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-8)
    gd = np.array([(_loss(w + eps * e) - _loss(w - eps * e)) / (2 * eps) for e in np.eye(len(w))])
    np.testing.assert_allclose(g(w), gd, rtol=1e-7, atol=1e-9)
