"""Loops that fill arrays element by element, as numpy users write them: a buffer made
once (or once per step) and written in place, read whole later or at other indices,
swapped or rotated by name.  Shared by ``test_inplace_buffers.py`` and
``benchmarks/inplace_loops.py``."""
import numpy as np


def ode(x, y, steps):
    """Explicit steps of an ODE whose right-hand side fills a new buffer each step."""
    n = x.shape[0]
    s = 0.0
    for step in range(steps):
        z = np.empty(n)
        z[0] = x[0]
        for i in range(1, n):
            z[i] = x[i] * y[i - 1]
        s = s + np.sum(z * z)
        x = x + 0.01 * z
    return s


def ode_reused(x, y, steps):
    """The same with one buffer made before the step loop: read whole, then written again."""
    n = x.shape[0]
    s = 0.0
    z = np.zeros(n)
    for step in range(steps):
        z[0] = x[0]
        for i in range(1, n):
            z[i] = np.sin(x[i]) * y[i - 1]
        s = s + np.sum(z * x)
        x = x + 0.01 * z
    return s


def fill2d(a, steps):
    """A 2-D buffer written in a double loop, reading its own old elements, read whole
    after each step."""
    n, m = a.shape
    z = np.zeros((n, m))
    s = 0.0
    for t in range(steps):
        for i in range(n):
            for j in range(m):
                z[i, j] = np.sin(a[i, j] * (t + 1)) + 0.5 * z[i, j]
        s = s + np.sum(z * a)
    return s


def scan(x):
    """A nonlinear scan: each element reads the one before."""
    n = x.shape[0]
    z = np.zeros(n)
    z[0] = x[0]
    for i in range(1, n):
        z[i] = np.sin(z[i - 1]) * x[i] + 0.5 * z[i - 1]
    return np.sum(z * z)


def pingpong(x, steps):
    """A 1-D stencil that swaps its two buffers by name each step."""
    n = x.shape[0]
    u = x.copy()
    v = np.zeros(n)
    for t in range(steps):
        v[0] = u[0]
        v[n - 1] = u[n - 1]
        for i in range(1, n - 1):
            v[i] = u[i] + 0.1 * (u[i - 1] - 2.0 * u[i] + u[i + 1]) - 0.05 * u[i] ** 2
        u, v = v, u
    return np.sum(u * u)


def pingpong_read_whole(x, steps):
    """Swapped buffers, one of them read whole each step (a snapshot per step)."""
    n = x.shape[0]
    u = x.copy()
    v = np.zeros(n)
    s = 0.0
    for t in range(steps):
        for i in range(1, n - 1):
            v[i] = u[i] * u[i + 1] + 0.1 * u[i - 1]
        s = s + np.sum(np.sin(v) * u)
        u, v = v, u
    return s + np.sum(u)


def wave(x, steps):
    """A three-level wave update rotating ``prev, cur, nxt`` by name."""
    n = x.shape[0]
    prev = x.copy()
    cur = x.copy()
    nxt = np.zeros(n)
    for t in range(steps):
        for i in range(1, n - 1):
            nxt[i] = 2.0 * cur[i] - prev[i] + 0.1 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]) \
                * (1.0 + 0.1 * cur[i] ** 2)
        prev, cur, nxt = cur, nxt, prev
    return np.sum(cur * cur) + np.sum(prev)


def heat2d_swap(a, steps):
    """A 2-D five-point stencil over two swapped buffers."""
    n, m = a.shape
    u = a.copy()
    v = a.copy()
    for t in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + 0.1 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1]
                                           + u[i, j + 1] - 4.0 * u[i, j]) * u[i, j]
        u, v = v, u
    return np.sum(u * u)


def sweeps_while(x, tol):
    """A ``while`` loop of sweeps over two buffers, swapped only on some sweeps."""
    n = x.shape[0]
    u = x.copy()
    v = np.zeros(n)
    k = 0
    while k < 6 and np.max(np.abs(u)) > tol:
        for i in range(1, n - 1):
            v[i] = 0.3 * (u[i - 1] + u[i + 1]) + 0.2 * np.sin(u[i])
        if k % 3 != 2:
            u, v = v, u
        k += 1
    return np.sum(u * u) + np.sum(v)


def _scratch(n):
    return np.zeros(n)


def helper_buffer(x, steps):
    """A buffer returned from a helper, swapped by name with a copy of the input."""
    n = x.shape[0]
    u = x.copy()
    v = _scratch(n)
    for t in range(steps):
        for i in range(1, n - 1):
            v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]) * u[i]
        u, v = v, u
    return np.sum(u * u)


def mixture(x, mu):
    """A one-dimensional Gaussian mixture's log-likelihood: ``main[k] = ...`` per point,
    read whole (max, logsumexp) after the loop over components."""
    n = x.shape[0]
    k = mu.shape[0]
    main = np.empty(k)
    total = 0.0
    for p in range(n):
        for j in range(k):
            main[j] = -0.5 * (x[p] - mu[j]) ** 2
        mx = np.max(main)
        total = total + mx + np.log(np.sum(np.exp(main - mx)))
    return total


# ---------------------------------------------------------------- must stay refused

def alias_after_write(x):
    """``w`` names the array ``u`` writes into and is read after the write."""
    u = np.zeros(x.shape[0])
    w = u
    for i in range(x.shape[0]):
        u[i] = x[i] ** 2
    return np.sum(w * x)


def swap_then_alias(x, steps):
    """Buffers swapped, then both names made the same array: a real alias."""
    n = x.shape[0]
    u = x.copy()
    v = np.zeros(n)
    for t in range(steps):
        for i in range(1, n - 1):
            v[i] = u[i - 1] * u[i + 1]
        u, v = v, u
        v = u
        s = np.sum(u * x)
    return s + np.sum(v)


def view_after_write(x):
    """A view of the buffer taken before the writes is read after them."""
    u = np.zeros(x.shape[0])
    head = u[:2]
    for i in range(x.shape[0]):
        u[i] = x[i] * 3.0
    return np.sum(head * x[:2])
