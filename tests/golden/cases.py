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


def try_except(x):
    """The cookbook's try/except: the tape records how far the body got and which
    handler ran."""
    try:
        if x < 3:
            return 2 * x ** 3
        else:
            raise ValueError
    except ValueError:
        return np.pi * x


def while_loop(x):
    """A while loop with a data-dependent trip count (counted by the primal)."""
    s = x
    while s < 10.0:
        s = s * 1.5 + x
    return s


def return_in_loop(x):
    """A return inside a loop: a result, a flag and a break."""
    for i in range(5):
        x = x * 1.1
        if x > 3.0:
            return x * 2.0
    return x


def try_in_loop(x):
    """A try inside a loop: per iteration, how far the body got and which handler ran."""
    s = x
    for i in range(4):
        try:
            s = s * 1.7
            if s > 2.0:
                raise ValueError
            s = s + x * x
        except ValueError:
            s = np.sin(s) + x
    return s


class Scaler:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return np.tanh(self.w * x)


def method_call(w, x):
    """A class built inside the function; its method is inlined."""
    layer = Scaler(w)
    return np.sum(layer.apply(x) ** 2)
