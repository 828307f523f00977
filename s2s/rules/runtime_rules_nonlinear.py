"""Rules of the runtime VJP helpers that are not linear in their primal arguments
(second order: ``prod_vjp``, ``cumprod_vjp``, ``var_vjp``, ``norm_vjp``, the bilinear
products' ``dot_vjp``/``inner_vjp``/``tensordot_vjp``, ``linspace_vjp``,
``average_vjp``), with the helpers of ``s2s_runtime.second_order``.  The linear helpers'
rules, and the conventions (role parameters, zero templates for shape-only
arguments): ``runtime_rules.py``, which imports this module.
"""
import numpy as np

from s2s_runtime import unbroadcast, zeros_like
from s2s_runtime import (average_vjp, average_vjp_jvp, average_vjp_transpose, average_vjp_vjp,
                         cumprod_hvp, cumprod_jvp, cumprod_vjp, dot_vjp, dot_vjp_jvp,
                         dot_vjp_transpose, dot_vjp_vjp, inner_vjp, inner_vjp_jvp,
                         inner_vjp_transpose, inner_vjp_vjp, linspace_vjp, linspace_vjp_transpose,
                         norm_jvp, norm_vjp, norm_vjp_dans, norm_vjp_dans_transpose, norm_vjp_dx,
                         prod_hvp, prod_jvp, prod_vjp, tensordot_vjp, tensordot_vjp_jvp,
                         tensordot_vjp_transpose, tensordot_vjp_vjp, var_jvp, var_vjp)

from .registry import defjvp, defvjp

# --- second order: the VJP helpers that are not linear in their primal arguments ------------
# Each is H(g, x) = J(x)^T g: linear in g, so its JVP in g is H(tan, x) and its VJP in g is
# J(x) ct, the primitive's own JVP (prod_jvp, np.dot(ct, b)...; ``unbroadcast(..., g)`` gives
# it g's dtype, real for a real g).  In the primal x: the Hessian of <g, f(x)> applied to the
# tangent; it is symmetric, so the VJP in x is the same map applied to the cotangent (see
# s2s_runtime.second_order).  Their own derivatives (third order) are not written.

# prod_vjp(g, a) = g dprod/da_i = g prod_{j != i} a_j.  In a: g H t with the Hessian
#   H_ik = prod_{j != i, k} a_j (i != k), H_ii = 0.  Transpose in g: sum_i ct_i dprod/da_i.
defvjp(prod_vjp,
       lambda ct, out, g, a, axis=None, keepdims=False, where=True:
       unbroadcast(prod_jvp(ct, g, a, axis, keepdims, where), g),
       lambda ct, out, g, a, axis=None, keepdims=False, where=True:
       prod_hvp(g, a, ct, axis, keepdims, where))
defjvp(prod_vjp,
       lambda tan, out, g, a, axis=None, keepdims=False, where=True:
       prod_vjp(tan, a, axis, keepdims, where),
       lambda tan, out, g, a, axis=None, keepdims=False, where=True:
       prod_hvp(g, a, tan, axis, keepdims, where))
# prod_jvp(t, ans, a) = sum_i t_i prod_{j != i} a_j over the reduced axes: linear in t (its
#   transpose is prod_vjp); in a, sum_i t_i (H a_dot)_i = sum_k a_dot_k (H t)_k with prod's
#   symmetric Hessian H, so the VJP in a is prod_hvp(ct, a, t) and the JVP the reduced sum
#   of a_dot (H t); ans gives only the result's type (zero).
defvjp(prod_jvp,
       lambda ct, out, t, ans, a, axis=None, keepdims=False, where=True:
       unbroadcast(prod_vjp(ct, a, axis, keepdims, where), t),
       lambda ct, out, t, ans, a, axis=None, keepdims=False, where=True: zeros_like(ans),
       lambda ct, out, t, ans, a, axis=None, keepdims=False, where=True:
       prod_hvp(ct, a, t, axis, keepdims, where))
