"""s2s_runtime.cuda without a GPU: marshalling, grid choice, driver errors, the
no-device and no-bindings errors, and whole launches through a host stand-in
for the driver (``emulate.FakeDriver``: "device" memory on the host, each
launch runs the host build of the kernel).
"""
from __future__ import annotations

import ctypes
import sys

import numpy as np
import pytest

import s2s
from s2s.cuda import vectorize
from s2s_runtime import cuda as rt

from .emulate import FakeDriver
from .kernels import checked_log, complex_affine, trig_mix, two_outputs, two_outputs_sum


@pytest.fixture
def fake(ptx_or_stub):
    """Install a FakeDriver; kernels are registered per test with ``register``."""
    driver = FakeDriver()
    rt.use_driver(driver)
    yield driver
    rt.use_driver(None)


def register(driver, vec, *args):
    kt, _ = vec.kernel(*args, cpu=True)
    driver.kernels[kt.name] = kt


# -- pure functions ----------------------------------------------------------------------
@pytest.mark.parametrize("n, block, max_blocks, expected", [
    (1, 256, None, (1, 256)), (256, 256, None, (1, 256)), (257, 256, None, (2, 256)),
    (10 ** 6, 256, 132 * 32, (3907, 256)), (10 ** 9, 256, 132 * 32, (4224, 256)),
    (0, 128, None, (1, 128))])
def test_grid_for(n, block, max_blocks, expected):
    assert rt.grid_for(n, block, max_blocks) == expected


def test_pack_params_points_at_each_value():
    params = [("i64", -5), ("f64", 2.5), ("f32", 1.5), ("i8", 1), ("ptr", 0xDEADBEEF),
              ("i32", 7)]
    keep, address = rt.pack_params(params)
    pointers = (ctypes.c_void_p * len(params)).from_address(address)
    kinds = [ctypes.c_int64, ctypes.c_double, ctypes.c_float, ctypes.c_int8,
             ctypes.c_uint64, ctypes.c_int32]
    got = [ctypes.cast(p, ctypes.POINTER(k)).contents.value for p, k in zip(pointers, kinds)]
    assert got == [-5, 2.5, 1.5, 1, 0xDEADBEEF, 7]


class _CAI:
    def __init__(self, ptr, shape, typestr, strides=None):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape,
                                         "typestr": typestr, "strides": strides, "version": 3}


def test_as_device_reads_the_cuda_array_interface():
    dev = rt.as_device(_CAI(4096, (3, 4), "<f8"))
    assert (dev.ptr, dev.shape, dev.dtype, dev.nbytes) == (4096, (3, 4), np.float64, 96)
    assert dev.is_c_contiguous()
    assert rt.as_device(_CAI(4096, (3, 4), "<f8", (32, 8))).is_c_contiguous()
    assert not rt.as_device(_CAI(4096, (3, 4), "<f8", (8, 24))).is_c_contiguous()
    cai = dev.__cuda_array_interface__
    assert cai["version"] == 3 and cai["typestr"] == "<f8" and cai["data"] == (4096, False)


# -- errors --------------------------------------------------------------------------------
def test_missing_bindings_name_the_extra(monkeypatch):
    rt.use_driver(None)
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)  # import fails
    monkeypatch.setitem(sys.modules, "cuda", None)
    with pytest.raises(rt.CudaUnavailableError, match=r"s2s\[cuda\].*cuda-bindings"):
        rt.context()
    assert not rt.available()
    rt.use_driver(None)


def test_no_driver_library(fake):
    fake.init_error = OSError("libcuda.so.1: cannot open shared object file")
    with pytest.raises(rt.CudaUnavailableError, match="no CUDA driver was found"):
        rt.context()


def test_no_device(fake):
    fake.init_error = 100  # CUDA_ERROR_NO_DEVICE
    with pytest.raises(rt.CudaUnavailableError,
                       match="no CUDA device was found.*CUDA_ERROR_NO_DEVICE"):
        rt.context()


def test_zero_devices(fake):
    fake.device_count = 0
    with pytest.raises(rt.CudaUnavailableError, match="no CUDA device was found"):
        rt.context()


def test_driver_errors_become_exceptions(fake):
    with pytest.raises(rt.CudaDriverError, match=r"cuModuleLoadData failed: "
                       r"CUDA_ERROR_INVALID_PTX \(218\): a fake driver error") as info:
        rt.load("not ptx", "k")
    assert info.value.code == 218 and info.value.name == "CUDA_ERROR_INVALID_PTX"


def test_real_bindings_without_a_gpu_say_so():
    """With cuda-bindings installed on a machine without a driver (as here), launching
    says that no driver/device was found; without the bindings, which extra to install."""
    rt.use_driver(None)
    import importlib.util
    try:
        have_bindings = importlib.util.find_spec("cuda.bindings") is not None
    except ImportError:  # no "cuda" package at all
        have_bindings = False
    if not have_bindings:
        with pytest.raises(rt.CudaUnavailableError, match=r"s2s\[cuda\]"):
            vectorize(two_outputs)(np.ones(3), 2.0)
        return
    if rt.available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(rt.CudaUnavailableError, match="no CUDA (driver|device) was found"):
        vectorize(two_outputs)(np.ones(3), 2.0)


