"""``**`` on complex numbers under ``s2s.jit`` (``values/scalars._complex_pow``):
``exp(w log z)``, the square as a product, numpy's values at ``z = 0``; compiled values against
numpy, and compiled gradients of real functions of complex powers against central
differences."""
import numpy as np
import pytest

import s2s

from tests.grad.oracles import fd_grad

RNG = np.random.default_rng(3)
V = RNG.uniform(0.2, 0.9, 5)
Z = RNG.standard_normal(6) + 1j * RNG.standard_normal(6)

CASES = [
    pytest.param(lambda a: np.real(np.sum((a + 1j * a[::-1]) ** 2)), id="square"),
    pytest.param(lambda a: np.imag(np.sum((a + 2j) ** 1.5)), id="real-exponent"),
    pytest.param(lambda a: np.real(np.sum((a + 1j * a) ** (0.5 + 0.5j))), id="complex-exponent"),
    pytest.param(lambda a: np.abs(np.sum((1j * a) ** 3)), id="cube"),
    pytest.param(lambda a: np.real(np.sum((a - 1j) ** (a + 0j))), id="varying-exponent"),
]


@pytest.mark.parametrize("f", CASES)
def test_values_and_gradients(f):
    np.testing.assert_allclose(s2s.jit(f)(V), f(V), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(V), fd_grad(f, (V,)), rtol=1e-6,
                               atol=1e-8)


def test_arrays_of_complex_powers_match_numpy():
    w = RNG.standard_normal(6) + 1j * RNG.standard_normal(6)
    np.testing.assert_allclose(s2s.jit(lambda z, w: z ** w)(Z, w), Z ** w, rtol=1e-13)
    np.testing.assert_allclose(s2s.jit(lambda z: z ** 2)(Z), Z * Z, rtol=1e-15)


def test_zero_base_gives_numpys_values():
    z = np.array([0j, 0j, 0j, 0j])
    w = np.array([0j, 2 + 0j, 0.5 + 0j, -1 + 0j])
    with np.errstate(all="ignore"):
        want = z ** w
    got = s2s.jit(lambda z, w: z ** w)(z, w)
    np.testing.assert_array_equal(got[:3], want[:3])
    assert np.isnan(got[3].real) and np.isnan(want[3].real)
