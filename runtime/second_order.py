"""Second derivatives: what the rules of the VJP helpers that are not linear in their
primal arguments need (``s2s/rules/runtime_rules_nonlinear.py``).

Differentiating gradient code again (``jvp(grad(f))``, ``hessian(f)``,
``grad(grad(f))``) meets calls like ``prod_vjp(g, a)``.  Such a helper is
``H(g, x) = J(x)^T g``: linear in the cotangent ``g``, possibly non-linear in the
primal ``x``.  Its derivatives:

* in ``g``: the JVP is ``H(t, x)``; the VJP (transpose) is ``J(x) ct``, the
  primitive's own JVP (``prod_jvp``, ``np.dot(ct, b)``...);
* in ``x``: ``d/dx <g, f(x)>`` differentiated once more, i.e. the Hessian of the
  scalar ``<g, f(x)>`` applied to the tangent.  A Hessian is symmetric, so the same
  function, given the cotangent instead of the tangent, is the VJP.  For a real-valued
  ``f`` of a complex ``x`` (norms, var; JAX's convention: the cotangent is the
  conjugate of ``df/dRe x + i df/dIm x``) the symmetry holds for the pairing
  ``<u, v> = Re(sum(u * v))`` that every transpose here uses, so again one function
  serves both modes.

Bilinear products (``dot_vjp(g, a, b, which)``...) do not depend on the factor whose
cotangent they give (``which``), and are linear in the other: the helpers here pick
the factor at run time (the templates are straight-line code).

The norms' (``norm_vjp_dx``, ``norm_vjp_dans``, ``norm_vjp_dans_transpose``) are in
``second_order_norm.py``, re-exported here.  Plain numpy; this package never imports ``s2s``.
"""
from __future__ import annotations

import numpy as np

from .adjoint import unbroadcast, zeros_like
from .jvps_arrays import _exclusive_prod, average_jvp
from .shape_vjps import _linspace_weights
from .vjps import (_avg_weights, _axes, _expand, _fit, _no_where, _revcumsum, dot_vjp,
                   inner_vjp, tensordot_vjp)


# --- small utilities ---------------------------------------------------------------------
def _before(v):
    """``sum_{l < i} v_l`` along the last axis (an exclusive cumulative sum, no subtraction)."""
    c = np.cumsum(v, -1)
    return np.concatenate([np.zeros_like(c[..., :1]), c[..., :-1]], -1)


def _after(v):
    """``sum_{l > i} v_l`` along the last axis."""
    c = _revcumsum(v, -1)
    return np.concatenate([c[..., 1:], np.zeros_like(c[..., :1])], -1)


def _group_last(v, axes):
    """``v`` with ``axes`` moved last and merged into one, and the function putting an
    array of that layout back."""
    nd = v.ndim
    perm = [i for i in range(nd) if i not in axes] + list(axes)
    vt = np.transpose(v, perm)
    shape = vt.shape

    def back(w):
        return np.transpose(np.reshape(w, shape), np.argsort(perm))

    return vt.reshape(shape[:nd - len(axes)] + (-1,)), back


def _zeros_for(x, *others):
    """Zeros shaped like ``x`` in the float (or complex) type of ``x`` and ``others``."""
    dt = np.result_type(*[np.asarray(o).dtype for o in (x,) + others], float)
    return _fit(np.zeros(np.shape(x), dtype=dt), x)


