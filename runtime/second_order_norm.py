"""Second derivatives through ``norm_vjp(g, ans, x)`` (``np.linalg.norm``'s VJP helper),
part of ``second_order.py`` (which re-exports them; see its docstring for the
conventions): ``norm_vjp_dx`` (in ``x``, the norm held fixed; symmetric, so also the
VJP in ``x``), ``norm_vjp_dans`` and its transpose (in the norm ``ans``).

Plain numpy; this package never imports ``s2s``.
"""
from __future__ import annotations

import numpy as np

from .second_order import _zeros_for
from .vjps import _expand, _fit, _norm_layout, _share, norm_vjp


# --- norm -----------------------------------------------------------------------------------
def _vector_p(ord):
    p = 2 if ord is None or ord == "fro" else ord
    if isinstance(p, str):
        raise NotImplementedError(f"s2s: no derivative of a vector norm with ord={ord!r}")
    return p


def _svd(xm):
    u, s, vh = np.linalg.svd(xm, full_matrices=False)
    return u, s, vh, np.conj(np.swapaxes(u, -1, -2)), np.conj(np.swapaxes(vh, -1, -2))


def _safe_div(num, den):
    return np.where(den == 0, 0, num / np.where(den == 0, 1, den))


def _d_polar(xm, tm):
    """``d(U V^H)`` along ``tm`` (thin SVD ``xm = U S V^H``, all ``s > 0``):
    ``U X V^H + (I - U U^H) T V S^-1 V^H + U S^-1 U^H T (I - V V^H)`` with
    ``X = (M - M^H) / (s_i + s_j)``, ``M = U^H T V``."""
    u, s, vh, uh, v = _svd(xm)
    tv = tm @ v
    m = uh @ tv
    x = _safe_div(m - np.conj(np.swapaxes(m, -1, -2)), s[..., :, None] + s[..., None, :])
    sinv = _safe_div(1.0, s)
    return (u @ x @ vh + ((tv - u @ m) * sinv[..., None, :]) @ vh
            + u @ (sinv[..., :, None] * (uh @ tm - m @ vh)))


def _d_singular_pair(xm, tm, k):
    """``d(u_k v_k^H)`` along ``tm`` for the singular pair ``k`` of ``xm`` (thin SVD,
    ``M = U^H T V``): ``du_k = sum_{j != k} u_j a_j + (I - U U^H) T v_k / s_k``,
    ``dv_k = sum_{j != k} v_j b_j + (I - V V^H) T^H u_k / s_k`` with
    ``a_j = (s_k M_jk + s_j conj(M_kj)) / (s_k^2 - s_j^2)``,
    ``b_j = (s_j M_jk + s_k conj(M_kj)) / (s_k^2 - s_j^2)``, plus the phase term
    ``i Im(M_kk) / s_k u_k v_k^H``.  (A repeated ``s_k`` has no derivative: the tied terms
    are dropped.)"""
    u, s, vh, uh, v = _svd(xm)
    m = uh @ tm @ v
    sk = s[..., k:k + 1]
    col, row = m[..., :, k], np.conj(m[..., k, :])  # M_jk, conj(M_kj)
    gap = sk ** 2 - s ** 2
    gap[..., k] = 0
    aj = _safe_div(sk * col + s * row, gap)
    bj = _safe_div(s * col + sk * row, gap)
    uk, vk = u[..., :, k], v[..., :, k]
    th = np.conj(np.swapaxes(tm, -1, -2))

    def mv(mat, vec):
        return (mat @ vec[..., None])[..., 0]

    du = mv(u, aj) + _safe_div(mv(tm, vk) - mv(u, col), sk)
    dv = mv(v, bj) + _safe_div(mv(th, uk) - mv(v, row), sk)
    if np.iscomplexobj(m):  # the phase term
        du = du + _safe_div(1j * np.imag(m[..., k, k:k + 1]), sk) * uk
    return (du[..., :, None] * np.conj(vk[..., None, :])
            + uk[..., :, None] * np.conj(dv[..., None, :]))


