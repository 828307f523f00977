"""vmap of a read-then-write kernel (``jit_kernels.heat``: ``left = u[i]`` then
``u[i] = new``), side by side: the cost of keeping each example's read a value.

``vmap`` copies a batched read whose examples are numbers where the array read may
be written in place while the read is used (``s2s/batch/value_reads.py``); the
rows compare ``heat`` (two such reads per step, copied by vmap) with ``heat``
written with the copies by hand (``u[i] + 0.0``, what a user had to write before)
and with a Python loop over the examples, each in Python ``vmap`` and
``jit(vmap)``, over a batch of 256 examples of 64 points.

Correctness first: every result is compared with the Python loop; no assertion is
made on times.  Timings interleave the contenders and keep the best of 5 rounds.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/bench_vmap_value_reads.py
"""
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jit_kernels as jk  # noqa: E402

import s2s  # noqa: E402


def heat_copied(u0, steps):
    """``jit_kernels.heat`` with its reads copied by hand."""
    u = u0.copy()
    n = u.shape[0]
    for s in range(steps):
        left = u[0] + 0.0
        for i in range(1, n - 1):
            new = u[i] + 0.25 * (left - 2.0 * u[i] + u[i + 1])
            left = u[i] + 0.0
            u[i] = new
    return np.sum(u * u)


def main():
    u = np.random.default_rng(0).normal(size=(256, 64))
    want = np.array([jk.heat(x, 3) for x in u])
    cases = {
        "loop over examples": lambda: np.array([jk.heat(x, 3) for x in u]),
        "vmap(heat)": s2s.vmap(jk.heat, (0, None)),
        "vmap(heat, copied by hand)": s2s.vmap(heat_copied, (0, None)),
        "jit(vmap(heat))": s2s.jit(s2s.vmap(jk.heat, (0, None))),
        "jit(vmap(heat, copied by hand))": s2s.jit(s2s.vmap(heat_copied, (0, None))),
    }
    calls = {k: (f if k.startswith("loop") else (lambda f=f: f(u, 3))) for k, f in cases.items()}
    for k, f in calls.items():
        np.testing.assert_allclose(f(), want, rtol=1e-12, err_msg=k)
    best = {k: float("inf") for k in calls}
    for _ in range(5):
        for k, f in calls.items():
            number = 2 if k.startswith("loop") else 10
            best[k] = min(best[k], timeit.timeit(f, number=number) / number)
    base = best["loop over examples"]
    print("heat, 256 examples x 64 points, 3 steps")
    for k, t in best.items():
        print(f"  {k:<34s} {t * 1e3:9.3f} ms   {base / t:7.1f}x the loop")


if __name__ == "__main__":
    main()
