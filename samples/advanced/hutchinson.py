"""Hutchinson's estimate of the trace of a Hessian from Hessian-vector products.

For random vectors v with E[v v^T] = I (Rademacher: entries +-1),
E[v^T H v] = tr(H).  Each v^T H v needs one Hessian-vector product, here
forward over reverse, ``jvp(grad(f), (x,), (v,))``, which never builds H:
its cost is a small multiple of one gradient, whatever the dimension.

The function is f(x) = sum(tanh(x)^2) + x^T A x / 2 with a random
symmetric A, so tr(H) = sum(2 (1 - t^2)(1 - 3 t^2)) + tr(A), t = tanh(x),
which the test compares with.

Run:  python samples/advanced/hutchinson.py
"""
import numpy as np

from s2s import grad, jvp

N = 50
_rng = np.random.default_rng(7)
_B = _rng.normal(size=(N, N)) / np.sqrt(N)
A = _B + _B.T


def f(x):
    return np.sum(np.tanh(x) ** 2) + 0.5 * x @ (A @ x)


def hvp(x, v):
    """H(x) v, forward over reverse."""
    return jvp(grad(f), (x,), (v,))[1]


def hutchinson_trace(x, num_probes, seed=0):
    """The mean of v^T H v over ``num_probes`` Rademacher vectors v, and the samples."""
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(num_probes):
        v = rng.choice([-1.0, 1.0], size=x.shape)
        samples.append(float(v @ hvp(x, v)))
    return float(np.mean(samples)), np.array(samples)


def main(num_probes=2000):
    x = np.linspace(-1.5, 1.5, N)
    estimate, samples = hutchinson_trace(x, num_probes)
    stderr = samples.std(ddof=1) / np.sqrt(num_probes)
    print(f"Hutchinson estimate of tr(H) from {num_probes} HVPs: {estimate:.4f} "
          f"(standard error {stderr:.4f})")
    return x, estimate, stderr


if __name__ == "__main__":
    main()
