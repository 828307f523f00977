"""numpy.linalg.lstsq, cond, tensorinv, tensorsolve.

lstsq: ``(x, residuals, rank, s) = lstsq(a, b)``.

``x = P b`` with ``P = pinv(a)`` (the minimum-norm least-squares solution; constant
rank assumed), so ``dx = dP b + P db`` with pinv's derivative (``linalg_decomp.py``).
The residuals ``|r_k|^2``, ``r = b - a x``, are returned for full column rank and
``m > n``, where ``r`` is orthogonal to the range of ``a``: ``d|r_k|^2 =
2 Re(r_k^H (db_k - da x_k))``.  ``s`` are ``a``'s singular values (svdvals' rule);
``rank`` is an integer (no derivative).  A 1-D ``b`` is a column (``as_columns``).
VJPs: the transposes (``a_bar`` from ``x`` is pinv's VJP of ``g_x b^T``; from the
residuals ``-2 (conj(r) Re(g_res)) x^T``; ``b_bar = P^T g_x + 2 conj(r) Re(g_res)``).

cond: ``cond(x, p) = |x|_p |pinv(x)|_p`` (p None: 2, i.e. ``s_max / s_min``; -2:
``s_min / s_max``), differentiated as that product with norm's and pinv's rules.

tensorinv / tensorsolve: inv / solve of ``a`` read as a square matrix (reshapes, and
tensorsolve's ``axes`` moved to the end: ``tensorsolve_matrix``), so inv's and solve's
formulas on the matrices, reshaped back.
"""
import numpy as np

from s2s_runtime import (as_columns, cast_vjp, cond_ord, densify, from_columns, norm_jvp,
                         norm_vjp, nonempty_or_zeros, nonempty_or_zeros_t, tensorinv_shapes,
                         tensorsolve_matrix, tensorsolve_matrix_t, zeros_like)

from .registry import defjvp, defnondiff, defprops, defvjp


def _lstsq_jvp_a(t, ans, a, b, rcond=None):
    x, res, rank, s = ans
    p = np.linalg.pinv(a)
    xc = as_columns(x, b)
    th = np.conj(np.swapaxes(t, -1, -2))
    ph = np.conj(np.swapaxes(p, -1, -2))
    m1 = np.matmul(p, np.matmul(ph, th))
    m3 = np.matmul(th, np.matmul(ph, p))
    dp = (-np.matmul(p, np.matmul(t, p)) + m1 - np.matmul(np.matmul(m1, a), p)
          + m3 - np.matmul(p, np.matmul(a, m3)))
    r = as_columns(b, b) - np.matmul(a, xc)
    dres = -2 * np.real(np.sum(np.conj(r) * np.matmul(t, xc), axis=-2))
    u, s2, vh = np.linalg.svd(a, full_matrices=False)
    k = np.matmul(np.conj(np.swapaxes(u, -1, -2)), np.matmul(t, np.conj(np.swapaxes(vh, -1, -2))))
    return (from_columns(np.matmul(dp, as_columns(b, b)), b), nonempty_or_zeros_t(dres, res),
            zeros_like(rank), np.real(np.diagonal(k, 0, -2, -1)))


def _lstsq_jvp_b(t, ans, a, b, rcond=None):
    x, res, rank, s = ans
    r = as_columns(b, b) - np.matmul(a, as_columns(x, b))
    dres = 2 * np.real(np.sum(np.conj(r) * as_columns(t, b), axis=-2))
    return (np.matmul(np.linalg.pinv(a), t), nonempty_or_zeros_t(dres, res), zeros_like(rank),
            zeros_like(s))


