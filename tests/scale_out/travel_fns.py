"""Module-level functions for the scale-out tests: they pickle by reference (the
receiving process imports this module), and the transforms of them are pickled as
(transform, function, configuration)."""
import numpy as np

import s2s


def loss(w, X, y):
    """Logistic regression's negative log-likelihood (a sum over rows)."""
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def poly(x):
    """A loop with an in-place write: sum_i x_i**3 - 2 x_i x_{i-1}."""
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[i] = x[i] ** 3 - (2.0 * x[i] * x[i - 1] if i > 0 else 0.0)
    return np.sum(y)


def vec(x, y):
    return np.sin(x) * y + x ** 2


def rk4_decay(k, y0, n):
    """n RK4 steps of y' = -k y on [0, 1]; returns y(1)."""
    h = 1.0 / n
    y = y0
    for _ in range(n):
        k1 = -k * y
        k2 = -k * (y + 0.5 * h * k1)
        k3 = -k * (y + 0.5 * h * k2)
        k4 = -k * (y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y


@s2s.jit
def jitted_poly(x):
    return poly(x)


@s2s.grad
def grad_poly(x):
    return poly(x)


@s2s.custom_vjp
def softclip(x):
    return np.tanh(x)


def softclip_fwd(x):
    y = softclip(x)  # refers to itself: a cycle pickling must survive
    return y, y


def softclip_bwd(y, ct):
    return (ct * (1.0 - y * y),)


softclip.defvjp(softclip_fwd, softclip_bwd)


def with_softclip(x):
    return np.sum(softclip(x) * x)


def bad_loop(x):
    total = 0.0
    for i in range(3):
        total = total + x[i]
    return total


def smooth(x):
    return np.sum(np.sin(x) * x ** 2) + np.sum(np.cos(x)) ** 2
