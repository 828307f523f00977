"""The functions the composition matrix transforms: each ``R^3 -> R^m`` (an array
of shape (3,) in; a scalar or an array out), smooth near its test point, and each
exercising one construct: loops, in-place writes, a data-dependent ``while``,
branches, ``try``, a class, containers, linalg, custom rules, a checkpoint.

``CORPUS`` maps a name to ``(f, x)``; ``f`` is plain numpy code, its own oracle
(the matrix differentiates it by finite differences, ``wraps.py``).
"""
import numpy as np

import s2s


def loop_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i]
    return s


def inplace(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * x[(i + 1) % 3]
    y[1:] += np.cos(x[:2])
    y *= 1.5
    return y


def data_while(x):
    s = np.sum(x * x) + 1.0
    k = 0
    while s < 50.0:  # the trip count depends on x (it is constant near the test point)
        s = s * 1.7 + np.sin(x[k % 3])
        k += 1
    return s / (k + 1)


def branches(x):
    if x[0] > 0.1:
        y = np.tanh(x) * x[1]
    else:
        y = x ** 3
    if np.sum(x) < -5.0:
        y = -y
    return y


def try_except(x):
    try:
        y = np.log(x + 2.0)
        if x[2] > 10.0:
            raise ValueError("large")
    except ValueError:
        y = x
    return np.sum(y * x)


class Affine:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return np.tanh(self.w @ x + self.b)


_W = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4]])


def classes(x):
    layer = Affine(_W, np.array([0.1, -0.1]))
    h = layer(x)
    return h * h[0]


def containers(x):
    parts = {"a": x[0] * x[1], "b": [np.sin(x[2]), x[0] ** 2]}
    pair = (parts["a"], parts["b"][0] + parts["b"][1])
    acc = []
    for v in pair:
        acc.append(v * 2.0)
    return acc[0] + acc[1] * pair[0]


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def linalg(x):
    a = np.array([[2.0, 0.3, 0.1], [0.2, 1.5, 0.4], [0.1, 0.2, 1.8]]) + np.outer(x, x) * 0.1
    sign, logdet = np.linalg.slogdet(a)
    v = np.linalg.solve(a, x)
    return logdet + np.dot(v, x)


@s2s.custom_jvp
def softplus(x):
    return np.log1p(np.exp(x))


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t / (1.0 + np.exp(-x))


def custom_jvp_fn(x):
    return softplus(x * x[0]) + x


@s2s.custom_vjp
def cube(x):
    return x ** 3


def _cube_fwd(x):
    return x ** 3, x


def _cube_bwd(x, g):
    return (3.0 * x * x * g,)


cube.defvjp(_cube_fwd, _cube_bwd)


def custom_vjp_fn(x):
    return np.sum(cube(x) * np.cos(x))


@s2s.checkpoint
def _block(x):
    return np.sin(x) * np.exp(-x * x)


def checkpointed(x):
    return _block(_block(x) + x)


def _pair(a, b):
    return np.sum(np.sin(a) * b) + a[0] * b[-1]


def inner_vmap(x):  # code that itself calls vmap (a batch merged with any outer one)
    return s2s.vmap(_pair, in_axes=(0, None))(np.outer(x, x) + x, x) * x


CORPUS = {
    "loop_sum": (loop_sum, np.array([0.3, 0.7, 1.1])),
    "inplace": (inplace, np.array([0.4, -0.6, 0.9])),
    "data_while": (data_while, np.array([0.5, 0.8, 1.2])),
    "branches": (branches, np.array([0.6, -0.3, 0.8])),
    "try_except": (try_except, np.array([0.2, 0.5, 0.9])),
    "classes": (classes, np.array([0.7, -0.2, 0.4])),
    "containers": (containers, np.array([0.3, 0.9, -0.5])),
    "logsumexp": (logsumexp, np.array([0.1, 0.9, -0.4])),
    "linalg": (linalg, np.array([0.3, -0.5, 0.7])),
    "custom_jvp": (custom_jvp_fn, np.array([0.4, -0.3, 0.6])),
    "custom_vjp": (custom_vjp_fn, np.array([0.5, 0.2, -0.7])),
    "checkpoint": (checkpointed, np.array([0.3, 0.6, -0.2])),
    "inner_vmap": (inner_vmap, np.array([0.6, -0.4, 0.9])),
}
