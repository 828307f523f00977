"""Per-example gradients through per-example control flow, side by side:
``vmap(grad(f))`` (one batched program; the tapes replayed with per-example trip
counts, ``s2s/batch/lanes.py``) against a Python loop of ``grad(f)`` over the batch,
for a data-dependent ``while`` (Newton's square root), a ``for`` over a per-example
range with a branch inside (recorded on the tape), and a ``while`` nested in a
``for``.  Batch sizes 64 and 1024.

Correctness first: the batched gradients equal the loop's (no assertion on times).

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/bench_vmap_grad_control.py
"""
import sys
from pathlib import Path

import numpy as np

import s2s
from timing import best

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root
from tests.batch.control_kernels import branches_in_loop, newton_sqrt, while_in_for  # noqa: E402


def main():
    rng = np.random.default_rng(0)
    print(f"{'function':<18}{'batch':>6}{'loop of grad':>14}{'vmap(grad)':>12}{'speed-up':>10}")
    for size in (64, 1024):
        cases = [
            (newton_sqrt, (rng.uniform(0.5, 50.0, size),)),
            (branches_in_loop, (rng.uniform(0.2, 3.0, size), rng.integers(0, 12, size))),
            (while_in_for, (rng.uniform(0.5, 3.0, size), rng.integers(0, 8, size))),
        ]
        for fn, args in cases:
            g = s2s.grad(fn)
            batched = s2s.vmap(g)

            def loop():
                return np.array([g(*(a[k].item() for a in args)) for k in range(size)])

            np.testing.assert_allclose(batched(*args), loop(), rtol=1e-12, atol=1e-12)
            t_loop, t_vmap = best(loop), best(lambda: batched(*args))
            print(f"{fn.__name__:<18}{size:>6}{t_loop * 1e3:>12.2f}ms{t_vmap * 1e3:>10.2f}ms"
                  f"{t_loop / t_vmap:>9.1f}x")


if __name__ == "__main__":
    main()