def norm_vjp_dx(g, ans, x, t, ord=None, axis=None, keepdims=False):
    """``d/dx norm_vjp(g, ans, x)`` along ``t``, the norm ``ans`` held fixed (its own
    derivative is ``norm_vjp_dans``).  ``norm_vjp = g c`` with the cotangent factor ``c``:

    * 2-norm, 'fro': ``c = conj(x) / n``, so ``dc = conj(t) / n`` (0 where ``n = 0``);
    * other ``p``: ``c = |x|^(p-2) conj(x) / n^(p-1)``, so ``dc = ((p-2) Re(conj(u) t)
      conj(u) + conj(t)) |x|^(p-2) / n^(p-1)`` with ``u = x/|x|``: ``(p-1) |x|^(p-2) t /
      n^(p-1)`` for real ``x``;
    * ord 0: ``dc = 0``; ord 1, inf, -inf and the matrix norms 1, -1, inf, -inf:
      ``c = mask sgn(x)`` with a piecewise constant mask (the extreme entries, columns,
      rows), so ``dc = mask dsgn(x)``: 0 for real ``x``, ``(conj(t) - conj(u) Re(conj(u)
      t)) / |x|`` for complex ``x`` (``|z|`` is not piecewise linear on C);
    * 'nuc': ``c = conj(U V^H)``, 2 / -2: ``c = conj(u_k v_k^H)`` (largest / smallest
      singular pair): ``dc`` from the derivatives of the SVD.

    With ``n`` fixed each ``c`` is the gradient of a real function of ``x``, so ``dc`` is
    symmetric: this is also the VJP in ``x``.
    """
    xa = np.asarray(x)
    nd = xa.ndim
    tt = np.broadcast_to(np.asarray(t), xa.shape)
    axis, vector = _norm_layout(nd, ord, axis)
    gE = _expand(g, nd, axis, keepdims)
    if vector or ord in (None, "fro"):
        p = _vector_p(ord)
        nE = _expand(ans, nd, axis, keepdims)
        safe = np.where(nE == 0, 1, nE)
        if p == 2:
            d = np.where(nE == 0, 0, np.conj(tt) / safe)
        elif p == 0:
            d = np.zeros(xa.shape)
        elif p == 1:
            d = _d_sgn(xa, tt)
        elif p in (np.inf, -np.inf):
            d = _share(np.abs(xa), nE, axis) * _d_sgn(xa, tt)
        else:
            p = float(p)
            ax = np.abs(xa)
            with np.errstate(divide="ignore", invalid="ignore"):  # |x| = 0 and p < 2: inf
                scale = ax ** (p - 2) / safe ** (p - 1)
                if np.iscomplexobj(xa) or np.iscomplexobj(tt):
                    unit = np.where(ax == 0, 0, xa / np.where(ax == 0, 1, ax))
                    d = ((p - 2) * np.real(np.conj(unit) * tt) * np.conj(unit)
                         + np.conj(tt)) * scale
                else:
                    d = (p - 1) * tt * scale
        return _fit(np.array(np.broadcast_to(gE * d, xa.shape)), x)
    r, c = (a % nd for a in axis)
    xm = np.moveaxis(xa, (r, c), (-2, -1))
    tm = np.moveaxis(tt, (r, c), (-2, -1))
    gm = np.moveaxis(gE, (r, c), (-2, -1))
    if ord == "nuc":
        d = np.conj(_d_polar(xm, tm))
    elif ord in (2, -2):
        d = np.conj(_d_singular_pair(xm, tm, 0 if ord == 2 else min(xm.shape[-2:]) - 1))
    elif ord in (1, -1):
        nm = np.moveaxis(_expand(ans, nd, axis, keepdims), (r, c), (-2, -1))
        d = _share(np.sum(np.abs(xm), -2, keepdims=True), nm, -1) * _d_sgn(xm, tm)
    elif ord in (np.inf, -np.inf):
        nm = np.moveaxis(_expand(ans, nd, axis, keepdims), (r, c), (-2, -1))
        d = _share(np.sum(np.abs(xm), -1, keepdims=True), nm, -2) * _d_sgn(xm, tm)
    else:
        raise NotImplementedError(f"s2s: no derivative of a matrix norm with ord={ord!r}")
    return _fit(np.moveaxis(gm * d, (-2, -1), (r, c)), x)


def _d_sgn(x, t):
    """The derivative of ``sgn(x) = conj(x)/|x|`` along ``t``: 0 for real ``x`` (piecewise
    constant), ``(conj(t) - conj(u) Re(conj(u) t)) / |x|`` with ``u = x/|x|`` for complex
    ``x`` (0 at 0)."""
    if not (np.iscomplexobj(x) or np.iscomplexobj(t)):
        return np.zeros(np.shape(x))
    ax = np.abs(x)
    safe = np.where(ax == 0, 1, ax)
    unit = np.where(ax == 0, 0, x / safe)
    return np.where(ax == 0, 0, (np.conj(t) - np.conj(unit) * np.real(np.conj(unit) * t)) / safe)


def _norm_dans_factor(ans, x, ord, axis, keepdims):
    """``d c / d n`` for the cotangent factor ``c`` of ``norm_vjp`` (shaped like ``x``), or
    None where ``c`` does not depend on the norm ``n`` (ord 0, 1, inf, -inf and the matrix
    norms other than 'fro'): ``c = |x|^(p-1) sgn(x) n^(1-p)``, so ``dc/dn = (1-p) c / n``
    (0 where ``n = 0``)."""
    nd = np.ndim(x)
    axes, vector = _norm_layout(nd, ord, axis)
    if not (vector or ord in (None, "fro")):
        return None, axes
    p = _vector_p(ord)
    if p in (0, 1, np.inf, -np.inf):
        return None, axes
    c = np.asarray(norm_vjp(np.ones(np.shape(ans)), ans, x, ord, axis, keepdims))
    nE = _expand(ans, nd, axes, keepdims)
    return (1 - float(p)) * _safe_div(c, nE), axes


def norm_vjp_dans(g, ans, x, t, ord=None, axis=None, keepdims=False):
    """``d/dans norm_vjp(g, ans, x)`` along the tangent ``t`` of the norm ``ans``:
    ``g t (1 - p) c / n`` (see ``_norm_dans_factor``; 0 where ``c`` ignores ``n``)."""
    f, axes = _norm_dans_factor(ans, x, ord, axis, keepdims)
    if f is None:
        return _zeros_for(x, g, t)
    nd = np.ndim(x)
    ft = _expand(g, nd, axes, keepdims) * _expand(t, nd, axes, keepdims) * f
    return _fit(np.array(np.broadcast_to(ft, np.shape(x))), x)


def norm_vjp_dans_transpose(ct, g, ans, x, ord=None, axis=None, keepdims=False):
    """The VJP of ``norm_vjp`` in ``ans`` (the transpose of ``norm_vjp_dans``):
    ``Re(sum(ct g dc/dn))`` over the normed axes, shaped like ``ans``."""
    f, axes = _norm_dans_factor(ans, x, ord, axis, keepdims)
    if f is None:
        return _zeros_for(ans, g)
    nd = np.ndim(x)
    prod = np.asarray(ct) * _expand(g, nd, axes, keepdims) * f
    return _fit(np.real(np.sum(prod, axis=tuple(a % nd for a in axes), keepdims=keepdims)), ans)
