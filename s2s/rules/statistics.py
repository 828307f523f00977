"""Statistics and the NaN-ignoring reductions: the NaN-ignoring family (nansum,
nanmean, nanprod, nanmax, nanmin, nanvar, nanstd, nancumsum, nancumprod), ptp, order statistics (median, quantile,
percentile and their NaN-ignoring forms), cov, corrcoef, differences (diff, ediff1d)
and numpy 2's cumulative_sum/cumulative_prod.

NaN entries are constants that the reduction skips: their derivative is 0
and the others' is that of the plain reduction over the non-NaN entries
(``np.where(np.isnan(a), ...)``).  Templates are written with primitives
that have rules (``np.where``, ``np.sum``, ``sum_vjp``, ``prod_vjp``...), so
second derivatives need nothing more; the order statistics and differences
are linear maps behind ``apply_linear`` (``runtime/linear_ops.py``).
Signatures follow numpy's; an argument s2s cannot differentiate with
(``where=`` of nanmean, ``weights=`` of a quantile, a tuple ``axis`` of a
quantile...) is an error.
"""
import numpy as np

from s2s_runtime import (apply_linear, cov_layout, cumprod_jvp, cumprod_vjp, cumsum_vjp, max_jvp,
                         max_vjp, prod_jvp, prod_vjp, scan_pad_widths, scan_slots, sum_vjp, unbroadcast, unreduce)

from .registry import defjvp, defvjp

# nansum: a_bar = broadcast(g), 0 at NaNs
defvjp(np.nansum, lambda g, ans, a, axis=None, dtype=None, out=None, keepdims=False,
       initial=None, where=True:
       np.where(np.isnan(a), 0.0, sum_vjp(g, a, axis, keepdims, where)))
defjvp(np.nansum, lambda t, ans, a, axis=None, dtype=None, out=None, keepdims=False,
       initial=None, where=True:
       np.sum(np.where(np.isnan(a), 0.0, t), axis=axis, keepdims=keepdims, where=where))
# nanmean: a_bar = broadcast(g) / (number of non-NaN entries), 0 at NaNs
defvjp(np.nanmean, lambda g, ans, a, axis=None, dtype=None, out=None, keepdims=False:
       np.where(np.isnan(a), 0.0, sum_vjp(g, a, axis, keepdims))
       / np.sum(~np.isnan(a), axis=axis, keepdims=True))
defjvp(np.nanmean, lambda t, ans, a, axis=None, dtype=None, out=None, keepdims=False:
       np.sum(np.where(np.isnan(a), 0.0, t), axis=axis, keepdims=keepdims)
       / np.sum(~np.isnan(a), axis=axis, keepdims=keepdims))
# nanprod: the product with NaNs replaced by 1
defvjp(np.nanprod, lambda g, ans, a, axis=None, dtype=None, out=None, keepdims=False:
       np.where(np.isnan(a), 0.0,
                prod_vjp(g, np.where(np.isnan(a), 1.0, a), axis, keepdims)))
defjvp(np.nanprod, lambda t, ans, a, axis=None, dtype=None, out=None, keepdims=False:
       prod_jvp(np.where(np.isnan(a), 0.0, t), ans, np.where(np.isnan(a), 1.0, a), axis,
                keepdims))
# nanmax/nanmin: as max/min (a NaN never equals the result); ties share g (JAX)
for _f in (np.nanmax, np.nanmin):
    defvjp(_f, lambda g, ans, a, axis=None, out=None, keepdims=False, initial=None,
           where=True: max_vjp(g, ans, a, axis, keepdims, initial, where))
    defjvp(_f, lambda t, ans, a, axis=None, out=None, keepdims=False, initial=None,
           where=True: max_jvp(t, ans, a, axis, keepdims, initial, where))
# ptp = max - min
defvjp(np.ptp, lambda g, ans, a, axis=None, out=None, keepdims=False:
       max_vjp(g, np.max(a, axis=axis, keepdims=keepdims), a, axis, keepdims)
       - max_vjp(g, np.min(a, axis=axis, keepdims=keepdims), a, axis, keepdims))
