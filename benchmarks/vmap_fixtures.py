"""Functions ``bench_vmap.py`` transforms (s2s reads their source)."""
import numpy as np


def sigmoid(x):
    return 0.5 * (np.tanh(x / 2) + 1)


def predict(W, b, inputs):
    """The cookbook's logistic model (shared/seeds/jax-autodiff-cookbook-part8.txt)."""
    return sigmoid(np.dot(inputs, W) + b)


rng = np.random.default_rng(0)
MAP_W = rng.normal(size=(40, 50)) / 7.0


def map40x50(x):
    """A map R^50 -> R^40 (``MAP_W`` is a free variable)."""
    return np.tanh(MAP_W @ x) + 0.1 * np.sin(MAP_W @ (x * x))
