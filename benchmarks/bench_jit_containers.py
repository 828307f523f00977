"""Fancy indexing, dicts and grown lists under jit, side by side: plain Python (numpy),
``s2s.jit(f)``, Python-mode ``s2s.grad(f)`` and ``s2s.jit(s2s.grad(f))``.

Kernels: a scatter-gather edge loop with integer index arrays (``y[dst[e]] +=
w[e] * x[src[e]]`` over 2000 edges, then a masked read), a recurrence that grows a
list by ``append`` (1000 steps), an MLP loss over a params dict (loop over 64 rows).

Correctness first: every jitted result is compared with Python's; no assertion is
made on times.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/bench_jit_containers.py
"""

import numpy as np

import s2s
from timing import best


def edges(x, w, src, dst):
    y = np.zeros(x.shape[0])
    for e in range(src.shape[0]):
        y[dst[e]] = y[dst[e]] + w[e] * x[src[e]]
    z = np.tanh(y[src]) * x[dst]
    return np.sum(z[z > 0.0] ** 2)


def grown(x):
    acc = []
    s = 0.0
    for k in range(1000):
        s = 0.9 * s + np.sin(x[k % x.shape[0]] + s)
        acc.append(s)
    return sum(acc) / len(acc) + acc[-1]


def mlp(params, x):
    total = 0.0
    for i in range(x.shape[0]):
        h = np.tanh(x[i] @ params["W"] + params["b"])
        total = total + np.sum(h * params["v"]) ** 2
    return total


def main():
    rng = np.random.default_rng(0)
    n, m = 200, 2000
    x, w = rng.normal(size=n), rng.normal(size=m)
    src, dst = rng.integers(0, n, size=m), rng.integers(0, n, size=m)
    params = {"W": rng.normal(size=(8, 16)), "b": rng.normal(size=16),
              "v": rng.normal(size=16)}
    X = rng.normal(size=(64, 8))
    cases = [("edges", edges, (x, w, src, dst)), ("grown list", grown, (x,)),
             ("dict mlp", mlp, (params, X))]
    print(f"{'kernel':12s} {'python':>10s} {'jit':>10s} {'grad':>10s} {'jit(grad)':>10s}"
          f"  {'py/jit':>7s} {'jit(grad)/jit':>13s} {'grad/jit(grad)':>14s}")
    for name, f, args in cases:
        jf, g = s2s.jit(f), s2s.grad(f)
        jg = s2s.jit(g)
        np.testing.assert_allclose(jf(*args), f(*args), rtol=1e-10)
        got, want = jg(*args), g(*args)
        for a, b in zip(s2s.tree_util.tree_leaves(got), s2s.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
        t = {k: best(v) for k, v in [("python", lambda: f(*args)), ("jit", lambda: jf(*args)),
                                     ("grad", lambda: g(*args)), ("jit(grad)", lambda: jg(*args))]}
        print(f"{name:12s} " + " ".join(f"{t[k] * 1e6:8.1f}us" for k in t)
              + f"  {t['python'] / t['jit']:6.0f}x {t['jit(grad)'] / t['jit']:12.1f}x"
              + f" {t['grad'] / t['jit(grad)']:13.0f}x")


if __name__ == "__main__":
    main()
