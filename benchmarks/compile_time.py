"""Where the time of ``s2s.jit`` compiling a kernel (and its gradient) goes, per stage.

Stages: ``transform`` (source -> IR, and the derivative transform for a gradient),
``lower`` (IR -> LLVM IR text, ``module.build_module``), ``optimise`` (parse, verify,
LLVM's O3 pipeline), ``codegen`` (MCJIT: machine code, linking).  ``transform`` is
the first transform of the function in the process (s2s memoises transforms; the
rule templates parsed for earlier rows are reused, as in a program); the other
stages are the best of ``repeat`` runs on a fresh ``Jitted``.

Run alone:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/compile_time.py
(``bench_jit.py`` prints the same table after its speed table.)
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import s2s  # noqa: E402
from s2s.api_jit import Jitted  # noqa: E402
from s2s.backend.llvm import engine  # noqa: E402
from s2s.backend.llvm.compile import param_types  # noqa: E402
from s2s.backend.llvm.module import build_module  # noqa: E402

STAGES = ("transform", "lower", "optimise", "codegen")


def stage_times(fn, args):
    """Seconds per stage of compiling ``fn`` for ``args`` (wall clock)."""
    t0 = time.perf_counter()
    j = Jitted(fn)
    func, load_free = j.source_ir(args)
    t1 = time.perf_counter()
    mt = build_module(func, param_types(func, list(args) + load_free(), j.describe), True)
    t2 = time.perf_counter()
    mod = engine.optimise_module(mt.text)
    t3 = time.perf_counter()
    engine.Compiled(mod)
    t4 = time.perf_counter()
    return dict(zip(STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)))


def best_stage_times(fn, args, repeat=3):
    runs = [stage_times(fn, args) for _ in range(repeat)]
    return {s: min(r[s] for r in runs) for s in STAGES}


def table(cases, repeat=3):
    """Rows ``(label, {stage: seconds})`` for ``f`` and ``grad(f)`` of each case
    (``name: (f, args, argnums)``)."""
    rows = []
    for name, (f, args, wrt) in cases.items():
        for label, fn in ((name, f), (f"grad {name}", s2s.grad(f, argnums=wrt))):
            first = stage_times(fn, args)["transform"]  # memoised from here on
            rows.append((label, {**best_stage_times(fn, args, repeat), "transform": first}))
    return rows


def print_table(rows):
    print(f"{'compile time (ms)':22}" + "".join(f"{s:>10}" for s in STAGES) + f"{'total':>10}")
    for label, t in rows:
        total = sum(t.values())
        print(f"{label:22}" + "".join(f"{t[s] * 1e3:10.1f}" for s in STAGES)
              + f"{total * 1e3:10.1f}")


def linalg_case():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4)) + 4.0 * np.eye(4)

    def solve_loss(a, b):
        x = np.linalg.solve(a, b)
        return np.sum(x * x) + np.linalg.slogdet(a)[1]

    return solve_loss, (a, rng.standard_normal(4)), (0, 1)


def main():
    import jit_kernels as K
    rng = np.random.default_rng(0)
    cases = {k: v for k, v in K.cases(rng).items() if k != "lstm"}
    cases["linalg"] = linalg_case()
    print_table(table(cases))


if __name__ == "__main__":
    main()