# --- prod -----------------------------------------------------------------------------------
def prod_hvp(g, a, t, axis=None, keepdims=False, where=True):
    """``d/da prod_vjp(g, a)`` along ``t``: ``g * (H t)`` with ``H`` the Hessian of ``prod``
    over each reduced group, ``H_ik = prod_{j != i, k} a_j`` (``i != k``), 0 on the diagonal.

    ``H`` is symmetric, so this is also the VJP in ``a`` (``t`` := the cotangent).  Exact
    with zeros in ``a``: with ``a1`` = ``a`` with its zeros set to 1, ``E_i = prod_{j != i}
    a1_j``, ``P = prod(a1)``, ``r_k = t_k / a_k`` (0 at zeros) and ``t_z`` the sum of ``t``
    over the zeros, ``(H t)_i`` is ``E_i sum_{k != i} r_k`` without zeros; with one zero,
    ``t_z E_i`` at the other entries and ``P sum_k r_k`` at the zero; with two zeros,
    ``(t_z - t_i) P`` at each zero and 0 elsewhere; with more, 0.
    """
    _no_where(where)
    a_in, a = a, np.asarray(a)
    t = np.broadcast_to(np.asarray(t), a.shape)
    if a.ndim == 0:  # prod(a) = a: linear
        return _zeros_for(a_in, g, t)
    axes = _axes(axis, a.ndim)
    x, back = _group_last(a, axes)
    v, _ = _group_last(t, axes)
    if x.shape[-1] == 0:
        return _zeros_for(a_in, g, t)
    nz = x != 0
    x1 = np.where(nz, x, 1)
    zeros = np.sum(~nz, -1, keepdims=True)
    r = np.where(nz, v / x1, 0)
    excl = _exclusive_prod(x1, (x1.ndim - 1,))
    p = np.prod(x1, -1, keepdims=True)
    tz = np.sum(np.where(nz, 0, v), -1, keepdims=True)
    h = np.where(zeros == 0, excl * (_before(r) + _after(r)),
                 np.where(zeros == 1, np.where(nz, tz * excl, p * np.sum(r, -1, keepdims=True)),
                          np.where(zeros == 2, np.where(nz, 0, (tz - v) * p), 0)))
    return _fit(_expand(g, a.ndim, axis, keepdims) * back(h), a_in)


# --- cumprod --------------------------------------------------------------------------------
def cumprod_hvp(g, a, t, axis=None):
    """``d/da cumprod_vjp(g, a)`` along ``t``: ``(H t)_i = sum_{l != i} t_l S(i, l)`` with
    ``S(i, l) = sum_{k >= max(i, l)} g_k prod_{j <= k, j != i, l} a_j``, the Hessian of
    ``<g, cumprod(a)>`` (symmetric: also the VJP in ``a``).  Flat when ``axis`` is None.

    Exact with zeros in ``a``.  With ``c``, ``c1``, ``c2`` the cumulative products of
    ``a`` with none, the first, the first two zeros set to 1, ``W*_m = sum_{k >= m} g_k c*_k``
    and ``r_l = t_l / a_l`` (0 at zeros): a product over ``j <= k`` vanishes unless every
    zero up to ``k`` is ``i`` or ``l``, so for ``a_i != 0``
    ``(H t)_i = (sum_{l != i} r_l W_max(i,l) + t_z1 W1_max(i,z1)) / a_i``; at the first
    zero ``z1`` it is ``sum_l r_l W1_max(z1,l) + t_z2 W2_z2``; at the second ``t_z1 W2_z2``;
    0 at later zeros.
    """
    shape = np.shape(a)
    x, gg = np.asarray(a), np.asarray(g)
    tt = np.broadcast_to(np.asarray(t), shape)
    if axis is None:
        x, gg, tt, axis = x.reshape(-1), gg.reshape(-1), tt.reshape(-1), 0
    x, gg, tt = (np.moveaxis(v, axis, -1) for v in (x, gg, tt))
    if x.shape[-1] == 0:
        return _zeros_for(a, g, t)
    nz = x != 0
    x1 = np.where(nz, x, 1)
    count = np.cumsum(~nz, -1)
    first, second = ~nz & (count == 1), ~nz & (count == 2)
    w0 = _revcumsum(gg * np.cumprod(x, -1), -1)
    w1 = _revcumsum(gg * np.cumprod(np.where(first, 1, x), -1), -1)
    w2 = _revcumsum(gg * np.cumprod(np.where(first | second, 1, x), -1), -1)
    r = np.where(nz, tt / x1, 0)
    before = _before(r)
    t_first = np.sum(np.where(first, tt, 0), -1, keepdims=True)
    t_second = np.sum(np.where(second, tt, 0), -1, keepdims=True)
    w1_first = np.sum(np.where(first, w1, 0), -1, keepdims=True)
    w2_second = np.sum(np.where(second, w2, 0), -1, keepdims=True)
    # a_i != 0: pairs with a non-zero l (only k before the first zero count: W0 is 0 after
    # it) and with l = z1 (W1 at max(i, z1))
    at_nonzero = (w0 * before + _after(r * w0) + t_first * np.where(count >= 1, w1, w1_first)) / x1
    at_first = w1 * before + _after(r * w1) + t_second * w2_second
    h = np.where(nz, at_nonzero, np.where(first, at_first,
                                          np.where(second, t_first * w2_second, 0)))
    return _fit(np.moveaxis(h, -1, axis).reshape(shape), a)


