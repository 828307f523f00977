"""numpy.linalg rules: JVP vs finite differences, VJP vs JVP (dot-product test), second
derivatives vs finite differences of the gradient, in float64 and complex128, on
well-conditioned random inputs (SPD / Hermitian positive definite for cholesky,
Hermitian with distinct eigenvalues for eigh, stacks of matrices).  Eigen- and
singular vectors are tested through gauge-invariant functions of them."""
import zlib

import numpy as np
import pytest

import s2s
from linalg_checks import check_second_order, check_vjp
from s2s.rules.registry import all_rules
from test_rules_vjp import _template_problems
from test_rules_vjp import test_template_signature_mirrors_the_primitive as _check_signature
from tests.grad.oracles import fd_grad

DTYPES = ["float64", "complex128"]


def rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if dtype == "complex128":
        x = x + 1j * rng.standard_normal(shape)
    return x


def well_conditioned(rng, shape, dtype):
    n = shape[-1]
    return rand(rng, shape, dtype) + 2 * n * np.eye(n)


def hermitian_pd(rng, shape, dtype):
    a = rand(rng, shape, dtype)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


def eig_invariants(r):
    """Eigenvalues, |V|^2 and V diag(w) V^H: unchanged by the phases of the columns of V."""
    w, v = r
    return w, np.abs(v) ** 2, (v * w[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2))


def eig_general_invariants(r):
    """Eigenvalues and |V|^2 (numpy's unit-norm eigenvectors up to a phase each)."""
    w, v = r
    return w, np.abs(v) ** 2


def drop_rank(r):
    """lstsq's results less the (integer) rank."""
    return r[0], r[1], r[3]


def svd_invariants(r):
    u, s, vh = r
    return s, (u * s[..., None, :] ** 2) @ vh, np.abs(u) ** 2, np.abs(vh) ** 2


def qr_parts(r):
    return tuple(r)


B2 = np.random.default_rng(7).standard_normal((4, 2))
B1 = np.random.default_rng(8).standard_normal(4)

