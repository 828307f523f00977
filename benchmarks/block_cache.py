"""Small blocks cached by size class (issue 20): compiled derivatives whose loops push
small arrays on their tapes, with the context block's free lists
(``backend/llvm/values/abi.py``, ``abi.CACHE_SMALL_BLOCKS = True``, the default) and
without them (every block ``malloc``'d and ``free``'d, as before), in one process.

Cases: the ADBench objectives of ``adbench_cases.py`` whose derivatives allocate in
loops (GMM, bundle adjustment objective and Jacobian, LSTM, RK4 ODE, k-means Newton)
at ``--quick`` sizes, and the two ``jit_alloc.py`` kernels' gradients.  Each result
is checked against central finite differences of the primal first (at adbench.py's
check sizes); no assertion is made on times.  Each setting runs in fresh processes,
alternated (``main``); cells: the minimum over rounds of the median time per call.

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/block_cache.py
"""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import s2s  # noqa: E402
from s2s.backend.llvm.values import abi  # noqa: E402

import adbench_cases as cases  # noqa: E402
from adbench import derivative, expected  # noqa: E402
from adbench_oracles import agrees, fd_derivative  # noqa: E402
import jit_alloc  # noqa: E402
from timing import median_time  # noqa: E402

NAMES = ("gmm", "ba objective", "ba jacobian", "lstm", "ode", "kmeans")


def _rows():
    rng = np.random.default_rng(0)
    for case in cases.CASES:
        if case.name.startswith(NAMES):
            small = case.make_args(rng, 0)  # the size adbench.py checks at
            yield case.name, (lambda c=case: derivative(c, True)), case.make_args(rng, 1), \
                (small, expected(case, small))
    w = np.array([0.1, -0.2, 0.3])
    npts, nobs = 50, 2000
    pts = rng.normal(size=(npts, 3)) + np.array([0.0, 0.0, 6.0])
    which = rng.integers(0, npts, size=nobs)
    obs = rng.normal(size=(nobs, 2)) * 0.1
    loss = lambda w_: jit_alloc.residuals(w_, pts, obs, which)  # noqa: E731
    yield "residuals grad (2000 obs)", lambda: s2s.jit(s2s.grad(loss)), (w,), \
        ((w,), fd_derivative(loss, (w,), 0))
    y0 = np.array([1.0, 1.0, 1.0])
    yield "rk4 grad (200 steps)", lambda: s2s.jit(s2s.grad(jit_alloc.rk4_loss)), (y0,), \
        ((y0,), fd_derivative(jit_alloc.rk4_loss, (y0,), 0))


def child(cached):
    """Time every case compiled with ``cached`` free lists, in this process; print JSON."""
    abi.CACHE_SMALL_BLOCKS = cached
    times = {}
    for name, make, args, (check_args, want) in _rows():
        f = make()
        ok, err = agrees(f(*check_args), want)
        assert ok, f"{name}: relative error {err:.1e} against finite differences"
        times[name] = min(median_time(f, args, budget=0.1) for _ in range(3))
    print(json.dumps(times))


def main(rounds=3):
    """Alternate fresh processes with and without the free lists.  Not one process:
    the C library's heap is shared by everything a process compiled and ran, and its
    state after one setting's calls changes the other's time by more than the effect."""
    best = {}
    for _ in range(rounds):
        for setting in ("off", "on"):
            out = subprocess.run([sys.executable, __file__, "--child", setting], check=True,
                                 capture_output=True, text=True).stdout
            for name, t in json.loads(out.strip().splitlines()[-1]).items():
                key = (name, setting)
                best[key] = min(best.get(key, t), t)
    print(f"{'case':28} {'malloc/free':>12} {'free lists':>11} {'speed-up':>9}")
    for name in dict.fromkeys(n for n, _ in best):
        off, on = best[(name, "off")], best[(name, "on")]
        print(f"{name:28} {off * 1e3:10.4f}ms {on * 1e3:9.4f}ms {off / on:8.2f}x")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2] == "on")
    else:
        main()