def _lstsq_vjp_a(g, ans, a, b, rcond=None):
    """lstsq in a: pinv's VJP of g_x b^T - 2 (conj(r) Re(g_res)) x^T + conj(U) diag(g_s) conj(Vh)"""
    x, res, rank, s = ans
    g_x, g_res, g_rank, g_s = densify(g, ans)
    xc = as_columns(x, b)
    r = as_columns(b, b) - np.matmul(a, xc)
    w = nonempty_or_zeros(np.real(g_res), np.sum(r, axis=-2))
    # pinv's VJP of G_P = g_x b^T
    gp = np.matmul(as_columns(g_x, b), np.swapaxes(as_columns(b, b), -1, -2))
    p = np.linalg.pinv(a)
    pt = np.swapaxes(p, -1, -2)
    pc = np.conj(p)
    gh = np.conj(np.swapaxes(gp, -1, -2))
    ac = np.conj(a)
    a_bar = (-np.matmul(pt, np.matmul(gp, pt))
             + np.matmul(gh - np.matmul(ac, np.matmul(pc, gh)), np.matmul(pc, pt))
             + np.matmul(np.matmul(pt, pc), gh - np.matmul(np.matmul(gh, pc), ac))
             - 2 * np.matmul(np.conj(r) * np.expand_dims(w, -2), np.swapaxes(xc, -1, -2)))
    u, s2, vh = np.linalg.svd(a, full_matrices=False)
    a_bar = a_bar + np.matmul(np.conj(u) * np.expand_dims(g_s, -2), np.conj(vh))
    return cast_vjp(a_bar, a)


def _lstsq_vjp_b(g, ans, a, b, rcond=None):
    x, res, rank, s = ans
    g_x, g_res, g_rank, g_s = densify(g, ans)
    r = as_columns(b, b) - np.matmul(a, as_columns(x, b))
    w = nonempty_or_zeros(np.real(g_res), np.sum(r, axis=-2))
    b_bar = (np.matmul(np.swapaxes(np.linalg.pinv(a), -1, -2), as_columns(g_x, b))
             + 2 * np.conj(r) * np.expand_dims(w, -2))
    return cast_vjp(from_columns(b_bar, b), b)


defvjp(np.linalg.lstsq, _lstsq_vjp_a, _lstsq_vjp_b, container_result=True)
defjvp(np.linalg.lstsq, _lstsq_jvp_a, _lstsq_jvp_b)


def _cond_vjp(g, ans, x, p=None):
    """cond = |x|_q |y|_q, y = pinv(x): norm's VJPs, the one in y pulled back through pinv's"""
    q = cond_ord(p)
    y = np.linalg.pinv(x)
    nx = np.linalg.norm(x, q, (-2, -1))
    ny = np.linalg.norm(y, q, (-2, -1))
    yt = np.swapaxes(y, -1, -2)
    # y = pinv(x): its VJP at norm_vjp(g nx, ny, y), pinv's formula (square x: -y^T c y^T)
    c = norm_vjp(g * nx, ny, y, q, (-2, -1))
    gh = np.conj(np.swapaxes(c, -1, -2))
    yc = np.conj(y)
    xc = np.conj(x)
    return cast_vjp(norm_vjp(g * ny, nx, x, q, (-2, -1)) - np.matmul(yt, np.matmul(c, yt))
                    + np.matmul(gh - np.matmul(xc, np.matmul(yc, gh)), np.matmul(yc, yt))
                    + np.matmul(np.matmul(yt, yc), gh - np.matmul(np.matmul(gh, yc), xc)), x)


def _cond_jvp(t, ans, x, p=None):
    q = cond_ord(p)
    y = np.linalg.pinv(x)
    nx = np.linalg.norm(x, q, (-2, -1))
    ny = np.linalg.norm(y, q, (-2, -1))
    th = np.conj(np.swapaxes(t, -1, -2))
    yh = np.conj(np.swapaxes(y, -1, -2))
    m1 = np.matmul(y, np.matmul(yh, th))
    m3 = np.matmul(th, np.matmul(yh, y))
    dy = (-np.matmul(y, np.matmul(t, y)) + m1 - np.matmul(np.matmul(m1, x), y)
          + m3 - np.matmul(y, np.matmul(x, m3)))
    return norm_jvp(t, nx, x, q, (-2, -1)) * ny + nx * norm_jvp(dy, ny, y, q, (-2, -1))


defvjp(np.linalg.cond, _cond_vjp)
defjvp(np.linalg.cond, _cond_jvp)


def _tensorinv_vjp(g, ans, a, ind=2):
    """tensorinv: Y = inv(A) of the matrices;  dY = -Y dA Y,  a_bar = -Y^T G Y^T"""
    sa, sy = tensorinv_shapes(a, ind)
    yt = np.transpose(np.reshape(ans, sy))
    return np.reshape(-np.matmul(yt, np.matmul(np.reshape(g, sy), yt)), np.shape(a))


