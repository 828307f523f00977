"""What compiled gradients record, and what it costs: per case, the bytes the innermost
pushing loop of ``s2s.jit(s2s.grad(f))`` records per iteration (``s2s.cli.dump_llvm.
tape_layout``: read from the lowered kernel) and the warm ratio jit(grad) / jit(primal),
both measured in this one process.

Cases: the ADBench GMM objective (full covariance, triangular ``Qtimesx`` loop) at
d=10 k=5 n=1000 and d=64 k=5 n=1000 (``--quick``: d=10 only), and every gradient case
of ``adbench_cases.py`` at its ``--quick`` size.

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_lean_tapes.py [--quick]
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import s2s  # noqa: E402
from s2s.cli.dump_llvm import tape_layout  # noqa: E402

from adbench_cases import CASES  # noqa: E402
from adbench_objectives import gmm_objective  # noqa: E402
from timing import median_time  # noqa: E402


def gmm_args(d, k, n, seed=0):
    rng = np.random.default_rng(seed)
    icf = np.concatenate([0.1 * rng.normal(size=(k, d)),
                          0.3 * rng.normal(size=(k, d * (d - 1) // 2))], axis=1)
    return (rng.normal(size=k), rng.normal(size=(k, d)), icf, rng.normal(size=(n, d)), 1.0, 0)


def row(name, fn, args, argnums):
    """``(name, innermost loop's bytes per iteration, all loops' rows, grad/primal)``."""
    layout = tape_layout(fn, args, grad_argnums=argnums)
    inner = max(layout, key=lambda r: r["depth"]) if layout else None
    primal = median_time(s2s.jit(fn), args)
    grad = median_time(s2s.jit(s2s.grad(fn, argnums=argnums)), args)
    return name, inner, layout, grad / primal, primal


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="GMM at d=10 only")
    p.add_argument("--only", default="")
    a = p.parse_args(argv)
    cases = [(f"gmm d={d} k=5 n=1000", gmm_objective, gmm_args(d, 5, 1000), (0, 1, 2))
             for d in ((10,) if a.quick else (10, 64))]
    for case in CASES:
        if case.kind == "grad":
            args = case.make_args(np.random.default_rng(0), 1)
            cases.append((f"{case.name} ({case.size(1)})", case.fn, args,
                          case.wrt[0] if len(case.wrt) == 1 else case.wrt))
    print(f"{'case':44s} {'inner loop B/iter':>18s} {'all loops B/iter':>28s} "
          f"{'grad/primal':>12s} {'primal':>10s}")
    for name, fn, args, argnums in cases:
        if a.only and a.only not in name:
            continue
        try:
            name, inner, layout, ratio, primal = row(name, fn, args, argnums)
        except Exception as exc:  # a case s2s refuses: said, not hidden
            print(f"{name:44s} {type(exc).__name__}: {str(exc).splitlines()[0][:80]}")
            continue
        loops = " ".join(str(r["bytes_per_iteration"]) for r in layout) or "-"
        inner_b = f"{inner['bytes_per_iteration']} (line {inner['line']})" if inner else "0"
        print(f"{name:44s} {inner_b:>18s} {loops:>28s} {ratio:11.2f}x "
              f"{primal * 1e3:8.3f}ms", flush=True)


if __name__ == "__main__":
    main()
