"""numpy.linalg: inv, solve, det, slogdet, cholesky, eigh, eigvalsh, eig, eigvals (svd,
svdvals, qr, pinv, matrix_power: ``linalg_decomp.py``; norm: ``reductions.py``).

Conventions (JAX's): the JVP is the R-linear differential; the VJP is its
transpose for the bilinear pairing ``<x, y> = sum(x * y)`` (no conjugation),
in which ``conj`` is its own transpose.  So ``a_bar = A^T g`` for a C-linear
``dA -> A dA`` and ``H(g)`` (``H`` = conjugate transpose) for ``dA -> H(dA)``.
Matrices are the last two axes (stacks of matrices work).  Like
``jax.numpy.linalg``, ``cholesky`` and ``eigh`` read the Hermitian part
``sym(A) = (A + H(A)) / 2`` (numpy reads one triangle; equal values for a
Hermitian input, whose derivatives are then Hermitian too).

Every template is written in numpy primitives with rules (and the small
helpers of ``s2s_runtime.linalg``, rules at the end), so the generated
derivative code is differentiated again for higher orders.  Decompositions
assume what makes them differentiable: distinct eigenvalues (``eigh``, ``eig``: diagonalisable; at an exactly repeated
eigenvalue, functions of the eigenvalues alone keep exact first derivatives, e.g.
``eigh(I)``, and what needs the eigenvectors' derivative is NaN: ``degenerate_nan``),
distinct non-zero singular values (``svd``), full column rank (``qr``,
``m >= n``), constant rank (``pinv``).
"""
import numpy as np

from s2s_runtime import (as_columns, cast_jvp, cast_vjp, conj_lower, degenerate_nan, densify,
                         eye_like,
                         from_columns, half_lower_mask, record_like, unbroadcast)

from .registry import defjvp, defprops, defvjp


def _inv_vjp(g, ans, a):
    """inv: Y = A^-1, dY = -Y dA Y, so a_bar = -Y^T g Y^T."""
    yt = np.swapaxes(ans, -1, -2)
    return -np.matmul(yt, np.matmul(g, yt))


defvjp(np.linalg.inv, _inv_vjp)
defjvp(np.linalg.inv, lambda t, ans, a: -np.matmul(ans, np.matmul(t, ans)))


def _solve_vjp_a(g, ans, a, b):
    """solve: X = A^-1 B.  dX = A^-1 (dB - dA X);  B_bar = A^-T G, A_bar = -B_bar X^T
    (a 1-D b is a column: as_columns / from_columns; broadcast batch axes summed back)
    """
    b_bar = np.linalg.solve(np.swapaxes(a, -1, -2), as_columns(g, b))
    return unbroadcast(-np.matmul(b_bar, np.swapaxes(as_columns(ans, b), -1, -2)), a)


def _solve_vjp_b(g, ans, a, b):
    b_bar = np.linalg.solve(np.swapaxes(a, -1, -2), as_columns(g, b))
    return unbroadcast(from_columns(b_bar, b), b)


def _solve_jvp_a(t, ans, a, b):
    return -from_columns(np.linalg.solve(a, np.matmul(t, as_columns(ans, b))), b)


def _solve_jvp_b(t, ans, a, b):
    return np.linalg.solve(a, t)


defvjp(np.linalg.solve, _solve_vjp_a, _solve_vjp_b)
defjvp(np.linalg.solve, _solve_jvp_a, _solve_jvp_b)

# --- det: d det = det tr(A^-1 dA);  a_bar = g det A^-T --------------------------------------
defvjp(np.linalg.det, lambda g, ans, a: np.expand_dims(g * ans, (-2, -1))
       * np.swapaxes(np.linalg.inv(a), -1, -2))
defjvp(np.linalg.det, lambda t, ans, a: ans * np.trace(np.linalg.solve(a, t), 0, -2, -1))


