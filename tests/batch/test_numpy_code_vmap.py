"""``vmap`` of numpy functions that have no batching rule of their own but a plain Python
definition in their record (``s2s/rules/numpy_code``, read by vmap as by the jit): the
batching transform batches that code.  Each against a Python loop over the examples, in
Python and under ``jit``; derivatives of the batched code against central differences."""
import math

import numpy as np
import pytest

import s2s

from tests.grad.oracles import fd_grad

RNG = np.random.default_rng(3)
X = RNG.normal(size=(4, 3, 5))
XP = np.array([0.0, 1.0, 2.5, 4.0, 5.0])
WITH_NAN = X.copy()
WITH_NAN[1, 0, 2] = np.nan

CASES = {
    "diff": lambda x: np.diff(x, axis=0),
    "roll": lambda x: np.roll(x, 2),
    "fliplr-rot90": lambda x: np.fliplr(x) + np.rot90(x, 2),
    "triu-tril": lambda x: np.triu(x, 1) - np.tril(x),
    "take": lambda x: np.take(x, np.array([0, 2]), axis=1),
    "take_along_axis": lambda x: np.take_along_axis(x, np.argsort(x, axis=1), axis=1),
    "median": lambda x: np.median(x, axis=1),
    "interp": lambda x: np.interp(x[0], XP, x[1]),
    "polyval": lambda x: np.polyval(x[0], x[1]),
    "convolve": lambda x: np.convolve(x[0], x[1, :3], "same"),
    "trapezoid": lambda x: np.trapezoid(x, XP),
    "select": lambda x: np.select([x > 0.5, x < -0.5], [x, -x]),
    "column_stack": lambda x: np.column_stack((x[0], x[1])),
    "atleast_2d": lambda x: np.atleast_2d(x[0, 0]) * x[:1, :1],
    "cov": lambda x: np.cov(x),
    "corrcoef": lambda x: np.corrcoef(x),
    "vector_norm": lambda x: np.linalg.vector_norm(x, axis=1),
    "nanvar": lambda x: np.nanvar(x, axis=1),
    "vander": lambda x: np.vander(x[0], 3),
    "quantile": lambda x: np.quantile(x, [0.1, 0.5, 0.95], axis=1),
    "percentile": lambda x: np.percentile(x[0], 30),
    "nanmedian": lambda x: np.nanmedian(x, axis=1),
    "nanquantile": lambda x: np.nanquantile(x, 0.7),
    "polynomials": lambda x: np.polyadd(np.polymul(x[0], x[1, :2]), np.polyder(x[2], 2)),
    "polyint": lambda x: np.polyint(x[0], 2, 0.5),
    "unwrap": lambda x: np.unwrap(4.0 * x, axis=0),
    "digitize": lambda x: np.digitize(x, np.array([-0.5, 0.0, 0.5])),
    "isin": lambda x: np.isin(x, x[0, :2]),
    "cumulative_sum": lambda x: np.cumulative_sum(x, axis=1, include_initial=True),
    "nancumsum": lambda x: np.nancumsum(x, axis=0),
    "append": lambda x: np.append(x[0], x[1, :2]),
    "any_all": lambda x: np.array([any(x[0] > 0.5), all(x[1] > -1.0), any([x[0, 0] > 0.0])]),
    "math.isclose": lambda x: np.array([math.isclose(x[0, 0], x[1, 0], rel_tol=0.5),
                                        math.isclose(x[0, 0], x[0, 0] * (1 + 1e-12))]),
    "allclose-array_equal": lambda x: np.array([np.allclose(x[0], x[1], atol=1.0),
                                                np.array_equal(x[0], x[0])]),
}


def _loop(f, xs):
    return np.stack([np.asarray(f(x)) for x in xs])


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("how", ["python", "jit"])
def test_vmap_of_a_function_read_as_code_matches_a_loop(name, how):
    f = CASES[name]
    xs = WITH_NAN if name.startswith("nan") else X
    mapped = s2s.vmap(f) if how == "python" else s2s.jit(s2s.vmap(f))
    np.testing.assert_allclose(mapped(xs), _loop(f, xs), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["roll", "take", "polyval", "triu-tril", "fliplr-rot90",
                                  "median", "take_along_axis", "diff", "select",
                                  "column_stack"])
def test_batched_gradient_against_finite_differences(name):
    f = CASES[name]

    def loss(x):
        return np.sum(np.sin(f(x)))

    got = s2s.vmap(s2s.grad(loss))(X)
    for k in range(X.shape[0]):
        np.testing.assert_allclose(got[k], fd_grad(loss, (X[k],)), rtol=1e-6, atol=1e-8)


def _write_through_ravel(x):
    out = np.zeros(6)
    flat = np.ravel(out)  # a view: the write below is seen through out
    flat[1] += x[0]
    return out


def _write_through_moveaxis(x):
    out = np.zeros((4, 3))
    cols = np.moveaxis(out, 1, 0)
    cols[0] += x[:4]
    return out * 2.0


@pytest.mark.parametrize("f", [_write_through_ravel, _write_through_moveaxis])
def test_a_batched_write_through_a_view_is_seen_by_its_array(f):
    xs = X[:, 0, :]
    np.testing.assert_allclose(s2s.vmap(f)(xs), _loop(f, xs), rtol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(f))(xs), _loop(f, xs), rtol=1e-14)


@pytest.mark.parametrize("f", [lambda x: np.sort(x, axis=None)[:5],
                               lambda x: np.argsort(x, axis=None),
                               lambda x: np.median(x)],
                         ids=["sort", "argsort", "median"])
def test_axis_none_works_on_each_flattened_example(f):
    np.testing.assert_allclose(s2s.vmap(f)(X), _loop(f, X), rtol=1e-14)


def test_concatenate_of_flattened_batched_arrays_is_refused_by_name():
    with pytest.raises(s2s.S2SError, match="concatenate with axis=None"):
        s2s.vmap(lambda x: np.concatenate((x, x), axis=None))(X)


def test_a_data_dependent_shape_is_refused_by_name():
    with pytest.raises(s2s.S2SError, match="differs per example"):
        s2s.vmap(lambda x: np.nonzero(x[0] > 0)[0] * 1.0)(X)
