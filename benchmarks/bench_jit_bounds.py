"""Bounds checks in s2s.jit: loop versioning (``backend/llvm/lower/loop_versions.py``) side by side.

Per kernel of ``jit_kernels.py`` (the sizes of ``bench_jit.py``), the primal and
its gradient, compiled four ways in one process: Numba (``njit``, which does not
check bounds), s2s.jit as before loop versioning (every access checked in the
loop), s2s.jit (checks hoisted out of range loops where the indices are affine),
and s2s.jit(boundscheck=False).  Rounds interleave the contenders; each cell is
the minimum over rounds of a round's median.  Numba rows are skipped when it is
missing (benchmark-only).

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_jit_bounds.py
"""
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jit_kernels as K  # noqa: E402
from jit_kernels import lstm_args  # noqa: E402

import s2s  # noqa: E402
from s2s.backend.llvm.lower import loop_versions  # noqa: E402

try:
    import numba
except ImportError:
    numba = None


def median_time(f, args, budget=0.05):
    runs, start = [], time.perf_counter()
    while len(runs) < 3 or time.perf_counter() - start < budget:
        t0 = time.perf_counter()
        f(*args)
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def compiled(f, args, versioning=True, boundscheck=True):
    loop_versions.ENABLED = versioning
    try:
        j = s2s.jit(f, boundscheck=boundscheck)
        j(*args)  # compiles now, with the setting above
    finally:
        loop_versions.ENABLED = True
    return j


def main(rounds=7):
    rng = np.random.default_rng(0)
    cases = {
        "heat": (K.heat, (np.sin(np.linspace(0, 3, 128)), 200), 0),
        "logsumexp": (K.logsumexp, (rng.normal(size=1000),), 0),
        "gmm": (K.gmm, (rng.normal(size=10), rng.normal(size=(10, 5)),
                        0.1 * rng.normal(size=(10, 5)), rng.normal(size=(500, 5))), 0),
        "lstm": (K.lstm, lstm_args(rng, 16, 8, 20), 1),
    }
    print(f"{'kernel':16} {'numba':>9} {'checked':>9} {'versioned':>9} {'no checks':>9} "
          f"{'checked/nb':>10} {'vers/nb':>8} {'nochk/nb':>8}   (ms)")
    for name, (f, args, wrt) in cases.items():
        for label, fn in ((name, f), (name + " grad", s2s.grad(f, argnums=wrt))):
            want = f(*args) if fn is f else None
            row = {"checked": compiled(fn, args, versioning=False),
                   "versioned": compiled(fn, args),
                   "no checks": compiled(fn, args, boundscheck=False)}
            if want is not None:
                for j in row.values():
                    if not np.isclose(j(*args), want, rtol=1e-9):
                        sys.exit(f"WRONG: {name}")
                if numba is not None:
                    row["numba"] = numba.njit(f)
                    row["numba"](*args)
            best = {k: min(median_time(j, args) for _ in range(1)) for k, j in row.items()}
            for _ in range(rounds - 1):
                for k, j in row.items():
                    best[k] = min(best[k], median_time(j, args))
            nb = best.get("numba")

            def ms(k):
                return f"{best[k] * 1e3:9.4f}" if k in best else "        -"

            def ratio(k, width):
                return f"{best[k] / nb:{width}.2f}" if nb else " " * (width - 1) + "-"
            print(f"{label:16} {ms('numba')} {ms('checked')} {ms('versioned')} "
                  f"{ms('no checks')} {ratio('checked', 10)} {ratio('versioned', 8)} "
                  f"{ratio('no checks', 8)}")


if __name__ == "__main__":
    main()
