"""Small representative functions whose `s2s dump` output is kept in expected/."""
import numpy as np


def scalar_arith(x, y):
    a = x * y + 3.0
    b = a / (y - 0.5)
    return b * b - x


def elementwise_sum(x):
    return np.sum(np.exp(x) * np.sin(x))


def broadcasting(w, b, x):
    return np.sum(np.tanh(x * w + b))


def dict_pytree(params, x):
    h = params["w"] * x + params["b"]
    return np.sum(h * h)


def if_else(x):
    if x > 0.0:
        y = x * x
    else:
        y = -x
    return y * 2.0


def with_aux(x):
    y = np.sin(x)
    return y * y, {"y": y}


def running_product(x):
    """A loop with an in-place write (forward mode keeps both)."""
    y = np.zeros(3)
    s = 1.0
    for i in range(3):
        s = s * x[i]
        y[i] = s
    return np.sum(y)
