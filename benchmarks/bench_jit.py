"""s2s.jit side by side: plain Python, Numba, s2s.jit, the jitted gradient, JAX.

Kernels (``jit_kernels.py``): RK4 damped oscillator (2000 steps), 1-D heat
stencil with in-place writes (128 points, 200 steps), loop logsumexp (1000),
GMM objective with loops (d=5, k=10, n=500), a small LSTM step loop (16 hidden
units, 8 inputs, 20 steps; gradient with respect to the recurrent weights).  Each row: median wall time of
repeated calls (after a warm-up call that compiles), in one process.  Numba
and JAX rows are skipped when those packages are missing (they are benchmark-only).
Also the call overhead of a jitted function of two floats, and the compile time of
each kernel and its gradient per stage (``compile_time.py``).

Correctness first: the jitted primal must equal Python's and the jitted gradient
central finite differences, or the script stops with WRONG.

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_jit.py
"""
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jit_kernels as K  # noqa: E402
from timing import median_time  # noqa: E402

import s2s  # noqa: E402

try:
    import numba
except ImportError:
    numba = None
try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = None


def fd(f, args, i, eps=1e-6):
    a = list(args)
    x = np.asarray(a[i], dtype=float)
    g = np.zeros(x.shape)
    for idx in np.ndindex(*x.shape):
        for sgn in (1, -1):
            p = x.copy()
            p[idx] += sgn * eps * max(1.0, abs(x[idx]))
            a[i] = p if x.shape else float(p)
            g[idx] += sgn * f(*a)
        g[idx] /= 2 * eps * max(1.0, abs(x[idx]))
    return g


