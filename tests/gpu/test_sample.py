"""samples/cuda_kernel.py: without a GPU it prints the PTX and says why it cannot
launch; through the host stand-in for the driver its prices and Greeks (the
gradient kernel) match the Black-Scholes closed forms."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from s2s.backend.cuda.toolkit import has_libdevice, has_ptxas
from s2s_runtime import cuda as rt

from .emulate import FakeDriver

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "cuda_kernel.py"


def _load_sample():
    spec = importlib.util.spec_from_file_location("s2s_sample_cuda_kernel", SAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not has_libdevice(), reason="libdevice not found: pip install 's2s[ptx]'")
def test_sample_without_a_gpu_prints_ptx_and_says_it_cannot_launch():
    rt.use_driver(None)
    if rt.available():
        pytest.skip("a CUDA device is present: the sample launches instead")
    out = subprocess.run([sys.executable, str(SAMPLE)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count(".visible .entry s2s_") == 2
    assert "cannot launch the kernels: cuda:" in out.stdout
    if has_ptxas():  # ptxas -v on both sample kernels: no register spills
        assert out.stdout.count(" 0 bytes spilled") == 2, out.stdout[-2000:]
    assert "Traceback" not in out.stderr


def test_sample_numbers_through_the_host_stand_in(capsys, ptx_or_stub):
    sample = _load_sample()
    driver = FakeDriver()
    rt.use_driver(driver)
    try:
        args = sample.options(500, seed=3)
        for kernel in (sample.price_kernel, sample.greeks_kernel):
            kt, _ = kernel.kernel(*args, cpu=True)
            driver.kernels[kt.name] = kt
        sample.run_on_gpu(500)  # asserts against the closed forms
    finally:
        rt.use_driver(None)
    out = capsys.readouterr().out
    assert "price: 500 options on Fake GPU, matches the closed forms" in out
    assert "Greeks: 500 options on Fake GPU, matches the closed forms" in out


def test_closed_forms_against_finite_differences():
    """The sample's oracle itself, checked by central differences."""
    sample = _load_sample()
    args = list(sample.options(50, seed=4))
    _, greeks = sample.closed_forms(*args)
    for g, k in zip(greeks, (0, 2, 3, 4)):
        h = 1e-6 * np.abs(args[k])
        up, down = list(args), list(args)
        up[k], down[k] = args[k] + h, args[k] - h
        fd = (sample.closed_forms(*up)[0] - sample.closed_forms(*down)[0]) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "cuda_check.py"


def test_cuda_check_without_a_gpu_exits_cleanly():
    rt.use_driver(None)
    if rt.available():
        pytest.skip("a CUDA device is present")
    out = subprocess.run([sys.executable, str(BENCH)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("cuda_check: no GPU found, nothing to measure: cuda:")


def test_cuda_check_through_the_host_stand_in(capsys, ptx_or_stub):
    """The whole script on the host stand-in (tiny sizes): every kernel checks out."""
    spec = importlib.util.spec_from_file_location("s2s_bench_cuda_check", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    class Registering(FakeDriver):
        """Builds the host kernel of any PTX loaded (by its entry name)."""

        def cuModuleGetFunction(self, module, name):
            return self._ok(name.decode())

        def cuLaunchKernel(self, f, *rest):
            if f not in self.kernels:
                self.kernels[f] = _host_kernels[f]
            return super().cuLaunchKernel(f, *rest)

    _host_kernels = {}
    from s2s.core import cuda_vectorize as vmod
    original = vmod.Vectorized.kernel

    def kernel(self, *examples, cpu=False):  # record the host build of every kernel made
        kt, free = original(self, *examples, cpu=cpu)
        if not cpu:
            _host_kernels[kt.name] = original(self, *examples, cpu=True)[0]
        return kt, free

    vmod.Vectorized.kernel = kernel
    rt.use_driver(Registering())
    try:
        assert bench.main(["--n", "5000", "--check-n", "400", "--repeat", "2"]) == 0
    finally:
        vmod.Vectorized.kernel = original
        rt.use_driver(None)
    out = capsys.readouterr().out
    assert "BAD" not in out and out.count(" ok ") == 7
    assert "bandwidth: z = a*x + y over 5000 float64" in out
    assert "theoretical peak from the attributes: 4023 GB/s" in out
