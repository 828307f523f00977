"""Functions giving indices under ``vmap``: those of an array's shape alone
(``np.triu_indices_from``, ``np.tril_indices_from``, ``np.diag_indices_from``) are the
same for every example, computed once from a stand-in example; those of a condition's
true entries (``np.where(c)``, ``np.nonzero``, ``np.argwhere``, ``np.flatnonzero``) differ
in number per example and are refused by name, never a bare ``IndexError``."""
import numpy as np
import pytest

import s2s

S = np.random.default_rng(4).uniform(0.2, 0.9, (4, 3, 3))
SHAPE_INDICES = [
    (lambda s: np.sum(s[np.triu_indices_from(s)] ** 2), np.triu_indices_from),
    (lambda s: np.sum(s[np.tril_indices_from(s, -1)] ** 2), lambda s: np.tril_indices_from(s, -1)),
    (lambda s: np.sum(s[np.diag_indices_from(s)] ** 2), np.diag_indices_from),
]


@pytest.mark.parametrize("f, where", SHAPE_INDICES, ids=["triu", "tril", "diag"])
def test_indices_of_a_shape_batched(f, where):
    want = np.array([f(x) for x in S])
    np.testing.assert_allclose(s2s.vmap(f)(S), want, rtol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(f))(S), want, rtol=1e-14)
    grads = np.zeros_like(S)
    for k, x in enumerate(S):  # d/ds sum(s[idx] ** 2) = 2 s at the places, by hand
        grads[k][where(x)] = 2 * x[where(x)]
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(S), grads, rtol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(s2s.grad(f)))(S), grads, rtol=1e-14)


@pytest.mark.parametrize("f, name", [
    (lambda a: np.sum(a[np.where(a > 0.5)]), r"np\.where\(condition\)"),
    (lambda a: np.sum(a) * np.where(a > 0.5)[0].shape[0], r"np\.where\(condition\)"),
    (lambda a: np.sum(a[np.nonzero(a > 0.5)]), "np.nonzero"),
    (lambda a: np.sum(a) * np.argwhere(a > 0.5).shape[0], "np.argwhere"),
    (lambda a: np.sum(a) * np.flatnonzero(a > 0.5).size, "np.flatnonzero"),
], ids=["where", "where-count", "nonzero", "argwhere", "flatnonzero"])
def test_indices_of_true_entries_are_refused_by_name(f, name):
    x = S.reshape(4, 9)
    for transform in (s2s.vmap(f), s2s.jit(s2s.vmap(f))):
        with pytest.raises(s2s.S2SError, match=f"vmap: {name} of a value that differs per "
                                               "example: the number of indices"):
            transform(x)


def smallest_two(a):
    return np.sum(a[np.argpartition(a, 2)[:2]] ** 2)


def test_argpartition_batched_along_each_example():
    x = S.reshape(4, 9)
    np.testing.assert_allclose(s2s.vmap(smallest_two)(x), [smallest_two(r) for r in x],
                               rtol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(smallest_two))(x), [smallest_two(r) for r in x],
                               rtol=1e-14)
    grads = np.zeros_like(x)  # 2 a at the two smallest entries of each example, by hand
    for k, r in enumerate(x):
        low = np.argsort(r)[:2]
        grads[k][low] = 2 * r[low]
    np.testing.assert_allclose(s2s.vmap(s2s.grad(smallest_two))(x), grads, rtol=1e-14)


def test_extract_of_batched_values_is_refused_by_name():
    with pytest.raises(s2s.S2SError, match="vmap: np.extract of a value that differs per "
                                           "example"):
        s2s.vmap(lambda a: np.sum(np.extract(a > 0.5, a)))(S.reshape(4, 9))
