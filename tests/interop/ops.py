"""Numpy functions the interop tests turn into framework ops, and an oracle:
central finite differences in float64 of the numpy function itself."""
from collections import namedtuple

import numpy as np


def rnn(x, w, n):
    """An Elman-style recurrence over the rows of ``x`` (loop-carried state)."""
    h = np.zeros_like(x[0])
    for t in range(x.shape[0]):
        h = np.tanh(w * h + x[t])
    return h * n, np.sum(h * h)


def ragged_logsumexp(values, offsets, scale):
    """A per-row kernel over a ragged (CSR-like) array: row ``r`` is
    ``values[offsets[r]:offsets[r + 1]]``; returns a stable log-sum-exp per row."""
    out = np.zeros(offsets.shape[0] - 1)
    for r in range(offsets.shape[0] - 1):
        m = -np.inf
        for k in range(offsets[r], offsets[r + 1]):
            if values[k] * scale > m:
                m = values[k] * scale
        s = 0.0
        for k in range(offsets[r], offsets[r + 1]):
            s = s + np.exp(values[k] * scale - m)
        out[r] = m + np.log(s)
    return out


Params = namedtuple("Params", ["a", "b"])


def mlp(params, x):
    """Pytree arguments (a dict of arrays, a namedtuple) and a dict result."""
    h = np.tanh(x @ params["w"] + params["b"])
    pn = params["p"]
    return {"out": h * pn.a + pn.b, "norm": np.sum(h ** 2)}


def listy(x):
    """A function ``s2s.jit`` does not compile (a list of lists): runs in Python mode."""
    rows = [[np.sin(x[i]), x[i]] for i in range(x.shape[0])]
    return np.stack([a * b for a, b in rows]) * 2.0


def count_and_scale(x, k):
    """An integer result (non-differentiable) beside a float one."""
    return np.sum(x > 0.0), x * k


def fd_vjp(f, args, argnum, ct, eps=1e-6):
    """``<ct, d f(args) / d args[argnum]>`` for every element of ``args[argnum]``, by central
    differences of the numpy function (``f`` returns an array or a tuple of them; ``ct``
    matches)."""
    args = [np.array(a, dtype=np.float64) if i == argnum else a for i, a in enumerate(args)]
    x = args[argnum]
    grad = np.zeros(x.shape)

    def dot(out):
        outs = out if isinstance(out, tuple) else (out,)
        cts = ct if isinstance(ct, tuple) else (ct,)
        return sum(np.sum(np.asarray(o, float) * c) for o, c in zip(outs, cts))

    flat = x.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = dot(f(*args))
        flat[i] = old - eps
        down = dot(f(*args))
        flat[i] = old
        grad.reshape(-1)[i] = (up - down) / (2 * eps)
    return grad
