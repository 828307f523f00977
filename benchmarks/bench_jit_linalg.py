"""np.linalg under s2s.jit side by side with numpy (LAPACK) on small float64 matrices.

Rows: solve (vector right-hand side), inv, det, cholesky and a loss built on solve
and slogdet, for n = 4, 16, 64: numpy called from Python, the same function
compiled by ``s2s.jit`` (native LU / Cholesky kernels, no LAPACK), and the compiled
gradient (``s2s.jit(s2s.grad(loss))``).  Median wall times in one process;
results are checked against numpy (and the gradient against central differences)
first, or the script stops with WRONG.

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_jit_linalg.py
"""
import sys

import numpy as np

import s2s
from timing import median_time

_RUNS = dict(budget=0.2, min_runs=5, max_runs=5000)  # small problems: more runs


def solve(a, b):
    return np.linalg.solve(a, b)


def inv(a):
    return np.linalg.inv(a)


def det(a):
    return np.linalg.det(a)


def chol(a):
    return np.linalg.cholesky(a)


def loss(a, b):
    x = np.linalg.solve(a, b)
    return np.sum(x * x) + np.linalg.slogdet(a)[1]


def fd_grad(f, a, b, eps=1e-6):
    g = np.zeros_like(a)
    for idx in np.ndindex(*a.shape):
        p, m = a.copy(), a.copy()
        p[idx] += eps
        m[idx] -= eps
        g[idx] = (f(p, b) - f(m, b)) / (2 * eps)
    return g


def main():
    rng = np.random.default_rng(0)
    print(f"{'kernel':14} {'n':>3} {'numpy':>10} {'s2s.jit':>10} {'jit/numpy':>9}   (us)")
    for n in (4, 16, 64):
        a = rng.standard_normal((n, n)) + n * np.eye(n)
        b = rng.standard_normal(n)
        spd = a @ a.T
        for f, args in ((solve, (a, b)), (inv, (a,)), (det, (a,)), (chol, (spd,)),
                        (loss, (a, b))):
            jf = s2s.jit(f)
            if not np.allclose(jf(*args), f(*args), rtol=1e-9, atol=1e-12):
                sys.exit(f"WRONG: {f.__name__} n={n}")
            tn, tj = median_time(f, args, **_RUNS), median_time(jf, args, **_RUNS)
            print(f"{f.__name__:14} {n:3d} {tn * 1e6:10.2f} {tj * 1e6:10.2f} {tj / tn:9.2f}")
        jg = s2s.jit(s2s.grad(loss))
        if n <= 16 and not np.allclose(jg(a, b), fd_grad(loss, a, b), rtol=1e-5, atol=1e-7):
            sys.exit(f"WRONG: grad loss n={n}")
        tl, tg = median_time(s2s.jit(loss), (a, b), **_RUNS), median_time(jg, (a, b), **_RUNS)
        print(f"{'jit(grad loss)':14} {n:3d} {'':10} {tg * 1e6:10.2f} {tg / tl:9.2f}  (/ jit(loss))")


if __name__ == "__main__":
    main()
