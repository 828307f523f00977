"""Gradient time / primal time for a 2-layer MLP loss (numpy float64).

Batch 256 x 512 features, hidden 512 (tanh), 512 outputs, mean squared
error: ``fixtures.mlp_loss(params, x, y)``.  For each implementation we time
the primal loss and the gradient with respect to all parameters (best of N,
``timeit``-style, interleaved) in one process and report the ratio (target for s2s: <= 3x).

- numpy: the primal is the plain numpy function; the gradient is the code
  s2s generated for it (``s2s.grad(mlp_loss)``, after the first call).
- numpy, hand-written: the same gradient written by hand in numpy (the
  floor for code that calls numpy, whoever writes it).
- jax (if importable): ``jax.jit(loss)`` and ``jax.jit(jax.grad(loss))``,
  float64 enabled, for reference.
- torch (if importable): the same loss in torch float64, ``backward()``.

Run:  python benchmarks/bench_mlp.py
"""
import os
import sys
import timeit
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fixtures  # noqa: E402

import s2s  # noqa: E402

BATCH, FEATURES, HIDDEN, OUT = 256, 512, 512, 512
REPEAT, NUMBER = 7, 5      # jax/torch rows: best of REPEAT x NUMBER
ROUNDS = 15                # numpy rows: best of ROUNDS interleaved rounds of NUMBER


def best_ms(fn):
    fn()
    return min(timeit.repeat(fn, number=NUMBER, repeat=REPEAT)) / NUMBER * 1e3


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    params = {
        "w1": rng.standard_normal((FEATURES, HIDDEN)) / np.sqrt(FEATURES),
        "b1": np.zeros(HIDDEN),
        "w2": rng.standard_normal((HIDDEN, OUT)) / np.sqrt(HIDDEN),
        "b2": np.zeros(OUT),
    }
    x = rng.standard_normal((BATCH, FEATURES))
    y = rng.standard_normal((BATCH, OUT))
    return params, x, y


def manual_grad(params, x, y):
    """The gradient written by hand in numpy: the floor for any numpy-based AD."""
    z1 = x @ params["w1"] + params["b1"]
    h = np.tanh(z1)
    diff = h @ params["w2"] + params["b2"] - y
    g_pred = diff * (2.0 / diff.size)
    g_h = g_pred @ params["w2"].T
    g_z1 = g_h * (1.0 - h * h)
    return {"b1": g_z1.sum(axis=0), "b2": g_pred.sum(axis=0),
            "w1": x.T @ g_z1, "w2": h.T @ g_pred}


def bench_jax(params, x, y):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean(jnp.square(h @ p["w2"] + p["b2"] - y))

    jp = {k: jnp.asarray(v) for k, v in params.items()}
    jx, jy = jnp.asarray(x), jnp.asarray(y)
    f, g = jax.jit(loss), jax.jit(jax.grad(loss))
    primal = best_ms(lambda: f(jp, jx, jy).block_until_ready())
    grad = best_ms(lambda: jax.tree_util.tree_map(lambda a: a.block_until_ready(),
                                                  g(jp, jx, jy)))
    return primal, grad


def bench_torch(params, x, y):
    try:
        import torch
    except ImportError:
        return None
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    tx, ty = torch.tensor(x), torch.tensor(y)

    def loss():
        h = torch.tanh(tx @ tp["w1"] + tp["b1"])
        return torch.mean(torch.square(h @ tp["w2"] + tp["b2"] - ty))

    def grad():
        for p in tp.values():
            p.grad = None
        loss().backward()

    with torch.no_grad():
        primal = best_ms(loss)
    return primal, best_ms(grad)


def main():
    print(f"s2s {s2s.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs")
    print(f"MLP loss: batch {BATCH}, {FEATURES} features, hidden {HIDDEN} (tanh), "
          f"{OUT} outputs, MSE, float64; best of {ROUNDS} interleaved rounds of {NUMBER} calls")
    params, x, y = make_data()

    # the gradient is right (one entry against central differences)
    g = s2s.grad(fixtures.mlp_loss)(params, x, y)
    eps = 1e-6
    plus = dict(params, w1=params["w1"].copy())
    minus = dict(params, w1=params["w1"].copy())
    plus["w1"][3, 5] += eps
    minus["w1"][3, 5] -= eps
    fd = (fixtures.mlp_loss(plus, x, y) - fixtures.mlp_loss(minus, x, y)) / (2 * eps)
    assert abs(g["w1"][3, 5] - fd) <= 1e-6 * max(1.0, abs(fd)), (g["w1"][3, 5], fd)
    ref = manual_grad(params, x, y)
    assert all(np.allclose(g[k], ref[k], rtol=1e-10, atol=1e-12) for k in ref)

    # The machine may be shared: numpy-based rows are timed interleaved, round
    # by round, and each keeps its best round, so that a busy spell hurts all.
    g = s2s.grad(fixtures.mlp_loss)
    g(params, x, y)                       # transform once (cached afterwards)
    gen, free = g.generated([params, x, y])   # the generated function, its free variables
    assert not free, free                 # mlp_loss reads no free variables
    fns = {
        "primal": lambda: fixtures.mlp_loss(params, x, y),
        "s2s": lambda: g(params, x, y),
        "direct": lambda: gen(params, x, y),
        "manual": lambda: manual_grad(params, x, y),
    }
    best = {k: float("inf") for k in fns}
    for _ in range(ROUNDS):
        for k, fn in fns.items():
            best[k] = min(best[k], min(timeit.repeat(fn, number=NUMBER, repeat=1)) / NUMBER * 1e3)
    primal = best["primal"]

    print(f"\n{'implementation':<42}{'primal ms':>11}{'grad ms':>10}{'grad/primal':>13}")
    for label, key in (("numpy primal, s2s.grad(loss)", "s2s"),
                       ("numpy primal, generated fn called direct", "direct"),
                       ("numpy primal, hand-written numpy grad", "manual")):
        print(f"{label:<42}{primal:>11.2f}{best[key]:>10.2f}{best[key] / primal:>12.2f}x")
    for label, fn in (("jax.jit / jax.jit(jax.grad), float64", bench_jax),
                      ("torch float64, backward()", bench_torch)):
        res = fn(params, x, y)
        if res is None:
            print(f"{label:<42}{'(not installed: skipped)':>34}")
        else:
            p, gr = res
            print(f"{label:<42}{p:>11.2f}{gr:>10.2f}{gr / p:>12.2f}x")


if __name__ == "__main__":
    main()
