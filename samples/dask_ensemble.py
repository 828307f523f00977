"""An ensemble on Dask: the gradient of the ODE fit's loss over many parameter sets.

``samples/ode_fit.py`` fits a damped oscillator through an adaptive RK4
solver (a ``while`` loop whose trip count depends on the parameters).  Here
the loss and its gradient are evaluated at a grid of ``(omega, zeta)`` - a
sensitivity sweep, or the starting points of a multi-start fit - on a
``dask.distributed.LocalCluster`` of worker processes, three ways:

1. ``client.map``: one task per parameter set, each running
   ``s2s.jit(s2s.value_and_grad(loss))`` (made here once; each worker process
   compiles it once and keeps it for every task);
2. ``dask.bag``: the parameter sets in a few partitions, the same jitted
   function mapped over each (one task per partition: far less scheduling);
3. batched: the parameter sets in blocks, each block one call of
   ``s2s.vmap(s2s.value_and_grad(loss))`` (one batched program per block; the
   loop's trip counts differ per example and the batched tape replays each
   example's own), in Python mode.

Every result is compared with the same sweep in this process.

Run:  python samples/dask_ensemble.py [parameter sets] [workers]
      (needs ``pip install 's2s[dask]'``; default 32 sets, 2 workers)
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # ode_fit, here and on workers

import s2s  # noqa: E402
from ode_fit import loss, simulate, times, true_params  # noqa: E402


def loss_at(p, times, observed):
    """``ode_fit.loss`` of an array of parameters ``p = (omega, zeta)``."""
    return loss((p[0], p[1]), times, observed)


# cache=True: the workers load the code this process compiled from $S2S_CACHE_DIR
value_and_grad = s2s.jit(s2s.value_and_grad(loss_at), cache=True)
batched = s2s.vmap(s2s.value_and_grad(loss_at), in_axes=(0, None, None))


def sweep(params, times, observed):
    """``(losses, gradients)`` of ``value_and_grad`` at each row of ``params``."""
    out = [value_and_grad(p, times, observed) for p in params]
    return np.array([v for v, _ in out]), np.array([g for _, g in out])


def main(n=32, workers=2):
    import dask.bag as db
    from dask.distributed import Client, LocalCluster

    observed = simulate(true_params, times)
    grid = np.stack([np.linspace(1.0, 2.0, n), np.linspace(0.1, 0.5, n)[::-1]], axis=1)
    t0 = time.perf_counter()
    want_v, want_g = sweep(grid, times, observed)
    here = time.perf_counter() - t0
    print(f"{n} parameter sets in this process: {here:.2f} s (compile included)")

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        t_s, obs_s = client.scatter([times, observed], broadcast=True)

        t0 = time.perf_counter()
        futures = client.map(value_and_grad, list(grid), times=t_s, observed=obs_s)
        got = client.gather(futures)
        t_map = time.perf_counter() - t0
        v_map = np.array([v for v, _ in got])
        g_map = np.array([g for _, g in got])

        t0 = time.perf_counter()
        bag = db.from_sequence(list(grid), npartitions=2 * workers)
        got = bag.map(value_and_grad, times=times, observed=observed).compute()
        t_bag = time.perf_counter() - t0
        g_bag = np.array([g for _, g in got])

        t0 = time.perf_counter()
        blocks = np.array_split(grid, 2 * workers)
        got = client.gather(client.map(batched, blocks, [t_s] * len(blocks),
                                       [obs_s] * len(blocks)))
        t_vmap = time.perf_counter() - t0
        v_vmap = np.concatenate([v for v, _ in got])
        g_vmap = np.concatenate([g for _, g in got])

    for name, seconds, g in (("client.map, one task per set", t_map, g_map),
                             ("dask.bag, one task per partition", t_bag, g_bag),
                             ("vmap per block (Python mode)", t_vmap, g_vmap)):
        print(f"{name:34s} {seconds:6.2f} s  largest difference from this process "
              f"{np.max(np.abs(g - want_g)):.1e}")
    assert np.allclose(v_map, want_v, rtol=1e-12, atol=0) and np.allclose(v_vmap, want_v)
    best = int(np.argmin(want_v))
    print(f"lowest loss {want_v[best]:.3e} at omega {grid[best, 0]:.3f}, zeta "
          f"{grid[best, 1]:.3f} (true {true_params})")
    return want_g, g_map, g_bag, g_vmap


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:3]])
