"""Rules of the runtime helpers (``s2s/rules/runtime_rules.py``, ``runtime_rules_nonlinear.py``),
called directly.

Generated derivative code calls ``s2s_runtime`` helpers; differentiating it
again (jvp of grad: Hessian-vector products) needs their rules.  Oracles
(float64): central finite differences for the JVP templates
(``sum_i jvp_i(t_i) == (f(x + eps t) - f(x - eps t)) / (2 eps)``) and the
dot-product identity for the VJP templates (``<ct, J t> == sum_i <vjp_i(ct), t_i>``
with ``J t`` from finite differences).  Shape-only arguments must get zero
templates.  A coverage test keeps every helper that a registered template
calls either ruled or listed in ``NO_RULE_YET`` with a reason.
"""
import collections
import types

import numpy as np
import pytest

import s2s_runtime as rt
from s2s.rules import lookup
from s2s.rules.registry import all_rules
from s2s_runtime import tree_flatten, tree_unflatten

#: helpers that templates call but that have no rule yet (s2s raises NoRuleError)
NO_RULE_YET = {
    "batch_contract_vjp_vjp": "third order through a batched product (vmap): not written",
    "batch_contract_vjp_jvp": "third order through a batched product (vmap): not written",
    "cumprod_jvp": "JVP helper (reverse or forward over forward code): non-linear in a, "
                   "not written",
    "average_jvp": "JVP helper (reverse or forward over forward code): non-linear in weights, "
                   "not written",
    "batch_array_jvp": "the tangent of vmap's np.array of items, met by reverse mode over "
                       "forward mode of batched code (its nesting may hold None items): not "
                       "written",
}
#: helpers that only the second-order rules call (third order: not written)
NO_RULE_YET.update({name: "third order only (called by the second-order rules of the VJP "
                          "helpers)" for name in (
    "prod_hvp", "cumprod_hvp", "norm_vjp_dx", "norm_vjp_dans", "norm_vjp_dans_transpose",
    "dot_vjp_jvp", "dot_vjp_vjp", "dot_vjp_transpose", "inner_vjp_jvp", "inner_vjp_vjp",
    "inner_vjp_transpose", "tensordot_vjp_jvp", "tensordot_vjp_vjp", "tensordot_vjp_transpose",
    "linspace_vjp_transpose", "average_vjp_jvp", "average_vjp_vjp", "average_vjp_transpose",
    "multi_dot_vjp_dx", "multi_dot_jvp2",
    "einsum_vjp2", "einsum_jvp2")})

RNG = np.random.default_rng(0)
EPS = 1e-6
P = collections.namedtuple("P", "a b")


def rn(*shape):
    return RNG.standard_normal(shape) if shape else float(RNG.standard_normal())


# --- pytree arithmetic on float leaves ------------------------------------------------------
def _leaves(x):
    return tree_flatten(x)[0]


def _rand_like(x):
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [rn(*np.shape(v)) if np.ndim(v) else rn() for v in leaves])


def _axpy(x, eps, t):
    xl, tree = tree_flatten(x)
    return tree_unflatten(tree, [a + eps * b for a, b in zip(xl, _leaves(t))])


def _dot(a, b):
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb), (a, b)
    return sum(float(np.sum(np.asarray(x) * np.asarray(y))) for x, y in zip(la, lb))


def _shapes(x):
    return [np.shape(v) for v in _leaves(x)]


def _fd(fn, args, active, tans):
    plus, minus = list(args), list(args)
    for i, t in zip(active, tans):
        plus[i], minus[i] = _axpy(args[i], EPS, t), _axpy(args[i], -EPS, t)
    fp, fm = fn(*plus), fn(*minus)
    fl, tree = tree_flatten(fp)
    return tree_unflatten(tree, [(np.asarray(a) - np.asarray(b)) / (2 * EPS)
                                 for a, b in zip(fl, _leaves(fm))])


def _close(a, b):
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert np.shape(x) == np.shape(y), (np.shape(x), np.shape(y))
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-7)


def _zero(x, like):
    assert _shapes(x) == _shapes(like), (_shapes(x), _shapes(like))
    assert all(np.all(np.asarray(v) == 0) for v in _leaves(x))