def _tensorinv_jvp(t, ans, a, ind=2):
    sa, sy = tensorinv_shapes(a, ind)
    y = np.reshape(ans, sy)
    return np.reshape(-np.matmul(y, np.matmul(np.reshape(t, sa), y)), np.shape(ans))


defvjp(np.linalg.tensorinv, _tensorinv_vjp)
defjvp(np.linalg.tensorinv, _tensorinv_jvp)


def _tensorsolve_vjp_a(g, ans, a, b, axes=None):
    """tensorsolve: x = A^-1 b of the matrix A and the flattened b, x;  as solve"""
    b_bar = np.linalg.solve(np.transpose(tensorsolve_matrix(a, b, axes)), np.ravel(g))
    return tensorsolve_matrix_t(-np.outer(b_bar, np.ravel(ans)), a, b, axes)


def _tensorsolve_vjp_b(g, ans, a, b, axes=None):
    b_bar = np.linalg.solve(np.transpose(tensorsolve_matrix(a, b, axes)), np.ravel(g))
    return np.reshape(b_bar, np.shape(b))


def _tensorsolve_jvp_a(t, ans, a, b, axes=None):
    m = tensorsolve_matrix(a, b, axes)
    dx = -np.linalg.solve(m, np.matmul(tensorsolve_matrix(t, b, axes), np.ravel(ans)))
    return np.reshape(dx, np.shape(ans))


def _tensorsolve_jvp_b(t, ans, a, b, axes=None):
    return np.reshape(np.linalg.solve(tensorsolve_matrix(a, b, axes), np.ravel(t)),
                      np.shape(ans))


defvjp(np.linalg.tensorsolve, _tensorsolve_vjp_a, _tensorsolve_vjp_b)
defjvp(np.linalg.tensorsolve, _tensorsolve_jvp_a, _tensorsolve_jvp_b)

# tensorsolve_matrix / _t: linear reshapes (and axis moves) of their first argument, each
# the other's inverse and transpose
defnondiff(tensorinv_shapes)
defvjp(tensorsolve_matrix, lambda ct, out, a, b, axes: tensorsolve_matrix_t(ct, a, b, axes),
       lambda ct, out, a, b, axes: zeros_like(b), lambda ct, out, a, b, axes: zeros_like(axes))
defjvp(tensorsolve_matrix, lambda tan, out, a, b, axes: tensorsolve_matrix(tan, b, axes),
       lambda tan, out, a, b, axes: zeros_like(out), lambda tan, out, a, b, axes: zeros_like(out))
defvjp(tensorsolve_matrix_t,
       lambda ct, out, m, a, b, axes: tensorsolve_matrix(ct, b, axes),
       lambda ct, out, m, a, b, axes: zeros_like(a), lambda ct, out, m, a, b, axes: zeros_like(b),
       lambda ct, out, m, a, b, axes: zeros_like(axes))
defjvp(tensorsolve_matrix_t,
       lambda tan, out, m, a, b, axes: tensorsolve_matrix_t(tan, a, b, axes),
       lambda tan, out, m, a, b, axes: zeros_like(out),
       lambda tan, out, m, a, b, axes: zeros_like(out),
       lambda tan, out, m, a, b, axes: zeros_like(out))

# nonempty_or_zeros / nonempty_or_zeros_t: linear in their first argument, each the other's
# transpose; the second gives only a shape
defnondiff(cond_ord)
defvjp(nonempty_or_zeros, lambda ct, out, v, like: nonempty_or_zeros_t(ct, v),
       lambda ct, out, v, like: zeros_like(like))
defjvp(nonempty_or_zeros, lambda tan, out, v, like: nonempty_or_zeros(tan, like),
       lambda tan, out, v, like: zeros_like(out))
defvjp(nonempty_or_zeros_t, lambda c, out, ct, v: nonempty_or_zeros(c, ct),
       lambda c, out, ct, v: zeros_like(v))
defjvp(nonempty_or_zeros_t, lambda tan, out, ct, v: nonempty_or_zeros_t(tan, v),
       lambda tan, out, ct, v: zeros_like(out))
defprops(np.linalg.lstsq, sequence=True)  # (x, residuals, rank, singular values)