def _slogdet_vjp(g, ans, a):
    """slogdet: c = tr(A^-1 dA);  d logabsdet = Re c,  d sign = sign i Im c (0 for real A)
    transpose: c_bar = Re(g_logabsdet) - i Re(i sign g_sign);  a_bar = c_bar A^-T
    """
    sign, logabsdet = ans
    g_sign, g_log = densify(g, ans)
    c_bar = np.real(g_log) - 1j * np.real(1j * sign * g_sign)
    return cast_vjp(np.expand_dims(c_bar, (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2), a)


def _slogdet_jvp(t, ans, a):
    sign, logabsdet = ans
    c = np.trace(np.linalg.solve(a, t), 0, -2, -1)
    return record_like(ans, (cast_jvp(sign * 1j * np.imag(c), sign), np.real(c)))


defvjp(np.linalg.slogdet, _slogdet_vjp, container_result=True)
defjvp(np.linalg.slogdet, _slogdet_jvp)


def _cholesky_vjp(g, ans, a, *, upper=False):
    """cholesky: A = L L^H.  dL = L Phi(L^-1 sym(dA) L^-H), Phi = lower part, half diagonal
    transpose: S_bar = L^-T Phi(L^T G) conj(L)^-1, a_bar = sym(S_bar).
    upper=True gives U = H(L): conj_lower maps it to L (and the tangent back).
    """
    low = conj_lower(ans, upper)
    p = np.matmul(np.swapaxes(low, -1, -2), conj_lower(g, upper))
    z = np.linalg.solve(np.swapaxes(low, -1, -2), p * half_lower_mask(p))
    s = np.swapaxes(np.linalg.solve(np.conj(np.swapaxes(low, -1, -2)), np.swapaxes(z, -1, -2)),
                    -1, -2)
    return cast_vjp(0.5 * (s + np.conj(np.swapaxes(s, -1, -2))), a)


def _cholesky_jvp(t, ans, a, *, upper=False):
    low = conj_lower(ans, upper)
    s = 0.5 * (t + np.conj(np.swapaxes(t, -1, -2)))
    x = np.linalg.solve(low, s)
    y = np.conj(np.swapaxes(np.linalg.solve(low, np.conj(np.swapaxes(x, -1, -2))), -1, -2))
    return conj_lower(np.matmul(low, y * half_lower_mask(y)), upper)


defvjp(np.linalg.cholesky, _cholesky_vjp)
defjvp(np.linalg.cholesky, _cholesky_jvp)


def _eigh_vjp(g, ans, a, UPLO="L"):
    """eigh: K = V^H sym(dA) V;  dw = Re diag K,  dV = V (F * K),  F_ij = 1/(w_j - w_i) (0 on
    the diagonal).  Transpose: K_bar = diag(g_w) + F * (V^T g_V), a_bar = sym(conj(V) K_bar V^T)
    """
    w, v = ans
    g_w, g_v = densify(g, ans)
    e = eye_like(w)
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    f = np.where(gap == 0, 0.0, 1.0 / np.where(gap == 0, 1.0, gap))
    x = np.matmul(np.swapaxes(v, -1, -2), g_v)
    k_bar = np.expand_dims(g_w, -1) * e + f * x + degenerate_nan(w, x)
    s = np.matmul(np.conj(v), np.matmul(k_bar, np.swapaxes(v, -1, -2)))
    return cast_vjp(0.5 * (s + np.conj(np.swapaxes(s, -1, -2))), a)


def _eigh_jvp(t, ans, a, UPLO="L"):
    w, v = ans
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    f = np.where(gap == 0, 0.0, 1.0 / np.where(gap == 0, 1.0, gap))
    s = 0.5 * (t + np.conj(np.swapaxes(t, -1, -2)))
    k = np.matmul(np.conj(np.swapaxes(v, -1, -2)), np.matmul(s, v))
    return record_like(ans, (np.real(np.diagonal(k, 0, -2, -1)),
                             np.matmul(v, f * k + degenerate_nan(w, k))))


defvjp(np.linalg.eigh, _eigh_vjp, container_result=True)
defjvp(np.linalg.eigh, _eigh_jvp)


def _eigvalsh_vjp(g, ans, a, UPLO="L"):
    """eigvalsh: the eigenvalues of eigh (its eigenvectors recomputed in the rule)"""
    v = np.linalg.eigh(a, UPLO)[1]
    s = np.matmul(np.conj(v), np.expand_dims(g, -1) * np.swapaxes(v, -1, -2))
    return cast_vjp(0.5 * (s + np.conj(np.swapaxes(s, -1, -2))), a)


def _eigvalsh_jvp(t, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    s = 0.5 * (t + np.conj(np.swapaxes(t, -1, -2)))
    k = np.matmul(np.conj(np.swapaxes(v, -1, -2)), np.matmul(s, v))
    return np.real(np.diagonal(k, 0, -2, -1))


defvjp(np.linalg.eigvalsh, _eigvalsh_vjp)
defjvp(np.linalg.eigvalsh, _eigvalsh_jvp)


def _eig_vjp(g, ans, a):
    """eig (general, diagonalisable, distinct eigenvalues; numpy's unit-norm eigenvectors):
    K = V^-1 dA V, dw = diag K, D = V (F * K) with F_ij = 1/(w_j - w_i) (0 on the diagonal),
    dV = D - V Re(diag(V^H D)) (keeps |v_k| = 1; the phase of v_k is a gauge).
    Transpose: D_bar = g_V - conj(V) Re(colsum(V * g_V)), K_bar = diag(g_w) + F * (V^T D_bar),
    a_bar = V^-T K_bar V^T
    """
    w, v = ans
    g_w, g_v = densify(g, ans)
    e = eye_like(w)
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    f = np.where(gap == 0, 0.0, 1.0 / np.where(gap == 0, 1.0, gap))
    d_bar = g_v - np.conj(v) * np.real(np.sum(v * g_v, axis=-2, keepdims=True))
    x = np.matmul(np.swapaxes(v, -1, -2), d_bar)
    k_bar = np.expand_dims(g_w, -1) * e + f * x + degenerate_nan(w, x)
    return cast_vjp(np.matmul(np.swapaxes(np.linalg.inv(v), -1, -2),
                              np.matmul(k_bar, np.swapaxes(v, -1, -2))), a)


def _eig_jvp(t, ans, a):
    w, v = ans
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    f = np.where(gap == 0, 0.0, 1.0 / np.where(gap == 0, 1.0, gap))
    k = np.linalg.solve(v, np.matmul(t, v))
    d = np.matmul(v, f * k + degenerate_nan(w, k))
    return record_like(ans, (np.diagonal(k, 0, -2, -1),
                             d - v * np.real(np.sum(np.conj(v) * d, axis=-2, keepdims=True))))


defvjp(np.linalg.eig, _eig_vjp, container_result=True)
defjvp(np.linalg.eig, _eig_jvp)


def _eigvals_vjp(g, ans, a):
    """eigvals: dw = diag(V^-1 dA V), a_bar = V^-T diag(g) V^T (V from eig, in the rule)"""
    v = np.linalg.eig(a)[1]
    return cast_vjp(np.matmul(np.swapaxes(np.linalg.inv(v), -1, -2) * np.expand_dims(g, -2),
                              np.swapaxes(v, -1, -2)), a)


def _eigvals_jvp(t, ans, a):
    v = np.linalg.eig(a)[1]
    return np.diagonal(np.linalg.solve(v, np.matmul(t, v)), 0, -2, -1)


defvjp(np.linalg.eigvals, _eigvals_vjp)
defjvp(np.linalg.eigvals, _eigvals_jvp)
defprops(np.linalg.slogdet, np.linalg.eigh, np.linalg.eig, sequence=True)  # named tuples
