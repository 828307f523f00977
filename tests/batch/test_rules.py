"""Every family of batching rules against a Python loop over the batch (``loop.py``),
with the batch on different axes, batched and unbatched operands mixed, and the
per-example ranks of the operands differing (so broadcasting must pair the
per-example axes, never the batch axis with one of them)."""
import copy
import math

import numpy as np
import pytest

import s2s
from tests.batch.loop import assert_close, loop

rng = np.random.default_rng(7)
N = 4


def R(*shape):
    return rng.normal(size=shape)


def P(*shape):
    return rng.uniform(0.5, 2.0, size=shape)


# --- elementwise --------------------------------------------------------------------
def ew_binary(x, y):
    return x * y + x / (1.0 + y * y) - 2.0 ** x


def ew_unary(x):
    return np.sin(x) + np.exp(-x * x) + np.tanh(x) * np.abs(x) + np.arctan2(x, 2.0)


def ew_math(x, y):
    return math.sin(x) * math.exp(y) + math.hypot(x, y) + math.log(y, 2.0) + max(x, y)


def ew_where_clip(x, y):
    return np.where(x > y, x, y * 2.0) + np.clip(x, -0.5, 0.5) + np.maximum(x, 0.0)


def ew_compare(x, y):
    return (x < y) & (x > -1.0)


def ew_casts(x):
    return float(x) + int(x > 0.0) + abs(x) ** 2


def ew_inplace(x, y):
    z = x * 1.0
    z += y
    z *= 2.0
    z -= x
    return z


# --- reductions ---------------------------------------------------------------------
def red_all(x):
    return np.sum(x) + np.mean(x) * np.max(x) - np.min(x) + np.prod(x) * np.std(x)


def red_axes(x):
    return np.sum(x, axis=0) + np.mean(x, axis=-1) + np.max(x, axis=1) * np.var(x, axis=0)


def red_tuple_keepdims(x):
    return np.sum(x, axis=(0, 1), keepdims=True) + np.mean(x, axis=-1, keepdims=True)


def red_flat(x):
    return np.cumsum(x) + np.argmax(x) + np.cumprod(x, axis=0).ravel()


def red_norm(x):
    return np.linalg.norm(x) + np.linalg.norm(x, axis=-1)


def red_methods(x):
    return x.sum(axis=1) + x.mean() + x.max(axis=0)[0] + len(x) + x.shape[1]


# --- products -----------------------------------------------------------------------
def prod_dot(a, b):
    return np.dot(a, b)


def prod_matmul(a, b):
    return a @ b


def prod_inner_outer(a, b):
    return np.inner(a, b) + np.sum(np.outer(a, b)) + np.vdot(a, b)


def prod_tensordot(a, b):
    return np.tensordot(a, b, axes=([1, 0], [1, 0])) + np.tensordot(a, b, 2)


def prod_einsum(a, b):
    return np.einsum("ij,jk->ik", a, b) + np.einsum("ij,jk", a, b)


# --- indexing -----------------------------------------------------------------------
def idx_static(x):
    return x[0] + x[:, -1] * x[-1, 0] + x[..., 1][::-1] + x[:, None, 0][:, 0]


def idx_dynamic(x, i):
    return x[i] * 2.0 + x[i, 0]


def idx_vector(x, y):
    return x[1] * y[0] + np.sum(y[1:])


# --- shapes -------------------------------------------------------------------------
def sh_reshape(x):
    return np.reshape(x, (-1,)) + x.reshape(3, 2).T.ravel() + np.transpose(x).ravel()


def sh_axes(x):
    a = np.swapaxes(x, 0, 1)
    b = np.moveaxis(x, -1, 0)
    c = np.expand_dims(x, 0)
    return np.sum(a) + b[0, 0] + np.squeeze(c, axis=0)[1, 1] + np.squeeze(x[None])[0, 0]


def sh_join(x, y):
    c = np.concatenate([x, y])
    s = np.stack([x, y], axis=1)
    parts = np.split(c, 2)
    return c[::2] + s[:, 0] + parts[1] + np.flip(x) + np.hstack([x, y])[1:5]


def sh_join2d(a, b):
    return np.vstack([a, b]) + np.concatenate([a, b], axis=0) + np.stack([a, b])[0, 0]


