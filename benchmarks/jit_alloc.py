"""Arrays made inside compiled loops (issue 20, item 4): an allocation site in a loop
reuses the block it made at an earlier iteration once nothing holds it
(``backend/llvm/values/abi.py``, ``pooled_alloc``), side by side with the same kernels compiled
as before (``arrays.POOL_LOOP_ALLOCATIONS = False``), Numba (``njit``) and numpy, in one
process.

Kernels, written the way a numpy user writes them:

* ``rk4``: a Lorenz system integrated by RK4 with four ``np.zeros(3)`` stage buffers
  per step, filled element by element, and the whole-array temporaries of the update
  (``y + 0.5 * h * k1`` ...): ~17 arrays per step;
* ``residuals``: a bundle-adjustment-style loop over observations: per observation a
  point rotated by an axis-angle vector (Rodrigues, with ``np.cross``), projected, and
  its residual written into a fresh ``np.zeros(2)`` buffer; a sum of squares.

Each result is checked against numpy first (and ``jit(grad)`` against central finite
differences); no assertion is made on times.  Cells: the minimum over rounds of the
median time per call.  Numba columns are skipped when it is missing (benchmark-only).

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/jit_alloc.py
"""
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import s2s  # noqa: E402
from s2s.backend.llvm.values import arrays  # noqa: E402

try:
    import numba
except ImportError:
    numba = None


def rk4(y0, h, n):
    y = y0.copy()
    for s in range(n):
        k1 = np.zeros(3)
        k2 = np.zeros(3)
        k3 = np.zeros(3)
        k4 = np.zeros(3)
        k1[0] = 10.0 * (y[1] - y[0])
        k1[1] = y[0] * (28.0 - y[2]) - y[1]
        k1[2] = y[0] * y[1] - 8.0 / 3.0 * y[2]
        t = y + 0.5 * h * k1
        k2[0] = 10.0 * (t[1] - t[0])
        k2[1] = t[0] * (28.0 - t[2]) - t[1]
        k2[2] = t[0] * t[1] - 8.0 / 3.0 * t[2]
        t = y + 0.5 * h * k2
        k3[0] = 10.0 * (t[1] - t[0])
        k3[1] = t[0] * (28.0 - t[2]) - t[1]
        k3[2] = t[0] * t[1] - 8.0 / 3.0 * t[2]
        t = y + h * k3
        k4[0] = 10.0 * (t[1] - t[0])
        k4[1] = t[0] * (28.0 - t[2]) - t[1]
        k4[2] = t[0] * t[1] - 8.0 / 3.0 * t[2]
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y


def rk4_loss(y0):
    y = rk4(y0, 0.001, 200)
    return y[0] + y[1] * y[2]


def residuals(w, pts, obs, which):
    total = 0.0
    theta = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    axis = w / theta
    c, s = np.cos(theta), np.sin(theta)
    for i in range(which.shape[0]):
        p = pts[which[i]]
        q = p * c + np.cross(axis, p) * s + axis * (np.sum(axis * p) * (1.0 - c))
        r = np.zeros(2)
        r[0] = q[0] / q[2] - obs[i, 0]
        r[1] = q[1] / q[2] - obs[i, 1]
        total = total + r[0] * r[0] + r[1] * r[1]
    return total


def _time(f, args, budget=0.1):
    runs, start = [], time.perf_counter()
    while len(runs) < 3 or time.perf_counter() - start < budget:
        t0 = time.perf_counter()
        f(*args)
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def _compiled(f, args, pooled):
    arrays.POOL_LOOP_ALLOCATIONS = pooled
    try:
        j = s2s.jit(f)
        j(*args)  # compiles now, with the setting above
    finally:
        arrays.POOL_LOOP_ALLOCATIONS = True
    return j


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = eps
        g[k] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def main(rounds=5):
    rng = np.random.default_rng(0)
    npts, nobs = 50, 2000
    pts = rng.normal(size=(npts, 3)) + np.array([0.0, 0.0, 6.0])
    which = rng.integers(0, npts, size=nobs)
    w = np.array([0.1, -0.2, 0.3])
    obs = rng.normal(size=(nobs, 2)) * 0.1
    y0 = np.array([1.0, 1.0, 1.0])
    cases = {
        "rk4 (1000 steps)": (rk4, (y0, 0.001, 1000), rk4_loss, (y0,)),
        "residuals (2000 obs)": (residuals, (w, pts, obs, which),
                                 lambda w_: residuals(w_, pts, obs, which), (w,)),
    }
    print(f"{'kernel':22} {'numpy':>9} {'numba':>9} {'jit before':>10} {'jit after':>9} "
          f"{'before/after':>12} {'after/numba':>11} {'grad before':>11} {'grad after':>10}")
    for name, (f, args, loss, gargs) in cases.items():
        row = {"numpy": f,
               "jit before": _compiled(f, args, False), "jit after": _compiled(f, args, True),
               "grad before": _compiled(s2s.grad(loss), gargs, False),
               "grad after": _compiled(s2s.grad(loss), gargs, True)}
        want = f(*args)
        for k in ("jit before", "jit after"):
            np.testing.assert_allclose(row[k](*args), want, rtol=1e-12)
        fd = _fd(loss, gargs[0])
        for k in ("grad before", "grad after"):
            np.testing.assert_allclose(row[k](*gargs), fd, rtol=1e-5, atol=1e-7)
        if numba is not None:
            row["numba"] = numba.njit(f)
            np.testing.assert_allclose(row["numba"](*args), want, rtol=1e-12)
        best = {}
        for _ in range(rounds):  # rounds interleave the contenders (a shared machine)
            for k, fn in row.items():
                a = gargs if k.startswith("grad") else args
                t = _time(fn, a, 0.02 if k == "numpy" else 0.1)
                best[k] = min(best.get(k, t), t)

        def ms(k):
            return f"{best[k] * 1e3:7.3f}ms" if k in best else f"{'-':>9}"

        nb = f"{best['jit after'] / best['numba']:10.2f}x" if "numba" in best else f"{'-':>11}"
        print(f"{name:22} {ms('numpy')} {ms('numba')} {ms('jit before'):>10} {ms('jit after')} "
              f"{best['jit before'] / best['jit after']:11.2f}x {nb} {ms('grad before'):>11} "
              f"{ms('grad after'):>10}")


if __name__ == "__main__":
    main()
