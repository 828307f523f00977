"""``np.einsum`` under ``s2s.jit`` (``backend/llvm/ops/einsum.py``): every form of the
subscripts against numpy itself (values, shape, dtype), the compiled gradient and
Hessian of code calling it against central and second differences, and numpy's
exceptions for operands that do not fit."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from tests.grad.oracles import fd_grad

RNG = np.random.default_rng(3)
A = RNG.normal(size=(3, 4))
B = RNG.normal(size=(4, 5))
C = RNG.normal(size=(3, 3))
V = RNG.normal(size=4)
T3 = RNG.normal(size=(2, 3, 4))
Z = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
I2 = RNG.integers(-4, 5, size=(3, 4))

CASES = [
    ("ij,jk->ik", A, B), ("ij,jk", A, B), ("ii->", C), ("ii", C), ("ii->i", C),
    ("ij->ji", A), ("ij", A), ("ji", A), ("i->", V), ("ij,j->i", A, V), ("i,i", V, V),
    ("i,i->", V, V), ("i,j->ij", V, V), ("ij,ij->i", A, A), ("ij,kj->ik", A, A),
    ("bij,jk->bik", T3, B), ("ijk->kji", T3), ("...j,j->...", T3, V), ("i...->...", T3),
    ("ij,jk,kl->il", A, B, RNG.normal(size=(5, 2))), ("ij,ij->ij", A[:, :1], A),
    ("ij,jk", Z, Z), ("ij,jk->ik", I2, I2.T), ("ij,jk->ik", A.astype(np.float32), B),
    (" ij , jk -> ik ", A, B), ("i,i->i", V, 2.0 * V),
]


def _call(sub, n):
    if n == 1:
        return lambda a: np.einsum(sub, a)
    if n == 2:
        return lambda a, b: np.einsum(sub, a, b)
    return lambda a, b, c: np.einsum(sub, a, b, c)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_compiled_einsum_equals_numpy(case):
    sub, ops = case[0], case[1:]
    fn = _call(sub, len(ops))
    got, want = s2s.jit(fn)(*ops), fn(*ops)
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def loss(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b) ** 2) + np.einsum("ii->", np.einsum(
        "ij,kj->ik", a, a)) + np.sum(np.einsum("ij,ij->ij", a[:, :1], a) * a)


def diagonals(a, c):  # repeated indices in an operand, size-1 broadcasting
    return np.sum(np.einsum("ii,ij->j", c, a) ** 2) + np.sum(np.sin(np.einsum("ii->i", c)))


@pytest.mark.parametrize("f, args", [(loss, (A, B)), (diagonals, (A, C))],
                         ids=["products", "diagonals"])
def test_compiled_gradient_against_finite_differences(f, args):
    got = s2s.jit(s2s.grad(f, argnums=(0, 1)))(*args)
    for g, fd in zip(got, fd_grad(f, args, (0, 1))):
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_compiled_hessian_against_second_differences():
    f = lambda v: np.einsum("i,ij,j->", v, C, v) * np.einsum("i,i", v, v)  # noqa: E731
    x = V[:3]
    h = 1e-4
    e = np.eye(3) * h
    want = np.array([[(f(x + e[i] + e[j]) - f(x + e[i] - e[j]) - f(x - e[i] + e[j])
                       + f(x - e[i] - e[j])) / (4 * h * h) for j in range(3)]
                     for i in range(3)])
    np.testing.assert_allclose(s2s.jit(s2s.hessian(f))(x), want, rtol=1e-5, atol=1e-6)


def test_operands_that_do_not_fit_raise_numpy_value_error():
    mismatch = s2s.jit(lambda a, b: np.einsum("ij,jk->ik", a, b))
    with pytest.raises(ValueError, match="could not be broadcast"):
        mismatch(A, A)
    with pytest.raises(ValueError, match="subscripts"):
        s2s.jit(lambda a: np.einsum("ijk->i", a))(A)


def test_subscripts_not_a_constant_string_are_refused_by_name():
    with pytest.raises(s2s.S2SError, match=r"test_einsum.py:\d+:\d+: jit does not compile "
                                           r"np.einsum"):
        s2s.jit(lambda a: np.einsum(a, [0, 1], [1, 0]))(A)