# name -> (function, input maker, input shape, Hermitian tangents?)
CASES = {
    "inv": (np.linalg.inv, well_conditioned, (4, 4), False),
    "inv_stack": (np.linalg.inv, well_conditioned, (2, 3, 3), False),
    "solve_a_matrix_b": (lambda a: np.linalg.solve(a, B2), well_conditioned, (4, 4), False),
    "solve_a_vector_b": (lambda a: np.linalg.solve(a, B1), well_conditioned, (4, 4), False),
    "solve_stack_a_vector_b": (lambda a: np.linalg.solve(a, B1), well_conditioned, (3, 4, 4),
                               False),
    "solve_b": (lambda b: np.linalg.solve(np.eye(4) * 3 + np.tri(4), b), rand, (4, 2), False),
    "solve_b_vector": (lambda b: np.linalg.solve(np.eye(4) * 3 + np.tri(4), b), rand, (4,),
                       False),
    "solve_b_broadcast": (lambda b: np.linalg.solve(np.stack([np.eye(4) * 3, np.eye(4) * 2
                                                              + np.tri(4)]), b),
                          rand, (4, 3), False),
    "det": (np.linalg.det, well_conditioned, (3, 3), False),
    "det_stack": (np.linalg.det, well_conditioned, (2, 3, 3), False),
    "slogdet": (np.linalg.slogdet, well_conditioned, (3, 3), False),
    "slogdet_stack": (np.linalg.slogdet, well_conditioned, (2, 3, 3), False),
    "cholesky": (np.linalg.cholesky, hermitian_pd, (4, 4), True),
    "cholesky_upper": (lambda a: np.linalg.cholesky(a, upper=True), hermitian_pd, (3, 3), True),
    "cholesky_stack": (np.linalg.cholesky, hermitian_pd, (2, 3, 3), True),
    "eigh": (lambda a: eig_invariants(np.linalg.eigh(a)), hermitian_pd, (4, 4), True),
    "eigh_upper": (lambda a: eig_invariants(np.linalg.eigh(a, "U")), hermitian_pd, (3, 3), True),
    "eigh_stack": (lambda a: eig_invariants(np.linalg.eigh(a)), hermitian_pd, (2, 3, 3), True),
    "eigvalsh": (np.linalg.eigvalsh, hermitian_pd, (4, 4), True),
    "eig": (lambda a: eig_general_invariants(np.linalg.eig(a)), rand, (4, 4), False),
    "eig_stack": (lambda a: eig_general_invariants(np.linalg.eig(a)), rand, (2, 3, 3), False),
    "eig_symmetric": (lambda a: eig_general_invariants(np.linalg.eig(a)), hermitian_pd, (3, 3),
                      True),
    "eigvals": (np.linalg.eigvals, rand, (4, 4), False),
    "svd_square": (lambda a: svd_invariants(np.linalg.svd(a)), well_conditioned, (3, 3), False),
    "svd_tall": (lambda a: svd_invariants(np.linalg.svd(a, full_matrices=False)), rand, (5, 3),
                 False),
    "svd_wide": (lambda a: svd_invariants(np.linalg.svd(a, full_matrices=False)), rand, (2, 4),
                 False),
    "svd_stack": (lambda a: svd_invariants(np.linalg.svd(a, full_matrices=False)), rand,
                  (2, 4, 3), False),
    "svdvals": (np.linalg.svdvals, rand, (4, 3), False),
    "qr_tall": (lambda a: qr_parts(np.linalg.qr(a)), rand, (5, 3), False),
    "qr_square": (lambda a: qr_parts(np.linalg.qr(a)), well_conditioned, (3, 3), False),
    "qr_stack": (lambda a: qr_parts(np.linalg.qr(a)), rand, (2, 4, 3), False),
    "pinv_tall": (np.linalg.pinv, rand, (5, 3), False),
    "pinv_wide": (np.linalg.pinv, rand, (2, 4), False),
    "matrix_power_3": (lambda a: np.linalg.matrix_power(a, 3), rand, (3, 3), False),
    "matrix_power_0": (lambda a: np.linalg.matrix_power(a, 0) + a, rand, (3, 3), False),
    "matrix_power_neg2": (lambda a: np.linalg.matrix_power(a, -2), well_conditioned, (3, 3),
                          False),
    "matrix_power_stack": (lambda a: np.linalg.matrix_power(a, 2), rand, (2, 3, 3), False),
    "lstsq_a": (lambda a: drop_rank(np.linalg.lstsq(a, B2)), rand, (4, 3), False),
    "lstsq_a_vector_b": (lambda a: drop_rank(np.linalg.lstsq(a, B1)), rand, (4, 2), False),
    "lstsq_a_wide": (lambda a: drop_rank(np.linalg.lstsq(a, B2[:2])), rand, (2, 4), False),
    # a of rank 1 < 2 columns: minimum-norm x, empty residuals
    "lstsq_b": (lambda b: drop_rank(np.linalg.lstsq(B2[:, :1] * np.arange(1, 3), b)), rand,
                (4, 3), False),
    "lstsq_b_vector": (lambda b: drop_rank(np.linalg.lstsq(np.eye(4)[:, :3] + 0.2, b)), rand,
                       (4,), False),
    "cond": (np.linalg.cond, well_conditioned, (3, 3), False),
    "cond_2_tall": (lambda a: np.linalg.cond(a, 2), rand, (4, 3), False),
    "cond_m2": (lambda a: np.linalg.cond(a, -2), rand, (3, 3), False),
    "cond_fro": (lambda a: np.linalg.cond(a, "fro"), well_conditioned, (3, 3), False),
    "cond_1_stack": (lambda a: np.linalg.cond(a, 1), well_conditioned, (2, 3, 3), False),
    "cond_inf": (lambda a: np.linalg.cond(a, np.inf), well_conditioned, (3, 3), False),
    "cond_nuc": (lambda a: np.linalg.cond(a, "nuc"), well_conditioned, (3, 3), False),
    "tensorinv": (lambda a: np.linalg.tensorinv(a, ind=1),
                  lambda rng, shape, dtype: np.reshape(well_conditioned(rng, (6, 6), dtype), shape),
                  (6, 2, 3), False),
    "tensorinv_ind2": (np.linalg.tensorinv,
                       lambda rng, shape, dtype: np.reshape(well_conditioned(rng, (4, 4), dtype),
                                                            shape), (2, 2, 4), False),
    "tensorsolve_a": (lambda a: np.linalg.tensorsolve(a, B2[:3]),
                      lambda rng, shape, dtype: np.reshape(well_conditioned(rng, (6, 6), dtype),
                                                           shape), (3, 2, 6), False),
    "tensorsolve_a_axes": (lambda a: np.linalg.tensorsolve(a, B2[:3], axes=(0,)),
                           lambda rng, shape, dtype: np.moveaxis(np.reshape(well_conditioned(
                               rng, (6, 6), dtype), (3, 2, 6)), 2, 0), (6, 3, 2), False),
    "tensorsolve_b": (lambda b: np.linalg.tensorsolve(np.reshape(np.eye(6) * 2 + np.tri(6),
                                                                 (3, 2, 2, 3)), b),
                      rand, (3, 2), False),
    "multi_dot": (lambda a: np.linalg.multi_dot([a, B2, B2.T]), rand, (3, 4), False),
    "multi_dot_vectors": (lambda a: np.linalg.multi_dot([B1[:3], a, B2, B1[:2]]), rand, (3, 4),
                          False),
    "multi_dot_first_vector": (lambda a: np.linalg.multi_dot([a, B2, B2.T]), rand, (4,), False),
    "multi_dot_repeated": (lambda a: np.linalg.multi_dot([a, a.T, a]), rand, (3, 3), False),
    # numpy 2's array-API functions of numpy.linalg
    "api_matmul": (lambda a: np.linalg.matmul(a, B2), rand, (2, 3, 4), False),
    "api_matmul_rhs": (lambda a: np.linalg.matmul(B2.T, a), rand, (2, 4, 3), False),
    "api_outer": (lambda a: np.linalg.outer(a, B1) + np.linalg.outer(B1, a), rand, (4,), False),
    "api_tensordot": (lambda a: np.linalg.tensordot(a, B2, axes=1), rand, (3, 4), False),
    "api_tensordot_rhs": (lambda a: np.linalg.tensordot(B2, a, axes=([0], [1])), rand, (3, 4),
                          False),
    "api_vecdot": (lambda a: np.linalg.vecdot(a, a[::-1] * 1.5), rand, (3, 4), False),
    "api_vecdot_axis0": (lambda a: np.linalg.vecdot(B2, a, axis=0), rand, (4, 1), False),
    "api_trace": (lambda a: np.linalg.trace(a, offset=1), rand, (2, 3, 4), False),
    "api_diagonal": (lambda a: np.linalg.diagonal(a, offset=-1), rand, (2, 4, 3), False),
    "api_matrix_transpose": (np.linalg.matrix_transpose, rand, (2, 3, 4), False),
    "api_matrix_norm_fro": (lambda a: np.linalg.matrix_norm(a), rand, (2, 3, 4), False),
    "api_matrix_norm_nuc": (lambda a: np.linalg.matrix_norm(a, ord="nuc", keepdims=True), rand,
                            (3, 4), False),
    "api_vector_norm": (lambda a: np.linalg.vector_norm(a), rand, (2, 3, 4), False),
    "api_vector_norm_axes": (lambda a: np.linalg.vector_norm(a, axis=(0, 2), keepdims=True),
                             rand, (2, 3, 4), False),
    "api_vector_norm_ord1": (lambda a: np.linalg.vector_norm(a, axis=-2, ord=1), rand,
                             (2, 3, 4), False),
    "api_vector_norm_ord3": (lambda a: np.linalg.vector_norm(a, axis=None, keepdims=True,
                                                             ord=3), rand, (3, 4), False),
    "api_cross": (lambda a: np.linalg.cross(a, B2[:3, 0] + 1j * B2[:3, 1]), rand, (2, 3), False),
    "api_cross_rhs": (lambda a: np.linalg.cross(B2[:3, 0], a, axis=0), rand, (3, 2), False),
    "fftshift": (lambda a: np.fft.fftshift(a) * np.arange(5), rand, (3, 5), False),
    "ifftshift_axes": (lambda a: np.fft.ifftshift(a, axes=0) * np.arange(5), rand, (3, 5), False),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_and_vjp(name, dtype):
    f, make, shape, herm = CASES[name]
    rng = np.random.default_rng(zlib.crc32(f"{name} {dtype}".encode()))
    check_vjp(f, make(rng, shape, dtype), rng, herm)


# real scalar losses for the second derivatives
SECOND = {
    "inv": (lambda a: np.sum(np.abs(np.sin(np.linalg.inv(a))) ** 2), well_conditioned, (3, 3),
            False),
    "solve": (lambda a: np.sum(np.abs(np.linalg.solve(a, B1[:3])) ** 2), well_conditioned,
              (3, 3), False),
    "det": (lambda a: np.abs(np.linalg.det(a)) ** 2, well_conditioned, (3, 3), False),
    "slogdet": (lambda a: np.linalg.slogdet(a)[1], well_conditioned, (3, 3), False),
    "cholesky": (lambda a: np.sum(np.abs(np.sin(np.linalg.cholesky(a))) ** 2), hermitian_pd,
                 (3, 3), True),
    "eigh": (lambda a: np.sum(np.linalg.eigh(a)[0] ** 3)
             + np.sum(np.abs(np.linalg.eigh(a)[1]) ** 4), hermitian_pd, (3, 3), True),
    "svd": (lambda a: np.sum(np.linalg.svd(a, full_matrices=False)[1] ** 3)
            + np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[0]) ** 4), rand, (4, 3),
            False),
    "qr": (lambda a: np.sum(np.abs(np.linalg.qr(a)[0]) ** 3) + np.sum(np.abs(np.linalg.qr(a)[1])
                                                                      ** 2), rand, (4, 3), False),
    "pinv": (lambda a: np.sum(np.abs(np.linalg.pinv(a)) ** 2), rand, (4, 2), False),
    "eig": (lambda a: np.sum(np.abs(np.linalg.eig(a)[0]) ** 3)
            + np.sum(np.abs(np.linalg.eig(a)[1]) ** 4), rand, (3, 3), False),
    "eigvals": (lambda a: np.sum(np.real(np.linalg.eigvals(a)) ** 3), rand, (3, 3), False),
    "lstsq": (lambda a: np.sum(np.abs(np.linalg.lstsq(a, B2)[0]) ** 2)
              + np.sum(np.linalg.lstsq(a, B2)[1]), rand, (4, 3), False),
    "cond": (lambda a: np.linalg.cond(a) ** 2, well_conditioned, (3, 3), False),
    "tensorsolve_axes": (lambda a: np.sum(np.abs(np.linalg.tensorsolve(a, B2[:3], axes=(0,))) ** 2)
                         + np.sum(np.abs(np.linalg.tensorinv(a, 1)) ** 2),
                         lambda rng, shape, dtype: np.moveaxis(np.reshape(well_conditioned(
                             rng, (6, 6), dtype), (3, 2, 6)), 2, 0), (6, 3, 2), False),
    "multi_dot": (lambda a: np.sum(np.abs(np.linalg.multi_dot([a, B2[:3], B2[:3].T, a.T, a])) ** 2),
                  rand, (3, 3), False),
    "vector_norm": (lambda a: np.sum(np.linalg.vector_norm(a, axis=(0, 2)) ** 3), rand,
                    (2, 3, 2), False),
    "matrix_power": (lambda a: np.sum(np.abs(np.linalg.matrix_power(a, 3)) ** 2),
                     well_conditioned, (3, 3), False),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivatives(name, dtype):
    f, make, shape, herm = SECOND[name]
    rng = np.random.default_rng(zlib.crc32(f"{name} {dtype} 2".encode()))
    x = make(rng, shape, dtype) / 2 if make is rand else make(rng, shape, dtype)
    check_second_order(f, x, rng, herm)