def check(fn, args, active):
    """JVP (FD), VJP (dot-product identity) and zero templates of ``fn`` at ``args``."""
    rule = lookup(fn)
    assert rule is not None and not rule.nondiff, fn
    nparams = len(rule.vjps)
    assert len(rule.jvps) == nparams
    out = fn(*args)
    tans = [_rand_like(args[i]) for i in active]
    # JVP: the sum of the active contributions == FD along all of them at once
    contribs = [rule.jvps[i](t, out, *args) for i, t in zip(active, tans)]
    total = contribs[0]
    for c in contribs[1:]:
        total = _axpy(total, 1.0, c)
    _close(total, _fd(fn, args, active, tans))
    # VJP: <ct, J t> == sum_i <vjp_i(ct), t_i>
    ct = _rand_like(out)
    lhs = _dot(ct, _fd(fn, args, active, tans))
    rhs = 0.0
    for i, t in zip(active, tans):
        v = rule.vjps[i](ct, out, *args)
        assert _shapes(v) == _shapes(args[i]), (fn.__name__, i, _shapes(v), _shapes(args[i]))
        rhs += _dot(v, t)
    assert abs(lhs - rhs) <= 1e-6 * (1 + abs(lhs)), (fn.__name__, lhs, rhs)
    # every other parameter that the call passes has zero templates
    for i in range(min(nparams, len(args))):
        if i in active or rule.vjps[i] is None or not all(
                isinstance(v, (int, float, complex, np.ndarray, np.number))
                for v in _leaves(args[i])):  # an index (slices...): no zero of its shape
            continue
        _zero(rule.vjps[i](ct, out, *args), args[i])
        _zero(rule.jvps[i](_rand_like(out), out, *args), out)


# --- cases -----------------------------------------------------------------------------------
def _red_cases(helper):
    a3 = rn(2, 3, 4)
    return [
        (helper, (rn(3, 4), rn(3, 4), (), False), [0]),
        (helper, (rn(), rn(3, 4)), [0]),
        (helper, (rn(4), rn(3, 4), 0), [0]),
        (helper, (rn(3), rn(3, 4), -1), [0]),
        (helper, (rn(1, 4), rn(3, 4), 0, True), [0]),
        (helper, (rn(2), a3, (1, 2)), [0]),
        (helper, (rn(2, 1, 1), a3, (1, -1), True), [0]),
        (helper, (rn(1, 1), rn(3, 4), None, True), [0]),
    ]


def _matmul_cases():
    out = []
    for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                   ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((3,), (5, 3, 4))]:
        a, b = rn(*sa), rn(*sb)
        g = rn(*np.shape(a @ b))
        out.append((rt.matmul_vjp_lhs, (g, a, b), [0, 2]))
        out.append((rt.matmul_vjp_rhs, (g, a, b), [0, 1]))
    return out


def _max_cases():
    a = rn(3, 4)
    return [
        (rt.max_vjp, (rn(4), np.max(a, 0), a, 0), [0]),
        (rt.max_vjp, (rn(), np.max(a), a), [0]),
        (rt.max_vjp, (rn(3, 1), np.min(a, 1, keepdims=True), a, 1, True), [0]),
        (rt.max_jvp, (rn(3, 4), np.max(a, 0), a, 0), [0]),
        (rt.max_jvp, (rn(3, 4), np.max(a), a), [0]),
    ]


def _zeros_at(a, flat_positions):
    a.reshape(-1)[list(flat_positions)] = 0.0
    return a


def _with_zeros(shape, flat_positions):
    a = rn(*shape)
    a.reshape(-1)[list(flat_positions)] = 0.0
    return a


