"""GPU check: s2s.cuda kernels and their derivatives on a real GPU, and the bandwidth
of a large elementwise kernel.

1. Each sample kernel and its derivative kernel (``s2s.grad`` of the scalar
   function; ``s2s.jvp`` inside one) runs on the GPU and is compared with
   numpy on the CPU: the primal with the same formula in numpy, derivatives
   with the closed forms (Black-Scholes Greeks) or central differences.
2. Bandwidth: ``z = a * x + y`` (float64) over ``--n`` elements already on
   the device, timed with CUDA events over ``--repeat`` launches; bytes moved
   are 3 * 8 * n (two reads, one write).  Printed beside the bandwidth of a
   device-to-device copy (``cuMemcpyDtoD``, 2 * bytes per copy) and the
   theoretical peak from the device attributes (memory clock and bus width).
   The target is >= 80 % of the memory bandwidth (an H200 copies ~4.3 TB/s).

Without a GPU (no cuda-bindings, no driver, no device) it says so and exits
with status 0.

Run:  python benchmarks/cuda_check.py [--n 268435456] [--repeat 20]
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples"))

import s2s  # noqa: E402
from s2s_runtime import cuda as rt  # noqa: E402


# -- the kernels checked ---------------------------------------------------------------------
def axpy(a, x, y):
    return a * x + y


def damped(x, w):
    """A damped oscillation: exp, sin, cos, a branch."""
    if x < 0.0:
        return 0.0
    return math.exp(-0.5 * x) * math.sin(w * x) + 0.1 * math.cos(x)


def damped_jvp(x, w, dx, dw):
    return s2s.jvp(damped, (x, w), (dx, dw))


def damped_np(x, w):
    return np.where(x < 0.0, 0.0, np.exp(-0.5 * x) * np.sin(w * x) + 0.1 * np.cos(x))


def _central(f, args, k, rel=1e-6):
    h = rel * np.maximum(1.0, np.abs(args[k]))
    up, down = list(args), list(args)
    up[k], down[k] = args[k] + h, args[k] - h
    return (f(*up) - f(*down)) / (2 * h)


def check_kernels(n, rng):
    """Run each kernel on the GPU, compare with numpy; one line per kernel."""
    import cuda_kernel as sample  # samples/cuda_kernel.py

    rows = []
    opts = sample.options(n)
    price, greeks = sample.closed_forms(*opts)
    rows.append(("black-scholes price", sample.price_kernel(*opts), (price,)))
    rows.append(("black-scholes greeks (grad)", sample.greeks_kernel(*opts), greeks))
    x, w = rng.uniform(-1, 4, n), rng.uniform(0.5, 3, n)
    dx, dw = rng.normal(size=n), rng.normal(size=n)
    rows.append(("damped", s2s.cuda.vectorize(damped)(x, w), (damped_np(x, w),)))
    grads = tuple(_central(damped_np, [x, w], k) for k in (0, 1))
    rows.append(("damped grad", s2s.cuda.vectorize(s2s.grad(damped, argnums=(0, 1)))(x, w),
                 grads))
    rows.append(("damped jvp", s2s.cuda.vectorize(damped_jvp)(x, w, dx, dw),
                 (damped_np(x, w), dx * grads[0] + dw * grads[1])))
    a, y = 2.5, rng.normal(size=n)
    rows.append(("axpy", s2s.cuda.vectorize(axpy)(a, x, y), (a * x + y,)))
    rows.append(("axpy grad", s2s.cuda.vectorize(s2s.grad(axpy, argnums=(0, 1, 2)))(a, x, y),
                 (x, np.full(n, a), np.ones(n))))
    ok = True
    for name, got, want in rows:
        got = got if isinstance(got, tuple) else (got,)
        errs = [float(np.max(np.abs(g - e) / (1 + np.abs(e)))) for g, e in zip(got, want)]
        tol = 1e-5 if "grad" in name or "jvp" in name else 1e-11
        good = len(got) == len(want) and max(errs) <= tol
        if name.startswith("black") and "grad" in name:
            good = len(got) == len(want) and max(errs) <= 1e-9
        ok &= good
        print(f"  {name:30s} {'ok ' if good else 'BAD'}  max rel. error {max(errs):.1e}")
    return ok


# -- bandwidth -------------------------------------------------------------------------------
def _event_ms(d, start, end):
    rt.check(d.cuEventSynchronize(end), "cuEventSynchronize")
    return float(rt.check(d.cuEventElapsedTime(start, end), "cuEventElapsedTime"))


def bandwidth(n, repeat):
    """``(kernel GB/s, copy GB/s, peak GB/s or None)``."""
    ctx = rt.context()
    d = rt.driver()
    vec = s2s.cuda.vectorize(axpy)
    x = rt.to_device(np.random.default_rng(0).normal(size=n))
    y = rt.to_device(np.ones(n))
    z = rt.empty((n,), np.float64)
    err = rt.to_device(np.zeros(4, np.int64))
    kt, _ = vec.kernel(2.5, x, y)
    fn = rt.load(vec.ptx(2.5, x, y, arch=ctx.arch), kt.name)
    params = [("i64", n), ("f64", 2.5), ("ptr", x.ptr), ("ptr", y.ptr), ("ptr", z.ptr),
              ("ptr", err.ptr)]
    start = rt.check(d.cuEventCreate(0), "cuEventCreate")
    end = rt.check(d.cuEventCreate(0), "cuEventCreate")
    rt.launch(fn, n, params)  # warm-up
    best = math.inf
    for _ in range(repeat):
        rt.check(d.cuEventRecord(start, d.CUstream(0)), "cuEventRecord")
        rt.launch(fn, n, params, sync=False)
        rt.check(d.cuEventRecord(end, d.CUstream(0)), "cuEventRecord")
        best = min(best, _event_ms(d, start, end))
    kernel_gbs = 3 * 8 * n / (best * 1e-3) / 1e9
    np.testing.assert_allclose(z.copy_to_host()[:1000], 2.5 * x.copy_to_host()[:1000] + 1.0)
    best_copy = math.inf
    for _ in range(max(3, repeat // 2)):
        rt.check(d.cuEventRecord(start, d.CUstream(0)), "cuEventRecord")
        rt.check(d.cuMemcpyDtoD(d.CUdeviceptr(z.ptr), d.CUdeviceptr(x.ptr), 8 * n),
                 "cuMemcpyDtoD")
        rt.check(d.cuEventRecord(end, d.CUstream(0)), "cuEventRecord")
        best_copy = min(best_copy, _event_ms(d, start, end))
    copy_gbs = 2 * 8 * n / (best_copy * 1e-3) / 1e9
    peak = None
    try:
        attr = d.CUdevice_attribute
        clock_khz = rt.check(d.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, ctx.device), "cuDeviceGetAttribute")
        bus_bits = rt.check(d.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, ctx.device), "cuDeviceGetAttribute")
        peak = 2 * int(clock_khz) * 1e3 * int(bus_bits) / 8 / 1e9 or None
    except Exception:
        pass
    return kernel_gbs, copy_gbs, peak, best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 28,
                        help="elements of the bandwidth kernel (float64; default 2**28)")
    parser.add_argument("--check-n", type=int, default=1 << 20,
                        help="elements of the correctness checks")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    try:
        ctx = rt.context()
    except rt.CudaUnavailableError as e:
        print(f"cuda_check: no GPU found, nothing to measure: {e}")
        return 0
    print(f"device: {ctx.name} ({ctx.arch}, {ctx.sm_count} SMs)")
    t0 = time.perf_counter()
    ok = check_kernels(args.check_n, np.random.default_rng(1))
    print(f"kernels checked against numpy in {time.perf_counter() - t0:.1f} s "
          "(compile, copies and launches)")
    kernel_gbs, copy_gbs, peak, ms = bandwidth(args.n, args.repeat)
    print(f"bandwidth: z = a*x + y over {args.n} float64: {ms:.3f} ms, {kernel_gbs:.0f} GB/s")
    print(f"           device-to-device copy: {copy_gbs:.0f} GB/s "
          f"(kernel / copy = {kernel_gbs / copy_gbs:.0%})")
    if peak:
        print(f"           theoretical peak from the attributes: {peak:.0f} GB/s "
              f"(kernel / peak = {kernel_gbs / peak:.0%})")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
