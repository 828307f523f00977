"""The VJP templates of the rule table, called directly as Python functions.

Oracle: central finite differences in float64 through the dot-product
identity  Re<g, J v> = Re<vjp(g), v>  (the bilinear pairing Re(sum(a * b)),
no conjugation, which is JAX's convention: a holomorphic f pulls g back to
g f'(x); vdot(a, b) = sum(conj(a) b) pulls it back to conj(g b) for a).
Plus closed forms for ties (max/min) and zeros (prod/cumprod).
"""
import dis
import inspect
import math
import operator
import types

import numpy as np
import pytest

import s2s.rules  # noqa: F401  (registers every rule)
from s2s.rules import lookup
from s2s.rules.registry import all_rules
from s2s_runtime import build

RNG = np.random.default_rng(0)


def rn(*shape, lo=None, hi=None, cplx=False):
    """Random float64 (or complex128) array; uniform in [lo, hi] when given."""
    def one():
        if lo is None:
            return RNG.standard_normal(shape)
        return RNG.uniform(lo, hi, shape)
    x = one() + 1j * one() if cplx else one()
    return x if shape else float(x) if not cplx else complex(x)


# --- the finite-difference checker --------------------------------------------
def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [leaf for v in x for leaf in _leaves(v)]
    return [x]


def _rebuild(x, it):
    if isinstance(x, (list, tuple)):
        return type(x)(_rebuild(v, it) for v in x)
    return next(it)


def _rand_like(x, rng):
    def one(v):
        shape = np.shape(v)
        r = rng.standard_normal(shape)
        if np.iscomplexobj(v):
            r = r + 1j * rng.standard_normal(shape)
        return r if shape else r[()]
    return _rebuild(x, iter([one(v) for v in _leaves(x)]))


def _axpy(x, s, v):
    return _rebuild(x, iter([a + s * b for a, b in zip(_leaves(x), _leaves(v))]))


def _pair(a, b):
    """Re(sum(a * b)) over matching leaves; a None leaf is zero."""
    total = 0.0
    for u, w in zip(_leaves(a), _leaves(b)):
        if u is not None:
            total += float(np.real(np.sum(np.asarray(u) * np.asarray(w))))
    return total


def check_vjp(fn, args, kwargs=None, argnums=None, eps=1e-6, rtol=1e-6, atol=1e-8, g=None):
    """Dot-product test of every registered template of ``fn`` at ``args``."""
    rule = lookup(fn)
    assert rule is not None and not rule.nondiff, f"no VJP registered for {fn}"
    kwargs = dict(kwargs or {})
    names = rule.param_names()
    ans = fn(*args, **kwargs)
    rng = np.random.default_rng(1)
    if g is None:
        g = _rand_like(ans, rng)
    checked = 0
    for i, template in enumerate(rule.vjps):
        if template is None or (argnums is not None and i not in argnums):
            continue
        if i < len(args):
            x = args[i]
        elif names[i] in kwargs:
            x = kwargs[names[i]]
        else:
            continue

        def at(xi):
            a, k = list(args), dict(kwargs)
            if i < len(args):
                a[i] = xi
            else:
                k[names[i]] = xi
            return fn(*a, **k)

        ct = template(g, ans, *args, **kwargs)
        for c, xl in zip(_leaves(ct), _leaves(x)):
            if c is None:
                continue
            assert np.shape(c) == np.shape(xl), (np.shape(c), np.shape(xl))
            if not np.iscomplexobj(xl):
                assert not np.iscomplexobj(c), "complex cotangent for a real input"
            if isinstance(c, np.ndarray):
                assert c.flags.writeable, "read-only cotangent"
        v = _rand_like(x, rng)
        plus, minus = at(_axpy(x, eps, v)), at(_axpy(x, -eps, v))
        fd = _rebuild(plus, iter([(p - m) / (2 * eps) for p, m in
                                  zip(_leaves(plus), _leaves(minus))]))
        lhs, rhs = _pair(ct, v), _pair(g, fd)
        scale = max(abs(lhs), abs(rhs), 1.0)
        assert abs(lhs - rhs) <= atol + rtol * scale, \
            f"{getattr(fn, '__name__', fn)} arg {i}: vjp {lhs!r} vs finite differences {rhs!r}"
        checked += 1
    assert checked, "nothing was checked"


