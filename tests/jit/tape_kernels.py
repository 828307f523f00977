"""Loop kernels with in-place writes whose gradients record little or nothing on the
tape once the jit knows the types (test_lean_tapes.py); each exercises a path the
tape must stay balanced on: break, continue, an early return, a while loop, a try.
``heat``, ``gmm`` and ``lstm`` are the benchmarks' kernels (``loop_kernels.py``)."""
import math

import numpy as np

from .loop_kernels import gmm, heat, lstm

__all__ = ["gmm", "heat", "lstm", "qtimesx", "scaled_in_place"]  # with the kernels below (test_lean_tapes reads them here)


def stencil_continue_break(u0, steps, cap):
    u = u0.copy()
    n = u.shape[0]
    for s in range(steps):
        left = u[0]
        for i in range(1, n - 1):
            if u[i] > cap:  # data-dependent: skip hot cells
                left = u[i]
                continue
            new = u[i] + 0.2 * (left - 2.0 * u[i] + u[i + 1])
            left = u[i]
            u[i] = new
        if np.sum(u) > 3.0 * cap * n:
            break
    return np.sum(u * u * u)


def nonlinear_early_return(u0, steps):
    u = u0.copy()
    for s in range(steps):
        for i in range(1, u.shape[0]):
            u[i] = 0.9 * u[i] + 0.1 * math.sin(u[i - 1])
        if u[0] * u[1] > 10.0:
            return np.sum(u)
    return np.sum(u * u)


def while_relax(u0, tol):
    u = u0.copy()
    n = u.shape[0]
    change = 1.0
    k = 0
    while change > tol and k < 50:
        change = 0.0
        for i in range(1, n - 1):
            new = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1])
            change = change + abs(new - u[i])
            u[i] = new
        k = k + 1
    return np.sum(u * u)


def try_in_loop(u0, steps):
    u = u0.copy()
    for s in range(steps):
        for i in range(u.shape[0] - 1):
            try:
                if u[i] < -5.0:
                    raise ValueError
                u[i] = u[i] + 0.1 * u[i + 1] * u[i + 1]
            except ValueError:
                u[i] = 0.0
    return np.sum(u)


def long_range_with_break(x, stop):
    s = x
    for i in range(10 ** 7):
        s = math.sin(s) + 0.5 * s
        if i >= stop:
            break
    return s * s


def shared_adjoint(x, n):
    """``y``'s adjoint and ``z``'s start from the same cotangent (an array two values
    read): the loop's in-place updates must not reach the other one."""
    y = x.copy()
    z = y + 0.0
    w = y * 1.0
    for s in range(n):
        for i in range(1, y.shape[0]):
            y[i] = y[i] + 0.5 * y[i - 1]
    return np.sum(y * w) + np.sum(z * w)


def qtimesx(icf, x):
    """ADBench's GMM triangular loop (``Qtimesx``): ``l[idx]`` applied to ``xc[i]`` for
    ``j > i``, ``idx`` counting along; ``xc`` made anew per point and never written."""
    n, d = x.shape
    l = icf[d:]
    total = 0.0
    for ix in range(n):
        xc = x[ix] - icf[:d]
        qxc = np.exp(icf[:d]) * xc
        idx = 0
        for i in range(d):
            for j in range(i + 1, d):
                qxc[j] = qxc[j] + l[idx] * xc[i]
                idx = idx + 1
        total = total + np.sum(qxc * qxc)
    return total


def scaled_in_place(x, steps):
    """An array made in the loop and then written in place: its elements change, so the
    adjoint must not read them again (they stay recorded)."""
    total = 0.0
    for s in range(steps):
        v = x * (1.0 + 0.1 * s)
        for i in range(x.shape[0]):
            total = total + math.sin(v[i]) * v[i]
            v[i] = 0.5 * v[i] * v[i]
        total = total + np.sum(v)
    return total