def sh_vstack_rows(a, b):
    return np.vstack([a, b]) * 2.0 + np.hstack([a, b])[:3]


def sh_misc(a):
    return (np.trace(a) + np.diagonal(a)[0] + np.sort(a, axis=0)[0, 1] + np.diag(np.diag(a))[1, 1]
            + np.tile(a, 2)[0, 3] + np.repeat(a, 2)[3] + np.broadcast_to(a[0], (3, 2))[2, 1])


def linalg_stacked(a):
    s = a @ a.T + 3.0 * np.eye(2)
    return np.linalg.inv(s) + np.linalg.det(s) + np.linalg.cholesky(s) + np.linalg.eigvalsh(s)[0]


def linalg_solve(a, b):
    m = a @ a.T + 3.0 * np.eye(3)
    return np.linalg.solve(m, b)


# --- control flow -------------------------------------------------------------------
def cf_if(x):
    if x > 0.0:
        y = x * 2.0
        z = np.sin(x)
    else:
        y = -x
        z = 1.0
    return y + z


def cf_if_array(x):
    if np.sum(x) > 0.0:
        x = x * 2.0
    return x


def cf_if_unbatched(x, flag):
    if flag:
        return x * 2.0
    return x - 1.0


def cf_while(x):
    n = 0.0
    while x > 1.0:
        x = x / 2.0
        n = n + 1.0
    return n + x


def cf_while_nested_if(x):
    steps = 0.0
    while x > 1.0:
        if x > 4.0:
            x = x / 4.0
        else:
            x = x - 0.5
        steps = steps + 1.0
    return steps * 10.0 + x


def cf_for_rows(x):
    s = 0.0
    for row in x:
        s = s + row * row
    a, b = x[0], x[1]
    return s + a * b


