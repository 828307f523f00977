"""``jit`` of the derivatives that apply a linear map by name (``rt.apply_linear``), read
as plain Python the jit compiles (``rules/numpy_code/linear.py``): ``np.gradient``'s,
``np.take_along_axis``'s (also ``np.partition``'s), the quantiles' (``np.median``,
``np.quantile``, ``np.percentile``), ``np.select``'s, ``np.ediff1d``'s, the joins'
(``np.dstack``, ``np.column_stack``), ``np.meshgrid``'s and ``np.broadcast_arrays``'
tangents and cotangents, and the index helpers of ``np.insert``/``np.delete``/``np.cov``.
Each ``jit(grad)`` and ``jit(jacfwd)`` against central differences of the primal."""
import numpy as np
import pytest

import s2s
from s2s.errors import S2SError

from tests.grad.oracles import fd_grad

RNG = np.random.default_rng(5)
A = RNG.uniform(0.2, 0.9, (3, 4))
V = RNG.uniform(0.2, 0.9, 6)
T3 = RNG.uniform(0.2, 0.9, (2, 3, 4))

CASES = {
    "gradient": (lambda a: np.sum(np.gradient(a) ** 2), V),
    "gradient-edge2": (lambda a: np.sum(np.gradient(a, 0.5, edge_order=2) ** 3), V),
    "gradient-2d": (lambda a: np.sum(np.gradient(a)[0] * np.gradient(a)[1] ** 2), A),
    "gradient-axis": (lambda a: np.sum(np.sin(np.gradient(a, 2.0, axis=-1))), T3),
    "take_along": (lambda a: np.sum(np.take_along_axis(a, np.argsort(a, axis=1), axis=1)
                                    * np.arange(4)), A),
    "take_along-broadcast": (lambda a: np.sum(
        np.take_along_axis(a, np.array([[2, 0, 0, 1]]), axis=0) ** 2), A),
    "take_along-None": (lambda a: np.sum(np.take_along_axis(a, np.array([3, -1, 3]),
                                                            axis=None) ** 2), V),
    "partition": (lambda a: np.sum(np.partition(a, 2)[:2] ** 2), V),
    "quantile": (lambda a: np.quantile(a, 0.3), V),
    "quantile-axis": (lambda a: np.sum(np.quantile(a, [0.2, 0.7], axis=1) ** 2), A),
    "median": (lambda a: np.median(a) * np.sum(a), V),
    "median-keepdims": (lambda a: np.sum(np.median(a, axis=0, keepdims=True) ** 2), A),
    "percentile": (lambda a: np.percentile(a, 70), V),
    "select": (lambda a: np.sum(np.select([a > 0.5, a > 0.3], [a ** 2, np.sin(a)], 0.0)),
               V),
    "ediff1d": (lambda a: np.sum(np.ediff1d(a, to_begin=1.0, to_end=[2.0, 3.0]) ** 2), V),
    "dstack": (lambda a: np.sum(np.dstack([a, a ** 2]) ** 2), A),
    "column_stack": (lambda a: np.sum(np.column_stack([a, a ** 2]) ** 3), V),
    "meshgrid": (lambda a: np.sum(np.meshgrid(a[:2], a[2:])[0]
                                  * np.meshgrid(a[:2], a[2:])[1] ** 2), V),
    "meshgrid-ij": (lambda a: np.sum(np.meshgrid(a[:2], a[2:], indexing="ij")[1] ** 3), V),
    "broadcast_arrays": (lambda a: np.sum(
        np.broadcast_arrays(a[:, None], a[None, :3])[1] ** 2), V),
    "insert": (lambda a: np.sum(np.insert(a, 1, a[0] ** 2) ** 2), V),
    "delete": (lambda a: np.sum(np.delete(a, 3) ** 3), V),
    "cov": (lambda a: np.sum(np.cov(a) ** 2), A),
    "corrcoef": (lambda a: np.sum(np.corrcoef(a) ** 2), A),
    "hsplit": (lambda a: sum(np.sum(p ** 2) * p[0, 0] for p in np.hsplit(a, 2)), A),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_grad_matches_differences(name):
    f, x = CASES[name]
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(x), fd_grad(f, (x,)), rtol=1e-5,
                               atol=1e-7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_jacfwd_matches_differences(name):
    f, x = CASES[name]
    np.testing.assert_allclose(s2s.jit(s2s.jacfwd(f))(x), fd_grad(f, (x,)), rtol=1e-5,
                               atol=1e-7)


@pytest.mark.parametrize("f", [
    pytest.param(lambda a: np.quantile(a, 0.3, method="nearest") * np.sum(a), id="nearest"),
    pytest.param(lambda a: np.sum(np.gradient(a, np.linspace(0.0, 1.0, 6) ** 2) ** 2),
                 id="coordinates"),
])
def test_maps_not_compiled_are_refused_by_name(f):
    with pytest.raises((S2SError, NotImplementedError), match="s2s"):
        s2s.jit(s2s.grad(f))(V)
