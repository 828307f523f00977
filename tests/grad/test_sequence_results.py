"""Loops over the list or tuple a primitive returns (``np.split``, ``np.array_split``,
``np.meshgrid``, ``np.linalg.eigh``...: the ``sequence`` property of their records) are
read by position like a list display, in every transform: ``grad``, ``jacfwd``,
``hessian``, ``vmap(grad)`` and ``jit(grad)``, each against central differences of the
primal (second differences of the gradient for the Hessian)."""
import numpy as np
import pytest

import s2s
from s2s.rules.registry import has

from .oracles import fd_grad

RNG = np.random.default_rng(11)
X = RNG.uniform(0.2, 0.9, 6)
S = RNG.uniform(0.2, 0.9, (3, 3))
SPD = S @ S.T + 3 * np.eye(3)


def loop_split(a):
    s = 0.0
    for p in np.split(a, 3):
        s = s + np.sum(np.sin(p) * p[0])
    return s


def generator_array_split(a):
    return sum(np.sum(p ** 3) for p in np.array_split(a, 4))


def comprehension_named_parts(a):
    parts = np.array_split(a, 4)
    return sum([np.prod(p) for p in parts])


def enumerate_split(a):
    out = 0.0
    for i, p in enumerate(np.split(a, 2)):
        out = out + (i + 1.0) * np.sum(np.tanh(p))
    return out


def zip_two_splits(a):
    out = 0.0
    for p, q in zip(np.split(a, 3), np.split(a[::-1], 3)):
        out = out + np.dot(p, q ** 2)
    return out


def loop_meshgrid(a):
    out = 0.0
    for g in np.meshgrid(a[:3], a[3:]):
        out = out + np.sum(np.cos(g) * g)
    return out


def loop_hsplit_matrix(a):
    m = np.reshape(a, (2, 3))
    out = 0.0
    for col in np.hsplit(m, 3):
        out = out + np.sum(col ** 2) * np.sum(col)
    return out


CASES = [loop_split, generator_array_split, comprehension_named_parts, enumerate_split,
         zip_two_splits, loop_meshgrid, loop_hsplit_matrix]
#: equal parts only: a compiled list holds arrays of one shape
JITTED = [loop_split, enumerate_split, zip_two_splits, loop_hsplit_matrix]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_grad_and_jacfwd_match_differences(f):
    want = fd_grad(f, (X,))
    np.testing.assert_allclose(s2s.grad(f)(X), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jacfwd(f)(X), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_hessian_matches_second_differences(f):
    g = s2s.grad(f)
    h = 1e-5
    want = np.stack([(g(X + h * e) - g(X - h * e)) / (2 * h) for e in np.eye(X.size)])
    np.testing.assert_allclose(s2s.hessian(f)(X), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_vmap_of_grad_matches_differences_per_example(f):
    batch = np.stack([X, X * 1.1, X[::-1]])
    got = s2s.vmap(s2s.grad(f))(batch)
    for row, x in zip(got, batch):
        np.testing.assert_allclose(row, fd_grad(f, (x,)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", JITTED, ids=lambda f: f.__name__)
def test_jit_of_grad_matches_differences(f):
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(X), fd_grad(f, (X,)), rtol=1e-6, atol=1e-8)


def test_loop_over_eigh_pair():
    """``for part in np.linalg.eigh(a)``: the named tuple's two items in turn."""
    def f(a):
        out = 0.0
        for part in np.linalg.eigh(a):
            out = out + np.sum(part ** 2)
        return out
    got = s2s.grad(f)(SPD)
    # the rule is that of a symmetric input: difference along symmetric directions
    for i, j in [(0, 0), (0, 1), (1, 2), (2, 2)]:
        e = np.zeros((3, 3))
        e[i, j] = e[j, i] = 1.0
        h = 1e-6
        want = (f(SPD + h * e) - f(SPD - h * e)) / (2 * h)
        np.testing.assert_allclose(np.sum(got * e), want, rtol=1e-5, atol=1e-7)


def test_sequence_is_a_record_property():
    for fn in (np.split, np.array_split, np.hsplit, np.meshgrid, np.broadcast_arrays,
               np.linalg.eigh, np.linalg.svd, np.nonzero, divmod, sorted, list, tuple):
        assert has(fn, "sequence"), fn
    for fn in (np.concatenate, np.sum, dict):
        assert not has(fn, "sequence"), fn


@pytest.mark.parametrize("f", [loop_split, enumerate_split], ids=lambda f: f.__name__)
def test_jit_of_vmap_of_grad_matches_differences_per_example(f):
    """The batched loop reads the list's length (``rt.batch_len`` of a list, compiled)."""
    batch = np.stack([X, X * 1.1])
    got = s2s.jit(s2s.vmap(s2s.grad(f)))(batch)
    for row, x in zip(got, batch):
        np.testing.assert_allclose(row, fd_grad(f, (x,)), rtol=1e-6, atol=1e-8)