defjvp(prod_jvp,
       lambda tan, out, t, ans, a, axis=None, keepdims=False, where=True:
       prod_jvp(tan, ans, a, axis, keepdims, where),
       lambda tan, out, t, ans, a, axis=None, keepdims=False, where=True: zeros_like(out),
       lambda tan, out, t, ans, a, axis=None, keepdims=False, where=True:
       np.sum(prod_hvp(np.ones_like(out), a, t, axis, keepdims, where) * tan, axis=axis,
              keepdims=keepdims))
# var_jvp(t, ans, a) = 2 Re(sum(conj(P a) t)) / (n - ddof), P the centring: a symmetric
#   R-bilinear form B(a, t) = B(t, a).  Its transpose in t is var_vjp(ct, a), in a
#   var_vjp(ct, t); its JVPs put the tangent in that slot; ans gives only a type (zero).
defvjp(var_jvp,
       lambda ct, out, t, ans, a, axis=None, ddof=0, keepdims=False, where=True,
       correction=None: unbroadcast(var_vjp(ct, a, axis, ddof, keepdims, where, correction), t),
       lambda ct, out, t, ans, a, axis=None, ddof=0, keepdims=False, where=True,
       correction=None: zeros_like(ans),
       lambda ct, out, t, ans, a, axis=None, ddof=0, keepdims=False, where=True,
       correction=None: unbroadcast(var_vjp(ct, t, axis, ddof, keepdims, where, correction), a))
defjvp(var_jvp,
       lambda tan, out, t, ans, a, axis=None, ddof=0, keepdims=False, where=True,
       correction=None: var_jvp(tan, ans, a, axis, ddof, keepdims, where, correction),
       lambda tan, out, t, ans, a, axis=None, ddof=0, keepdims=False, where=True,
       correction=None: zeros_like(out),
       lambda tan, out, t, ans, a, axis=None, ddof=0, keepdims=False, where=True,
       correction=None: var_jvp(t, ans, tan, axis, ddof, keepdims, where, correction))
# cumprod_vjp(g, a)_i = sum_{k >= i} g_k prod_{j <= k, j != i} a_j.  In a:
#   (H t)_i = sum_{l != i} t_l sum_{k >= max(i, l)} g_k prod_{j <= k, j != i, l} a_j.
#   Transpose in g: cumprod's JVP, d cumprod(a)_k = sum_{i <= k} ct_i prod_{j <= k, j != i} a_j.
defvjp(cumprod_vjp,
       lambda ct, out, g, a, axis=None: unbroadcast(cumprod_jvp(ct, g, a, axis), g),
       lambda ct, out, g, a, axis=None: cumprod_hvp(g, a, ct, axis))
defjvp(cumprod_vjp,
       lambda tan, out, g, a, axis=None: cumprod_vjp(tan, a, axis),
       lambda tan, out, g, a, axis=None: cumprod_hvp(g, a, tan, axis))
# var_vjp(g, a) = 2 g conj(a - mean(a)) / (n - ddof): linear in g and (R-)linear in a.
#   In a: var_vjp(g, t) (JVP) and var_vjp(g, ct) (VJP: <ct, 2 g conj(P t)/(n - ddof)> =
#   <2 g conj(P ct)/(n - ddof), t>, P the centring, symmetric).  Transpose in g:
#   2 Re(sum conj(a - mean) ct) / (n - ddof) = var_jvp(ct, ...).
defvjp(var_vjp,
       lambda ct, out, g, a, axis=None, ddof=0, keepdims=False, where=True, correction=None:
       unbroadcast(var_jvp(ct, g, a, axis, ddof, keepdims, where, correction), g),
       lambda ct, out, g, a, axis=None, ddof=0, keepdims=False, where=True, correction=None:
       var_vjp(g, ct, axis, ddof, keepdims, where, correction))
defjvp(var_vjp,
       lambda tan, out, g, a, axis=None, ddof=0, keepdims=False, where=True, correction=None:
       var_vjp(tan, a, axis, ddof, keepdims, where, correction),
       lambda tan, out, g, a, axis=None, ddof=0, keepdims=False, where=True, correction=None:
       var_vjp(g, tan, axis, ddof, keepdims, where, correction))
