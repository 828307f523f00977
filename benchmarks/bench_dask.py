"""Data-parallel gradients on Dask: 1 and 2 worker processes against one process.

The loss is logistic regression's negative log-likelihood over ``rows`` x 8
float64 data (``samples/dask_regression.py``); the gradient step is
``s2s.jit(s2s.value_and_grad(loss))`` - in this process on the whole data, or
on a ``LocalCluster`` of worker processes per row block, summed by
``s2s.data_parallel.value_and_grad_sum`` (parameters scattered once per
evaluation, a tree of sums).  Rows: the median time of one evaluation over a few
rounds, after a warm-up that compiles.  Then the per-task costs:

* a round trip of an empty task (scheduling, no s2s);
* the payload of the jitted function (cloudpickle: bytes, time to pickle) and,
  in a worker, unpickling a payload it has seen (the table hit) and one it has
  not (made again: no code generated yet);
* the first evaluation on fresh workers, with an empty disk cache (each worker
  generates and compiles the code) and with a warm one (``cache=True``: the
  object code is loaded, the s2s transforms still run once per worker).

Short runs by design: on a shared machine the numbers are noisy (the times
printed are medians of 3-5 rounds).

Run:  .venv/bin/python benchmarks/bench_dask.py [rows]     (default 1,000,000)
"""
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import s2s  # noqa: E402
from s2s.data_parallel import row_chunks, value_and_grad_sum  # noqa: E402


def loss(w, X, y):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def median(f, rounds=3):
    f()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _noop():
    return None


def _unpickle_time(blob):
    import pickle
    t0 = time.perf_counter()
    pickle.loads(blob)
    return time.perf_counter() - t0


def main(rows=1_000_000):
    import cloudpickle
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows, 8))
    y = (rng.random(rows) < 0.5).astype(np.float64)
    w = np.full(8, 0.05)
    vg = s2s.jit(s2s.value_and_grad(loss))
    t_one = median(lambda: vg(w, X, y))
    print(f"logistic regression, {rows:,} rows x 8, one evaluation (value and gradient)")
    print(f"  this process, jit(value_and_grad) on all rows: {t_one * 1e3:8.1f} ms "
          f"({t_one / rows * 1e9:.1f} ns per row)")

    results = {}
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            for chunk in (rows // 32, rows // 8, rows // 2):
                chunks = row_chunks(client, da.from_array(X, chunks=(chunk, 8)),
                                    da.from_array(y, chunks=chunk))
                t = median(lambda: value_and_grad_sum(client, vg, w, chunks))
                results[workers, chunk] = t
                print(f"  {workers} worker process{'es' if workers > 1 else '  '}, "
                      f"{len(chunks):3d} blocks of {chunk:>9,} rows: {t * 1e3:8.1f} ms "
                      f"({t_one / t:.2f}x one process)")
            if workers == 2:
                t_task = median(lambda: client.submit(_noop, pure=False).result(), rounds=20)
                blob = cloudpickle.dumps(vg)
                t_dump = median(lambda: cloudpickle.dumps(vg), rounds=20)
                hit = client.run(_unpickle_time, blob)
                fresh = s2s.jit(s2s.value_and_grad(loss))  # another object: another payload
                miss = client.run(_unpickle_time, cloudpickle.dumps(fresh))
    print("per task:")
    print(f"  empty task round trip                      {t_task * 1e3:8.2f} ms")
    print(f"  jitted value_and_grad payload              {len(blob):8d} bytes, pickled in "
          f"{t_dump * 1e3:.2f} ms")
    print(f"  unpickled in a worker: seen / new payload  "
          f"{statistics.median(hit.values()) * 1e3:8.3f} / "
          f"{statistics.median(miss.values()) * 1e3:.3f} ms")

    small = np.ascontiguousarray(X[:1000]), y[:1000]
    os.environ["S2S_CACHE_DIR"] = tempfile.mkdtemp(prefix="s2s-bench-")  # workers inherit it
    for label in ("empty disk cache", "warm disk cache "):  # the first run fills it
        cached = s2s.jit(s2s.value_and_grad(loss), cache=True)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            chunks = row_chunks(client, da.from_array(small[0], chunks=(500, 8)),
                                da.from_array(small[1], chunks=500))
            t0 = time.perf_counter()
            value_and_grad_sum(client, cached, w, chunks)
            first = time.perf_counter() - t0
            steady = median(lambda: value_and_grad_sum(client, cached, w, chunks))
        print(f"  first evaluation on fresh workers, {label}: {first:6.2f} s "
              f"(then {steady * 1e3:.1f} ms)")

    per_row = t_one / rows
    print(f"crossover: a block pays for its task when its compute ({per_row * 1e9:.1f} ns "
          f"per row) exceeds the task's overhead ({t_task * 1e3:.2f} ms): about "
          f"{t_task / per_row:,.0f} rows per block; well above it (10x) for a speed-up")


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:2]])