# --- cases: (fn, args, kwargs) ------------------------------------------------
A = rn(3, 4, 5)
M = rn(4, 3)
Z = rn(3, 4, cplx=True)
P = rn(3, 4, 5, lo=0.5, hi=1.5)
P0 = P.copy()
P0[1, 2, 3] = 0.0          # one zero in a lane
P0[2, 0, 1:3] = 0.0        # two zeros in a lane
TIES = np.array([[1.0, 3.0, 3.0, 0.5], [2.0, -1.0, 2.0, 0.0]])   # 2-way ties
AXES = [dict(), dict(axis=1), dict(axis=-1, keepdims=True), dict(axis=(0, 2)),
        dict(keepdims=True), dict(axis=(-1, 0), keepdims=True)]

RED = []
for kw in AXES:
    RED += [(np.sum, (A,), kw), (np.mean, (A,), kw), (np.prod, (P,), kw), (np.prod, (P0,), kw),
            (np.max, (A,), kw), (np.min, (A,), kw), (np.amax, (A,), kw), (np.amin, (A,), kw),
            (np.var, (A,), kw), (np.std, (A,), kw)]
RED += [
    (np.sum, (2.5,), {}), (np.sum, (Z,), dict(axis=0)), (np.sum, (A,), dict(where=A > 0)),
    (np.mean, (Z,), {}), (np.mean, (A,), dict(axis=1, where=A > -0.5)),
    (np.prod, (Z,), dict(axis=1)), (np.prod, (np.array([0.0, 2.0, 3.0]),), {}),
    (np.max, (TIES,), dict(axis=1)), (np.min, (TIES,), dict(axis=1)),
    (np.max, (A,), dict(axis=1, initial=-10.0)),
    (np.var, (A,), dict(axis=1, ddof=1)), (np.std, (A,), dict(ddof=1)),
    (np.var, (Z,), dict(axis=0)), (np.std, (Z,), {}), (np.var, (A,), dict(correction=1)),
    (np.cumsum, (A,), {}), (np.cumsum, (A,), dict(axis=1)), (np.cumsum, (Z,), dict(axis=-1)),
    (np.cumsum, (2.0,), {}),
    (np.cumprod, (P,), {}), (np.cumprod, (P0,), dict(axis=2)), (np.cumprod, (P0,), dict(axis=0)),
    (np.cumprod, (P0,), {}), (np.cumprod, (Z,), dict(axis=1)),
    (np.average, (A,), {}), (np.average, (A,), dict(axis=1)),
    (np.average, (A,), dict(axis=1, weights=rn(4, lo=0.5, hi=2))),
    (np.average, (A,), dict(axis=-1, weights=rn(5, lo=0.5, hi=2), keepdims=True)),
    (np.average, (A,), dict(weights=rn(3, 4, 5, lo=0.5, hi=2))),
    (np.average, (Z, 0, rn(3, lo=0.5, hi=2)), {}),
    (np.trace, (M,), {}), (np.trace, (rn(4, 4),), dict(offset=1)),
    (np.trace, (rn(4, 4),), dict(offset=-2)), (np.trace, (A,), dict(axis1=2, axis2=1)),
    (np.trace, (Z,), {}),
]
NORMS = [
    ((rn(5),), {}), ((rn(5),), dict(ord=1)), ((rn(5),), dict(ord=np.inf)),
    ((rn(5),), dict(ord=-np.inf)), ((rn(5),), dict(ord=3)), ((rn(5),), dict(ord=0)),
    ((A,), {}), ((A,), dict(axis=1)), ((A,), dict(axis=-1, keepdims=True)),
    ((A,), dict(axis=0, ord=1)), ((A,), dict(axis=2, ord=np.inf)),
    ((M,), {}), ((M,), dict(ord="fro")), ((M,), dict(ord="nuc")), ((M,), dict(ord=2)),
    ((M,), dict(ord=-2)), ((M,), dict(ord=1)), ((M,), dict(ord=-1)), ((M,), dict(ord=np.inf)),
    ((M,), dict(ord=-np.inf)), ((A,), dict(axis=(0, 2))), ((A,), dict(axis=(2, 0), ord=1)),
    ((A,), dict(axis=(1, 2), ord="nuc", keepdims=True)), ((A,), dict(keepdims=True)),
    ((rn(5, cplx=True),), {}), ((Z,), dict(ord="fro")), ((rn(5, cplx=True),), dict(ord=1)),
    ((Z,), dict(ord=2)), ((Z,), dict(axis=1, ord=np.inf)),
]
RED += [(np.linalg.norm, a, k) for a, k in NORMS]

