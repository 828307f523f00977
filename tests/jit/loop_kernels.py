"""Loop kernels written as plain Python loops: the ones ``benchmarks/bench_jit.py`` times
(s2s and Numba compile these same functions; JAX versions use lax.fori_loop / slices
there) and the tests check (``tape_kernels.py``, ``test_lean_tapes.py``).  One copy:
``benchmarks/jit_kernels.py`` re-exports them."""
import math

import numpy as np


def rk4_energy(omega, zeta, x0, v0, h, n):
    """A damped oscillator integrated with n RK4 steps; the final energy."""
    x, v = x0, v0
    for i in range(n):
        a1 = -omega * omega * x - 2.0 * zeta * omega * v
        x2, v2 = x + 0.5 * h * v, v + 0.5 * h * a1
        a2 = -omega * omega * x2 - 2.0 * zeta * omega * v2
        x3, v3 = x + 0.5 * h * v2, v + 0.5 * h * a2
        a3 = -omega * omega * x3 - 2.0 * zeta * omega * v3
        x4, v4 = x + h * v3, v + h * a3
        a4 = -omega * omega * x4 - 2.0 * zeta * omega * v4
        x = x + h / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4)
        v = v + h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    return 0.5 * v * v + 0.5 * omega * omega * x * x


def heat(u0, steps):
    """A 1-D heat equation, explicit stencil with in-place writes; sum of squares."""
    u = u0.copy()
    n = u.shape[0]
    for s in range(steps):
        left = u[0]
        for i in range(1, n - 1):
            new = u[i] + 0.25 * (left - 2.0 * u[i] + u[i + 1])
            left = u[i]
            u[i] = new
    return np.sum(u * u)


def logsumexp(x):
    m = x[0]
    for i in range(x.shape[0]):
        if x[i] > m:
            m = x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s = s + math.exp(x[i] - m)
    return m + math.log(s)


def gmm(alphas, means, icf, x):
    """ADBench-style GMM objective, diagonal covariances, written with loops.

    Structured like ADBench's reference C++ objective: ``exp(icf)`` and the
    per-component sums of ``icf`` are computed once, before the loop over the
    data, and each point's k main terms go into a buffer written in place
    (its overwritten values are what the gradient's tape records)."""
    n, d = x.shape
    k = alphas.shape[0]
    qdiag = np.empty((k, d))
    sum_qs = np.empty(k)
    for j in range(k):
        sum_qs[j] = np.sum(icf[j, :])
        for l in range(d):
            qdiag[j, l] = math.exp(icf[j, l])
    main = np.empty(k)
    total = 0.0
    for i in range(n):
        m = -1e300
        for j in range(k):
            s = 0.0
            for l in range(d):
                z = qdiag[j, l] * (x[i, l] - means[j, l])
                s = s + z * z
            main[j] = alphas[j] + sum_qs[j] - 0.5 * s
            if main[j] > m:
                m = main[j]
        acc = 0.0
        for j in range(k):
            acc = acc + math.exp(main[j] - m)
        total = total + m + math.log(acc)
    amax = alphas[0]
    for j in range(k):
        if alphas[j] > amax:
            amax = alphas[j]
    asum = 0.0
    for j in range(k):
        asum = asum + math.exp(alphas[j] - amax)
    return total - n * (amax + math.log(asum))


def lstm(wx, wh, b, xs, h0, c0):
    """A small LSTM run over a sequence: per step, the four gates' pre-activations
    ``z = wx @ x_t + wh @ h + b`` (2-D weights, explicit loops into a buffer written
    in place), sigmoid input/forget/output gates, a tanh candidate, the cell and
    hidden state updated in place; the sum of squares of the last hidden state."""
    steps, nin = xs.shape
    nh = h0.shape[0]
    h = h0.copy()
    c = c0.copy()
    z = np.empty(4 * nh)
    for t in range(steps):
        for r in range(4 * nh):
            s = b[r]
            for q in range(nin):
                s = s + wx[r, q] * xs[t, q]
            for q in range(nh):
                s = s + wh[r, q] * h[q]
            z[r] = s
        for u in range(nh):
            ig = 1.0 / (1.0 + math.exp(-z[u]))
            fg = 1.0 / (1.0 + math.exp(-z[nh + u]))
            og = 1.0 / (1.0 + math.exp(-z[2 * nh + u]))
            g = math.tanh(z[3 * nh + u])
            c[u] = fg * c[u] + ig * g
            h[u] = og * math.tanh(c[u])
    return np.sum(h * h)