def test_hessian_of_logdet_is_the_closed_form():
    # d^2 log det A [E, F] = -tr(A^-1 E A^-1 F): H_ij,kl = -(A^-1)_li (A^-1)_jk
    rng = np.random.default_rng(3)
    a = well_conditioned(rng, (3, 3), "float64")
    inv = np.linalg.inv(a)
    h = s2s.hessian(lambda x: np.linalg.slogdet(x)[1])(a)
    np.testing.assert_allclose(h, -np.einsum("li,jk->ijkl", inv, inv), atol=1e-12)


def test_cholesky_reads_the_hermitian_part_like_jax():
    # the gradient of a function of cholesky(X) is Hermitian: the directions that leave
    # the Hermitian matrices (numpy: the upper triangle) do not count half
    rng = np.random.default_rng(4)
    a = hermitian_pd(rng, (3, 3), "complex128")
    g = s2s.grad(lambda x: np.real(np.sum(np.linalg.cholesky(x) * (1 + 2j))))(a)
    np.testing.assert_allclose(g, np.conj(g.T), atol=1e-12)


def test_unsupported_decompositions_raise():
    a = np.random.default_rng(5).standard_normal((4, 3))
    with pytest.raises(NotImplementedError, match="full_matrices=True"):
        s2s.grad(lambda x: np.sum(np.linalg.svd(x)[0]))(a)
    with pytest.raises(NotImplementedError, match="mode='r'"):
        s2s.grad(lambda x: np.sum(np.linalg.qr(x, mode="r")))(a)
    with pytest.raises(NotImplementedError, match="m >= n"):
        s2s.grad(lambda x: np.sum(np.linalg.qr(x)[1]))(a.T)


