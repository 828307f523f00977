"""Stencil loops with in-place writes for test_stencil_adjoints.py (``scalar_windows.py``):
kernels whose adjoint keeps array elements in registers, and kernels it must leave alone."""
import math

import numpy as np

import s2s_runtime as rt

from tests.jit.loop_kernels import heat  # noqa: F401  (in place, with a carried scalar)


def five_point(u0, steps):
    """Offsets -2..+2, nonlinear (the adjoint reads recorded values)."""
    u = u0.copy()
    n = u.shape[0]
    for s in range(steps):
        for i in range(2, n - 2):
            u[i] = u[i] + 0.05 * (u[i - 2] - 0.5 * u[i - 1] + u[i + 1] * u[i] - 0.25 * u[i + 2])
    return np.sum(u * u)


def sweep_down(u0, a):
    """A reversed primal loop (its adjoint runs upwards)."""
    u = u0.copy()
    n = u.shape[0]
    for i in range(n - 2, 0, -1):
        u[i] = u[i] + a * u[i + 1] - 0.3 * math.sin(u[i - 1])
    return np.sum(u ** 3)


def recurrence(x, r):
    """A true recurrence: y[i] depends on the y[i - 1] just written."""
    y = x.copy()
    for i in range(1, y.shape[0]):
        y[i] = y[i] + r * y[i - 1]
    return np.sum(np.sin(y))


def gather(x):
    """Reads of the differentiated array at three offsets, writes into another."""
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(1, n - 1):
        out[i] = x[i - 1] * x[i] + x[i + 1]
    return np.sum(out * out)


def heat2d(u0, steps):
    """A 2-D stencil: the inner loop moves along the second axis."""
    u = u0.copy()
    n, m = u.shape
    for s in range(steps):
        for k in range(1, n - 1):
            left = u[k, 0]
            for j in range(1, m - 1):
                new = u[k, j] + 0.2 * (left - 2.0 * u[k, j] + u[k, j + 1]
                                       + u[k - 1, j] - u[k + 1, j])
                left = u[k, j]
                u[k, j] = new
    return np.sum(u * u)


def rows(x):
    """A 2-D array read along its rows only: index (k, j + c), k invariant in the loop."""
    n, m = x.shape
    total = 0.0
    for k in range(n):
        for j in range(1, m):
            total = total + x[k, j] * x[k, j - 1]
    return total


def two_rows(x, p):
    """Rows k and p (an argument) of one array: the same row when p == k."""
    n, m = x.shape
    y = x.copy()
    for k in range(n):
        for j in range(1, m):
            y[k, j] = y[k, j] + 0.5 * y[p, j] * y[k, j - 1]
    return np.sum(y * y)


def local_table(x):
    """A table the kernel fills, then reads at i and i - 1 (its adjoint loop reads it)."""
    n = x.shape[0]
    w = np.empty(n)
    for i in range(n):
        w[i] = math.exp(x[i])
    total = 0.0
    for i in range(1, n):
        total = total + w[i] * w[i - 1] * x[i]
    return total


def scaled_rows(icf, x):
    """A table of exponentials read row by row (as the GMM objective reads its own)."""
    k, d = icf.shape
    q = np.empty((k, d))
    for j in range(k):
        for l in range(d):
            q[j, l] = math.exp(icf[j, l])
    total = 0.0
    for j in range(k):
        for l in range(d):
            z = q[j, l] * x[l]
            total = total + z * z
    return total


def adjoint_by_hand(x, a, b):
    """Adjoint-style accumulation written out (as generated code has it), over any range."""
    acc = np.zeros(x.shape[0])
    for i in range(a, b):
        acc = rt.add_at(acc, 0.5, x, i + 2)
        acc = rt.add_at(acc, 0.25, x, i - 1)
    return acc


# -- kernels the register form must not apply to (or only after a run-time check fails) ----
def wraps_around(u0, c):
    """Indices -1 .. n-1: u[-1] is u[n - 1] (negative indices wrap)."""
    u = u0.copy()
    n = u.shape[0]
    for i in range(-1, n - 1):
        u[i] = u[i] + c * u[i + 1] * u[i + 1]
    return np.sum(u * u)


def not_affine(u0, c):
    """An index that is not i + constant."""
    u = u0.copy()
    n = u.shape[0]
    for i in range(1, n):
        u[i] = u[i] + c * u[(i * i) % n]
    return np.sum(u * u)


def writes_elsewhere(u0, c):
    """The loop also reads and writes u[0]."""
    u = u0.copy()
    n = u.shape[0]
    for i in range(1, n - 1):
        u[i] = u[i] + c * u[i + 1]
        u[0] = u[0] + c * u[i]
    return np.sum(u * u)


def step_two(u0, c):
    """Step 2: not a unit step."""
    u = u0.copy()
    n = u.shape[0]
    for i in range(1, n - 1, 2):
        u[i] = u[i] + c * u[i + 1] * u[i - 1]
    return np.sum(u * u)


def branchy(u0, c):
    """The array is written under a condition."""
    u = u0.copy()
    n = u.shape[0]
    for i in range(1, n - 1):
        if u[i] > 0.0:
            u[i] = u[i] + c * u[i + 1]
    return np.sum(u * u)


def through_view(u0, c):
    """Writes through a view of the array the loop also reads."""
    u = u0.copy()
    v = u[1:]
    n = u.shape[0]
    for i in range(1, n - 1):
        v[i - 1] = u[i] + c * (u[i - 1] - 2.0 * v[i - 1] + u[i + 1])
    return np.sum(u * u)
