"""Batched contractions (issue 20 item 5): ``rt.blas_contract.contract`` against
``np.einsum`` on operands of every memory layout, and ``vmap`` of products, of their
VJPs and of their JVPs against a Python loop over the batch for every placement of the
batch axis (either operand, both, ``in_axes`` other than 0, ``out_axes``), ranks 1-3,
real and complex; the derivatives against central finite differences."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import s2s
from s2s_runtime import blas_contract
from tests.batch.loop import assert_close, loop

N = 5
RNG = np.random.default_rng(20)


def R(*shape, cplx=False):
    x = RNG.normal(size=shape)
    return x + 1j * RNG.normal(size=shape) if cplx else x


def _layouts(x):
    """``x`` as a C array, a Fortran array, a transposed copy seen back in ``x``'s order,
    and a strided
    slice of a larger array (every view holding ``x``'s values)."""
    yield x
    if x.ndim == 0:
        return
    yield np.asfortranarray(x)
    if x.ndim >= 2:
        yield np.ascontiguousarray(np.moveaxis(x, 0, -1)).transpose(
            (x.ndim - 1,) + tuple(range(x.ndim - 1)))
    big = np.zeros(tuple(2 * n for n in x.shape), dtype=x.dtype)
    view = big[tuple(slice(None, None, 2) for _ in x.shape)]
    view[...] = x
    yield view


SPECS = ["ij,jk->ik", "zij,jk->zik", "ij,zjk->zik", "zij,zjk->zik", "zi,ij->zj",
         "ij,zj->zi", "zij,zj->zi", "zi,zi->z", "i,zi->z", "zi,zj->zij", "zi,j->zij",
         "zik,jk->zij", "ij,zik->zjk", "zjk,zij->zik", "abc,cbd->ad", "zabc,zcb->za",
         "zab,bcz->ac", "ab,->ab", ",za->za", "zi,zi->", "zabc,zdc->zdab",
         "i,i->", "ij,ij->ji", "zab,ab->zba"]


def _shape(sub, sizes):
    return tuple(sizes[c] for c in sub)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("cplx", [False, True])
def test_contract_matches_einsum_on_every_layout(spec, cplx):
    sizes = dict(zip("zabcdijk", (4, 2, 3, 5, 2, 3, 4, 6)))
    sa, sb = spec.split("->")[0].split(",")
    a, b = R(*_shape(sa, sizes), cplx=cplx), R(*_shape(sb, sizes))
    want = np.einsum(spec, a, b)
    for x, y in itertools.product(list(_layouts(a)), list(_layouts(b))):
        got = blas_contract.contract(spec, x, y)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_contract_integers_and_broadcast_letters():
    a, b = np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4)
    got = blas_contract.contract("ij,jk->ik", a, b)
    assert got.dtype == (a @ b).dtype and np.array_equal(got, a @ b)
    a1, b1 = R(1, 3), R(4, 3)  # a size-1 letter against 4: numpy's einsum broadcasts it
    np.testing.assert_allclose(blas_contract.contract("zi,zi->z", a1, b1),
                               np.einsum("zi,zi->z", a1, b1))


def test_contract_views_operands_without_copies():
    """The batch axis of a cotangent merges with its rows: one product, no copy (the
    result shares no memory with the operands, and ``layout`` says nothing is stacked
    beyond the batch where the memory merges)."""
    g, w = R(16, 3, 4), R(5, 4)
    kinds = blas_contract.letter_kinds("zik,jk->zij")
    swap, perm_l, shape_l, perm_r, shape_r, out_shape, out_perm = \
        blas_contract.layout("zik,jk->zij", kinds, g, w)
    assert shape_l == (48, 4) and shape_r == (4, 5) and out_perm is None
    lhs = g.transpose(perm_l).reshape(shape_l)
    assert np.shares_memory(lhs, g)  # a view
    kinds = blas_contract.letter_kinds("ij,zik->zjk")
    a = R(3, 5)
    swap, perm_l, shape_l, perm_r, shape_r, out_shape, out_perm = \
        blas_contract.layout("ij,zik->zjk", kinds, a, g)
    assert (shape_l, shape_r) == ((1, 5, 3), (16, 3, 4)) and out_perm is None  # stacked


