"""Compositions over idioms of plain numpy code that a sweep of user-style functions found
refused or crashing: an accumulator updated with ``+=`` in a loop (``grad(vmap(f))`` and
``jacrev(jacfwd(f))`` differentiate vmap's in-place operator), ``np.kron`` of vectors and
of operands of different ranks (read as plain code by every transform), and
``np.linalg.cholesky`` under ``vmap`` of its derivative (``conj_lower``, the mask of its
rule read from one example), and ``np.linalg.matrix_power`` of a matrix display (a
stack under ``jit(vmap)``; the batched cotangent of ``np.array`` of items compiled), and
``np.triu``/``np.tril`` (a mask, no writes: ``grad(vmap(f))`` was refused), and the
builtin ``sum`` of a list under ``grad(vmap(f))`` (vmap's ``batch_sum_items`` read as code),
loops over ``enumerate``/``zip`` under ``grad(vmap(f))`` (the batched iterator stays one that
reverse mode indexes), and the compiled derivatives of ``np.interp``/``np.convolve`` (their
layout helpers called in numpy), the builtin ``sum`` over an array's rows (its cotangent
an array), ``np.add.reduce`` and the other ufunc methods (read as ``np.sum``...),
``np.split`` unpacked into names, ``np.take`` and fancy indices by a list under the jit,
and the compiled Jacobian kernels (``jit(hessian)``, ``jit(jacfwd(grad))``,
``jit(jacrev(grad))``) of code that branches on ranks (``np.kron``) or slices shapes by
a parameter (``np.tensordot``).
Every value is checked against central differences of the
primal (Hessians: of the primal's differences)."""
from __future__ import annotations

import numpy as np
import pytest

import s2s

from .finite_differences import (check_derivatives_of_a_vmapped_loss, fd_gradient,
                                 fd_hessian, run_unless_refused)

X = np.array([0.31, -0.52, 0.77, 0.18])
XS = np.stack([X, X * 0.9 + 0.05, X[::-1]])


def accumulate_by_index(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] ** 2 * (i + 1)
    return s


def accumulate_over_items(x):
    s = 0.0
    for v in x:
        s += v ** 2 if v > 0 else -v ** 3
        s *= 1.1
    return s


def accumulate_rows(x):
    m = np.outer(x, x[::-1])
    acc = np.zeros(x.shape[0])
    for row in m:
        acc += np.tanh(row)
    return np.sum(acc ** 2)


def kron_vectors(x):
    return np.sum(np.kron(x[:2], x[2:]) ** 2) + np.sum(np.kron(x[:2], np.outer(x, x)))


def kron_matrices(x):
    a = np.reshape(x, (2, 2))
    return np.sum(np.kron(a, a.T) * np.kron(np.eye(2), a))


def cholesky_logdet(x):
    m = np.outer(x, x) + 2.0 * np.eye(x.shape[0])
    return np.sum(np.log(np.diag(np.linalg.cholesky(m))))


def matrix_power_of_items(x):
    m = np.array([[x[0], x[1]], [x[2] * x[1], x[3]]])
    return np.sum(np.linalg.matrix_power(m, 3)) + np.sum(np.linalg.matrix_power(m, -2))


def triangles(x):
    m = np.outer(x, x) + np.eye(x.shape[0])
    return np.sum(np.triu(m, 1) ** 2) + np.sum(np.tril(m) * m[::-1]) + np.trace(m @ m)


def sum_of_a_list(x):
    terms = [x[i] * x[j] for i in range(x.shape[0]) for j in range(i, x.shape[0])]
    return sum(terms) + sum([np.sin(v) for v in x], 1.0)


def sum_of_rows(x):
    # the builtin sum over an array's rows: its cotangent is an array (never a list of
    # rows, which vmap would stack on the wrong axis)
    return np.sum(sum(np.outer(x, x)) ** 2) + sum(x * x[::-1])


def list_read_twice(x):
    acc = []
    for i in range(x.shape[0]):
        acc.append(x[i] ** 2 * (i + 1))
    # two cotangents of the list (sum's, np.array's) add item by item, never concatenate
    return sum(acc) + np.sum(np.array(acc) * x) + np.prod(np.array(acc[:2]))


