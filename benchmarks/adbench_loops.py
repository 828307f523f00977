"""In-place loop kernels as a numerical user writes them (element loops over ``np.empty``
/ ``copy`` buffers, buffers swapped by name, sweeps that read what they just wrote).
Each returns a float; ``adbench.py`` differentiates it with respect to its first argument.
"""
import math

import numpy as np


def heat1d_copyback(u0, steps):
    """Explicit 1-D heat steps into a scratch buffer, copied back element by element."""
    u = u0.copy()
    v = u0.copy()
    n = u.shape[0]
    for s in range(steps):
        for i in range(1, n - 1):
            v[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = v[i]
    return np.sum(u * u)


def heat1d_pingpong(u0, steps):
    """The same steps, the two buffers swapped by name after each step."""
    u = u0.copy()
    v = u0.copy()
    n = u.shape[0]
    for s in range(steps):
        for i in range(1, n - 1):
            v[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, v = v, u
    return np.sum(u * u)


def heat2d_copyback(u0, steps):
    """Five-point 2-D heat steps into a scratch buffer, copied back element by element."""
    u = u0.copy()
    v = u0.copy()
    n, m = u.shape
    for s in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + 0.2 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1]
                                           + u[i, j + 1] - 4.0 * u[i, j])
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                u[i, j] = v[i, j]
    return np.sum(u * u)


def heat2d_pingpong(u0, steps):
    """The 2-D steps, the two buffers swapped by name after each step."""
    u = u0.copy()
    v = u0.copy()
    n, m = u.shape
    for s in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + 0.2 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1]
                                           + u[i, j + 1] - 4.0 * u[i, j])
        u, v = v, u
    return np.sum(u * u)


def wave3(u0, steps):
    """Three-level wave equation (leapfrog), buffers rotated by name each step."""
    n = u0.shape[0]
    prev = u0.copy()
    cur = u0.copy()
    nxt = u0.copy()
    for s in range(steps):
        for i in range(1, n - 1):
            nxt[i] = 2.0 * cur[i] - prev[i] + 0.25 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1])
        prev, cur, nxt = cur, nxt, prev
    return np.sum(cur * cur)


def nonlinear_scan(x, a):
    """A nonlinear recurrence into a buffer: ``y[i] = tanh(a * y[i - 1] + x[i])``."""
    n = x.shape[0]
    y = np.empty(n)
    y[0] = math.tanh(x[0])
    for i in range(1, n):
        y[i] = math.tanh(a * y[i - 1] + x[i])
    return np.sum(y * y)


def thomas(d, a, b, c):
    """Thomas algorithm for the tridiagonal system (sub ``a``, diagonal ``b``, super
    ``c``, right-hand side ``d``), forward sweep in place on copies; sum of squares."""
    n = d.shape[0]
    cp = c.copy()
    dp = d.copy()
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / m
        dp[i] = (d[i] - a[i] * dp[i - 1]) / m
    x = np.empty(n)
    x[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return np.sum(x * x)


def gauss_seidel(f, sweeps):
    """Gauss-Seidel sweeps for ``-u'' + u**3 / 10 = f`` (1-D, zero ends), in place."""
    n = f.shape[0]
    u = np.zeros(n)
    h2 = 1.0 / ((n - 1) * (n - 1))
    for s in range(sweeps):
        for i in range(1, n - 1):
            u[i] = (u[i - 1] + u[i + 1] + h2 * (f[i] - 0.1 * u[i] * u[i] * u[i])) / 2.0
    return np.sum(u * u)


def gauss_seidel2d(f, sweeps):
    """Gauss-Seidel sweeps for the 2-D Poisson equation (zero boundary), in place."""
    n, m = f.shape
    u = np.zeros((n, m))
    for s in range(sweeps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                u[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]
                                  + f[i, j])
    return np.sum(u * u)


def upwind(u0, steps):
    """Upwind advection (Burgers' flux), in place, sweeping from the right so each
    update reads its left neighbour's old value."""
    u = u0.copy()
    n = u.shape[0]
    for s in range(steps):
        for i in range(n - 1, 0, -1):
            u[i] = u[i] - 0.4 * u[i] * (u[i] - u[i - 1])
    return np.sum(u * u)