PROD = []
for cplx in (False, True):
    def r(*s, c=cplx):
        return rn(*s, cplx=c)
    PROD += [
        (np.dot, (r(), r(3, 4)), {}), (np.dot, (r(3, 4), r()), {}), (np.dot, (r(4), r(4)), {}),
        (np.dot, (r(3, 4), r(4)), {}), (np.dot, (r(4), r(4, 2)), {}),
        (np.dot, (r(3, 4), r(4, 2)), {}), (np.dot, (r(2, 3, 4), r(4, 5)), {}),
        (np.dot, (r(2, 3, 4), r(5, 4, 2)), {}), (np.dot, (r(3, 4), r(2, 4, 5)), {}),
        (np.vdot, (r(4), r(4)), {}), (np.vdot, (r(2, 3), r(3, 2)), {}),
        (np.inner, (r(4), r(4)), {}), (np.inner, (r(3, 4), r(2, 4)), {}),
        (np.inner, (r(2, 3, 4), r(4)), {}), (np.inner, (r(), r(2, 3)), {}),
        (np.outer, (r(3), r(4)), {}), (np.outer, (r(2, 3), r(4)), {}),
        (np.matmul, (r(4), r(4)), {}), (np.matmul, (r(3, 4), r(4)), {}),
        (np.matmul, (r(4), r(4, 2)), {}), (np.matmul, (r(3, 4), r(4, 2)), {}),
        (np.matmul, (r(5, 3, 4), r(4, 2)), {}), (np.matmul, (r(3, 4), r(5, 4, 2)), {}),
        (np.matmul, (r(4), r(5, 4, 2)), {}), (np.matmul, (r(5, 3, 4), r(4)), {}),
        (np.matmul, (r(2, 1, 3, 4), r(5, 4, 2)), {}),
        (operator.matmul, (r(2, 1, 3, 4), r(5, 4, 2)), {}),
        (np.tensordot, (r(3, 4), r(4, 5)), dict(axes=1)),
        (np.tensordot, (r(2, 3, 4), r(3, 4, 5)), {}),
        (np.tensordot, (r(3), r(4)), dict(axes=0)),
        (np.tensordot, (r(2, 3, 4), r(4, 3, 5)), dict(axes=([1, 2], [1, 0]))),
        (np.tensordot, (r(2, 3, 4), r(4, 5)), dict(axes=(-1, 0))),
        (np.tensordot, (r(2, 3, 4), r(2, 4)), dict(axes=([0, -1], [0, 1]))),
    ]
PROD += [(np.dot, (rn(3, 4), rn(4, cplx=True)), {}), (np.vdot, (rn(4), rn(4, cplx=True)), {}),
         (np.matmul, (rn(3, 4, cplx=True), rn(4, 2)), {})]