def test_svd_without_vectors_is_svdvals():
    # np.linalg.svd(a, compute_uv=False) returns the singular values: their derivative
    a = np.random.default_rng(5).standard_normal((4, 3))
    w = np.array([1.0, -2.0, 0.5])

    def f(x):
        return np.sum(w * np.linalg.svd(x, compute_uv=False) ** 2)

    fd = fd_grad(f, (a,))
    np.testing.assert_allclose(s2s.grad(f)(a), fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(a), fd, rtol=1e-6, atol=1e-8)
    t = np.random.default_rng(6).standard_normal(a.shape)
    np.testing.assert_allclose(s2s.jvp(f, (a,), (t,))[1], np.sum(fd * t), rtol=1e-6)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(np.stack([a, 2 * a])),
                               np.stack([s2s.grad(f)(a), s2s.grad(f)(2 * a)]), rtol=1e-9)
    # hermitian=True: numpy reads one triangle only, so it is not svdvals: still refused
    with pytest.raises(NotImplementedError, match="svdvals"):
        s2s.grad(lambda x: np.sum(np.linalg.svd(x @ x.T, compute_uv=False,
                                                hermitian=True)))(a)


def test_norm_vector_and_matrix_ords():
    # np.linalg.norm's rule lives in reductions.py; here its ords on real and complex input
    rng = np.random.default_rng(6)
    for dtype in DTYPES:
        m = rand(rng, (3, 4), dtype)
        for ord_ in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
            check_vjp(lambda x: np.linalg.norm(x, ord_), m, rng)
        for ord_ in (None, 1, 2, 3, np.inf, -np.inf):
            check_vjp(lambda x: np.linalg.norm(x, ord_, axis=1, keepdims=True), m, rng)
        check_vjp(lambda x: np.linalg.norm(x, axis=0), m, rng)