# -- JAX versions (lax.fori_loop / slices) ---------------------------------------------
def jax_versions():
    from jax import lax

    def rk4(omega, zeta, x0, v0, h, n):
        def step(i, s):
            x, v = s
            acc = lambda x, v: -omega * omega * x - 2.0 * zeta * omega * v  # noqa: E731
            a1 = acc(x, v)
            x2, v2 = x + 0.5 * h * v, v + 0.5 * h * a1
            a2 = acc(x2, v2)
            x3, v3 = x + 0.5 * h * v2, v + 0.5 * h * a2
            a3 = acc(x3, v3)
            x4, v4 = x + h * v3, v + h * a3
            a4 = acc(x4, v4)
            return (x + h / 6.0 * (v + 2 * v2 + 2 * v3 + v4),
                    v + h / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4))
        x, v = lax.fori_loop(0, n, step, (x0, v0))
        return 0.5 * v * v + 0.5 * omega * omega * x * x

    def heat(u0, steps):
        def step(s, u):  # Jacobi form of the stencil (the loop above is Gauss-Seidel-like)
            return u.at[1:-1].set(u[1:-1] + 0.25 * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
        u = lax.fori_loop(0, steps, step, u0)
        return jnp.sum(u * u)

    def logsumexp(x):
        m = jnp.max(x)
        return m + jnp.log(jnp.sum(jnp.exp(x - m)))

    def gmm(alphas, means, icf, x):
        n = x.shape[0]
        z = jnp.exp(icf)[None] * (x[:, None, :] - means[None])
        v = alphas[None] + jnp.sum(icf, axis=1)[None] - 0.5 * jnp.sum(z * z, axis=2)
        m = jnp.max(v, axis=1)
        total = jnp.sum(m + jnp.log(jnp.sum(jnp.exp(v - m[:, None]), axis=1)))
        amax = jnp.max(alphas)
        return total - n * (amax + jnp.log(jnp.sum(jnp.exp(alphas - amax))))

    def lstm(wx, wh, b, xs, h0, c0):
        nh = h0.shape[0]

        def step(t, hc):
            h, c = hc
            z = wx @ xs[t] + wh @ h + b
            ig = 1.0 / (1.0 + jnp.exp(-z[:nh]))
            fg = 1.0 / (1.0 + jnp.exp(-z[nh:2 * nh]))
            og = 1.0 / (1.0 + jnp.exp(-z[2 * nh:3 * nh]))
            c = fg * c + ig * jnp.tanh(z[3 * nh:])
            return og * jnp.tanh(c), c
        h, _ = lax.fori_loop(0, xs.shape[0], step, (h0, c0))
        return jnp.sum(h * h)

    return {"rk4": (rk4, (0, 1, 2, 3), {5}), "heat": (heat, (0,), {1}),
            "logsumexp": (logsumexp, (0,), set()), "gmm": (gmm, (0, 1, 2), set()),
            "lstm": (lstm, (1,), set())}


def main():
    rng = np.random.default_rng(0)
    cases = K.cases(rng)
    # the finite-difference check on smaller arguments where the kernel is large
    small_args = {"gmm": lambda a: (a[0], a[1], a[2], a[3][:20]),
                  "lstm": lambda a: K.lstm_args(np.random.default_rng(1), 4, 3, 5)}
    jx = jax_versions() if jax is not None else {}
    rows = []
    for name, (f, args, wrt) in cases.items():
        jf = s2s.jit(f)
        jg = s2s.jit(s2s.grad(f, argnums=wrt))
        want = f(*args)
        got = jf(*args)
        if not np.isclose(got, want, rtol=1e-9):
            sys.exit(f"WRONG: {name} primal {got} != {want}")
        small = small_args[name](args) if name in small_args else args
        ref = fd(f, small, wrt)
        gs = jg(*small)
        if not np.allclose(gs, ref, rtol=1e-5, atol=1e-7):
            sys.exit(f"WRONG: {name} gradient {gs} vs finite differences {ref}")
        row = {"kernel": name, "python": median_time(f, args, budget=0.5, min_runs=2),
               "s2s.jit": median_time(jf, args), "jit(grad)": median_time(jg, args)}
        if numba is not None:
            nf = numba.njit(f)
            row["numba"] = median_time(nf, args)
        if name in jx:
            jfun, _, static = jx[name]
            jgrad = jax.jit(jax.grad(jfun, argnums=wrt), static_argnums=tuple(static))
            jargs = tuple(a if k in static else jnp.asarray(a) for k, a in enumerate(args))
            row["jax.jit(grad)"] = median_time(
                lambda *a: jax.block_until_ready(jgrad(*a)), jargs)
        rows.append(row)

    def ms(t):
        return f"{t * 1e3:9.3f}" if t is not None else "        -"

    print(f"{'kernel':10} {'python':>9} {'numba':>9} {'s2s.jit':>9} {'jit/numba':>9} "
          f"{'jit(grad)':>9} {'grad/f':>7} {'jax grad':>9} {'jax/jit(grad)':>13}   (ms)")
    for r in rows:
        nb = r.get("numba")
        jg = r.get("jax.jit(grad)")
        print(f"{r['kernel']:10} {ms(r['python'])} {ms(nb)} {ms(r['s2s.jit'])} "
              f"{(r['s2s.jit'] / nb if nb else float('nan')):9.2f} {ms(r['jit(grad)'])} "
              f"{r['jit(grad)'] / r['s2s.jit']:7.1f} {ms(jg)} "
              f"{(jg / r['jit(grad)'] if jg else float('nan')):13.2f}")

    def add(a, b):
        return a + b

    j = s2s.jit(add)
    j(1.0, 2.0)
    n = 200000
    per = timeit.timeit("j(1.0, 2.0)", globals={"j": j}, number=n) / n
    line = f"call overhead, function of two floats: s2s.jit {per * 1e6:.2f} us"
    if numba is not None:
        nj = numba.njit(add)
        nj(1.0, 2.0)
        line += f", numba {timeit.timeit('j(1.0, 2.0)', globals={'j': nj}, number=n) / n * 1e6:.2f} us"
    print(line)

    import compile_time  # the compile-time rows: per stage, the same kernels and a linalg one
    compile_time.print_table(compile_time.table({**cases, "linalg": compile_time.linalg_case()}))


if __name__ == "__main__":
    main()
