"""Custom functions whose rules are deliberately wrong (2x), so that a result shows
whether a transform used the rule (shared by the vmap and jit tests)."""
import numpy as np

import s2s


@s2s.custom_vjp
def f(x):
    return np.sin(x)


def f_fwd(x):
    return np.sin(x), np.cos(x)


def f_bwd(c, g):
    return (2.0 * c * g,)


f.defvjp(f_fwd, f_bwd)


@s2s.custom_jvp
def h(x):
    return np.exp(x) * 1.0


@h.defjvp
def h_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = np.exp(x)
    return y, 3.0 * y * t


def loss_vjp(x):
    return np.sum(f(x) * x)


def loss_jvp(x):
    return np.sum(h(x) * x)


def grad_vjp_closed(x):  # the rule's 2cos(x) in place of cos(x)
    return 2.0 * np.cos(x) * x + np.sin(x)


def grad_jvp_closed(x):  # the rule's 3exp(x) in place of exp(x)
    return 3.0 * np.exp(x) * x + np.exp(x)


@s2s.custom_vjp
def two(a, b):  # two outputs, two residuals; the rule's a-cotangent has a 2x term
    return a * b, a + b


two.defvjp(lambda a, b: ((a * b, a + b), (a, b)),
           lambda r, g: (2.0 * g[0] * r[1] + g[1], g[0] * r[0] + g[1]))


def loss_two(a, b):
    p, s = two(a, b)
    return np.sum(p * s)


def grad_two_closed(a, b):  # cotangents g = (s, p) = (a + b, a b) through the rule
    return 2.0 * (a + b) * b + a * b, (a + b) * a + a * b


def tangent_jvp(x):
    return s2s.jvp(loss_jvp, (x,), (np.ones_like(x),))[1]


def grad_sum_grad_jvp(x):
    return np.sum(s2s.grad(loss_jvp)(x))


def second_closed(x):  # d/dx (3 e^x x + e^x) with the rule's 3 e^x for h' again
    return 3.0 * np.exp(x) * x + 6.0 * np.exp(x)


def _ck_inner(v):
    return np.sin(v) * v


ck = s2s.checkpoint(_ck_inner)


def loss_ck(x):
    return np.sum(ck(x) * 2.0)


def grad_ck_closed(x):
    return 2.0 * (np.cos(x) * x + np.sin(x))


def sum_grad_ck(x):
    return np.sum(s2s.grad(loss_ck)(x))


def second_ck_closed(x):
    return 2.0 * (2.0 * np.cos(x) - np.sin(x) * x)


def loop_ck(x, n):
    for i in s2s.checkpoint_loop(range(n), levels=2):
        x = np.sin(x) * 1.1
    return np.sum(x)


@s2s.custom_jvp
def short(v):
    return np.sin(v)


@short.defjvp
def short_jvp(primals, tangents):  # a tangent one element short: the check's error
    (v,), (t,) = primals, tangents
    return np.sin(v), (np.cos(v) * t)[:-1]


def short_tangent(v):
    return s2s.jvp(short, (v,), (np.ones_like(v),))[1]



def _scaled(k, x):
    """``k * x ** 2`` with ``k`` in nondiff_argnums; the rule says ``3 k x`` (not ``2 k x``)."""
    return k * x * x


scaled = s2s.custom_vjp(_scaled, nondiff_argnums=(0,))


def scaled_fwd(k, x):
    return k * x * x, x


def scaled_bwd(k, x, g):
    return (3.0 * k * x * g,)


scaled.defvjp(scaled_fwd, scaled_bwd)


def loss_nondiff(x):
    return np.sum(scaled(2.0, x))