# --- bilinear products ----------------------------------------------------------------------
def _with(a, b, slot, v):
    """``(a, b)`` with factor ``slot`` (0: a, 1: b) replaced by ``v``."""
    return (v, b) if slot == 0 else (a, v)


def _product_vjp(vjp, g, a, b, extra, which):
    """``vjp(g, a, b, *extra, which)`` written without unpacking (``extra``: () or
    ``(axes,)``), so that s2s reads it as code with no run-time unpacking left."""
    if len(extra) == 1:
        return vjp(g, a, b, extra[0], which)
    return vjp(g, a, b, which)


def _bilinear_jvp(vjp, t, out, g, a, b, extra, which, wrt):
    """Tangent of ``vjp(g, a, b, *extra, which)`` from the tangent ``t`` of factor ``wrt``:
    the helper ignores factor ``which`` and is linear in the other."""
    if wrt == which:
        return zeros_like(out)
    if wrt == 0:
        return _product_vjp(vjp, g, t, b, extra, which)
    return _product_vjp(vjp, g, a, t, extra, which)


def _bilinear_vjp(vjp, ct, g, a, b, extra, which, wrt):
    """Cotangent of factor ``wrt`` of ``vjp(g, a, b, *extra, which)``:
    ``<ct, vjp_which(g; a, b)> = <g, product with factor which := ct>``, so it is that
    product's VJP for factor ``wrt`` (0 for ``wrt == which``)."""
    if wrt == which:
        return zeros_like(a if wrt == 0 else b)
    if which == 0:
        return _product_vjp(vjp, g, ct, b, extra, wrt)
    return _product_vjp(vjp, g, a, ct, extra, wrt)


def dot_vjp_jvp(t, out, g, a, b, which=0, wrt=0):
    """Tangent of ``dot_vjp(g, a, b, which)`` from factor ``wrt``'s tangent ``t``."""
    return _bilinear_jvp(dot_vjp, t, out, g, a, b, (), which, wrt)


def dot_vjp_vjp(ct, g, a, b, which=0, wrt=0):
    """Cotangent of factor ``wrt`` of ``dot_vjp(g, a, b, which)``."""
    return _bilinear_vjp(dot_vjp, ct, g, a, b, (), which, wrt)


def dot_vjp_transpose(ct, g, a, b, which=0):
    """Transpose of ``g -> dot_vjp(g, a, b, which)``: the JVP of ``np.dot`` in factor
    ``which``, ``np.dot(ct, b)`` or ``np.dot(a, ct)``, shaped like ``g``."""
    x, y = _with(a, b, which, ct)
    return unbroadcast(np.dot(x, y), g)


def inner_vjp_jvp(t, out, g, a, b, which=0, wrt=0):
    """Tangent of ``inner_vjp(g, a, b, which)`` from factor ``wrt``'s tangent ``t``."""
    return _bilinear_jvp(inner_vjp, t, out, g, a, b, (), which, wrt)


