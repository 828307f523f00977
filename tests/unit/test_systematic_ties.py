"""Ties and kinks, where finite differences do not apply: closed forms of JAX's
conventions.  Tied extrema share the cotangent equally (``max``, ``amax``, ``nanmax``,
``ptp``, ``maximum``: half to each argument on a tie) and their JVP is the mean
tangent of the tied entries; ``sort`` sends a tied value's cotangent through the
stable sort permutation; the non-differentiable functions contribute nothing.
"""
import numpy as np

import s2s


def test_max_ties_share_the_cotangent():
    x = np.array([1.0, 3.0, 3.0])
    np.testing.assert_allclose(s2s.grad(lambda x: np.max(x))(x), [0.0, 0.5, 0.5])
    np.testing.assert_allclose(s2s.grad(lambda x: np.amin(x))(np.array([2.0, 2.0, 5.0, 2.0])),
                               [1 / 3, 1 / 3, 0.0, 1 / 3])
    m = np.array([[1.0, 4.0], [1.0, 2.0], [0.0, 4.0]])
    weighted = s2s.grad(lambda m: np.sum(np.max(m, axis=0) * np.array([1.0, 2.0])))(m)
    np.testing.assert_allclose(weighted, [[0.5, 1.0], [0.5, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(
        s2s.grad(lambda m: np.sum(np.min(m, axis=1, keepdims=True)))(np.array([[1.0, 1.0, 2.0]])),
        [[0.5, 0.5, 0.0]])


def test_max_ties_jvp_is_the_mean_tangent():
    x, t = np.array([1.0, 3.0, 3.0]), np.array([5.0, 1.0, 3.0])
    assert s2s.jvp(lambda x: np.max(x), (x,), (t,))[1] == 2.0
    assert s2s.jvp(lambda x: np.nanmax(x), (np.array([np.nan, 3.0, 3.0]),), (t,))[1] == 2.0


def test_nan_reductions_and_ptp_with_ties():
    x = np.array([np.nan, 2.0, 2.0, -1.0])
    np.testing.assert_allclose(s2s.grad(lambda x: np.nanmax(x))(x), [0.0, 0.5, 0.5, 0.0])
    np.testing.assert_allclose(s2s.grad(lambda x: np.ptp(x))(np.array([0.0, 2.0, 0.0, 2.0])),
                               [-0.5, 0.5, -0.5, 0.5])


def test_maximum_minimum_ties_split_half():
    x = np.array([1.0, 2.0])
    ga, gb = s2s.grad(lambda a, b: np.sum(np.maximum(a, b)), argnums=(0, 1))(x, x)
    np.testing.assert_allclose(ga, [0.5, 0.5])
    np.testing.assert_allclose(gb, [0.5, 0.5])
    np.testing.assert_allclose(s2s.grad(lambda a: np.sum(np.minimum(a, a)))(x), [1.0, 1.0])


def test_sort_ties_follow_the_stable_permutation():
    x = np.array([2.0, 1.0, 1.0])
    np.testing.assert_allclose(s2s.grad(lambda x: np.sort(x)[0])(x), [0.0, 1.0, 0.0])
    np.testing.assert_allclose(s2s.grad(lambda x: np.sort(x)[1])(x), [0.0, 0.0, 1.0])
    t = np.array([10.0, 20.0, 30.0])
    np.testing.assert_allclose(s2s.jvp(lambda x: np.sort(x), (x,), (t,))[1], [20.0, 30.0, 10.0])


def test_median_even_length_averages_the_middle_pair():
    x = np.array([4.0, 1.0, 3.0, 2.0])
    np.testing.assert_allclose(s2s.grad(lambda x: np.median(x))(x), [0.0, 0.0, 0.5, 0.5])


def test_non_differentiable_functions_contribute_nothing():
    x = np.array([-1.5, 0.5, 2.5])
    # sum(x sign(x)) = sum |x|: the gradient is sign(x), so sign contributes nothing itself
    np.testing.assert_allclose(s2s.grad(lambda x: np.sum(x * np.sign(x)))(x), np.sign(x))
    np.testing.assert_allclose(
        s2s.grad(lambda x: np.sum(x * np.floor_divide(x, 1.0) + x[np.argsort(x)] * np.isnan(x)))(x),
        np.floor_divide(x, 1.0))