# norm_vjp(g, ans, x) = g c(ans, x), c the cotangent factor (conj(x)/n for the 2-norm,
#   |x|^(p-2) conj(x)/n^(p-1), conj(U V^H) for 'nuc'...).  Transpose in g: Re(sum ct c) =
#   norm_jvp(ct, ...).  In ans (the norm, active in gradient code): dc/dn = (1 - p) c / n
#   for the p-norms and 'fro', 0 for the others.  In x (n fixed): dc, symmetric.
defvjp(norm_vjp,
       lambda ct, out, g, ans, x, ord=None, axis=None, keepdims=False:
       unbroadcast(norm_jvp(ct, ans, x, ord, axis, keepdims), g),
       lambda ct, out, g, ans, x, ord=None, axis=None, keepdims=False:
       norm_vjp_dans_transpose(ct, g, ans, x, ord, axis, keepdims),
       lambda ct, out, g, ans, x, ord=None, axis=None, keepdims=False:
       norm_vjp_dx(g, ans, x, ct, ord, axis, keepdims))
defjvp(norm_vjp,
       lambda tan, out, g, ans, x, ord=None, axis=None, keepdims=False:
       norm_vjp(tan, ans, x, ord, axis, keepdims),
       lambda tan, out, g, ans, x, ord=None, axis=None, keepdims=False:
       norm_vjp_dans(g, ans, x, tan, ord, axis, keepdims),
       lambda tan, out, g, ans, x, ord=None, axis=None, keepdims=False:
       norm_vjp_dx(g, ans, x, tan, ord, axis, keepdims))
# dot_vjp(g, a, b, which): the cotangent of factor `which` of dot(a, b), bilinear in g and
#   the other factor, independent of factor `which`.  Transpose in g: dot's JVP in factor
#   `which` (np.dot(ct, b) / np.dot(a, ct)); in the other factor: <ct, dot_vjp_which> =
#   <g, dot with factor which := ct>, so that product's VJP (dot_vjp_vjp picks at run time).
defvjp(dot_vjp,
       lambda ct, out, g, a, b, which=0: dot_vjp_transpose(ct, g, a, b, which),
       lambda ct, out, g, a, b, which=0: dot_vjp_vjp(ct, g, a, b, which, 0),
       lambda ct, out, g, a, b, which=0: dot_vjp_vjp(ct, g, a, b, which, 1))
defjvp(dot_vjp,
       lambda tan, out, g, a, b, which=0: dot_vjp(tan, a, b, which),
       lambda tan, out, g, a, b, which=0: dot_vjp_jvp(tan, out, g, a, b, which, 0),
       lambda tan, out, g, a, b, which=0: dot_vjp_jvp(tan, out, g, a, b, which, 1))
# inner_vjp, tensordot_vjp: the same with np.inner / np.tensordot
defvjp(inner_vjp,
       lambda ct, out, g, a, b, which=0: inner_vjp_transpose(ct, g, a, b, which),
       lambda ct, out, g, a, b, which=0: inner_vjp_vjp(ct, g, a, b, which, 0),
       lambda ct, out, g, a, b, which=0: inner_vjp_vjp(ct, g, a, b, which, 1))
defjvp(inner_vjp,
       lambda tan, out, g, a, b, which=0: inner_vjp(tan, a, b, which),
       lambda tan, out, g, a, b, which=0: inner_vjp_jvp(tan, out, g, a, b, which, 0),
       lambda tan, out, g, a, b, which=0: inner_vjp_jvp(tan, out, g, a, b, which, 1))
defvjp(tensordot_vjp,
       lambda ct, out, g, a, b, axes=2, which=0: tensordot_vjp_transpose(ct, g, a, b, axes, which),
       lambda ct, out, g, a, b, axes=2, which=0: tensordot_vjp_vjp(ct, g, a, b, axes, which, 0),
       lambda ct, out, g, a, b, axes=2, which=0: tensordot_vjp_vjp(ct, g, a, b, axes, which, 1))
