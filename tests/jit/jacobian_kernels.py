"""Functions whose Jacobians and Hessians ``test_jacobians.py`` compiles (s2s reads
their source)."""
import math

import numpy as np

W = np.random.default_rng(0).normal(size=(4, 5)) / 2.0
A_SYM = np.array([[2.0, 0.5, -1.0], [0.3, 1.0, 0.2], [0.0, -0.4, 3.0]])


def small_map(x):
    """R^5 -> R^4, the benchmark's map on a smaller W (a free variable)."""
    return np.tanh(W @ x) + 0.1 * np.sin(W @ (x * x))


def linear(x):
    return W @ x


def looped(x, n):
    """A loop whose adjoint pops a tape."""
    y = x * 1.0
    for i in range(n):
        y = np.sin(y) * x + 0.1 * y
    return y[:3] * 2.0


def branchy(x):
    """Branches and a while loop with a data-dependent trip count, on scalars of x."""
    out = np.zeros(3)
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            s = s + x[i] * x[i]
        else:
            s = s - math.sin(x[i])
    t = s
    k = 0
    while t > 0.5 and k < 20:
        t = t * 0.7
        k += 1
    out[0] = t
    out[1] = s * x[0]
    out[2] = math.exp(-t) * x[1]
    return out


def in_place(x):
    """In-place writes in a loop (a recurrence on a fresh array)."""
    y = np.zeros(x.shape[0])
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * x[i] + math.cos(x[i - 1])
    return y


def scalars(a, b):
    return a * a * b + math.sin(b)


def matrix_in(M, v):
    """A matrix input, a vector output."""
    return np.tanh(M @ v) * v[0]


def pair_out(x):
    """A tuple output: a vector and a scalar."""
    return np.sin(x) * 2.0, np.sum(x * x)


def two_args(x, y):
    return x * np.sum(y * y) + np.cos(y[0]) * x[::-1]


def tuple_arg(p, x):
    """A tuple argument: (scale, shift)."""
    scale, shift = p
    return np.tanh(scale * x + shift)


def quadratic(x):
    """x^T A x: the Hessian is A + A^T."""
    return x @ (A_SYM @ x)


def cubic_loop(x, c):
    """sum_i c x_i^3 in a loop: the Hessian is diag(6 c x)."""
    s = 0.0
    for i in range(x.shape[0]):
        s = s + c * x[i] ** 3
    return s


def mixed(x, y):
    """sum(x * y**2): d2/dx dy = diag(2 y), d2/dy2 = diag(2 x)."""
    return np.sum(x * y ** 2)


def rosen(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def vector_out(x):
    return np.sin(x)


def with_dict(x):
    d = {"a": x}
    return d["a"] * 2.0


def with_array_list(x):
    """A list that holds arrays: outside the compiled subset."""
    acc = []
    acc.append(x)
    return acc[0] * 2.0


def single_precision(x):
    """No float64 constants: float32 in, float32 out."""
    return np.tanh(x) * x[0] + np.sin(x[::-1])


def scaled_then_written(x):
    """A product written into in place: forward mode copies its tangent (rt.owned)."""
    y = x * 2.0
    y[0] = y[1] * x[2]
    return y


def dot_quadratic(x):
    """x . (A x) with np.dot: the Hessian is A + A^T (dot_vjp's tangent in the kernel)."""
    return np.dot(x, np.dot(A_SYM, x))


def try_while(x):
    """try/except in a loop, a while loop on abs(), an in-place write."""
    out = np.zeros(2)
    s = 0.0
    for i in range(x.shape[0]):
        try:
            if x[i] < 0.0:
                raise ValueError("neg")
            s = s + math.sqrt(x[i]) * x[0]
        except ValueError:
            s = s - x[i] * x[i]
    k = 0
    t = s
    while abs(t) > 0.1 and k < 30:
        t = t * 0.5 + 0.01 * x[1]
        k += 1
    out[0] = t * s
    out[1] = s
    return out


def real_parts(z, x):
    return np.real(z) * x + np.imag(z) + np.real(x) + np.imag(x) + np.real(z[0]) + np.imag(x[0])


def none_in_tuple(p, x):
    scale, nothing = p
    return scale * x * 2.0


def rotation_display(aa, v):
    """A matrix written as a nested display of numbers (the hand-tracking model's
    rotation), some entries constants (their tangents are None parts)."""
    n = math.sqrt(np.sum(aa * aa))
    x, y, z = aa[0] / n, aa[1] / n, aa[2] / n
    s, c = math.sin(n), math.cos(n)
    m = np.array([[x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, 0.0],
                  [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, 1.0],
                  [0.5, -2.0, z * z + (1 - z * z) * c]])
    return m @ v
