"""Reductions and scans: sum, mean, prod, max/min, std/var, cumsum/cumprod,
average, linalg.norm, trace.

Every template mirrors numpy's signature (``keepdims`` defaults to False,
``where`` to True).  The shape bookkeeping (axis None/int/tuple/negative,
keepdims, ties, zeros) lives in ``s2s_runtime.vjps``; each helper's
docstring states the maths.
"""
import numpy as np

from s2s_runtime import (initial_or_one, average_jvp, average_vjp, cumprod_jvp, cumprod_vjp, cumsum_vjp, max_jvp,
                         max_vjp, mean_vjp, norm_jvp, norm_vjp, prod_jvp, prod_vjp, sum_vjp,
                         trace_vjp, var_jvp, var_vjp)

from .registry import defjvp, defvjp

# sum: a_bar = broadcast(g) over the reduced axes
defvjp(np.sum, lambda g, ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
       where=True: sum_vjp(g, a, axis, keepdims, where))
defjvp(np.sum, lambda t, ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
       where=True: np.sum(t, axis=axis, keepdims=keepdims, where=where))
# mean: a_bar = broadcast(g) / n
defvjp(np.mean, lambda g, ans, a, axis=None, dtype=None, out=None, keepdims=False, where=True:
       mean_vjp(g, a, axis, keepdims, where))
defjvp(np.mean, lambda t, ans, a, axis=None, dtype=None, out=None, keepdims=False, where=True:
       np.mean(t, axis=axis, keepdims=keepdims, where=where))
# prod: a_bar_i = g prod_{j != i} a_j   (exclusive cumulative products, zeros are fine),
# times initial= when given (a constant factor)
defvjp(np.prod, lambda g, ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
       where=True: prod_vjp(g * initial_or_one(initial), a, axis, keepdims, where))
defjvp(np.prod, lambda t, ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
       where=True: prod_jvp(t, ans, a, axis, keepdims, where) * initial_or_one(initial))
# bincount(x, weights, minlength): ans[j] = sum of weights[i] over x[i] == j, linear in the
# weights: weights_bar = g[x], the tangent the bincount of theirs (x: integers, no derivative)
defvjp(np.bincount, None, lambda g, ans, x, weights=None, minlength=0: np.take(g, x))
defjvp(np.bincount, None, lambda t, ans, x, weights=None, minlength=0:
       np.bincount(x, t, np.size(ans)))
# max/min: g goes to the extreme entries, shared equally between ties (like JAX)
for _f in (np.max, np.min, np.amax, np.amin):
    defvjp(_f, lambda g, ans, a, axis=None, out=None, keepdims=False, initial=None, where=True:
           max_vjp(g, ans, a, axis, keepdims, initial, where))
    defjvp(_f, lambda t, ans, a, axis=None, out=None, keepdims=False, initial=None, where=True:
           max_jvp(t, ans, a, axis, keepdims, initial, where))
# var = sum |a - mean|^2 / (n - ddof):  a_bar = 2 g conj(a - mean) / (n - ddof)
defvjp(np.var, lambda g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
       where=True, mean=None, correction=None:
       var_vjp(g, a, axis, ddof, keepdims, where, correction))
defjvp(np.var, lambda t, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
       where=True, mean=None, correction=None:
       var_jvp(t, ans, a, axis, ddof, keepdims, where, correction))
# std = sqrt(var):  a_bar = var_vjp(g / (2 std))
defvjp(np.std, lambda g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
       where=True, mean=None, correction=None:
       var_vjp(g / (2 * ans), a, axis, ddof, keepdims, where, correction))
defjvp(np.std, lambda t, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False,
       where=True, mean=None, correction=None:
       var_jvp(t, ans * ans, a, axis, ddof, keepdims, where, correction) / (2 * ans))
# cumsum: a_bar_i = sum_{k >= i} g_k
defvjp(np.cumsum, lambda g, ans, a, axis=None, dtype=None, out=None: cumsum_vjp(g, a, axis))
defjvp(np.cumsum, lambda t, ans, a, axis=None, dtype=None, out=None: np.cumsum(t, axis))
# cumprod: a_bar_i = sum_{k >= i} g_k prod_{j <= k, j != i} a_j
defvjp(np.cumprod, lambda g, ans, a, axis=None, dtype=None, out=None: cumprod_vjp(g, a, axis))
defjvp(np.cumprod, lambda t, ans, a, axis=None, dtype=None, out=None:
       cumprod_jvp(t, ans, a, axis))
# average = sum(a w) / sum(w):  a_bar = g w / sum(w),  w_bar = g (a - avg) / sum(w)
defvjp(np.average,
       lambda g, ans, a, axis=None, weights=None, returned=False, keepdims=False:
       average_vjp(g, ans, a, axis, weights, returned, keepdims, 0),
       None,
       lambda g, ans, a, axis=None, weights=None, returned=False, keepdims=False:
       average_vjp(g, ans, a, axis, weights, returned, keepdims, 1))
defjvp(np.average,
       lambda t, ans, a, axis=None, weights=None, returned=False, keepdims=False:
       average_jvp(t, ans, a, axis, weights, returned, keepdims, 0),
       None,
       lambda t, ans, a, axis=None, weights=None, returned=False, keepdims=False:
       average_jvp(t, ans, a, axis, weights, returned, keepdims, 1))
# norm: |x|_2 -> g conj(x)/|x|; 1, inf, 'fro', 'nuc', 2 ... in the helper
defvjp(np.linalg.norm, lambda g, ans, x, ord=None, axis=None, keepdims=False:
       norm_vjp(g, ans, x, ord, axis, keepdims))
defjvp(np.linalg.norm, lambda t, ans, x, ord=None, axis=None, keepdims=False:
       norm_jvp(t, ans, x, ord, axis, keepdims))
# trace: a_bar = g on the offset diagonal, zeros elsewhere
defvjp(np.trace, lambda g, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None:
       trace_vjp(g, a, offset, axis1, axis2))
defjvp(np.trace, lambda t, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None:
       np.trace(t, offset, axis1, axis2))