def inner_vjp_vjp(ct, g, a, b, which=0, wrt=0):
    """Cotangent of factor ``wrt`` of ``inner_vjp(g, a, b, which)``."""
    return _bilinear_vjp(inner_vjp, ct, g, a, b, (), which, wrt)


def inner_vjp_transpose(ct, g, a, b, which=0):
    """Transpose of ``g -> inner_vjp(g, a, b, which)``: ``np.inner(ct, b)`` or
    ``np.inner(a, ct)``."""
    x, y = _with(a, b, which, ct)
    return unbroadcast(np.inner(x, y), g)


def tensordot_vjp_jvp(t, out, g, a, b, axes=2, which=0, wrt=0):
    """Tangent of ``tensordot_vjp(g, a, b, axes, which)`` from factor ``wrt``'s tangent."""
    return _bilinear_jvp(tensordot_vjp, t, out, g, a, b, (axes,), which, wrt)


def tensordot_vjp_vjp(ct, g, a, b, axes=2, which=0, wrt=0):
    """Cotangent of factor ``wrt`` of ``tensordot_vjp(g, a, b, axes, which)``."""
    return _bilinear_vjp(tensordot_vjp, ct, g, a, b, (axes,), which, wrt)


def tensordot_vjp_transpose(ct, g, a, b, axes=2, which=0):
    """Transpose of ``g -> tensordot_vjp(g, a, b, axes, which)``: ``np.tensordot(ct, b,
    axes)`` or ``np.tensordot(a, ct, axes)``."""
    x, y = _with(a, b, which, ct)
    return unbroadcast(np.tensordot(x, y, axes), g)


# --- linspace -------------------------------------------------------------------------------
def linspace_vjp_transpose(ct, g, start, stop, num=50, endpoint=True, retstep=False, axis=0,
                           which=0):
    """Transpose of ``g -> linspace_vjp(g, start, stop, ..., which)`` (a weighted sum over the
    samples): ``ct`` (shaped like ``start`` or ``stop``) broadcast to the samples with the
    weights ``1 - t_i`` / ``t_i``, i.e. the tangent of ``np.linspace`` from that end."""
    w = _linspace_weights(num, endpoint, retstep, which)
    full = np.broadcast_shapes(np.shape(start), np.shape(stop))
    out = np.moveaxis(np.broadcast_to(np.asarray(ct), full)[..., None] * w, -1, axis)
    return unbroadcast(out, g)


# --- average --------------------------------------------------------------------------------
def _avg(g, ans, a, axis, weights, keepdims):
    a_arr = np.asarray(a)
    nd = a_arr.ndim
    w = _avg_weights(a_arr, axis, weights)
    axes = _axes(axis, nd)
    sw = np.sum(np.broadcast_to(w, a_arr.shape), axis=axes, keepdims=True)
    return (a_arr, w, axes, sw, _expand(g, nd, axis, keepdims),
            _expand(ans, nd, axis, keepdims))


def _to_weights(v, a_arr, axis, weights):
    """``v`` (broadcast to ``a``'s shape) summed back to the shape of ``weights``."""
    v = np.broadcast_to(v, a_arr.shape)
    if np.shape(weights) != a_arr.shape:
        keep = int(axis) % a_arr.ndim
        v = np.sum(v, axis=tuple(i for i in range(a_arr.ndim) if i != keep))
    return _fit(np.reshape(v, np.shape(weights)), weights)


def _check_returned(returned):
    if returned:
        raise NotImplementedError("s2s: no derivative of np.average(..., returned=True)")