# -- vmap of products against the loop -----------------------------------------------
def mm(a, b):
    return a @ b


def npmatmul(a, b):
    return np.matmul(a, b)


def dot(a, b):
    return np.dot(a, b)


def inner(a, b):
    return np.inner(a, b)


def outer(a, b):
    return np.outer(a, b)


def vdot(a, b):
    return np.vdot(a, b)


def tdot(a, b):
    return np.tensordot(a, b, axes=1)


def es(a, b):
    return np.einsum("ij,jk->ik", a, b)


def es_vec(a, b):
    return np.einsum("i,ij->j", a, b)


# (function, per-example shapes of a and b)
PRODUCTS = [(mm, (3, 4), (4, 2)), (mm, (4,), (4, 2)), (mm, (3, 4), (4,)),
            (mm, (2, 3, 4), (4, 2)), (mm, (2, 3, 4), (2, 4, 5)), (npmatmul, (3, 4), (4, 2)),
            (dot, (3, 4), (4, 2)), (dot, (3, 4), (4,)), (dot, (2, 3, 4), (4, 2)),
            (inner, (3, 4), (2, 4)), (inner, (4,), (4,)), (outer, (3,), (4,)),
            (vdot, (3, 4), (3, 4)), (tdot, (2, 3, 4), (4, 2)), (es, (3, 4), (4, 2)),
            (es_vec, (4,), (4, 3))]
PLACEMENTS = [(0, None), (None, 0), (0, 0), (1, None), (None, -1), (1, 1), (-1, 0)]


def _batched(shape, axis, cplx=False):
    if axis is None:
        return R(*shape, cplx=cplx)
    x = R(N, *shape, cplx=cplx)
    return np.moveaxis(x, 0, axis % (len(shape) + 1))


def _cases():
    for (fn, sa, sb), axes in itertools.product(PRODUCTS, PLACEMENTS):
        if any(ax is not None and ax not in (0, -1) and ax >= len(s) + 1
               for ax, s in zip(axes, (sa, sb))):
            continue
        yield pytest.param(fn, sa, sb, axes, id=f"{fn.__name__}-{sa}-{sb}-{axes}")


@pytest.mark.parametrize("fn,sa,sb,in_axes", list(_cases()))
def test_vmap_product_matches_loop(fn, sa, sb, in_axes):
    a, b = _batched(sa, in_axes[0]), _batched(sb, in_axes[1])
    assert_close(s2s.vmap(fn, in_axes=in_axes)(a, b), loop(fn, (a, b), in_axes))


@pytest.mark.parametrize("fn", [mm, dot, es, vdot, outer])
@pytest.mark.parametrize("out_axes", [1, -1])
def test_vmap_product_out_axes_and_complex(fn, out_axes):
    sa, sb = {mm: ((3, 4), (4, 2)), dot: ((3, 4), (4, 2)), es: ((3, 4), (4, 2)),
              vdot: ((3, 4), (3, 4)), outer: ((3,), (2,))}[fn]
    out_axes = 0 if fn is vdot else out_axes
    a, b = _batched(sa, 0, cplx=True), _batched(sb, None, cplx=True)
    got = s2s.vmap(fn, in_axes=(0, None), out_axes=out_axes)(a, b)
    assert_close(got, loop(fn, (a, b), (0, None), out_axes))


# -- vmap of the VJPs and JVPs of products ----------------------------------------------
def predict(W, b, inputs):
    return np.tanh(inputs @ W + b)


def bilinear(A, B):
    return np.sin(np.einsum("ij,jk->ik", A, B)) + np.dot(A, B) * 0.5 + np.tensordot(A, B, 1)


