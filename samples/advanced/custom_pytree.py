"""Derivatives with respect to a user-defined data type registered as a pytree node.

``Gaussian`` is a plain class (not a dataclass, not a namedtuple) holding a
mean vector and a log standard deviation.  Registering it with
``s2s.tree_util.register_pytree_node`` (JAX's API: a ``flatten`` giving the
children and auxiliary data, an ``unflatten`` rebuilding it) makes it a
pytree, so ``grad`` of a function of a ``Gaussian`` returns a ``Gaussian``
of gradients, and ``tree_map`` updates it like any container.  The name
field is auxiliary data: part of the structure, not differentiated.

Run:  python samples/advanced/custom_pytree.py
"""
import numpy as np

from s2s import grad
from s2s.tree_util import register_pytree_node, tree_map


class Gaussian:
    def __init__(self, name, mean, log_std):
        self.name = name
        self.mean = mean
        self.log_std = log_std

    def __repr__(self):
        return f"Gaussian({self.name!r}, mean={self.mean!r}, log_std={self.log_std!r})"


register_pytree_node(
    Gaussian,
    lambda g: ((g.mean, g.log_std), g.name),                    # children, auxiliary data
    lambda name, children: Gaussian(name, *children),
)

DATA = np.array([[0.5, -1.0], [1.5, 0.2], [0.9, -0.4], [1.1, -0.9]])


def negative_log_likelihood(g, data):
    """-log p(data | g) for a diagonal Gaussian, up to the constant."""
    std = np.exp(g.log_std)
    z = (data - g.mean) / std
    return 0.5 * np.sum(z ** 2) + data.size * g.log_std


def fit(g, data, steps=300, lr=0.05):
    """Gradient descent on the Gaussian itself: the gradient is a Gaussian."""
    for _ in range(steps):
        dg = grad(negative_log_likelihood)(g, data)
        g = tree_map(lambda p, d: p - lr * d, g, dg)
    return g


def main():
    g0 = Gaussian("prior", np.zeros(2), 0.0)
    dg = grad(negative_log_likelihood)(g0, DATA)
    print("gradient at the start:", dg)
    g = fit(g0, DATA)
    print("fitted:               ", g)
    ml_log_std = np.log(np.sqrt(np.mean((DATA - DATA.mean(axis=0)) ** 2)))
    print("maximum likelihood:    mean", DATA.mean(axis=0), "log_std", ml_log_std)
    return g0, dg, g


if __name__ == "__main__":
    main()
