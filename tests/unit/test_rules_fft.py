"""numpy.fft rules (rfft2/irfft2/rfftn/irfftn/hfft/ihfft included): JVP vs finite
differences and VJP vs JVP (dot-product test) for every transform with its n/s,
axis/axes and norm variants, real and complex inputs; second derivatives vs finite
differences of the gradient."""
import zlib

import numpy as np
import pytest

from linalg_checks import check_second_order, check_vjp

F = np.fft
NORMS = [None, "ortho", "forward"]
CASES = {
    "fft": lambda a, norm: F.fft(a, norm=norm),
    "fft_n_pad": lambda a, norm: F.fft(a, 11, norm=norm),
    "fft_n_crop_axis0": lambda a, norm: F.fft(a, 2, 0, norm),
    "ifft": lambda a, norm: F.ifft(a, norm=norm),
    "ifft_n_crop": lambda a, norm: F.ifft(a, n=5, axis=-1, norm=norm),
    "fft2": lambda a, norm: F.fft2(a, norm=norm),
    "fft2_s": lambda a, norm: F.fft2(a, s=(4, 6), norm=norm),
    "ifft2": lambda a, norm: F.ifft2(a, norm=norm),
    "ifft2_s_axes": lambda a, norm: F.ifft2(a, s=(5, 2), axes=(1, 0), norm=norm),
    "fftn": lambda a, norm: F.fftn(a, norm=norm),
    "fftn_axes": lambda a, norm: F.fftn(a, axes=(1,), norm=norm),
    "ifftn_s": lambda a, norm: F.ifftn(a, s=(3, 9), axes=(0, 1), norm=norm),
    "irfft": lambda a, norm: F.irfft(a, norm=norm),
    "irfft_n_odd": lambda a, norm: F.irfft(a, n=7, norm=norm),
    "irfft_n_long": lambda a, norm: F.irfft(a, n=20, norm=norm),
    "irfft_axis0": lambda a, norm: F.irfft(a, axis=0, norm=norm),
    "irfft2": lambda a, norm: F.irfft2(a, norm=norm),
    "hfft": lambda a, norm: F.hfft(a, norm=norm),
    "hfft_n_odd_axis0": lambda a, norm: F.hfft(a, 5, 0, norm),
    "irfft2_s": lambda a, norm: F.irfft2(a, s=(2, 9), norm=norm),
    "irfftn_axes": lambda a, norm: F.irfftn(a, s=(7, 4), axes=(1, 0), norm=norm),
    "irfftn_one_axis": lambda a, norm: F.irfftn(a, axes=(0,), norm=norm),
}
REAL_INPUT_ONLY = {
    "rfft": lambda a, norm: F.rfft(a, norm=norm),
    "rfft_n_odd": lambda a, norm: F.rfft(a, n=5, axis=1, norm=norm),
    "rfft_n_pad": lambda a, norm: F.rfft(a, n=12, norm=norm),
    "rfft_axis0": lambda a, norm: F.rfft(a, axis=0, norm=norm),
    "rfft2": lambda a, norm: F.rfft2(a, norm=norm),
    "ihfft": lambda a, norm: F.ihfft(a, norm=norm),
    "ihfft_n": lambda a, norm: F.ihfft(a, n=11, norm=norm),
    "rfft2_s": lambda a, norm: F.rfft2(a, s=(4, 5), norm=norm),
    "rfftn_axes": lambda a, norm: F.rfftn(a, s=(6, 2), axes=(1, 0), norm=norm),
    "rfftn": lambda a, norm: F.rfftn(a, norm=norm),
}


def _input(name, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{name} {dtype}".encode()))
    x = rng.standard_normal((3, 8))
    if dtype == "complex128":
        x = x + 1j * rng.standard_normal((3, 8))
    return x, rng


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_and_vjp(name, dtype, norm):
    x, rng = _input(name, dtype)
    f = CASES[name]
    check_vjp(lambda a: f(a, norm), x, rng)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", sorted(REAL_INPUT_ONLY))
def test_rfft_jvp_and_vjp(name, norm):
    x, rng = _input(name, "float64")
    f = REAL_INPUT_ONLY[name]
    check_vjp(lambda a: f(a, norm), x, rng)


def test_vector_input():
    x, rng = _input("vector", "complex128")
    check_vjp(lambda a: F.fft(a[0], 6), x[0:1], rng)
    check_vjp(lambda a: F.irfft(a, 9), x[0], rng)


SECOND = {
    "fft": (lambda a: np.sum(np.abs(F.fft(a, 10)) ** 3), "complex128"),
    "ifft2": (lambda a: np.sum(np.abs(F.ifft2(a, norm="ortho")) ** 3), "complex128"),
    "rfft": (lambda a: np.sum(np.abs(F.rfft(a, 7)) ** 3), "float64"),
    "irfft": (lambda a: np.sum(F.irfft(a, 9) ** 4), "complex128"),
    "irfft_real": (lambda a: np.sum(np.sin(F.irfft(a))), "float64"),
    "rfft2": (lambda a: np.sum(np.abs(F.rfft2(a)) ** 3), "float64"),
    "irfft2": (lambda a: np.sum(F.irfft2(a, s=(3, 5)) ** 4), "complex128"),
}


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivatives(name):
    f, dtype = SECOND[name]
    x, rng = _input(name + "2", dtype)
    check_second_order(f, x, rng)


def test_fft_of_real_signal_has_a_real_gradient():
    # grad of a real loss of a real input through complex FFTs is real (the seed's remark)
    import s2s
    x, rng = _input("real", "float64")
    g = s2s.grad(lambda a: np.sum(np.abs(F.fft(a)) ** 2))(x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, 2 * x.shape[1] * x, rtol=1e-12)  # Parseval