LINALG_RULES = [r for r in all_rules() if not r.nondiff and getattr(
    next(t for t in r.vjps if t is not None), "__module__", "") in
    ("s2s.rules.linalg", "s2s.rules.linalg_decomp", "s2s.rules.fft", "s2s.rules.linalg_api",
     "s2s.rules.linalg_lstsq")]


@pytest.mark.parametrize("rule", LINALG_RULES,
                         ids=[getattr(r.fn, "__name__", str(r.fn)) for r in LINALG_RULES])
def test_templates_are_straight_line_and_mirror_the_primitive(rule):
    for t in rule.vjps + rule.jvps:
        if t is not None:
            assert not _template_problems(t), (rule.fn, _template_problems(t))
    _check_signature(rule)


def test_cholesky_upper_second_derivatives():
    rng = np.random.default_rng(9)
    for dtype in DTYPES:
        a = hermitian_pd(rng, (3, 3), dtype)
        check_second_order(lambda x: np.sum(np.abs(np.sin(np.linalg.cholesky(x, upper=True))) ** 2),
                           a, rng, True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_norm_second_derivatives(dtype):
    # complex 1 / inf norms: |z| is not piecewise linear on C, their Hessians are not 0
    rng = np.random.default_rng(10)
    m = rand(rng, (3, 4), dtype)
    for ord_ in (None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf):
        check_second_order(lambda x: np.linalg.norm(x, ord_) ** 2, m, rng)
    for ord_ in (None, 1, 3, np.inf):
        check_second_order(lambda x: np.sum(np.linalg.norm(x, ord_, axis=1) ** 2), m, rng)
    check_second_order(lambda x: np.sum(np.linalg.norm(x, 2, axis=(0, 1), keepdims=True) ** 3),
                       m, rng)


def test_repeated_eigenvalues_and_singular_values():
    # functions of the eigen/singular values alone keep exact gradients at a repeated value;
    # what needs an eigenvector's derivative there (it does not exist) is NaN, never a number
    eye = np.eye(3)
    np.testing.assert_array_equal(s2s.grad(lambda a: np.sum(np.linalg.eigh(a)[0] ** 2))(eye),
                                  2 * eye)   # d tr(A^2) = 2 A
    np.testing.assert_array_equal(s2s.grad(lambda a: np.sum(np.linalg.svd(a)[1]))(eye), eye)
    np.testing.assert_array_equal(
        s2s.grad(lambda a: np.sum(np.abs(np.linalg.eig(a)[0]) ** 2))(2 * eye), 4 * eye)
    with np.errstate(invalid="ignore"):
        g = s2s.grad(lambda a: np.sum(np.linalg.eigh(a)[1][:, 0] * np.arange(3)))(eye)
    assert np.isnan(g).any()