def enumerate_pairs(x):
    s = 0.0
    for i, (a, b) in enumerate(zip(x[:-1], x[1:])):
        s = s + (i + 1) * a * b
    for i, row in enumerate(np.outer(x, x)):
        s = s + i * np.sum(row ** 2)
    return s


GRID = np.linspace(-1.0, 1.0, 6)


def tensordot_contractions(x):
    a = np.reshape(x[:4], (2, 2))
    return np.sum(np.tanh(np.tensordot(a, np.outer(x, x)[:2, :3], axes=1))) + \
        np.tensordot(a, a, axes=2)


def ufunc_reductions(x):
    m = np.outer(x, x[:3]) + 1.0
    return np.add.reduce(x ** 2) + np.sum(np.multiply.accumulate(m, axis=1)) + \
        np.sum(np.maximum.reduce(m) ** 2)


def split_and_take(x):
    a, b = np.split(np.concatenate([x, x[::-1] * 2.0]), 2)
    return np.sum(a * b) + np.sum(np.take(x, [0, 1, 1, 3]) ** 2) + np.sum(x[[0, 2, 3]] ** 3)


def interp_and_convolve(x):
    return np.sum(np.interp(x, GRID, GRID ** 3)) + \
        np.sum(np.convolve(x, np.array([0.25, 0.5, 0.25]), mode="same") ** 2)


FUNCTIONS = [accumulate_by_index, accumulate_over_items, accumulate_rows, kron_vectors,
             kron_matrices, cholesky_logdet, matrix_power_of_items, triangles, sum_of_a_list,
             sum_of_rows, list_read_twice, enumerate_pairs, tensordot_contractions,
             ufunc_reductions, split_and_take, interp_and_convolve]


GRADIENTS = {
    "vmap(grad)": lambda f: s2s.vmap(s2s.grad(f))(XS),
    "grad(vmap)": lambda f: s2s.grad(lambda xs: np.sum(s2s.vmap(f)(xs)))(XS),
    "jit(vmap(grad))": lambda f: s2s.jit(s2s.vmap(s2s.grad(f)))(XS),
    "jit(grad)": lambda f: np.stack([s2s.jit(s2s.grad(f))(x) for x in XS]),
}
HESSIANS = {
    "jacrev(jacfwd)": lambda f: s2s.jacrev(s2s.jacfwd(f))(X),
    "jacfwd(jacrev)": lambda f: s2s.jacfwd(s2s.jacrev(f))(X),
    "jit(hessian)": lambda f: s2s.jit(s2s.hessian(f))(X),
    "jit(jacrev(grad))": lambda f: s2s.jit(s2s.jacrev(s2s.grad(f)))(X),
    "jit(jacfwd(grad))": lambda f: s2s.jit(s2s.jacfwd(s2s.grad(f)))(X),
    "vmap(hessian)": lambda f: s2s.vmap(s2s.hessian(f))(XS)[0],
}
#: compositions still refused, with the words of the refusal (a clear error, never a value)
REFUSED = {
    # reverse mode over reverse mode of a loop: the inner gradient's tape is recorded on
    # the outer one, which compiled code (one mutable stack per tape) does not keep
    **{(f, "jit(jacrev(grad))"): "reverse mode over reverse mode"
       for f in ("accumulate_by_index", "accumulate_over_items", "accumulate_rows",
                 "sum_of_a_list", "list_read_twice", "enumerate_pairs")},
}


@pytest.mark.parametrize("name", list(GRADIENTS))
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_gradients(f, name):
    got = run_unless_refused(REFUSED, f, name, GRADIENTS[name])
    if got is not None:
        want = np.stack([fd_gradient(f, x) for x in XS])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(HESSIANS))
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_second_derivatives(f, name):
    got = run_unless_refused(REFUSED, f, name, HESSIANS[name])
    if got is not None:
        np.testing.assert_allclose(got, fd_hessian(f, X), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shapes", [((3,), (2,)), ((2, 3), (3, 2)), ((3,), (2, 2)),
                                    ((2, 2), (3,)), ((), (3,)), ((2, 1, 2), (1, 2, 2)),
                                    ((2,), (2, 2, 1))], ids=str)