defjvp(tensordot_vjp,
       lambda tan, out, g, a, b, axes=2, which=0: tensordot_vjp(tan, a, b, axes, which),
       lambda tan, out, g, a, b, axes=2, which=0:
       tensordot_vjp_jvp(tan, out, g, a, b, axes, which, 0),
       lambda tan, out, g, a, b, axes=2, which=0:
       tensordot_vjp_jvp(tan, out, g, a, b, axes, which, 1))
# linspace_vjp(g, start, stop, ..., which) = sum_i g_i w_i (w = 1 - t or t) summed to
#   start's / stop's shape: linear in g, start and stop give only shapes.  Transpose in g:
#   ct spread over the samples with the weights w (linspace's JVP from that end).
defvjp(linspace_vjp,
       lambda ct, out, g, start, stop, num=50, endpoint=True, retstep=False, axis=0, which=0:
       linspace_vjp_transpose(ct, g, start, stop, num, endpoint, retstep, axis, which),
       lambda ct, out, g, start, stop, num=50, endpoint=True, retstep=False, axis=0, which=0:
       zeros_like(start),
       lambda ct, out, g, start, stop, num=50, endpoint=True, retstep=False, axis=0, which=0:
       zeros_like(stop))
defjvp(linspace_vjp,
       lambda tan, out, g, start, stop, num=50, endpoint=True, retstep=False, axis=0, which=0:
       linspace_vjp(tan, start, stop, num, endpoint, retstep, axis, which),
       lambda tan, out, g, start, stop, num=50, endpoint=True, retstep=False, axis=0, which=0:
       zeros_like(out),
       lambda tan, out, g, start, stop, num=50, endpoint=True, retstep=False, axis=0, which=0:
       zeros_like(out))
# average_vjp(g, ans, a, axis, weights, ..., which): which 0, g w / sw; which 1,
#   g (a - ans) / sw summed to w's shape (sw = sum of w over the axes).  Linear in g
#   (transpose: np.average's JVP in a or in weights); rational in ans, a and weights
#   (s2s_runtime.second_order.average_vjp_jvp / average_vjp_vjp state the derivatives).
defvjp(average_vjp,
       lambda ct, out, g, ans, a, axis=None, weights=None, returned=False, keepdims=False,
       which=0: average_vjp_transpose(ct, g, ans, a, axis, weights, returned, keepdims, which),
       lambda ct, out, g, ans, a, axis=None, weights=None, returned=False, keepdims=False,
       which=0: average_vjp_vjp(ct, g, ans, a, axis, weights, returned, keepdims, which, "ans"),
       lambda ct, out, g, ans, a, axis=None, weights=None, returned=False, keepdims=False,
       which=0: average_vjp_vjp(ct, g, ans, a, axis, weights, returned, keepdims, which, "a"),
       None,
       lambda ct, out, g, ans, a, axis=None, weights=None, returned=False, keepdims=False,
       which=0: average_vjp_vjp(ct, g, ans, a, axis, weights, returned, keepdims, which,
                                "weights"))
defjvp(average_vjp,
       lambda tan, out, g, ans, a, axis=None, weights=None, returned=False, keepdims=False,
       which=0: average_vjp(tan, ans, a, axis, weights, returned, keepdims, which),
       lambda tan, out, g, ans, a, axis=None, weights=None, returned=False, keepdims=False,
       which=0: average_vjp_jvp(tan, out, g, ans, a, axis, weights, returned, keepdims, which,
                                "ans"),
       lambda tan, out, g, ans, a, axis=None, weights=None, returned=False, keepdims=False,
       which=0: average_vjp_jvp(tan, out, g, ans, a, axis, weights, returned, keepdims, which,
                                "a"),
       None,
       lambda tan, out, g, ans, a, axis=None, weights=None, returned=False, keepdims=False,
       which=0: average_vjp_jvp(tan, out, g, ans, a, axis, weights, returned, keepdims, which,
                                "weights"))
