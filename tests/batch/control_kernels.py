"""Functions whose control flow differs per example (data-dependent ``while`` loops,
``for`` loops over per-example ranges, branches inside loops, nested in each other):
what ``test_vmap_grad_control.py`` checks ``vmap(grad(f))`` on and
``benchmarks/bench_vmap_grad_control.py`` times (one copy)."""
import numpy as np


def grow(x):
    y = x
    while y < 10.0:
        y = y * 1.5 + np.sin(y)
    return y * x


def newton_sqrt(a):
    r = a
    while abs(r * r - a) > 1e-12:
        r = 0.5 * (r + a / r)
    return r


def per_example_range(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sin(x * i) * x
    return s


def branches_in_loop(x, n):
    s = x
    for i in range(n):
        if s > 1.0:
            s = s * 0.5 + np.cos(s * i)
        else:
            s = s * s + 1.0
    return s


def while_in_for(x, n):
    s = 0.0
    for i in range(n):
        y = x
        while y < 5.0 + i:
            y = y * 1.3 + 0.1
        s = s + y * np.cos(x * i)
    return s


def for_in_while(x, m):
    s = x
    k = 0
    while s < 20.0:
        for i in range(m):
            s = s + x * np.sin(i + s) + 1.0
        s = s + 2.0
        k = k + 1
    return s * k


def strided_ranges(x, a, b):
    s = x
    for i in range(a, b, 2):
        s = s * np.tanh(x + i) + x
    for j in range(b, a, -1):
        if s > 0.5 * j:
            s = s - 0.1 * np.sin(s)
        else:
            s = s * 1.1
    return s


def while_in_branch(x):
    if x > 1.0:
        y = x
        while y < 8.0:
            y = y * y + 0.5
        return y
    return x * x * 3.0


def array_while(x, c):
    n = 0
    while np.sum(x * x) < c:
        x = x * 1.3 + 0.2 * np.tanh(x)
        n = n + 1
    return np.sum(x ** 3) + n


def two_args(w, x, n):
    s = w * x
    k = 0
    while k < n:
        s = np.tanh(s * w + x)
        k = k + 1
    return s * w