def test_kron_values_and_batches(shapes):
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    np.testing.assert_allclose(s2s.jit(np.kron)(a, b), np.kron(a, b))
    stack = np.stack([a, 2 * a - 1])
    want = np.stack([np.kron(a, b), np.kron(2 * a - 1, b)])
    np.testing.assert_allclose(s2s.vmap(np.kron, in_axes=(0, None))(stack, b), want)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(np.kron, in_axes=(0, None)))(stack, b), want)
    # the dot-product test: <jvp(t), g> == <t, vjp(g)>
    ta, tb = rng.normal(size=np.shape(a)), rng.normal(size=np.shape(b))
    out, tangent = s2s.jvp(np.kron, (a, b), (ta, tb))
    g = rng.normal(size=np.shape(out))
    ga, gb = s2s.vjp(np.kron, a, b)[1](g)
    np.testing.assert_allclose(np.sum(tangent * g), np.sum(ta * ga) + np.sum(tb * gb))


def test_kron_of_more_than_three_axes_is_refused_by_name():
    a = np.ones((1, 1, 1, 2))
    with pytest.raises(NotImplementedError, match="np.kron of arrays of more than 3 axes"):
        s2s.grad(lambda x: np.sum(np.kron(x, x)))(a)


@pytest.mark.parametrize("fn", [np.sin, np.sum, np.cumsum, np.kron], ids=lambda f: f.__name__)
def test_jit_of_vmap_of_a_numpy_function_keeps_its_defaults(fn):
    xs = np.arange(6.0).reshape(3, 2) / 7
    args = (xs, xs) if fn is np.kron else (xs,)
    want = np.stack([fn(*(a[k] for a in args)) for k in range(3)])
    np.testing.assert_allclose(s2s.jit(s2s.vmap(fn))(*args), want)


@pytest.mark.parametrize("shape, dtype", [((3, 3), np.float64), ((2, 3, 3), np.float64),
                                          ((2, 2), np.int64), ((2, 2), np.float32)],
                         ids=str)
def test_jit_matrix_power_of_matrices_and_stacks(shape, dtype):
    rng = np.random.default_rng(5)
    a = (rng.normal(size=shape) * 3).astype(dtype)
    for n in (0, 1, 3, 4) + ((-2,) if np.dtype(dtype).kind == "f" else ()):
        want = np.linalg.matrix_power(a, n)
        got = s2s.jit(np.linalg.matrix_power)(a, n)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-4)


@pytest.mark.parametrize("bad, words", [(np.ones((2, 3)), "must be square"),
                                        (np.ones(3), "at least two-dimensional")])
def test_jit_matrix_power_raises_numpys_errors(bad, words):
    with pytest.raises(np.linalg.LinAlgError, match=words):
        s2s.jit(np.linalg.matrix_power)(bad, 2)


def rotation_energy(x):
    c, s = np.cos(x[0]), np.sin(x[0])
    r = np.array([[c, -s], [s * x[1], c]])
    return np.sum((r @ x[2:]) ** 2)


def test_second_derivatives_through_vmaps_array_of_items():
    check_derivatives_of_a_vmapped_loss(rotation_energy, XS)


def stacks_of_a_list(x):
    rows = []
    for i in range(3):
        rows.append(np.outer(x, x) * (i + 1))
    return np.sum(np.stack(rows) ** 2) + \
        np.sum(np.stack(rows, axis=2) * np.stack(rows, axis=-1)[..., ::-1])


def test_compiled_cotangent_of_a_stack_of_a_list_along_any_axis():
    # stack_vjp of a list along axis 1 (vmap's stack of each example's list) and 2
    want = np.stack([fd_gradient(stacks_of_a_list, x) for x in XS])
    np.testing.assert_allclose(s2s.jit(s2s.vmap(s2s.grad(stacks_of_a_list)))(XS), want,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s2s.jit(s2s.grad(stacks_of_a_list))(X), want[0],
                               rtol=1e-5, atol=1e-6)