def average_vjp_jvp(t, out, g, ans, a, axis=None, weights=None, returned=False, keepdims=False,
                    which=0, wrt="a"):
    """Tangent of ``average_vjp(g, ans, a, axis, weights, ..., which)`` from the tangent ``t``
    of ``wrt`` (``"ans"``, ``"a"`` or ``"weights"``), with ``S`` the sum over the averaged
    axes and ``sw = S(w)``:

    * ``which`` 0, ``g w / sw``: only ``w`` matters, ``g (t_w / sw - w S(t_w) / sw^2)``;
    * ``which`` 1, ``g (a - ans) / sw`` (summed to ``w``'s shape): ``g t_a / sw``,
      ``-g t_ans / sw``, ``-g (a - ans) S(t_w) / sw^2``.
    """
    _check_returned(returned)
    if which == 0 and wrt != "weights":
        return zeros_like(out)
    a_arr, w, axes, sw, gE, ansE = _avg(g, ans, a, axis, weights, keepdims)
    if wrt == "weights":
        tw = _avg_weights(a_arr, axis, t)
        tsw = np.sum(np.broadcast_to(tw, a_arr.shape), axis=axes, keepdims=True)
        if which == 0:
            d = gE * (tw / sw - w * tsw / sw ** 2)
            return _fit(np.array(np.broadcast_to(d, a_arr.shape)), a)
        return _to_weights(-gE * (a_arr - ansE) * tsw / sw ** 2, a_arr, axis, weights)
    if wrt == "a":
        return _to_weights(gE * np.asarray(t) / sw, a_arr, axis, weights)
    return _to_weights(-gE * _expand(t, a_arr.ndim, axis, keepdims) / sw, a_arr, axis, weights)


def average_vjp_vjp(ct, g, ans, a, axis=None, weights=None, returned=False, keepdims=False,
                    which=0, wrt="a"):
    """Cotangent of ``wrt`` (``"ans"``, ``"a"`` or ``"weights"``) of
    ``average_vjp(g, ans, a, ..., which)`` given the cotangent ``ct`` of its result (the
    transposes of ``average_vjp_jvp``; ``ct_w`` is ``ct`` broadcast from ``w``'s shape):

    * ``which`` 0: ``w_bar = g ct / sw - S(g ct w) / sw^2`` (summed to ``w``'s shape);
    * ``which`` 1: ``a_bar = g ct_w / sw``, ``ans_bar = -S(g ct_w) / sw``,
      ``w_bar = -S(g ct_w (a - ans)) / sw^2``.
    """
    _check_returned(returned)
    target = {"ans": ans, "a": a, "weights": weights}[wrt]
    if which == 0 and wrt != "weights":
        return _zeros_for(target, g, ct)
    a_arr, w, axes, sw, gE, ansE = _avg(g, ans, a, axis, weights, keepdims)
    if which == 0:
        c = np.asarray(ct)
        return _to_weights(gE * c / sw - np.sum(c * gE * w, axis=axes, keepdims=True) / sw ** 2,
                           a_arr, axis, weights)
    cw = np.broadcast_to(_avg_weights(a_arr, axis, ct), a_arr.shape)
    if wrt == "a":
        return _fit(np.array(np.broadcast_to(gE * cw / sw, a_arr.shape)), a)
    if wrt == "ans":
        s = -np.sum(gE * cw / sw, axis=axes, keepdims=True)
        return _fit(np.reshape(s, np.shape(ans)), ans)
    s = -np.sum(gE * cw * (a_arr - ansE), axis=axes, keepdims=True) / sw ** 2
    return _to_weights(s, a_arr, axis, weights)


def average_vjp_transpose(ct, g, ans, a, axis=None, weights=None, returned=False, keepdims=False,
                          which=0):
    """Transpose of ``g -> average_vjp(g, ans, a, ..., which)``: the JVP of ``np.average`` in
    ``a`` (``which`` 0: the average of ``ct``) or in ``weights`` (1: ``S(ct_w (a - ans)) /
    sw``), shaped like ``g``."""
    _check_returned(returned)
    like = g if which == 0 else ans
    return unbroadcast(average_jvp(ct, like, a, axis, weights, returned, keepdims, which), g)


# the norms (their section of the derivatives above): second_order_norm.py
from .second_order_norm import norm_vjp_dans, norm_vjp_dans_transpose, norm_vjp_dx  # noqa: E402,F401
