"""``vmap(f)`` called inside transformed code where ``f``'s result does not depend on the
mapped argument: as in JAX, the result is repeated over the batch (``batch_lift``) and
its cotangent summed back (``batch_unlift``, also compiled by the jit).  Values against
a Python loop over the batch, gradients against central differences."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from tests.compose.finite_differences import fd_gradient

XS = np.array([[0.3, -0.1, 0.8], [0.5, 0.2, -0.4]])
Y = np.array([0.2, 0.4, 0.6])


def constant(x, y):
    return 2.0


def of_the_unmapped_argument(x, y):
    return np.sin(y) * 3.0


def pair_with_one_independent_item(x, y):
    return np.sum(x), np.cos(y)


def total(f, item=None):
    def loss(y):
        out = s2s.vmap(f, in_axes=(0, None))(XS, y)
        return np.sum(out if item is None else out[item]) * np.sum(y)
    return loss


def looped(f, item=None):
    def loss(y):
        outs = [f(x, y) for x in XS]
        return np.sum([o if item is None else o[item] for o in outs], axis=0).sum() * np.sum(y)
    return loss


CASES = [(constant, None), (of_the_unmapped_argument, None),
         (pair_with_one_independent_item, 1)]


@pytest.mark.parametrize("f, item", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("transform", ["grad", "jit(grad)", "value"])
def test_vmap_of_a_result_independent_of_the_batch(f, item, transform):
    loss = total(f, item)
    if transform == "value":
        np.testing.assert_allclose(s2s.jit(loss)(Y), looped(f, item)(Y), rtol=1e-13)
        return
    g = s2s.grad(loss) if transform == "grad" else s2s.jit(s2s.grad(loss))
    np.testing.assert_allclose(g(Y), fd_gradient(looped(f, item), Y), rtol=1e-7, atol=1e-9)


def test_the_repeated_result_has_the_batch_size():
    out = s2s.jit(lambda xs: s2s.vmap(constant, in_axes=(0, None))(xs, 1.0) + 0.0)(XS)
    np.testing.assert_array_equal(out, [2.0, 2.0])


def test_nothing_mapped_takes_axis_size_or_is_refused():
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        s2s.grad(lambda y: np.sum(s2s.vmap(constant, in_axes=(None, None))(XS, y)))(Y)

    def loss(y):
        return np.sum(s2s.vmap(of_the_unmapped_argument, in_axes=(None, None),
                               axis_size=4)(XS, y))
    assert s2s.jit(loss)(Y) == pytest.approx(4 * np.sum(of_the_unmapped_argument(XS, Y)))
    np.testing.assert_allclose(s2s.grad(loss)(Y), 12.0 * np.cos(Y), rtol=1e-13)