# -- whole launches through the host stand-in -----------------------------------------------
def test_launch_numpy_in_numpy_out(fake):
    x = np.linspace(-1, 1, 1000)
    y = np.linspace(0.5, 2, 1000)
    vec = vectorize(trig_mix)
    register(fake, vec, x, y)
    out = vec(x, y)
    np.testing.assert_allclose(out, np.sin(x) * y + np.exp(x) ** 2 / (1 + y * y) + np.tanh(y),
                               rtol=1e-12)
    launches = [c for c in fake.calls if c[0] == "cuLaunchKernel"]
    assert len(launches) == 1
    (name, grid, block), = [c[1] for c in launches]
    assert grid == (4, 1, 1) and block == (256, 1, 1)
    (image,) = [c[1][0] for c in fake.calls if c[0] == "cuModuleLoadData"]
    assert image.endswith(b"\0") and b".target sm_90" in image  # the device's architecture


def test_launch_broadcasts_and_returns_tuples(fake):
    x = np.arange(12.0).reshape(3, 4)
    row = np.array([1.0, 2.0, 3.0, 4.0])
    vec = vectorize(two_outputs)
    register(fake, vec, x, row)
    prod, diff = vec(x, row)
    np.testing.assert_array_equal(prod, x * row)
    np.testing.assert_array_equal(diff, x - row)
    assert prod.shape == (3, 4)
    register(fake, vec, x, 2.0)
    prod, diff = vec(x, 2.0)  # a number: passed by value
    np.testing.assert_array_equal(prod, 2.0 * x)
    # the broadcast row was copied as 12 contiguous elements, the number was not copied
    copies = [c[1][1] for c in fake.calls if c[0] == "cuMemcpyHtoD"]
    assert copies.count(96) == 3  # x, broadcast row, x again


def test_launch_gradient_kernel(fake):
    x = np.linspace(-1, 1, 300)
    y = np.linspace(0.5, 2, 300)
    vec = vectorize(s2s.grad(trig_mix, argnums=(0, 1)))
    register(fake, vec, x, y)
    gx, gy = vec(x, y)
    h = 1e-6
    f = lambda a, b: np.sin(a) * b + np.exp(a) ** 2 / (1 + b * b) + np.tanh(b)  # noqa: E731
    np.testing.assert_allclose(gx, (f(x + h, y) - f(x - h, y)) / (2 * h), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, (f(x, y + h) - f(x, y - h)) / (2 * h), rtol=1e-6, atol=1e-8)


def test_launch_device_arrays_stay_on_the_device(fake):
    x = np.linspace(0.5, 1.5, 64)
    dev = rt.to_device(x)
    vec = vectorize(two_outputs)
    register(fake, vec, dev, 3.0)
    prod, diff = vec(dev, 3.0)
    assert isinstance(prod, rt.DeviceArray) and prod.shape == (64,)
    np.testing.assert_array_equal(prod.copy_to_host(), 3.0 * x)
    view = _CAI(dev.ptr, (64,), "<f8")  # any object with __cuda_array_interface__
    prod, _ = vec(view, 3.0)
    np.testing.assert_array_equal(prod.copy_to_host(), 3.0 * x)
    with pytest.raises(ValueError, match="must be C-contiguous with the broadcast shape"):
        vec(_CAI(dev.ptr, (64,), "<f8"), np.ones((2, 64)))


def test_launch_raises_the_kernel_error(fake):
    x = np.linspace(-1, 1, 50)
    vec = vectorize(checked_log)
    register(fake, vec, x)
    with pytest.raises(ValueError, match=r"math domain error \(in a GPU kernel, at "
                                         r".*kernels.py:\d+: return math.log\(x\)\)"):
        vec(x)
    np.testing.assert_allclose(vec(x[x > 0]), np.log(x[x > 0]))


def test_scalars_only_and_empty(fake):
    vec = vectorize(two_outputs)
    register(fake, vec, 2.0, 3.0)
    assert vec(2.0, 3.0) == (6.0, -1.0)
    prod, diff = vec(np.ones((0, 3)), 1.0)
    assert prod.shape == (0, 3)


def test_launch_complex_scalar_by_value(fake):
    z = np.linspace(0, 1, 20) * (1 + 2j)
    vec = vectorize(complex_affine)
    register(fake, vec, z, 0.5 - 1j)
    np.testing.assert_allclose(vec(z, 0.5 - 1j), z * (0.5 - 1j) + 1j, rtol=1e-13, atol=1e-14)


def test_value_and_grad_keeps_its_structure(fake):
    x = np.linspace(-1, 1, 40)
    y = np.linspace(0.5, 2, 40)
    vec = vectorize(s2s.value_and_grad(two_outputs_sum, argnums=(0, 1)))
    register(fake, vec, x, y)
    value, (gx, gy) = vec(x, y)
    np.testing.assert_allclose(value, x * y + np.sin(x - y), rtol=1e-14)
    h = 1e-6
    f = lambda a, b: a * b + np.sin(a - b)  # noqa: E731
    np.testing.assert_allclose(gx, (f(x + h, y) - f(x - h, y)) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(gy, (f(x, y + h) - f(x, y - h)) / (2 * h), rtol=1e-6)


def test_to_device_round_trip(fake):
    x = np.arange(10.0).reshape(2, 5)
    dev = s2s.cuda.to_device(x)
    assert dev.shape == (2, 5) and dev.dtype == np.float64
    np.testing.assert_array_equal(dev.copy_to_host(), x)
