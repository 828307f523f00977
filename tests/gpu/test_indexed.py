"""The index form (``@s2s.cuda.kernel``, ``s2s.cuda.grid(1)``): PTX assembled by
ptxas, and launches run through the host stand-in for the driver (the host
build loops over the thread indices), checked against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.backend.cuda.toolkit import has_libdevice, has_ptxas
from s2s.errors import UnsupportedSyntaxError
from s2s_runtime import cuda as rt

from .emulate import FakeDriver
from .kernels import out_of_bounds, scale_into, stencil, strided_rows


class _HostDriver(FakeDriver):
    """Builds the host kernel of every s2s.cuda.kernel launched."""

    def __init__(self, kernels):
        super().__init__()
        self.sources = kernels

    def cuModuleGetFunction(self, module, name):
        return self._ok(name.decode())

    def cuLaunchKernel(self, f, *rest):
        if f not in self.kernels:
            for k, args in self.sources:
                kt = k.kernel(*args, cpu=True)
                self.kernels[kt.name] = kt
        return super().cuLaunchKernel(f, *rest)


@pytest.fixture
def host(ptx_or_stub):
    registered = []
    driver = _HostDriver(registered)
    rt.use_driver(driver)
    yield registered
    rt.use_driver(None)


def test_scale_into(host):
    x = np.linspace(0, 3, 1000)
    out = np.zeros(1000)
    k = s2s.cuda.kernel(scale_into)
    host.append((k, (out, x, 2.5)))
    assert k(out, x, 2.5) is None
    np.testing.assert_allclose(out, 2.5 * np.sin(x), rtol=1e-15)


def test_stencil_writes_the_interior_only(host):
    u = np.random.default_rng(0).normal(size=300)
    out = np.full(300, 7.0)
    k = s2s.cuda.kernel(stencil)
    host.append((k, (out, u)))
    k(out, u)
    np.testing.assert_allclose(out[1:-1], u[:-2] - 2 * u[1:-1] + u[2:], rtol=1e-14)
    assert out[0] == 7.0 and out[-1] == 7.0


def test_grid_stride_loop_and_explicit_grid_on_a_fortran_array(host):
    m = np.asfortranarray(np.arange(60.0).reshape(20, 3))
    expected = m + np.array([1.0, 10.0, 100.0])
    v = np.array([1.0, 10.0, 100.0])
    k = s2s.cuda.kernel(strided_rows)
    host.append((k, (m, v)))
    k[2, 4](m, v)  # 8 threads for 20 rows
    np.testing.assert_array_equal(m, expected)


def test_device_arrays_are_written_in_place(host):
    x = rt.to_device(np.linspace(0, 1, 50))
    out = rt.to_device(np.zeros(50))
    k = s2s.cuda.kernel(scale_into)
    host.append((k, (out, x, 3.0)))
    k(out, x, 3.0)
    np.testing.assert_allclose(out.copy_to_host(), 3.0 * np.sin(np.linspace(0, 1, 50)))


def test_out_of_bounds_raises_index_error(host):
    x = np.zeros(10)
    out = np.zeros(10)
    k = s2s.cuda.kernel(out_of_bounds)
    host.append((k, (out, x)))
    with pytest.raises(IndexError, match=r"out of bounds.*\(in a GPU kernel, at "
                                         r".*kernels.py:\d+: out\[i\] = x\[i \+ 1\]\)"):
        k(out, x)


def test_grid_outside_kernels():
    with pytest.raises(RuntimeError, match="only defined inside an @s2s.cuda.kernel"):
        s2s.cuda.grid(1)
    from s2s.backend.cuda.indexed import register_grid_functions
    register_grid_functions()
    with pytest.raises(UnsupportedSyntaxError, match=r"s2s.cuda.grid\(1\) is only defined "
                                                      r"inside a kernel"):
        s2s.jit(scale_into)(np.zeros(3), np.zeros(3), 1.0)


def _returns(x):
    i = s2s.cuda.grid(1)
    return x[i]


def _two_d(x):
    i = s2s.cuda.grid(2)
    x[0] = i


def test_kernel_usage_errors():
    with pytest.raises(UnsupportedSyntaxError, match="returns a np.float64; a kernel writes"):
        s2s.cuda.kernel(_returns).kernel(np.zeros(3))
    with pytest.raises(UnsupportedSyntaxError, match=r"only grid\(1\)"):
        s2s.cuda.kernel(_two_d).kernel(np.zeros(3))
    with pytest.raises(TypeError, match="takes 3 argument"):
        s2s.cuda.kernel(scale_into).kernel(np.zeros(3))


@pytest.mark.skipif(not (has_ptxas() and has_libdevice()),
                    reason="ptxas/libdevice not found: pip install 's2s[ptx]'")
@pytest.mark.parametrize("fn, args", [
    (scale_into, (np.zeros(4), np.zeros(4), 1.0)), (stencil, (np.zeros(4), np.zeros(4))),
    (strided_rows, (np.zeros((2, 2)), np.zeros(2))), (out_of_bounds, (np.zeros(2), np.zeros(2)))],
    ids=lambda v: getattr(v, "__name__", ""))
def test_index_kernels_assemble(fn, args):
    k = s2s.cuda.kernel(fn)
    for arch in ("sm_80", "sm_90"):
        ptx = k.ptx(*args, arch=arch)
        assert "%tid.x" in ptx and f".target {arch}" in ptx
        out = s2s.cuda.assemble(ptx, arch)
        assert out.spills == 0 and len(out.kernels) == 1