def _fd_vjp(f, x, u, h=1e-6):
    """``u . J`` by central differences (one entry of ``x`` at a time)."""
    out = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[k] = h
        out[k] = np.sum(u * (f(x + e) - f(x - e))) / (2 * h)
    return out


@pytest.mark.parametrize("wrt", [0, 1, 2])
@pytest.mark.parametrize("ct_axis", [0, 1, -1])
def test_vmap_of_vjp_fun_matches_loop_and_finite_differences(wrt, ct_axis):
    W, b, X = R(5, 4), R(4), R(3, 5)
    args = [W, b, X]
    f = [lambda x: predict(x, b, X), lambda x: predict(W, x, X),
         lambda x: predict(W, b, x)][wrt]
    y, vjp_fun = s2s.vjp(f, args[wrt])
    U = np.moveaxis(R(N, *y.shape), 0, ct_axis)
    got = s2s.vmap(vjp_fun, in_axes=ct_axis)(U)
    assert_close(got, loop(vjp_fun, (U,), ct_axis))
    for k in range(N):
        np.testing.assert_allclose(got[0][k], _fd_vjp(f, args[wrt],
                                                      np.take(U, k, axis=ct_axis)),
                                   rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("wrt", [0, 1])
@pytest.mark.parametrize("out_axes", [0, 1])
def test_vmap_of_jvp_and_vjp_of_bilinear_forms(wrt, out_axes):
    A, B = R(3, 4), R(4, 2)
    f = lambda x: bilinear(x, B) if wrt == 0 else bilinear(A, x)  # noqa: E731
    x = (A, B)[wrt]
    T = R(N, *x.shape)
    tangent = lambda t: s2s.jvp(f, (x,), (t,))[1]  # noqa: E731
    got = s2s.vmap(tangent, out_axes=out_axes)(T)
    assert_close(got, loop(tangent, (T,), 0, out_axes))
    h = 1e-6
    for k in range(N):
        fd = (f(x + h * T[k]) - f(x - h * T[k])) / (2 * h)
        np.testing.assert_allclose(np.take(got, k, axis=out_axes), fd, rtol=1e-6, atol=1e-8)
    y, vjp_fun = s2s.vjp(f, x)
    U = R(N, *y.shape)
    got = s2s.vmap(vjp_fun)(U)
    assert_close(got, loop(vjp_fun, (U,)))
    # the dot-product test: <u, J t> = <u J, t> for every example
    for k in range(N):
        np.testing.assert_allclose(np.sum(U[k] * tangent(T[k])), np.sum(got[0][k] * T[k]),
                                   rtol=1e-10)


@pytest.mark.parametrize("batched", [(0, None), (None, 0), (0, 0)])
def test_vmap_of_grad_of_product_of_complex_and_batched_factors(batched):
    def f(A, B):
        return np.real(np.sum(np.conj(A @ B) * (A @ B)))

    A, B = _batched((3, 4), batched[0], cplx=False), _batched((4, 2), batched[1])
    g = s2s.grad(f, argnums=(0, 1))
    got = s2s.vmap(g, in_axes=batched)(A, B)
    want = loop(g, (A, B), batched)
    assert_close(got, want)


def es3(a, b):
    return np.einsum("ij,jk,k->i", a, b, b[0])


def es_implicit(a, b):
    return np.einsum("...j,jk", a, b) + np.einsum("ij,jk", a * 2.0, b)


@pytest.mark.parametrize("fn", [es3, es_implicit])
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 1)])
def test_vmap_of_einsum_forms_and_their_derivatives(fn, in_axes):
    a, b = _batched((3, 4), in_axes[0]), _batched((4, 4), in_axes[1])
    assert_close(s2s.vmap(fn, in_axes=in_axes)(a, b), loop(fn, (a, b), in_axes))
    for wrt in (0, 1):
        other = (a, b)[1 - wrt]
        axis_other = in_axes[1 - wrt]
        x0 = np.take(other, 0, axis=axis_other) if axis_other is not None else other
        x = (R(3, 4), R(4, 4))[wrt]
        f = (lambda x: np.sum(np.sin(fn(x, x0)))) if wrt == 0 else \
            (lambda x: np.sum(np.sin(fn(x0, x))))
        h_ = (lambda x: np.sin(fn(x, x0))) if wrt == 0 else (lambda x: np.sin(fn(x0, x)))
        y, vjp_fun = s2s.vjp(h_, x)
        U = R(N, *np.shape(y))
        got = s2s.vmap(vjp_fun)(U)
        assert_close(got, loop(vjp_fun, (U,)))
        T = R(N, *x.shape)
        tangent = lambda t: s2s.jvp(h_, (x,), (t,))[1]  # noqa: E731
        jv = s2s.vmap(tangent)(T)
        assert_close(jv, loop(tangent, (T,)))
        for k in range(2):  # the dot-product test, and the gradient against differences
            np.testing.assert_allclose(np.sum(U[k] * jv[k]), np.sum(got[0][k] * T[k]),
                                       rtol=1e-10)
        h = 1e-6
        fd = (f(x + h * T[0]) - f(x - h * T[0])) / (2 * h)
        np.testing.assert_allclose(np.sum(s2s.grad(f)(x) * T[0]), fd, rtol=1e-6)


