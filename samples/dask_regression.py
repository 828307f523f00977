"""Logistic regression on millions of rows, data-parallel on a Dask cluster.

The data is a ``dask.array`` split into row blocks that live on the
workers.  The loss is a sum over rows, so its value and gradient are sums
over blocks: each block's is computed on the worker that holds it by
``s2s.jit(s2s.value_and_grad(loss))`` (made once on the client; it travels
as "jit of value_and_grad of loss" and each worker process compiles it once),
and the blocks' results are summed by a tree reduction on the workers.  The
parameters go to every worker once per step (``client.scatter``).  The
optimiser runs on the client: ``scipy.optimize.minimize(..., jac=True,
method="L-BFGS-B")`` when scipy is installed, else Newton-free gradient
descent with a backtracking step.

The fitted weights are checked against the same fit in this process.

Run:  python samples/dask_regression.py [rows] [workers]
      (needs ``pip install 's2s[dask]'``; default 1,000,000 rows, 2 workers;
      ``python samples/dask_regression.py 4000000`` for four million)
"""
import sys
import time

import numpy as np

import s2s
from s2s.data_parallel import row_chunks, value_and_grad_sum


def loss(w, X, y):
    """Negative log-likelihood of the rows of ``X`` (labels ``y`` in {0, 1}), plus a
    small ridge term per row so that the sum over blocks is the full objective."""
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z) + 1e-6 * X.shape[0] * np.sum(w * w)


# cache=True: each worker process loads the compiled code from $S2S_CACHE_DIR once another
# process (a worker, an earlier run) has compiled it
value_and_grad = s2s.jit(s2s.value_and_grad(loss), cache=True)


def make_data(rows, features=8, seed=0):
    import dask.array as da
    rng = da.random.default_rng(seed)
    chunk = max(rows // 8, 1)
    X = rng.standard_normal((rows, features), chunks=(chunk, features))
    w_true = np.linspace(-1.0, 1.0, features)
    p = 1.0 / (1.0 + np.exp(-(X @ w_true)))
    y = (rng.random(rows, chunks=chunk) < p).astype(np.float64)
    return X, y, w_true


def minimise(objective, w0, steps=60):
    """L-BFGS-B with scipy, else gradient descent with a backtracking line search;
    ``objective(w) -> (value, gradient)``."""
    try:
        from scipy.optimize import minimize
    except ImportError:
        minimize = None
    if minimize is not None:
        return minimize(objective, w0, jac=True, method="L-BFGS-B",
                        options={"maxiter": steps, "gtol": 1e-7}).x
    w, step = np.array(w0, dtype=float), 1.0
    value, grad = objective(w)
    for _ in range(steps):
        while True:
            trial = w - step * grad
            tv, tg = objective(trial)
            if tv <= value - 0.5 * step * grad @ grad or step < 1e-12:
                break
            step *= 0.5
        w, value, grad, step = trial, tv, tg, step * 2.0
        if np.max(np.abs(grad)) < 1e-7 * max(1.0, abs(value)):
            break
    return w


def main(rows=1_000_000, workers=2):
    from dask.distributed import Client, LocalCluster

    X, y, w_true = make_data(rows)
    scale = 1.0 / rows  # the mean loss: a well-scaled objective for the optimiser
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        chunks = row_chunks(client, X, y)  # computed once, kept on the workers
        calls = []

        def objective(w):
            value, grad = value_and_grad_sum(client, value_and_grad, w, chunks)
            calls.append(value)
            return value * scale, grad * scale

        t0 = time.perf_counter()
        w = minimise(objective, np.zeros(X.shape[1]))
        elapsed = time.perf_counter() - t0
        v_sum, g_sum = value_and_grad_sum(client, value_and_grad, w, chunks)
        Xl = np.concatenate(client.gather([c[0] for c in chunks]))
        yl = np.concatenate(client.gather([c[1] for c in chunks]))
    print(f"{rows:,} rows in {len(chunks)} blocks on {workers} worker processes: "
          f"{len(calls)} gradient evaluations in {elapsed:.2f} s")
    print("fitted w:", np.round(w, 3))
    print("true   w:", np.round(w_true, 3))
    v_one, g_one = value_and_grad(w, Xl, yl)  # the whole data in this process
    print(f"at the fit: loss summed over blocks {v_sum:.12e}, in one piece {v_one:.12e}; "
          f"largest gradient difference {np.max(np.abs(g_sum - g_one)):.1e}")
    return w, w_true


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*args)
