"""Kernels the jit tests compile (module-level, so s2s can read their source)."""
from __future__ import annotations

import math

import numpy as np

import s2s


def add(a, b):
    return a + b


def rk4(y0, h, n):
    y = y0
    for i in range(n):
        k1 = -y + math.sin(i * h)
        k2 = -(y + 0.5 * h * k1)
        k3 = -(y + 0.5 * h * k2)
        k4 = -(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def heat(u, steps):
    u = u.copy()
    n = u.shape[0]
    for s in range(steps):
        for i in range(1, n - 1):
            u[i] = u[i] + 0.1 * (u[i - 1] - 2 * u[i] + u[i + 1])
    return u


def logsumexp(x):
    m = x[0]
    for i in range(len(x)):
        if x[i] > m:
            m = x[i]
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i] - m)
    return m + math.log(s)


def steps_and_jumps(n, limit):
    total = 0
    for i in range(n, -n, -3):
        if i == 0:
            continue
        if total > limit:
            break
        total += i * i
    else:
        total = -total
    k = 0
    while k < 100:
        k += 7
        if k % 5 == 0:
            break
    return total, k


def early_return(x):
    for i in range(10):
        if x * i > 3.0:
            return i
    return -1


def helper(a, b):
    return a * b + 1.0


def calls_helper(x, y):
    return helper(x, y) + helper(y, x) * 2.0


def promote(i, f, b, x32, z):
    return i + f, i / 2, i // 3, -i % 4, b + b, x32 * 2.0, x32 * f, z * f, i ** 3, f ** 0.5


def index_reads(a, i, j):
    return a[i, j], a[-1, -1], a[i], a[:, j], a[::-1, 1:], a[i, ::-2]


def writes(a, v):
    a[0, 0] = v
    a[1, :] = v * 2.0
    a[2:, 1] = a[0, :2]
    a[-1, -1] += 1.0
    return a


def creation(n, m):
    z = np.zeros((n, m))
    o = np.ones(n, dtype=np.float32)
    e = np.empty_like(z)
    e[:, :] = 3.0
    zl = np.zeros_like(o)
    return z, o, e, zl, np.zeros(n, dtype=np.int64)


def reductions(v, m):
    return (np.sum(v), np.max(v), np.min(v), np.mean(m), np.prod(v), np.dot(v, v),
            np.dot(m, v), m @ m.T, np.sum(m > 0.0))


def elementwise(x, y):
    return np.sin(x) * y + np.exp(-x) / (1.0 + y ** 2) - np.sqrt(np.abs(x)), x + 1, x > y


def broadcast(m, row, col):
    return m + row, m * col, row - col


def returns_input(x):
    return x


def returns_pair(x):
    y = x * 2.0
    return y, y


def tuples(p, x):
    a, b = p
    q = (a * x, b + x)
    return q[0] + q[1], (q, a)


def try_seed(x):
    try:
        if x > 3.0:
            raise ValueError("big")
        y = x ** 3
    except ValueError:
        y = math.sin(x) + math.pi
    return y


def raises(x):
    if x > 1.0:
        raise ValueError("x is too big")
    return x


def idiv(a, b):
    return a // b, a % b


def fdiv(a, b):
    return a / b


def read_at(x, i):
    return x[i]


def write_at(x, i):
    x[i] = 1.0
    return 0.0


def loop_over_rows(m):
    s = 0.0
    for row in m:
        s += np.sum(row * row)
    return s


def uses_list(x):
    return sum([x, x], start=0.5)  # (sum of a display of numbers compiles; a keyword does not)


def uses_string(x):
    return len("abc") * x


def mixed_var(n):
    y = 0
    for i in range(n):
        y = y + 0.5
    return y


def rk4_50(y):
    return rk4(y, 0.02, 50)


def tangent_of_rk4(y0, dy0):
    return s2s.jvp(rk4_50, (y0,), (dy0,))


def poly(x):
    return x ** 3 - 2.0 * x


def grad_inside(x):
    return s2s.grad(poly)(x) * 2.0


def heat_loss(u0, steps):
    u = heat(u0, steps)
    return np.sum(u * u)


def int_div(a, b):
    return a // b


def fresh_arrays_in_loop(n, m):
    acc = np.zeros(m)
    for i in range(n):
        tmp = np.ones(m) * i
        acc = acc + tmp
    return np.sum(acc)


def array_promotion(x32, xi, s):
    return x32 * 2.5, x32 + xi, xi * s, xi / 2, x32 * np.float64(2.0), xi // 3, -xi % 5


def axis_reductions(m):
    return (np.sum(m, axis=0), np.mean(m, axis=1), np.max(m, axis=-1), np.min(m, 0),
            np.sum(m, axis=1, keepdims=True), np.prod(m, axis=1), np.sum(m, keepdims=True))


def softmax_loss(z):
    m = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - m)
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(e, axis=1)) + m[:, 0]) - np.sum(z[:, 0]) + np.mean(p)


def builders(n, m):
    a = np.arange(n)
    b = np.arange(1.0, 2.0, 0.25)
    c = np.arange(n, 0, -2)
    d = np.linspace(0.0, 1.0, m)
    e = np.full((2, n), 1.5)
    f = np.eye(n)
    g = np.outer(d, d)
    h = np.reshape(np.arange(6.0), (2, -1))
    k = np.ravel(f.T)
    return a, b, c, d, e, f, g, h, k, np.reshape(g[:, ::2], (-1,))


SCALE = 2.0
TABLE = np.array([1.0, 10.0, 100.0])


def fill_in_place(out, v):
    for i in range(out.shape[0]):
        out[i] = v * i


def uses_globals(x):
    return x * SCALE + TABLE[1]


def make_closure(k):
    def inner(x):
        return x * k + 1.0
    return inner


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def mask_index(x):
    return x[x > 0.0]


def empty_loop(x):
    s = 0.0
    for v in x:
        s = s + v
    return s, np.sum(x)


def nearest_cost(centroids, points):
    total = 0.0
    for i in range(points.shape[0]):
        diff = centroids - points[i]
        total = total + np.min(np.sum(diff * diff, axis=1))
    return total


def nearest_newton(centroids, points):
    """A jvp of a gradient called inside the function (``s2s dump --mode llvm`` of it)."""
    J, H = s2s.jvp(s2s.grad(nearest_cost), (centroids, points),
                   (np.ones_like(centroids), np.zeros_like(points)))
    return J + H