def cf_for_batched_range(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * i
    for j in range(1, n + 1, 2):
        s = s - j
    return s


def cf_for_range(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * i + x[0]
    return y


def cf_masked_write(x):
    y = np.zeros(3)
    if x[0] > 0.0:
        y[1] = x[1]
    k = 0
    while k < 3 and x[k] < 1.0:
        y[k] = y[k] + x[k]
        k = k + 1
    return y


def cf_inplace_alias(x):
    k = x
    k += 1.0
    return k + x


def cf_while_inplace_array(v):
    s = np.zeros(2)
    i = 0.0
    while np.sum(s) < v[0] * 4.0:
        s += v
        i += 1.0
    return s, i


def reassigned_param(x, c):
    y = c * 2.0
    out = (y, c)
    c = x * 3.0
    return out, c


def containers(x, d):
    out = {"a": x * d["w"], "b": (x + d["b"], 2.0)}
    return out


CASES = [
    (ew_binary, (R(N), R(N)), 0),
    (ew_binary, (R(N, 3), R(3)), (0, None)),
    (ew_binary, (R(N), R(2, 3)), (0, None)),
    (ew_binary, (R(3), R(N, 2, 3)), (None, 0)),
    (ew_binary, (R(N), R(N, 3)), 0),
    (ew_unary, (R(N, 2),), 0),
    (ew_unary, (R(2, N),), 1),
    (ew_math, (R(N), P(N)), 0),
    (ew_math, (R(N), 1.5), (0, None)),
    (ew_where_clip, (R(N, 3), R(3)), (0, None)),
    (ew_where_clip, (R(N), R(N, 3)), 0),
    (ew_compare, (R(N, 3), R(N, 3)), 0),
    (ew_casts, (R(N),), 0),
    (ew_inplace, (R(N, 3), R(3)), (0, None)),
    (ew_inplace, (R(N, 3), R(N, 3)), 0),
    (red_all, (P(N, 2, 3),), 0),
    (red_axes, (R(N, 3, 3),), 0),
    (red_axes, (R(3, N, 3),), 1),
    (red_tuple_keepdims, (R(N, 2, 3),), 0),
    (red_flat, (R(N, 2, 3),), 0),
    (red_norm, (R(N, 3),), 0),
    (red_norm, (R(N, 2, 3),), 0),
    (red_methods, (R(N, 3, 3),), 0),
    (prod_dot, (R(N, 3), R(3)), (0, None)),
    (prod_dot, (R(N, 2, 3), R(3, 4)), (0, None)),
    (prod_dot, (R(2, 3), R(N, 3)), (None, 0)),
    (prod_dot, (R(N, 3), R(N, 3, 2)), 0),
    (prod_dot, (R(N), R(N, 3)), 0),
    (prod_dot, (R(N, 2, 3), R(N, 4, 3, 2)), 0),
    (prod_matmul, (R(N, 2, 3), R(3, 4)), (0, None)),
    (prod_matmul, (R(3), R(N, 3, 4)), (None, 0)),
    (prod_matmul, (R(N, 3), R(N, 3)), 0),
    (prod_matmul, (R(N, 5, 2, 3), R(3, 2)), (0, None)),
    (prod_matmul, (R(2, 3), R(N, 5, 3, 2)), (None, 0)),
    (prod_inner_outer, (R(N, 3), R(3)), (0, None)),
    (prod_inner_outer, (R(N, 3), R(N, 3)), 0),
    (prod_tensordot, (R(N, 2, 3), R(2, 3)), (0, None)),
    (prod_tensordot, (R(N, 2, 3), R(N, 2, 3)), 0),
    (prod_einsum, (R(N, 2, 3), R(3, 4)), (0, None)),
    (prod_einsum, (R(2, 3), R(3, N, 4)), (None, 1)),
    (idx_static, (R(N, 3, 3),), 0),
    (idx_dynamic, (R(N, 3, 2), np.array([0, 2, 1, 2])), 0),
    (idx_dynamic, (R(3, 2), np.array([0, 2, 1, 2])), (None, 0)),
    (idx_dynamic, (R(N, 3, 2), 1), (0, None)),
    (idx_vector, (R(N, 3), R(N, 3)), 0),
    (sh_reshape, (R(N, 2, 3),), 0),
    (sh_axes, (R(N, 2, 3),), 0),
    (sh_join, (R(N, 4), R(4)), (0, None)),
    (sh_join2d, (R(N, 2, 3), R(N, 2, 3)), 0),
    (sh_vstack_rows, (R(N, 3), R(N, 3)), 0),
    (sh_vstack_rows, (R(N, 3), R(3)), (0, None)),
    (sh_misc, (R(N, 2, 2),), 0),
    (linalg_stacked, (R(N, 2, 2),), 0),
    (linalg_solve, (R(N, 3, 3), R(N, 3)), 0),
    (linalg_solve, (R(3, 3), R(N, 3)), (None, 0)),
    (linalg_solve, (R(N, 3, 3), R(3)), (0, None)),
    (linalg_solve, (R(N, 3, 3), R(3, 2)), (0, None)),
    (linalg_solve, (R(3, 3), R(N, 3, 2)), (None, 0)),
    (cf_if, (R(8),), 0),
    (cf_if_array, (R(N, 3),), 0),
    (cf_if_unbatched, (R(N), True), (0, None)),
    (cf_while, (P(8) * 5.0,), 0),
    (cf_while_nested_if, (P(8) * 9.0,), 0),
    (cf_for_rows, (R(N, 3, 2),), 0),
    (cf_for_range, (R(N, 3),), 0),
    (cf_for_batched_range, (R(N), np.array([0, 3, 1, 5])), 0),
    (cf_masked_write, (R(8, 3),), 0),
    (cf_inplace_alias, (R(N),), 0),
    (cf_inplace_alias, (R(N, 2),), 0),
    (cf_while_inplace_array, (P(8, 2),), 0),
    (reassigned_param, (R(N), 1.5), (0, None)),
    (containers, (R(N, 2), {"w": R(2), "b": R(N)}), (0, {"w": None, "b": 0})),
]


@pytest.mark.parametrize("fn,args,in_axes", CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_batching_rule_matches_a_loop(fn, args, in_axes):
    want = loop(fn, copy.deepcopy(args), in_axes)  # fn may change its arguments in place
    got = s2s.vmap(fn, in_axes=in_axes)(*args)
    assert_close(got, want)


@pytest.mark.parametrize("out_axes", [1, -1, (0,)])
def test_out_axes(out_axes):
    x = R(N, 2, 3)
    fn = lambda x: np.sin(x) * 2.0  # noqa: E731
    got = s2s.vmap(fn, out_axes=out_axes if out_axes != (0,) else 0)(x)
    assert_close(got, loop(fn, (x,), 0, out_axes if out_axes != (0,) else 0))
