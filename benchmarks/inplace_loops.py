"""Buffers filled element by element inside loops: jit(grad(f)) / jit(f), one process.

Kernels (``tests/grad/buffer_kernels.py``): ``ode`` (a new buffer each step, filled
``z[i] = x[i] * y[i - 1]``, read whole), ``ode_reused`` (one buffer for all steps: read
whole, then written again), ``mixture`` (``main[j] = ...`` per point, then max and
logsumexp of it), ``pingpong`` (two buffers swapped by name, ``u, v = v, u``) and
``wave`` (three rotated by name).  Rows at n = 1000 and 10000 (points for ``mixture``,
with 8 components).  Each time is the minimum over rounds of the median of repeated
calls after a call that compiles; the compiled gradient is checked against central
finite differences (float64) at a small size first.  JAX (``jax.jit(jax.grad)`` of the
same maths written with slices and ``lax.fori_loop``) where installed.

The kernels are loaded by path, so the same script measures another checkout's s2s:
``/work/main/.venv/bin/python benchmarks/inplace_loops.py`` gives the numbers before
this change (the swapped and rotated buffers were refused there).

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/inplace_loops.py [--quick]
"""
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import s2s

_PATH = Path(__file__).resolve().parent.parent / "tests" / "grad" / "buffer_kernels.py"
_SPEC = importlib.util.spec_from_file_location("buffer_kernels", _PATH)
K = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(K)


def median_time(f, args, budget=0.3):
    f(*args)
    times = []
    t_end = time.perf_counter() + budget
    while len(times) < 5 or (time.perf_counter() < t_end and len(times) < 200):
        t0 = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def best(f, args, rounds=3):
    return min(median_time(f, args) for _ in range(rounds))


def fd(f, args, h=1e-6):
    x = np.array(args[0], dtype=float)
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        g.flat[k] = (f(x + e, *args[1:]) - f(x - e, *args[1:])) / (2 * h)
    return g


def cases(n, rng):
    return [("ode 5 steps", K.ode, (rng.normal(size=n), 0.5 * rng.normal(size=n), 5)),
            ("ode_reused 5 steps", K.ode_reused, (rng.normal(size=n), 0.5 * rng.normal(size=n), 5)),
            ("mixture k=8", K.mixture, (rng.normal(size=n), rng.normal(size=8))),
            ("pingpong 10 steps", K.pingpong, (0.1 * rng.normal(size=n), 10)),
            ("wave 10 steps", K.wave, (0.1 * rng.normal(size=n), 10))]


def jax_versions():
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError:
        return {}
    jax.config.update("jax_enable_x64", True)

    def ode(x, y, steps):
        def step(_, c):
            x, s = c
            z = jnp.concatenate([x[:1], x[1:] * y[:-1]])
            return x + 0.01 * z, s + jnp.sum(z * z)
        return lax.fori_loop(0, steps, step, (x, 0.0))[1]

    def ode_reused(x, y, steps):
        def step(_, c):
            x, s = c
            z = jnp.concatenate([x[:1], jnp.sin(x[1:]) * y[:-1]])
            return x + 0.01 * z, s + jnp.sum(z * x)
        return lax.fori_loop(0, steps, step, (x, 0.0))[1]

    def mixture(x, mu):
        main = -0.5 * (x[:, None] - mu[None, :]) ** 2
        mx = jnp.max(main, axis=1)
        return jnp.sum(mx + jnp.log(jnp.sum(jnp.exp(main - mx[:, None]), axis=1)))

    def pingpong(x, steps):
        def step(_, u):
            mid = u[1:-1] + 0.1 * (u[:-2] - 2.0 * u[1:-1] + u[2:]) - 0.05 * u[1:-1] ** 2
            return jnp.concatenate([u[:1], mid, u[-1:]])
        return jnp.sum(lax.fori_loop(0, steps, step, x) ** 2)

    def wave(x, steps):
        def step(_, c):
            prev, cur, nxt = c
            mid = 2.0 * cur[1:-1] - prev[1:-1] + 0.1 * (cur[:-2] - 2.0 * cur[1:-1] + cur[2:]) \
                * (1.0 + 0.1 * cur[1:-1] ** 2)
            return cur, nxt.at[1:-1].set(mid), prev
        prev, cur, _ = lax.fori_loop(0, steps, step, (x, x, jnp.zeros_like(x)))
        return jnp.sum(cur * cur) + jnp.sum(prev)

    fns = {"ode 5 steps": (ode, (2,)), "ode_reused 5 steps": (ode_reused, (2,)),
           "mixture k=8": (mixture, ()), "pingpong 10 steps": (pingpong, (1,)),
           "wave 10 steps": (wave, (1,))}
    return {k: (jax.jit(f, static_argnums=s), jax.jit(jax.grad(f), static_argnums=s))
            for k, (f, s) in fns.items()}


def main():
    quick = "--quick" in sys.argv
    rng = np.random.default_rng(0)
    jx = jax_versions()
    for name, fn, args in cases(9, rng):  # correctness first, at a small size
        try:
            g = s2s.jit(s2s.grad(fn))(*args)
        except Exception as e:  # noqa: BLE001  (refused by this version of s2s)
            print(f"{name}: refused: {str(e).splitlines()[0][:120]}")
            continue
        if not np.allclose(g, fd(fn, args), rtol=1e-6, atol=1e-8):
            sys.exit(f"WRONG gradient: {name}")
        if name in jx and not np.allclose(jx[name][1](*args), g, rtol=1e-9, atol=1e-12):
            sys.exit(f"JAX version differs: {name}")
    print(f"{'kernel':20s} {'n':>6s} {'jit(f) ms':>10s} {'jit(grad) ms':>13s} {'grad/f':>7s}"
          f" {'JAX f ms':>9s} {'JAX grad ms':>12s} {'JAX grad/f':>10s}")
    for n in ([1000] if quick else [1000, 10000]):
        for name, fn, args in cases(n, rng):
            f, g = s2s.jit(fn), s2s.jit(s2s.grad(fn))
            try:
                g(*args)
            except Exception:  # noqa: BLE001
                print(f"{name:20s} {n:6d}   refused")
                continue
            tf, tg = best(f, args), best(g, args)
            row = f"{name:20s} {n:6d} {tf * 1e3:10.4f} {tg * 1e3:13.4f} {tg / tf:7.2f}"
            if name in jx:
                jf, jg = jx[name]
                tjf, tjg = best(jf, args), best(jg, args)
                row += f" {tjf * 1e3:9.4f} {tjg * 1e3:12.4f} {tjg / tjf:10.2f}"
            print(row, flush=True)


if __name__ == "__main__":
    main()