# -- vmap of Hessian-vector products (the product VJPs' own derivatives) ----------------
def hv_matmul(x, A):
    return np.sum(np.tanh(A @ x) ** 2)


def hv_dot(x, A):
    return np.sum(np.tanh(np.dot(A, x)) ** 2)


def hv_einsum(x, A):
    return np.sum(np.tanh(np.einsum("ij,j->i", A, x)) ** 2)


def hv_tensordot(x, A):
    return np.sum(np.tanh(np.tensordot(A, x, 1)) ** 2)


def hv_inner(x, A):
    return np.sum(np.tanh(np.inner(A, x)) ** 2)


@pytest.mark.parametrize("f", [hv_matmul, hv_dot, hv_einsum, hv_tensordot, hv_inner])
@pytest.mark.parametrize("batch_A", [False, True])
def test_vmap_of_hessian_vector_products_of_products(f, batch_A):
    x, V = R(3), R(N, 3)
    A = R(N, 4, 3) if batch_A else R(4, 3)
    g = s2s.grad(f)

    def hvp(v, A):
        return s2s.jvp(g, (x, A), (v, np.zeros_like(A)))[1]

    in_axes = (0, 0 if batch_A else None)
    got = s2s.vmap(hvp, in_axes=in_axes)(V, A)
    assert_close(got, loop(hvp, (V, A), in_axes))
    for k in range(N):  # closed form: H = A^T diag(2 (1 - t^2)(1 - 3 t^2)) A, t = tanh(A x)
        Ak = A[k] if batch_A else A
        t = np.tanh(Ak @ x)
        H = Ak.T @ np.diag(2 * (1 - t ** 2) * (1 - 3 * t ** 2)) @ Ak
        np.testing.assert_allclose(got[k], H @ V[k], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("wrt", [0, 1])
@pytest.mark.parametrize("fn", [mm, dot, es, tdot, inner])
def test_vmap_of_vjp_fun_of_complex_products_matches_loop(fn, wrt):
    sa, sb = ((3, 4), (2, 4)) if fn is inner else ((3, 4), (4, 2))
    A, B = R(*sa, cplx=True), R(*sb, cplx=True)
    f = (lambda a: np.sin(fn(a, B))) if wrt == 0 else (lambda b: np.sin(fn(A, b)))
    y, vjp_fun = s2s.vjp(f, (A, B)[wrt])
    U = R(N, *y.shape, cplx=True)
    assert_close(s2s.vmap(vjp_fun)(U), loop(vjp_fun, (U,)))
    T = R(N, *(sa, sb)[wrt], cplx=True)
    tangent = lambda t: s2s.jvp(f, ((A, B)[wrt],), (t,))[1]  # noqa: E731
    assert_close(s2s.vmap(tangent)(T), loop(tangent, (T,)))
