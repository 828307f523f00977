"""Stencil loops with in-place writes: jit(grad(f)) / jit(f), side by side, one process.

Kernels (``tests/jit/stencil_kernels.py``): the 1-D heat stencil of ``jit_kernels.py``
(128 points, 200 steps), a five-point stencil (offsets -2..2, nonlinear; 128 points,
100 steps) and a 2-D heat stencil (64 x 64, 20 steps).  Their adjoint loops keep the
adjoint array's elements in registers (``s2s/backend/llvm/lower/scalar_windows.py``).  Each
row: the minimum over rounds of the median of repeated calls, after a warm-up call that
compiles; the gradient is checked against Python mode's first.

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_stencils.py
"""
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.jit import stencil_kernels as K  # noqa: E402

import s2s  # noqa: E402


def median_time(f, args, runs=200):
    f(*args)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    rng = np.random.default_rng(0)
    cases = [("heat 128 x 200", K.heat, (np.sin(np.linspace(0, 3, 128)), 200)),
             ("five_point 128 x 100", K.five_point, (0.1 * rng.normal(size=128), 100)),
             ("heat2d 64 x 64 x 20", K.heat2d, (rng.normal(size=(64, 64)), 20))]
    print(f"{'kernel':24s} {'jit(f) ms':>10s} {'jit(grad) ms':>13s} {'grad/f':>7s}")
    for name, fn, args in cases:
        f, g = s2s.jit(fn), s2s.jit(s2s.grad(fn))
        if not np.allclose(g(*args), s2s.grad(fn)(*args), rtol=1e-12, atol=0):
            sys.exit(f"WRONG gradient: {name}")
        tf = min(median_time(f, args) for _ in range(3))
        tg = min(median_time(g, args) for _ in range(3))
        print(f"{name:24s} {tf * 1e3:10.4f} {tg * 1e3:13.4f} {tg / tf:7.2f}")


if __name__ == "__main__":
    main()