def _second_order_cases():
    """The VJP helpers that are not linear in their primal arguments: every argument that
    carries a derivative is active (the product helpers' own factor too: zero templates at
    run time)."""
    out = []
    # prod_vjp(g, a, axis, keepdims): 0, 1, 2 and 3 zeros in a reduced group
    for a in (rn(3, 4), _with_zeros((3, 4), [1]), _with_zeros((3, 4), [1, 5, 6, 10, 11]),
              _with_zeros((3, 4), [0, 4, 8, 9])):
        out += [(rt.prod_vjp, (rn(), a), [0, 1]),
                (rt.prod_vjp, (rn(4), a, 0), [0, 1]),
                (rt.prod_vjp, (rn(3, 1), a, -1, True), [0, 1])]
    out += [(rt.prod_vjp, (rn(2), _with_zeros((2, 3, 4), [3, 17]), (1, 2)), [0, 1]),
            (rt.prod_vjp, (rn(), 1.7), [0, 1]),
            (rt.prod_vjp, (rn(1, 1), rn(2, 3), None, True), [0, 1])]
    # prod_jvp(t, ans, a, axis, keepdims): linear in t, not in a (zeros too); ans: a type
    # (their own generator: the data of the cases after them stays what it was)
    own = np.random.default_rng(1)
    for a in (own.standard_normal((3, 4)), _zeros_at(own.standard_normal((3, 4)), [1]),
              _zeros_at(own.standard_normal((3, 4)), [1, 5, 6, 10, 11])):
        out += [(rt.prod_jvp, (own.standard_normal((3, 4)), np.prod(a), a), [0, 2]),
                (rt.prod_jvp, (own.standard_normal((3, 4)), np.prod(a, 0), a, 0), [0, 2]),
                (rt.prod_jvp, (own.standard_normal((3, 4)), np.prod(a, -1, keepdims=True), a,
                               -1, True), [0, 2])]
    # var_jvp(t, ans, a, axis, ddof, keepdims): bilinear in (t, a); ans: a type
    a = own.standard_normal((3, 4))
    out += [(rt.var_jvp, (own.standard_normal((3, 4)), np.var(a), a), [0, 2]),
            (rt.var_jvp, (own.standard_normal((3, 4)), np.var(a, 0, ddof=1), a, 0, 1), [0, 2]),
            (rt.var_jvp, (own.standard_normal((3, 4)), np.var(a, -1, keepdims=True), a, -1, 0,
                          True), [0, 2])]
    # cumprod_vjp(g, a, axis): zeros anywhere along the axis
    for a in (rn(3, 5), _with_zeros((3, 5), [2]), _with_zeros((3, 5), [1, 3, 5, 6, 14]),
              _with_zeros((3, 5), [0, 2, 4, 7, 8, 9, 12])):
        out += [(rt.cumprod_vjp, (rn(3, 5), a, 1), [0, 1]),
                (rt.cumprod_vjp, (rn(3, 5), a, 0), [0, 1]),
                (rt.cumprod_vjp, (rn(15), a), [0, 1])]
    # var_vjp(g, a, axis, ddof, keepdims)
    out += [(rt.var_vjp, (rn(), rn(3, 4)), [0, 1]),
            (rt.var_vjp, (rn(4), rn(3, 4), 0, 1), [0, 1]),
            (rt.var_vjp, (rn(3, 1), rn(3, 4), -1, 0, True), [0, 1]),
            (rt.var_vjp, (rn(2), rn(2, 3, 4), (1, 2), 2), [0, 1])]
    # norm_vjp(g, ans, x, ord, axis, keepdims): ans is an input of its own here.  The
    # max-type norms (their factor holds the mask [|x| == ans]) jump as soon as x or ans
    # leaves ans = norm(x): only g is active, and check() asserts that the templates of ans
    # and x give 0 (the derivative along ans = norm(x); test_rules_second_order checks it)
    v, m, b3 = rn(5), rn(3, 4), rn(2, 3, 4)
    for ord in (None, 2, 1, 0, np.inf, -np.inf, 3, 1.5, -1.5):
        active = [0] if ord in (np.inf, -np.inf) else [0, 1, 2]
        out.append((rt.norm_vjp, (rn(), np.linalg.norm(v, ord), v, ord), active))
        out.append((rt.norm_vjp, (rn(4), np.linalg.norm(m, ord, 0), m, ord, 0), active))
    out.append((rt.norm_vjp, (rn(3, 1), np.linalg.norm(m, 3, -1, True), m, 3, -1, True),
                [0, 1, 2]))
    out.append((rt.norm_vjp, (rn(), np.linalg.norm(b3), b3), [0, 1, 2]))
    for ord in ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf):
        active = [0] if ord in (1, -1, np.inf, -np.inf) else [0, 1, 2]
        out.append((rt.norm_vjp, (rn(), np.linalg.norm(m, ord), m, ord), active))
        out.append((rt.norm_vjp, (rn(3), np.linalg.norm(b3, ord, (0, 2)), b3, ord, (0, 2)),
                    active))
    out.append((rt.norm_vjp, (rn(1, 3, 1), np.linalg.norm(b3, "nuc", (-1, 0), True), b3,
                              "nuc", (-1, 0), True), [0, 1, 2]))
    out.append((rt.norm_vjp, (rn(), np.linalg.norm(m.T, 2), m.T, 2), [0, 1, 2]))
    # the bilinear products: dot_vjp(g, a, b, which), inner_vjp, tensordot_vjp(g, a, b, axes)
    for sa, sb in [((), (3,)), ((3,), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                   ((2, 3), (3, 4)), ((2, 3), (4, 3, 5))]:
        a, b = rn(*sa), rn(*sb)
        for which in (0, 1):
            out.append((rt.dot_vjp, (rn(*np.shape(np.dot(a, b))), a, b, which), [0, 1, 2]))
    for sa, sb in [((), (3,)), ((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (3,))]:
        a, b = rn(*sa), rn(*sb)
        for which in (0, 1):
            out.append((rt.inner_vjp, (rn(*np.shape(np.inner(a, b))), a, b, which), [0, 1, 2]))
    for sa, sb, axes in [((2, 3), (2, 3), 2), ((2, 3), (3, 4), 1), ((2, 3, 4), (3, 4, 2), 2),
                         ((2, 3, 4), (4, 3), ([1, 2], [1, 0])), ((3,), (2,), 0)]:
        a, b = rn(*sa), rn(*sb)
        for which in (0, 1):
            shape = np.shape(np.tensordot(a, b, axes))
            out.append((rt.tensordot_vjp, (rn(*shape), a, b, axes, which), [0, 1, 2]))
    # linspace_vjp(g, start, stop, num, endpoint, retstep, axis, which): start/stop shapes only
    for which in (0, 1):
        out += [(rt.linspace_vjp, (rn(5), 0.5, 2.0, 5, True, False, 0, which), [0]),
                (rt.linspace_vjp, (rn(4), 0.5, 2.0, 4, False, False, 0, which), [0]),
                (rt.linspace_vjp, (rn(1), 0.5, 2.0, 1, True, False, 0, which), [0]),
                (rt.linspace_vjp, (rn(5, 3), rn(3), 1.5, 5, True, False, 0, which), [0]),
                (rt.linspace_vjp, (rn(2, 3, 4), rn(3), rn(2, 1), 4, True, False, -1, which),
                 [0]),
                (rt.linspace_vjp, (rn(2, 4, 3), rn(3), rn(2, 3), 4, True, False, 1, which),
                 [0])]
    # average_vjp(g, ans, a, axis, weights, returned, keepdims, which)
    a, w, w1 = rn(3, 4), 0.5 + RNG.random((3, 4)), 0.5 + RNG.random(4)
    out += [(rt.average_vjp, (rn(), np.average(a), a), [0, 1, 2]),
            (rt.average_vjp, (rn(4), np.average(a, 0), a, 0), [0, 1, 2])]
    for which in (0, 1):
        out += [(rt.average_vjp, (rn(), np.average(a, None, w), a, None, w, False, False, which),
                 [0, 1, 2, 4]),
                (rt.average_vjp, (rn(3), np.average(a, 1, w), a, 1, w, False, False, which),
                 [0, 1, 2, 4]),
                (rt.average_vjp, (rn(3), np.average(a, -1, w1), a, -1, w1, False, False, which),
                 [0, 1, 2, 4]),
                (rt.average_vjp, (rn(1, 4), np.average(a, 0, w1[:3], keepdims=True), a, 0,
                                  w1[:3], False, True, which), [0, 1, 2, 4])]
    return out


x5, x34 = rn(5), rn(3, 4)
CASES = [
    (rt.owned, (rn(3, 4),), [0]), (rt.owned, (1.5,), [0]),
    (rt.unbroadcast, (rn(3, 4), rn(4)), [0]),
    (rt.unbroadcast, (rn(3, 4), rn(1, 4)), [0]),
    (rt.unbroadcast, (rn(2, 3, 4), rn(3, 1)), [0]),
    (rt.unbroadcast, (rn(3), 1.5), [0]),
    (rt.unbroadcast, (rn(3, 4), rn(3, 4)), [0]),
    (rt.broadcast_like, (rn(4), rn(3, 4)), [0]),
    (rt.broadcast_like, (rn(3, 1), rn(2, 3, 4)), [0]),
    (rt.broadcast_like, (rn(), rn(3)), [0]),
    (rt.broadcast_like, (rn(3), rn(3)), [0]),
    (rt.unreduce, (rn(4), x34, 0), [0]),
    (rt.unreduce, (rn(3), x34, -1), [0]),
    (rt.unreduce, (rn(), x34), [0]),
    (rt.unreduce, (rn(1, 4), x34, 0, True), [0]),
    (rt.unreduce, (rn(2), rn(2, 3, 4), (1, 2)), [0]),
    (rt.unreduce, (rn(), 2.0), [0]),
    (rt.getitem_vjp, (rn(), x5, 2), [0]),
    (rt.getitem_vjp, (rn(3), x5, slice(1, 4)), [0]),
    (rt.getitem_vjp, (rn(3), x34, (1, slice(0, 3))), [0]),
    (rt.getitem_vjp, (rn(), x34, (2, -1)), [0]),
    (rt.getitem_vjp, (rn(4), x5, [0, 2, 0, 4]), [0]),
    (rt.getitem_vjp, (rn(3), x34, (np.array([0, 1, 0]), np.array([1, 1, 1]))), [0]),
    (rt.getitem_vjp, (rn(2, 4), x34, np.array([True, False, True])), [0]),
    (rt.getitem_vjp, (rn(), x34, (Ellipsis, None, 0, 1)), [0]),
    (rt.getitem_vjp, (rn(3), [1.0, rn(3)], 1), [0]),
    (rt.getitem_vjp, ((rn(), rn(2)), (1.0, rn(2), 3.0), slice(0, 2)), [0]),
    (rt.sum_vjp, (rn(1, 4), rn(3, 4), 0, True, np.array([True, False, True, True])), [0]),
    (rt.mean_vjp, (rn(3, 1), rn(3, 4), 1, True, np.array([True, False, True, True])), [0]),
    (rt.concatenate_vjp, (rn(7), [rn(3), rn(4)]), [0]),
    (rt.concatenate_vjp, (rn(2, 5), [rn(2, 2), rn(2, 3)], 1), [0]),
    (rt.concatenate_vjp, (rn(7), [rn(2, 2), rn(3)], None), [0]),
    (rt.stack_vjp, (rn(2, 3), [rn(3), rn(3)]), [0]),
    (rt.stack_vjp, (rn(3, 2), (rn(3), rn(3)), 1), [0]),
    (rt.stack_vjp, (rn(3, 2), [rn(3), rn(3)], -1), [0]),
    (rt.stack_vjp, (rn(3, 2), rn(2, 3), 1), [0]),
    (rt.split_vjp, ([rn(2), rn(2), rn(2)], rn(6), 3), [0]),
    (rt.split_vjp, ([rn(2, 1), rn(2, 3), rn(2, 2)], rn(2, 6), [1, 4], 1), [0]),
    (rt.unpack_vjp, ((rn(), rn(3)), (1.0, rn(3))), [0]),
    (rt.unpack_vjp, ((rn(3), rn(3)), rn(2, 3)), [0]),
    (rt.getattr_vjp, (rn(3), P(1.0, rn(3)), "b"), [0]),
    (rt.array_vjp, (rn(2, 3), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), [0]),
    (rt.array_vjp, (rn(2, 3), [rn(3), rn(3)]), [0]),
    (rt.cast_vjp, (np.float64(1.3), 2.0), [0]),
    (rt.cast_vjp, (1.3, np.float64(2.0)), [0]),
    (rt.cast_jvp, (1.3, np.float64(2.0)), [0]),
    (rt.sum_builtin_vjp, (rn(3), [rn(3), 1.0, rn(1)]), [0]),
    (rt.sum_builtin_jvp, ([rn(3), 2.0], rn(3)), [0]),
    (rt.add, (rn(3), rn(3)), [0, 1]),
    (rt.add, (rn(3, 4), rn(4)), [0, 1]),
    (rt.add, (2.0, rn(3)), [0, 1]),
    (rt.densify, (rn(3), rn(3)), [0]),
    (rt.densify, ((rn(3), 2.0), (rn(3), 1.0)), [0]),
    (rt.cumsum_vjp, (rn(3, 4), x34, 1), [0]),
    (rt.cumsum_vjp, (rn(12), x34), [0]),
    (rt.trace_vjp, (rn(), rn(3, 3)), [0]),
    (rt.trace_vjp, (rn(), rn(3, 4), 1), [0]),
    (rt.trace_vjp, (rn(2), rn(2, 3, 3), 0, 1, 2), [0]),
    (rt.trace_vjp, (rn(3), rn(3, 3)), [0]),
    (rt.trace_vjp, (rn(2, 2), rn(2, 3, 3), 1, 1, 2), [0]),
    (rt.sort_vjp, (rn(5), rn(5)), [0]),
    (rt.sort_vjp, (rn(3, 4), rn(3, 4), 0), [0]),
    (rt.sort_vjp, (rn(12), rn(3, 4), None), [0]),
    (rt.sort_jvp, (rn(5), rn(5)), [0]),
    (rt.sort_jvp, (rn(3, 4), rn(3, 4), 0), [0]),
    (rt.sort_jvp, (rn(3, 4), rn(3, 4), None), [0]),
    (rt.astype_jvp, (rn(2, 3), rn(2, 3)), [0]),
    (rt.array_jvp, ([1.0, rn(), 2.0], rn(3), [0.5, 1.5, 2.5]), [0]),
    (rt.array_jvp, (rn(2, 3), rn(2, 3), rn(2, 3), False), [0]),
    (rt.transpose_vjp, (rn(4, 3, 2), rn(2, 3, 4)), [0]),
    (rt.transpose_vjp, (rn(3, 2, 4), rn(2, 3, 4), (1, 0, -1)), [0]),
    (rt.transpose_vjp, (rn(4, 2, 3), rn(2, 3, 4), (2, 0, 1)), [0]),
    (rt.reshape_vjp, (rn(6), rn(2, 3)), [0]),
    (rt.reshape_vjp, (rn(3, 2), rn(2, 3), "F"), [0]),
    (rt.reshape_vjp, (rn(6), rn(2, 3), "K"), [0]),
    (rt.astype_vjp, (rn(2, 3), rn(2, 3)), [0]),
    (rt.diag_vjp, (rn(3, 3), rn(3)), [0]),
    (rt.diag_vjp, (rn(4, 4), rn(3), 1), [0]),
    (rt.diag_vjp, (rn(3), rn(3, 3)), [0]),
    (rt.diag_vjp, (rn(2), rn(3, 3), -1), [0]),
    (rt.tile_vjp, (rn(2, 6), rn(2, 3), 2), [0]),
    (rt.tile_vjp, (rn(2, 2, 6), rn(2, 3), (2, 1, 2)), [0]),
    (rt.repeat_vjp, (rn(6), rn(3), 2), [0]),
    (rt.repeat_vjp, (rn(3, 3), rn(2, 3), [1, 2], 0), [0]),
    (rt.repeat_vjp, (rn(12), rn(2, 3), 2), [0]),
    (rt.take_vjp, (rn(3), rn(5), [0, 2, 2]), [0]),
    (rt.take_vjp, (rn(3, 2), rn(3, 4), [1, 1], 1), [0]),
    (rt.take_vjp, (rn(2), rn(2, 3), [7, -1], None, "wrap"), [0]),
    (rt.take_vjp, (rn(2), rn(5), [9, -3], None, "clip"), [0]),
    (rt.full_vjp, (rn(3, 4), 2.0), [0]),
    (rt.full_vjp, (rn(3, 4), rn(4)), [0]),
    (rt.hstack_vjp, (rn(5), [rn(2), rn(3)]), [0]),
    (rt.hstack_vjp, (rn(2, 4), [rn(2, 1), rn(2, 3)]), [0]),
    (rt.vstack_vjp, (rn(2, 3), [rn(3), rn(3)]), [0]),
    (rt.vstack_vjp, (rn(3, 3), [rn(1, 3), rn(2, 3)]), [0]),
    # the transposes (third order)
    (rt.getitem_vjp_transpose, (rn(5), rn(4), x5, [0, 2, 0, 4]), [0]),
    (rt.getitem_vjp_transpose, (rn(3, 4), rn(3), x34, (1, slice(0, 3))), [0]),
    (rt.getitem_vjp_transpose, ([rn(), rn(3)], rn(3), [1.0, rn(3)], 1), [0]),
    (rt.unreduce_transpose, (rn(3, 4), rn(4), x34, 0), [0]),
    (rt.unreduce_transpose, (rn(3, 4), rn(), x34), [0]),
    (rt.unreduce_transpose, (rn(2, 3, 4), rn(2, 1, 1), rn(2, 3, 4), (1, 2), True), [0]),
    (rt.trace_vjp_transpose, (rn(2, 3, 3), rn(2), 0, 1, 2), [0]),
    (rt.trace_vjp_transpose, (rn(3, 3), rn(2), 1), [0]),
    (rt.stack_vjp_transpose, ([rn(3), rn(3)], rn(3, 2), [rn(3), rn(3)], 1), [0]),
    (rt.stack_vjp_transpose, (rn(2, 3), rn(3, 2), rn(2, 3), 1), [0]),
    (rt.concatenate_vjp_transpose, ([rn(2, 2), rn(2, 3)], rn(2, 5), [rn(2, 2), rn(2, 3)], 1),
     [0]),
    (rt.concatenate_vjp_transpose, ([rn(2, 2), rn(3)], rn(7), [rn(2, 2), rn(3)], None), [0]),
    (rt.array_vjp_transpose, ([rn(3), rn(3)], rn(2, 3), [rn(3), rn(3)]), [0]),
    (rt.unpack_vjp_transpose, (rn(2, 3), (rn(3), rn(3)), rn(2, 3)), [0]),
    (rt.unpack_vjp_transpose, ((1.0, rn(3)), (rn(), rn(3)), (1.0, rn(3))), [0]),
    (rt.hstack_vjp_transpose, ([rn(2, 1), rn(2, 3)], rn(2, 4), [rn(2, 1), rn(2, 3)]), [0]),
    (rt.vstack_vjp_transpose, ([rn(3), rn(3)], rn(2, 3), [rn(3), rn(3)]), [0]),
] + _red_cases(rt.sum_vjp) + _red_cases(rt.mean_vjp) + _red_cases(rt.unreduce) \
  + _matmul_cases() + _max_cases() + _second_order_cases()


def _id(case):
    return case[0].__name__


# added after the others, so that their random inputs stay as they were
CASES += [
    (rt.add_at, (rn(5), rn(), x5, 2), [0, 1]),
    (rt.add_at, (rn(3, 4), rn(3), x34, (slice(None), 1)), [0, 1]),
    (rt.add_at, (rn(5), rn(4), x5, [0, 2, 0, 4]), [0, 1]),
    (rt.add_at, ((rn(2), rn(3)), rn(3), (rn(2), rn(3)), 1), [0, 1]),
    (rt.add_vjp, (rn(2, 3), rn(3)), [0]),
    (rt.add_vjp, (rn(3, 4), rn(3, 1)), [0]),
    (rt.add_vjp, ((rn(2), rn(3)), (rn(2), rn(3))), [0]),
    (rt.add_jvp, (rn(3), rn(2, 3)), [0]),
    (rt.add_jvp, (rn(), rn(4)), [0]),
    (rt.add_jvp, ((rn(2), 1.5), (rn(2), 2.0)), [0]),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{_id(c)}-{i}" for i, c in enumerate(CASES)])
def test_templates_against_finite_differences(case):
    fn, args, active = case
    check(fn, args, active)


#: the modules that hold the runtime helpers' rules
RUNTIME_RULE_MODULES = ("s2s.rules.runtime_rules", "s2s.rules.runtime_rules_nonlinear")


def test_every_ruled_helper_has_cases():
    tested = {c[0] for c in CASES}
    ruled = {r.fn for r in all_rules() if not r.nondiff and
             getattr(r.fn, "__module__", "").startswith("s2s_runtime") and
             next(t for t in r.vjps if t is not None).__module__ in RUNTIME_RULE_MODULES}
    assert ruled - tested == set(), sorted(f.__name__ for f in ruled - tested)


def test_nondiff_helpers():
    for fn in (rt.grad_seed, rt.zeros_like, rt.clip_inside):
        assert lookup(fn) is not None and lookup(fn).nondiff


def test_none_entries_are_zero():
    x = rn(6)
    rule = lookup(rt.split_vjp)
    out = rt.split_vjp([None, rn(2), None], x, 3)
    t = rule.jvps[0]([rn(2), None, None], out, [None, rn(2), None], x, 3)
    np.testing.assert_array_equal(t[2:], 0)
    dense = lookup(rt.densify).jvps[0]((None, rn(3)), None, (None, rn(3)), (rn(2), rn(3)))
    np.testing.assert_array_equal(dense[0], np.zeros(2))
    ct = lookup(rt.concatenate_vjp).vjps[0]([None, np.ones(4)], None, rn(7), [rn(3), rn(4)], 0)
    np.testing.assert_array_equal(ct, [0, 0, 0, 1, 1, 1, 1])


def test_add_passes_container_tangents_and_cotangents_through():
    t = (rn(2), rn(3))
    assert rt.add_jvp(t, (rn(2), rn(3))) is t  # summed by add itself in forward mode
    # the VJP of add passes container cotangents through
    ct = (rn(2), rn(3))
    assert lookup(rt.add).vjps[0](ct, None, (rn(2), rn(3)), (rn(2), rn(3))) is ct


def _runtime_helpers_in_templates():
    found = {}
    for rule in all_rules():
        for t in tuple(rule.vjps) + tuple(rule.jvps):
            if t is None:
                continue
            for name in t.__code__.co_names:
                obj = t.__globals__.get(name)
                if isinstance(obj, types.ModuleType) and obj.__name__.startswith("s2s_runtime"):
                    for attr in t.__code__.co_names:
                        sub = getattr(obj, attr, None)
                        if callable(sub) and getattr(sub, "__module__", "").startswith(
                                "s2s_runtime"):
                            found[sub] = rule.fn
                elif callable(obj) and (getattr(obj, "__module__", None) or "").startswith(
                        "s2s_runtime"):
                    found[obj] = rule.fn
    return found


def test_coverage_every_helper_in_a_template_has_a_rule():
    helpers = _runtime_helpers_in_templates()
    assert len(helpers) > 40  # the scan sees the templates
    problems = []
    for h in helpers:
        rule = lookup(h)
        if h.__name__ in NO_RULE_YET:
            if rule is not None:
                problems.append(f"{h.__name__} has a rule now: drop it from NO_RULE_YET")
            continue
        if rule is None:
            problems.append(f"{h.__module__}.{h.__name__} has no rule (add one, or list it in "
                            "NO_RULE_YET with a reason)")
        elif not rule.nondiff:
            n = len(rule.vjps)
            if len(rule.jvps) != n or any((v is None) != (j is None)
                                          for v, j in zip(rule.vjps, rule.jvps)):
                problems.append(f"{h.__name__}: VJP and JVP templates do not pair up")
    assert not problems, problems
    stale = set(NO_RULE_YET) - {h.__name__ for h in helpers}
    assert not stale, f"NO_RULE_YET names helpers no template calls: {sorted(stale)}"


def test_generated_helpers_have_rules():
    # called by the transforms themselves (not from templates)
    for fn in (rt.grad_seed, rt.zeros_like, rt.densify, rt.add, rt.unpack_vjp):
        assert lookup(fn) is not None, fn


def test_helpers_that_return_containers_are_container_rules():
    """Reverse mode over gradient code accumulates the cotangent of a container with
    rt.add, of a number or array with `+`: a helper whose result may be a tuple, list or
    dict must say so (``container_result``), or `+` concatenates the cotangents of grad of
    grad (np.array([t, 2 * t]) gave a wrong second derivative)."""
    x3 = rn(3)
    calls = [
        (rt.add, ((1.0, x3), (2.0, x3))), (rt.densify, ((None, x3), (1.0, x3))),
        (rt.getitem_vjp, (x3, [1.0, x3], 1)), (rt.unpack_vjp, ((rn(), x3), (1.0, x3))),
        (rt.getattr_vjp, (x3, P(1.0, x3), "b")), (rt.array_vjp, (rn(2), [1.0, 2.0])),
        (rt.sum_builtin_vjp, (rn(3), [x3, x3])), (rt.concatenate_vjp, (rn(6), [x3, x3])),
        (rt.stack_vjp, (rn(2, 3), [x3, x3])), (rt.hstack_vjp, (rn(6), [x3, x3])),
        (rt.vstack_vjp, (rn(2, 3), [x3, x3])),
        (rt.getitem_vjp_transpose, ([[1.0, x3], 2.0], x3, [[1.0, x3], 2.0], 0)),
        (rt.unpack_vjp_transpose, ((1.0, x3), (rn(), x3), (1.0, x3))),
    ]
    for fn, args in calls:
        assert isinstance(fn(*args), (tuple, list, dict)), fn.__name__
        assert lookup(fn).container_result, fn.__name__


def test_add_at_is_add_of_getitem_vjp():
    """``add_at`` (reverse mode's accumulation of a read's adjoint) gives what
    ``add(acc, getitem_vjp(g, x, index))`` gives, on its fast paths and off them, and
    leaves ``acc`` as it was."""
    x = rn(6)
    cases = [(rn(6), rn(), x, 3), (rn(6), rn(2), x, slice(1, 3)),
             (rn(6), rn(3), x, [1, 1, 4]), (rn(6), rn(6) + 0j, x, Ellipsis),
             ((None, rn(3)), rn(2), (rn(2), rn(3)), 0), ([rn(2), 1.0], 2.0, [rn(2), 1.5], 1)]
    for acc, g, like, index in cases:
        before = [np.copy(a) for a in acc] if isinstance(acc, (tuple, list)) else acc.copy()
        got = rt.add_at(acc, g, like, index)
        want = rt.add(rt.densify(acc, like), rt.getitem_vjp(g, like, index))
        assert type(got) is type(want)
        for a, b in zip(np.atleast_1d(got) if isinstance(got, np.ndarray) else got,
                        np.atleast_1d(want) if isinstance(want, np.ndarray) else want):
            np.testing.assert_array_equal(a, b)
        if isinstance(acc, np.ndarray):
            np.testing.assert_array_equal(acc, before)


def test_max_vjp_of_an_array_with_nan_is_zero_without_warnings():
    """No entry equals a NaN maximum: the cotangent is zero (the fast path for a whole
    float64 array divides by at least 1)."""
    import warnings

    a = np.array([1.0, np.nan, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rt.max_vjp(1.0, np.max(a), a)
    np.testing.assert_array_equal(got, np.zeros(3))
    b = np.array([1.0, 3.0, 3.0])
    np.testing.assert_array_equal(rt.max_vjp(2.0, 3.0, b), [0.0, 1.0, 1.0])
