"""numpy.linalg: svd, svdvals, qr, pinv, matrix_power, and the rules of the helpers of
``s2s_runtime.linalg``.  Conventions as in ``linalg.py`` (``H`` = conjugate transpose,
``^T`` plain transpose, VJP = transpose of the JVP without conjugation).
"""
import numpy as np

from s2s_runtime import (as_columns, cast_vjp, conj_lower, degenerate_nan, densify, eye_like,
                         from_columns,
                         half_lower_mask, qr_checked, record_like, strict_lower_mask,
                         svd_checked, zeros_like)

from .registry import defjvp, defnondiff, defprops, defvjp


def _svd_vjp(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """svd (reduced; a full SVD of a square matrix is the same): A = U diag(s) Vh, V = H(Vh).
    K = U^H dA V, ds = Re diag K, F_ij = 1/(s_j^2 - s_i^2) (0 on the diagonal),
    dU = U (F * (K S + H(K S)) + (K - H(K))/2 S^-1) + (I - U U^H) dA V S^-1,
    dV = V (F * (S K + H(S K))) + (I - V Vh) H(dA) U S^-1,  dVh = H(dV)
    (the projections vanish when U resp. V is square).  S^-1 is 0 for a zero singular value
    (as JAX); an exactly repeated pair is as for eigh (``degenerate_nan``).  The VJP is
    the transpose of each step, in reverse order.
    """
    u, s, vh = svd_checked(ans, a, full_matrices, compute_uv)
    g_u, g_s, g_vh = densify(g, ans)
    vt = np.conj(vh)
    v = np.swapaxes(vt, -1, -2)
    g_v = np.conj(np.swapaxes(g_vh, -1, -2))
    srow = np.expand_dims(s, -2)
    scol = np.expand_dims(s, -1)
    sinv = np.expand_dims(np.where(s == 0, 0.0, 1.0 / np.where(s == 0, 1.0, s)), -2)
    e = eye_like(s)
    gap = srow * srow - scol * scol
    f = np.where(gap == 0, 0.0, 1.0 / np.where(gap == 0, 1.0, gap))
    z = np.matmul(np.swapaxes(u, -1, -2), g_u)
    x = f * z + degenerate_nan(s, z)
    w = 0.5 * z * (e * sinv)
    vtg = np.matmul(vt, g_v)
    y = f * vtg + degenerate_nan(s, vtg)
    k_bar = (np.expand_dims(g_s, -1) * e + w - np.conj(np.swapaxes(w, -1, -2))
             + (x + np.conj(np.swapaxes(x, -1, -2))) * srow
             + scol * (y + np.conj(np.swapaxes(y, -1, -2))))
    p = g_u * sinv
    q = g_v * sinv
    r = q - np.matmul(np.conj(v), np.matmul(vt, q))
    a_bar = (np.matmul(np.conj(u), np.matmul(k_bar, vt))
             + np.matmul(p - np.matmul(np.conj(u), np.matmul(np.swapaxes(u, -1, -2), p)), vt)
             + np.matmul(np.conj(u), np.conj(np.swapaxes(r, -1, -2))))
    return cast_vjp(a_bar, a)


def _svd_jvp(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    u, s, vh = svd_checked(ans, a, full_matrices, compute_uv)
    v = np.conj(np.swapaxes(vh, -1, -2))
    uh = np.conj(np.swapaxes(u, -1, -2))
    tv = np.matmul(t, v)
    k = np.matmul(uh, tv)
    srow = np.expand_dims(s, -2)
    scol = np.expand_dims(s, -1)
    sinv = np.expand_dims(np.where(s == 0, 0.0, 1.0 / np.where(s == 0, 1.0, s)), -2)
    e = eye_like(s)
    gap = srow * srow - scol * scol
    f = np.where(gap == 0, 0.0, 1.0 / np.where(gap == 0, 1.0, gap))
    ks = k * srow
    ks = ks + np.conj(np.swapaxes(ks, -1, -2))
    sk = scol * k
    sk = sk + np.conj(np.swapaxes(sk, -1, -2))
    du = (np.matmul(u, f * ks + degenerate_nan(s, ks)
                    + 0.5 * (k - np.conj(np.swapaxes(k, -1, -2))) * (e * sinv))
          + (tv - np.matmul(u, np.matmul(uh, tv))) * sinv)
    thu = np.matmul(np.conj(np.swapaxes(t, -1, -2)), u)
    dv = (np.matmul(v, f * sk + degenerate_nan(s, sk))
          + (thu - np.matmul(v, np.matmul(vh, thu))) * sinv)
    return record_like(ans, (du, np.real(np.diagonal(k, 0, -2, -1)),
                             np.conj(np.swapaxes(dv, -1, -2))))


defvjp(np.linalg.svd, _svd_vjp, container_result=True)
defjvp(np.linalg.svd, _svd_jvp)


def _svdvals_vjp(g, ans, x):
    """svdvals: ds = Re diag(U^H dA V);  a_bar = conj(U) diag(g) conj(Vh)"""
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return cast_vjp(np.matmul(np.conj(u) * np.expand_dims(g, -2), np.conj(vh)), x)


def _svdvals_jvp(t, ans, x):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    k = np.matmul(np.conj(np.swapaxes(u, -1, -2)), np.matmul(t, np.conj(np.swapaxes(vh, -1, -2))))
    return np.real(np.diagonal(k, 0, -2, -1))


defvjp(np.linalg.svdvals, _svdvals_vjp)
defjvp(np.linalg.svdvals, _svdvals_jvp)


def _qr_vjp(g, ans, a, mode="reduced"):
    """qr (reduced, m >= n): Y = dA R^-1, C = Q^H Y, L = strict lower part of C,
    dO = L - H(L) + i Im(diag C),  dQ = Q (dO - C) + Y,  dR = (C - dO) R.
    """
    q, r = qr_checked(ans, a, mode)
    g_q, g_r = densify(g, ans)
    d_bar = np.matmul(np.swapaxes(q, -1, -2), g_q)
    e_bar = np.matmul(g_r, np.swapaxes(r, -1, -2))
    o_bar = d_bar - e_bar
    l_bar = o_bar - np.conj(np.swapaxes(o_bar, -1, -2))
    o_diag = eye_like(r) * o_bar
    c_bar = e_bar - d_bar + l_bar * strict_lower_mask(r) + (o_diag - np.real(o_diag))
    y_bar = g_q + np.matmul(np.conj(q), c_bar)
    return cast_vjp(np.swapaxes(np.linalg.solve(r, np.swapaxes(y_bar, -1, -2)), -1, -2), a)


def _qr_jvp(t, ans, a, mode="reduced"):
    q, r = qr_checked(ans, a, mode)
    y = np.swapaxes(np.linalg.solve(np.swapaxes(r, -1, -2), np.swapaxes(t, -1, -2)), -1, -2)
    c = np.matmul(np.conj(np.swapaxes(q, -1, -2)), y)
    low = c * strict_lower_mask(c)
    o = low - np.conj(np.swapaxes(low, -1, -2)) + eye_like(c) * (c - np.real(c))
    return record_like(ans, (np.matmul(q, o - c) + y, np.matmul(c - o, r)))


defvjp(np.linalg.qr, _qr_vjp, container_result=True)
defjvp(np.linalg.qr, _qr_jvp)


def _pinv_vjp(g, ans, a, rcond=None, hermitian=False, *, rtol=None):
    """pinv (constant rank; Golub & Pereyra): with P = pinv(A), T = H(dA),
    dP = -P dA P + P H(P) T (I - A P) + (I - P A) T H(P) P.  Transpose (G = H(g)):
    a_bar = -P^T g P^T + (G - conj(A) conj(P) G) conj(P) P^T + P^T conj(P) (G - G conj(P) conj(A))
    """
    pt = np.swapaxes(ans, -1, -2)
    pc = np.conj(ans)
    gh = np.conj(np.swapaxes(g, -1, -2))
    ac = np.conj(a)
    return cast_vjp(-np.matmul(pt, np.matmul(g, pt))
                    + np.matmul(gh - np.matmul(ac, np.matmul(pc, gh)), np.matmul(pc, pt))
                    + np.matmul(np.matmul(pt, pc), gh - np.matmul(np.matmul(gh, pc), ac)), a)


def _pinv_jvp(t, ans, a, rcond=None, hermitian=False, *, rtol=None):
    th = np.conj(np.swapaxes(t, -1, -2))
    ph = np.conj(np.swapaxes(ans, -1, -2))
    m1 = np.matmul(ans, np.matmul(ph, th))
    m3 = np.matmul(th, np.matmul(ph, ans))
    return (-np.matmul(ans, np.matmul(t, ans)) + m1 - np.matmul(np.matmul(m1, a), ans)
            + m3 - np.matmul(ans, np.matmul(a, m3)))


defvjp(np.linalg.pinv, _pinv_vjp)
defjvp(np.linalg.pinv, _pinv_jvp)


def _matrix_power_vjp(g, ans, a, n):
    """matrix_power(A, n): d(A^n) = sum_k A^k dA A^(n-1-k) (negative n: the same with A^-1 and
    dA^-1 = -A^-1 dA A^-1), the top right block of [[A, dA], [0, A]]^n.  Its transpose is the
    same map at A^T: a_bar = top right block of [[A^T, g], [0, A^T]]^n.
    """
    k = np.shape(a)[-1]
    at = np.swapaxes(a, -1, -2)
    top = np.concatenate([at, g], -1)
    big = np.concatenate([top, np.concatenate([zeros_like(top[..., :k]), at], -1)], -2)
    return cast_vjp(np.linalg.matrix_power(big, n)[..., :k, k:], a)


def _matrix_power_jvp(t, ans, a, n):
    k = np.shape(a)[-1]
    top = np.concatenate([a, t], -1)
    big = np.concatenate([top, np.concatenate([zeros_like(top[..., :k]), a], -1)], -2)
    return np.linalg.matrix_power(big, n)[..., :k, k:]


defvjp(np.linalg.matrix_power, _matrix_power_vjp, None)
defjvp(np.linalg.matrix_power, _matrix_power_jvp, None)

# --- helpers of s2s_runtime.linalg ------------------------------------------------------
defnondiff(half_lower_mask, strict_lower_mask, eye_like, degenerate_nan)
# as_columns / from_columns: linear in v, each other's transpose; b gives only a shape
defvjp(as_columns, lambda ct, out, v, b: from_columns(ct, b), lambda ct, out, v, b: zeros_like(b))
defjvp(as_columns, lambda tan, out, v, b: as_columns(tan, b),
       lambda tan, out, v, b: zeros_like(out))
defvjp(from_columns, lambda ct, out, v, b: as_columns(ct, b), lambda ct, out, v, b: zeros_like(b))
defjvp(from_columns, lambda tan, out, v, b: from_columns(tan, b),
       lambda tan, out, v, b: zeros_like(out))
# conj_lower(x, upper): x or H(x), R-linear and its own transpose
defvjp(conj_lower, lambda ct, out, x, upper: conj_lower(ct, upper),
       lambda ct, out, x, upper: zeros_like(upper))
defjvp(conj_lower, lambda tan, out, x, upper: conj_lower(tan, upper),
       lambda tan, out, x, upper: zeros_like(out))
# svd_checked, qr_checked: the identity on x after a check of a's shape
defvjp(svd_checked, lambda ct, out, x, a, full_matrices, compute_uv: ct,
       lambda ct, out, x, a, full_matrices, compute_uv: zeros_like(a), container_result=True)
defjvp(svd_checked, lambda tan, out, x, a, full_matrices, compute_uv:
       svd_checked(tan, a, full_matrices, compute_uv),
       lambda tan, out, x, a, full_matrices, compute_uv: zeros_like(out))
defvjp(qr_checked, lambda ct, out, x, a, mode: ct, lambda ct, out, x, a, mode: zeros_like(a),
       container_result=True)
defjvp(qr_checked, lambda tan, out, x, a, mode: qr_checked(tan, a, mode),
       lambda tan, out, x, a, mode: zeros_like(out))
# (named tuples; svd's singular values alone are one array, read by position too)
defprops(np.linalg.svd, np.linalg.qr, sequence=True)
