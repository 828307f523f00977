"""The transposes of ``s2s_runtime.apply_linear``'s ops, against the dot-product identity
``<ct, L(x)> == <L^T(ct), x>`` (real pairing) with random ``x`` and ``ct``, and each
forward op against the numpy function it stands for (linearity: ``L(x)`` for a zero
constant part)."""
import numpy as np
import pytest

from s2s_runtime import apply_linear, transpose_of

RNG = np.random.default_rng(3)
A = RNG.standard_normal((3, 4))
V = RNG.standard_normal(5)

#: (op, primal x, spec); the forward op's ``like`` is its output (only select reads its shape)
OPS = [
    ("pad", A, (((1, 2), (0, 1)), "constant", "even")),
    ("pad", A, (2, "edge", "even")), ("pad", V, (3, "reflect", "even")),
    ("pad", V, ((2, 1), "symmetric", "even")), ("pad", A, (3, "wrap", "even")),
    ("take_along", A, (np.array([[0, 3], [1, 1], [2, 0]]), 1)),
    ("take_along", A, (np.array([5, 5, 0]), None)),
    ("select", [A, 2 * A], ([A > 0.5, A < 0],)),
    ("join", [A, A[:, :2]], ("column_stack", [A, A[:, :2]])),
    ("join", [V, V], ("dstack", [V, V])),
    ("array_split", V, (3, 0)), ("array_split", A, ([1, 3], 1)), ("unstack", A, (1,)),
    ("diff", A, (1, 1, None, None)), ("diff", V, (2, -1, 0.5, np.ones(2))),
    ("ediff1d", A, (None, None)), ("ediff1d", V, ([1.0], [2.0, 3.0])),
    ("append_part", A, (np.ones((1, 4)), 0, 0)), ("append_part", V, (A, None, 1)),
    ("gradient", V, (0.5, None, 2)), ("gradient", A, (1.0, None, 1)),
    ("gradient", A, (2.0, 1, 1)),
    ("mesh", V, (0, "xy", False, ((2, 5), (2, 5)))), ("mesh", V, (1, "ij", True, ((3, 1), (1, 5)))),
    ("bcast", V, (1, ((3, 5), (3, 5)))), ("bcast", A[:1], (0, ((3, 4), (3, 4)))),
    ("quantile", A, (A, [0.2, 0.5], 1, False, "linear", False)),
    ("quantile", A, (A, 0.5, None, True, "midpoint", False)),
]


def _rand_like(v):
    if isinstance(v, (list, tuple)):
        return [_rand_like(p) for p in v]
    return RNG.standard_normal(np.shape(v))


def _pair(a, b):
    if isinstance(a, (list, tuple)):
        return sum(_pair(p, q) for p, q in zip(a, b))
    return float(np.sum(np.real(np.asarray(a) * np.asarray(b))))


@pytest.mark.parametrize("op, x, spec", OPS, ids=[f"{o}-{i}" for i, (o, _, _) in enumerate(OPS)])
def test_transpose_satisfies_the_dot_product_identity(op, x, spec):
    y = apply_linear(op, x, A if op == "select" else None, spec)   # (select: the result's shape)
    ct = _rand_like(y)
    back = apply_linear(transpose_of(op), ct, x, spec)
    assert np.isclose(_pair(ct, y), _pair(back, x), rtol=1e-10, atol=1e-12)
    assert transpose_of(transpose_of(op)) == op


def test_forward_ops_are_the_numpy_functions():
    np.testing.assert_allclose(apply_linear("pad", A, None, (2, "wrap", "even")),
                               np.pad(A, 2, mode="wrap"))
    np.testing.assert_allclose(apply_linear("diff", V, None, (2, -1, None, None)), np.diff(V, 2))
    np.testing.assert_allclose(apply_linear("gradient", V, None, (0.5, None, 2)),
                               np.gradient(V, 0.5, edge_order=2))
    np.testing.assert_allclose(apply_linear("quantile", A, None, (A, 0.3, 1, False, "linear")),
                               np.quantile(A, 0.3, axis=1))
