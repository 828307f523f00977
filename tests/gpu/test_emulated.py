"""The elementwise kernels' numbers, checked on the host (no GPU here).

``emulate.run_on_host`` runs the host build of each kernel -- the same
module as the PTX one but for the special registers -- so what is checked
here is the kernel around the device function: loads, broadcast scalars,
the stores of every output, the error word.  Oracles: the corpus's numpy
references (independent of the scalar code), and for ``grad``/``jvp``
kernels central finite differences of those references.
"""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.cuda import vectorize

from .emulate import run_on_host
from .kernels import (CORPUS, JVPS, checked_log, complex_affine, complex_modulus, int_ops,
                      negative_raises, two_outputs, with_flag)

N = 37


def _inputs(samplers, dtypes, seed=0):
    rng = np.random.default_rng(seed)
    return [s(rng, N).astype(d) for s, d in zip(samplers, dtypes)]


def _central(ref, args, k):
    """d ref / d args[k], elementwise, by central differences (float64)."""
    h = 1e-6 * np.maximum(1.0, np.abs(args[k]))
    up = list(args)
    down = list(args)
    up[k] = args[k] + h
    down[k] = args[k] - h
    return (ref(*up) - ref(*down)) / (2 * h)


@pytest.mark.parametrize("fn, dtypes, ref, samplers, argnums",
                         [c for c in CORPUS if c[2] is not None],
                         ids=lambda v: getattr(v, "__name__", None))
def test_primal_matches_numpy(fn, dtypes, ref, samplers, argnums):
    args = _inputs(samplers, dtypes)
    (out,), err = run_on_host(vectorize(fn), *args)
    assert not err.any()
    np.testing.assert_allclose(out, ref(*args), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn, dtypes, ref, samplers, argnums",
                         [c for c in CORPUS if c[2] is not None and c[4]],
                         ids=lambda v: getattr(v, "__name__", None))
def test_grad_kernel_matches_finite_differences(fn, dtypes, ref, samplers, argnums):
    args = _inputs(samplers, dtypes, seed=1)
    outs, err = run_on_host(vectorize(s2s.grad(fn, argnums=argnums)), *args)
    assert not err.any() and len(outs) == len(argnums)
    for k, g in zip(argnums, outs):
        np.testing.assert_allclose(g, _central(ref, args, k), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn", list(JVPS), ids=lambda f: f.__name__)
def test_jvp_kernel_matches_finite_differences(fn):
    fn_, dtypes, ref, samplers, argnums = next(c for c in CORPUS if c[0] is fn)
    args = _inputs(samplers, dtypes, seed=2)
    rng = np.random.default_rng(3)
    tangents = [rng.normal(size=N) for _ in args]
    (out, tangent_out), err = run_on_host(vectorize(JVPS[fn]), *args, *tangents)
    assert not err.any()
    np.testing.assert_allclose(out, ref(*args), rtol=1e-12)
    expected = sum(t * _central(ref, args, k) for k, t in enumerate(tangents))
    np.testing.assert_allclose(tangent_out, expected, rtol=1e-6, atol=1e-7)


def test_scalar_argument_is_broadcast():
    x = np.linspace(-1, 1, N)
    (prod, diff), err = run_on_host(vectorize(two_outputs), x, 2.5)
    np.testing.assert_array_equal(prod, x * 2.5)
    np.testing.assert_array_equal(diff, x - 2.5)


def test_int_and_bool_elements():
    i = np.arange(-10, 27, dtype=np.int64)
    (out,), err = run_on_host(vectorize(int_ops), i, np.int64(4))
    np.testing.assert_array_equal(out, i // 4 + i % 4 + i * 4)  # Python's floor semantics
    assert out.dtype == np.int64
    flags = np.arange(N) % 3 == 0
    x = np.linspace(-1, 1, N)
    (out,), err = run_on_host(vectorize(with_flag), x, flags)
    np.testing.assert_array_equal(out, np.where(flags, 2 * x, -x))


def test_float32_elements_stay_float32():
    x = np.linspace(-1, 1, N, dtype=np.float32)
    (out, _), err = run_on_host(vectorize(two_outputs), x, np.float32(3))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, x * np.float32(3))


@pytest.mark.parametrize("fn, message", [(checked_log, "math domain error"),
                                         (negative_raises, "x must be non-negative")])
def test_failing_elements_set_the_error_word(fn, message):
    x = np.linspace(-1, 1, N)
    vec = vectorize(fn)
    (out,), err = run_on_host(vec, x)
    assert err[0] != 0
    kt, _ = vec.kernel(x, cpu=True)
    exc, template, loc, user = kt.sites[err[0] - 1]
    assert exc is ValueError and template == message
    ok = x > 0
    np.testing.assert_allclose(out[ok], np.log(x[ok]) if fn is checked_log else np.sqrt(x[ok]))
    assert (out[x < 0] == -12345).all()  # failing elements store nothing


def test_complex_elements_and_complex_scalars():
    rng = np.random.default_rng(5)
    z = rng.normal(size=N) + 1j * rng.normal(size=N)
    w = rng.normal(size=N) + 1j * rng.normal(size=N)
    (out,), err = run_on_host(vectorize(complex_affine), z, w)
    np.testing.assert_allclose(out, z * w + 1j, rtol=1e-13, atol=1e-14)
    (out,), err = run_on_host(vectorize(complex_affine), z, 2.0 - 0.5j)  # by value
    np.testing.assert_allclose(out, z * (2.0 - 0.5j) + 1j, rtol=1e-13, atol=1e-14)
    (out,), err = run_on_host(vectorize(complex_modulus), z, 3.0)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, 3.0 * np.abs(z), rtol=1e-13, atol=1e-14)


def test_python_remainder():
    from .kernels import py_mod
    x = np.array([1e20, -7.5, 7.5, -0.0, 5.0])
    y = np.array([3.0, 2.0, -2.0, 3.0, 5.0])
    (out,), err = run_on_host(vectorize(py_mod), x, y)
    np.testing.assert_array_equal(out, np.mod(x, y))


def test_global_numbers_are_passed_by_value(monkeypatch):
    from . import kernels
    x = np.linspace(-1, 1, N)
    vec = vectorize(kernels.uses_global_number)
    (out,), _ = run_on_host(vec, x)
    np.testing.assert_array_equal(out, 1.5 * x)
    monkeypatch.setattr(kernels, "GAIN", -2.0)  # read again at each call
    (out,), _ = run_on_host(vec, x)
    np.testing.assert_array_equal(out, -2.0 * x)


def test_global_arrays_are_refused():
    from .kernels import uses_global_array
    with pytest.raises(TypeError, match="reads the global 'OFFSETS'.*pass arrays as arguments"):
        vectorize(uses_global_array).kernel(np.float64)