S = rn(3, 1, 4)
SHAPE = [
    (operator.getitem, (A, (1, slice(None), [0, 2, 2])), {}), (operator.getitem, (A, 1), {}),
    (np.reshape, (A, (4, 15)), {}), (np.reshape, (A, (15, 4)), dict(order="F")),
    (np.ravel, (A,), {}), (np.ravel, (A,), dict(order="F")), (np.squeeze, (S,), {}),
    (np.squeeze, (S,), dict(axis=1)), (np.expand_dims, (M,), dict(axis=(0, -1))),
    (build.flatten, (A,), {}), (build.item, (rn(1, 1),), {}),
    (build.astype, (M, np.complex128), {}), (build.astype, (Z, np.complex64), {}),
    (np.transpose, (A,), {}), (np.transpose, (A, (1, 2, 0)), {}),
    (np.transpose, (A,), dict(axes=(-1, 0, 1))),
    (np.swapaxes, (A, 0, 2), {}), (np.moveaxis, (A, 0, -1), {}),
    (np.moveaxis, (A, (0, 1), (2, 0)), {}), (np.flip, (A,), {}), (np.flip, (A,), dict(axis=1)),
    (np.copy, (A,), {}), (np.copy, (2.0,), {}),
    (np.array, ([[1.0, 2.0], [3.0, 4.0]],), {}), (np.array, ([rn(3), rn(3)],), {}),
    (np.array, (A,), {}), (np.asarray, ([1.5, -2.0, 3.0],), {}), (np.asarray, (Z,), {}),
    (np.concatenate, ([rn(2, 3), rn(4, 3)],), {}),
    (np.concatenate, ((rn(2, 3), rn(2, 1)),), dict(axis=1)),
    (np.concatenate, ([rn(2, 3), rn(2, 2)],), dict(axis=-1)),
    (np.concatenate, ([rn(2, 3), rn(4)],), dict(axis=None)),
    (np.concatenate, ([rn(2), rn(3, cplx=True)],), {}), (np.concatenate, (M,), {}),
    (np.stack, ([rn(2, 3), rn(2, 3)],), {}), (np.stack, ((rn(2, 3), rn(2, 3)),), dict(axis=-1)),
    (np.stack, (M,), dict(axis=1)),
    (np.hstack, ([rn(2), rn(3), 1.5],), {}), (np.hstack, ([rn(2, 3), rn(2, 1)],), {}),
    (np.vstack, ([rn(3), rn(2, 3)],), {}), (np.vstack, ((rn(3), rn(3)),), {}),
    (np.split, (rn(6, 2), 3), {}), (np.split, (rn(2, 7), [2, 5]), dict(axis=1)),
    (np.broadcast_to, (rn(3, 1), (2, 3, 4)), {}), (np.broadcast_to, (1.5, (2, 3)), {}),
    (np.full, ((2, 3), 1.5), {}), (np.full, ((2, 3), rn(3)), {}),
    (np.full_like, (M, rn(1, 3)), {}),
    (np.linspace, (0.5, 2.0), dict(num=7)), (np.linspace, (0.5, 2.0, 5, False), {}),
    (np.linspace, (1.0, 3.0), dict(num=1)),
    (np.linspace, (rn(3), rn(2, 1)), dict(num=4, axis=1)),
    (np.linspace, (rn(3), rn(3)), dict(num=4, axis=-1)),
    (np.diag, (rn(3),), {}), (np.diag, (rn(3),), dict(k=1)), (np.diag, (M,), {}),
    (np.diag, (M,), dict(k=-1)), (np.diagonal, (A,), dict(offset=1, axis1=2, axis2=0)),
    (np.tile, (M, 2), {}), (np.tile, (M, (2, 1, 3)), {}), (np.tile, (rn(3), (2, 2)), {}),
    (np.repeat, (M, 2), {}), (np.repeat, (M, [1, 0, 3]), dict(axis=1)),
    (np.repeat, (M, 3), dict(axis=-2)), (np.repeat, (2.0, 3), {}),
    (np.sort, (A,), {}), (np.sort, (A,), dict(axis=0)), (np.sort, (A,), dict(axis=None)),
]


def _ids(cases):
    return [f"{getattr(fn, '__name__', fn)}-{i}-{'-'.join(sorted(kw))}"
            for i, (fn, _, kw) in enumerate(cases)]


@pytest.mark.parametrize("case", RED + PROD + SHAPE, ids=_ids(RED + PROD + SHAPE))
def test_vjp_matches_finite_differences(case):
    fn, args, kw = case
    if fn is np.split:
        ans = fn(*args, **kw)
        g = _rand_like(ans, np.random.default_rng(2))
        check_vjp(fn, args, kw, g=g)
        g[1] = None    # a piece without cotangent
        ct = lookup(fn).vjps[0](g, ans, *args, **kw)
        assert np.all(np.split(ct, args[1], kw.get("axis", 0))[1] == 0)
        return
    check_vjp(fn, args, kw)