defjvp(np.ptp, lambda t, ans, a, axis=None, out=None, keepdims=False:
       max_jvp(t, np.max(a, axis=axis, keepdims=keepdims), a, axis, keepdims)
       - max_jvp(t, np.min(a, axis=axis, keepdims=keepdims), a, axis, keepdims))


# nanvar = sum_{non-NaN} |a - nanmean|^2 / (n - ddof), n the non-NaN count:
#   a_bar = 2 g conj(a - nanmean) / (n - ddof), 0 at NaNs
def _nanvar_vjp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centred = np.where(np.isnan(a), 0.0, a - np.nanmean(a, axis=axis, keepdims=True))
    n = np.sum(~np.isnan(a), axis=axis, keepdims=True)
    return unreduce(g, a, axis, keepdims) * 2 * np.conj(centred) / (n - ddof)


def _nanvar_jvp(t, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centred = np.where(np.isnan(a), 0.0, a - np.nanmean(a, axis=axis, keepdims=True))
    n = np.sum(~np.isnan(a), axis=axis, keepdims=keepdims)
    s = np.sum(np.conj(centred) * np.where(np.isnan(a), 0.0, t), axis=axis, keepdims=keepdims)
    return 2 * np.real(s) / (n - ddof)


# nanstd = sqrt(nanvar): the nanvar derivatives divided by 2 nanstd
def _nanstd_vjp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centred = np.where(np.isnan(a), 0.0, a - np.nanmean(a, axis=axis, keepdims=True))
    n = np.sum(~np.isnan(a), axis=axis, keepdims=True)
    return unreduce(g / ans, a, axis, keepdims) * np.conj(centred) / (n - ddof)


def _nanstd_jvp(t, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centred = np.where(np.isnan(a), 0.0, a - np.nanmean(a, axis=axis, keepdims=True))
    n = np.sum(~np.isnan(a), axis=axis, keepdims=keepdims)
    s = np.sum(np.conj(centred) * np.where(np.isnan(a), 0.0, t), axis=axis, keepdims=keepdims)
    return np.real(s) / ((n - ddof) * ans)


defvjp(np.nanvar, _nanvar_vjp)
defjvp(np.nanvar, _nanvar_jvp)
defvjp(np.nanstd, _nanstd_vjp)
defjvp(np.nanstd, _nanstd_jvp)
# nancumsum / nancumprod: the scans with NaNs replaced by 0 / 1
defvjp(np.nancumsum, lambda g, ans, a, axis=None, dtype=None, out=None:
       np.where(np.isnan(a), 0.0, cumsum_vjp(g, a, axis)))
defjvp(np.nancumsum, lambda t, ans, a, axis=None, dtype=None, out=None:
       np.cumsum(np.where(np.isnan(a), 0.0, t), axis))
defvjp(np.nancumprod, lambda g, ans, a, axis=None, dtype=None, out=None:
       np.where(np.isnan(a), 0.0, cumprod_vjp(g, np.where(np.isnan(a), 1.0, a), axis)))
defjvp(np.nancumprod, lambda t, ans, a, axis=None, dtype=None, out=None:
       cumprod_jvp(np.where(np.isnan(a), 0.0, t), ans, np.where(np.isnan(a), 1.0, a), axis))

# order statistics: weights on the sorted values (runtime/order_stats.py)
defvjp(np.median, lambda g, ans, a, axis=None, out=None, overwrite_input=False, keepdims=False:
       apply_linear("quantile_T", g, a, (a, 0.5, axis, keepdims, "linear")))
defjvp(np.median, lambda t, ans, a, axis=None, out=None, overwrite_input=False, keepdims=False:
       apply_linear("quantile", t, ans, (a, 0.5, axis, keepdims, "linear")))
defvjp(np.quantile, lambda g, ans, a, q, axis=None, out=None, overwrite_input=False,
       method="linear", keepdims=False:
       apply_linear("quantile_T", g, a, (a, q, axis, keepdims, method)), None)
defjvp(np.quantile, lambda t, ans, a, q, axis=None, out=None, overwrite_input=False,
       method="linear", keepdims=False:
       apply_linear("quantile", t, ans, (a, q, axis, keepdims, method)), None)
defvjp(np.percentile, lambda g, ans, a, q, axis=None, out=None, overwrite_input=False,
       method="linear", keepdims=False:
       apply_linear("quantile_T", g, a, (a, np.true_divide(q, 100), axis, keepdims, method)),
       None)
defjvp(np.percentile, lambda t, ans, a, q, axis=None, out=None, overwrite_input=False,
       method="linear", keepdims=False:
       apply_linear("quantile", t, ans, (a, np.true_divide(q, 100), axis, keepdims, method)),
       None)

# the NaN-ignoring order statistics: the same weights over the entries that are not NaN
defvjp(np.nanmedian, lambda g, ans, a, axis=None, out=None, overwrite_input=False,
       keepdims=False: apply_linear("quantile_T", g, a, (a, 0.5, axis, keepdims, "linear", True)))
defjvp(np.nanmedian, lambda t, ans, a, axis=None, out=None, overwrite_input=False,
       keepdims=False: apply_linear("quantile", t, ans, (a, 0.5, axis, keepdims, "linear", True)))
defvjp(np.nanquantile, lambda g, ans, a, q, axis=None, out=None, overwrite_input=False,
       method="linear", keepdims=False:
       apply_linear("quantile_T", g, a, (a, q, axis, keepdims, method, True)), None)
defjvp(np.nanquantile, lambda t, ans, a, q, axis=None, out=None, overwrite_input=False,
       method="linear", keepdims=False:
       apply_linear("quantile", t, ans, (a, q, axis, keepdims, method, True)), None)
defvjp(np.nanpercentile, lambda g, ans, a, q, axis=None, out=None, overwrite_input=False,
       method="linear", keepdims=False:
       apply_linear("quantile_T", g, a, (a, np.true_divide(q, 100), axis, keepdims, method,
                                         True)), None)
defjvp(np.nanpercentile, lambda t, ans, a, q, axis=None, out=None, overwrite_input=False,
       method="linear", keepdims=False:
       apply_linear("quantile", t, ans, (a, np.true_divide(q, 100), axis, keepdims, method,
                                         True)), None)

# differences (linear in a; constant prepend/append/to_begin/to_end values)
defvjp(np.diff, lambda g, ans, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue:
       apply_linear("diff_T", g, a, (n, axis, prepend, append)))
defjvp(np.diff, lambda t, ans, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue:
       apply_linear("diff", t, ans, (n, axis, prepend, append)))
defvjp(np.ediff1d, lambda g, ans, ary, to_end=None, to_begin=None:
       apply_linear("ediff1d_T", g, ary, (to_end, to_begin)))
defjvp(np.ediff1d, lambda t, ans, ary, to_end=None, to_begin=None:
       apply_linear("ediff1d", t, ans, (to_end, to_begin)))

# cumulative_sum / cumulative_prod (numpy >= 2.1): cumsum / cumprod along axis, with an
# optional initial 0 / 1 (a constant) in front
if hasattr(np, "cumulative_sum"):
    def _cumulative_sum_vjp(g, ans, x, axis=None, dtype=None, out=None, include_initial=False):
        slots = scan_slots(x, axis, include_initial)
        return cumsum_vjp(np.take(g, slots, axis=axis), x, axis)

    def _cumulative_prod_vjp(g, ans, x, axis=None, dtype=None, out=None, include_initial=False):
        slots = scan_slots(x, axis, include_initial)
        return cumprod_vjp(np.take(g, slots, axis=axis), x, axis)

    def _cumulative_prod_jvp(t, ans, x, axis=None, dtype=None, out=None, include_initial=False):
        widths = scan_pad_widths(x, axis, include_initial)
        inner = cumprod_jvp(t, np.cumprod(x, axis), x, axis)
        return apply_linear("pad", inner, ans, (widths, "constant", "even"))

    defvjp(np.cumulative_sum, _cumulative_sum_vjp)
    defjvp(np.cumulative_sum, lambda t, ans, x, axis=None, dtype=None, out=None,
           include_initial=False: np.cumulative_sum(t, axis=axis, include_initial=include_initial))
    defvjp(np.cumulative_prod, _cumulative_prod_vjp)
    defjvp(np.cumulative_prod, _cumulative_prod_jvp)


# cov(m) = X X^H / (N - ddof), X = m centred along the observations (the variables' axis
#   first): X_bar = (G conj(X) + conj(G^T X)) / (N - ddof), then centred again (the
#   centring is symmetric), moved back to m's layout
def _cov_vjp(g, ans, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
             aweights=None, dtype=None):
    axis, norm, cshape = cov_layout(m, y, rowvar, bias, ddof, fweights, aweights)
    x = np.moveaxis(np.atleast_2d(m), axis, 0)
    xc = x - np.mean(x, axis=1, keepdims=True)
    gm = np.reshape(g, cshape)
    xbar = (np.matmul(gm, np.conj(xc)) + np.conj(np.matmul(np.transpose(gm), xc))) / norm
    xbar = xbar - np.mean(xbar, axis=1, keepdims=True)
    return unbroadcast(np.reshape(np.moveaxis(xbar, 0, axis), np.shape(m)), m)


def _cov_jvp(t, ans, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
             aweights=None, dtype=None):
    axis, norm, cshape = cov_layout(m, y, rowvar, bias, ddof, fweights, aweights)
    x = np.moveaxis(np.atleast_2d(m), axis, 0)
    xc = x - np.mean(x, axis=1, keepdims=True)
    tx = np.moveaxis(np.atleast_2d(t), axis, 0)
    tc = tx - np.mean(tx, axis=1, keepdims=True)
    dc = (np.matmul(tc, np.conj(np.transpose(xc))) + np.matmul(xc, np.conj(np.transpose(tc))))
    return np.reshape(dc / norm, np.shape(ans))


defvjp(np.cov, _cov_vjp)
defjvp(np.cov, _cov_jvp)


# corrcoef = C / (s s^T), s = sqrt(Re diag C): with R the result and u = ds / s,
#   dR = dC / (s s^T) - R (u_i + u_j), ds_i = Re dC_ii / (2 s_i); so the cotangent of C is
#   G / (s s^T) - diag(a / (2 s^2)), a_i = Re sum_j (G_ij R_ij + G_ji R_ji), then cov's
def _corrcoef_vjp(g, ans, x, y=None, rowvar=True, bias=np._NoValue, ddof=np._NoValue,
                  dtype=None):
    axis, norm, cshape = cov_layout(x, y, rowvar)
    xx = np.moveaxis(np.atleast_2d(x), axis, 0)
    xc = xx - np.mean(xx, axis=1, keepdims=True)
    s = np.sqrt(np.real(np.diagonal(np.matmul(xc, np.conj(np.transpose(xc))))) / norm)
    gm = np.reshape(g, cshape)
    r = np.reshape(ans, cshape)
    a = np.real(np.sum(gm * r, axis=1) + np.sum(gm * r, axis=0))
    gc = gm / np.outer(s, s) - np.diag(a / (2 * s * s))
    xbar = (np.matmul(gc, np.conj(xc)) + np.conj(np.matmul(np.transpose(gc), xc))) / norm
    xbar = xbar - np.mean(xbar, axis=1, keepdims=True)
    return unbroadcast(np.reshape(np.moveaxis(xbar, 0, axis), np.shape(x)), x)


def _corrcoef_jvp(t, ans, x, y=None, rowvar=True, bias=np._NoValue, ddof=np._NoValue,
                  dtype=None):
    axis, norm, cshape = cov_layout(x, y, rowvar)
    xx = np.moveaxis(np.atleast_2d(x), axis, 0)
    xc = xx - np.mean(xx, axis=1, keepdims=True)
    tx = np.moveaxis(np.atleast_2d(t), axis, 0)
    tc = tx - np.mean(tx, axis=1, keepdims=True)
    s = np.sqrt(np.real(np.diagonal(np.matmul(xc, np.conj(np.transpose(xc))))) / norm)
    dc = (np.matmul(tc, np.conj(np.transpose(xc))) + np.matmul(xc, np.conj(np.transpose(tc))))
    u = np.real(np.diagonal(dc)) / (2 * norm * s * s)
    r = np.reshape(ans, cshape)
    dr = dc / (norm * np.outer(s, s)) - r * (np.expand_dims(u, 1) + np.expand_dims(u, 0))
    return np.reshape(dr, np.shape(ans))


defvjp(np.corrcoef, _corrcoef_vjp)
defjvp(np.corrcoef, _corrcoef_jvp)
