"""The VJP templates of the rule table, called directly as Python functions.

Oracle: central finite differences in float64 through the dot-product
identity  Re<g, J v> = Re<vjp(g), v>  (the bilinear pairing Re(sum(a * b)),
no conjugation, which is JAX's convention: a holomorphic f pulls g back to
g f'(x); vdot(a, b) = sum(conj(a) b) pulls it back to conj(g b) for a).
Plus closed forms for ties (max/min) and zeros (prod/cumprod).
"""
import dis
import inspect
import cmath
import collections
import math
import operator
import types

import numpy as np
import pytest

from s2s.rules import lookup  # importing s2s.rules registers every rule
from s2s.rules.registry import all_rules
import s2s_runtime as rt
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
    if hasattr(x, "_fields"):
        return type(x)(*[_rebuild(v, it) for v in x])
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


def check_vjp(fn, args, kwargs=None, argnums=None, eps=1e-6, rtol=1e-6, atol=1e-8, g=None,
              templates=None):
    """Dot-product test of every registered template of ``fn`` at ``args``
    (or of ``templates`` instead of the registered ones)."""
    rule = lookup(fn)
    assert rule is not None and not rule.nondiff, f"no VJP registered for {fn}"
    kwargs = dict(kwargs or {})
    names = rule.param_names()
    ans = fn(*args, **kwargs)
    rng = np.random.default_rng(1)
    if g is None:
        g = _rand_like(ans, rng)
    checked = 0
    for i, template in enumerate(templates or rule.vjps):
        if template is None or (argnums is not None and i not in argnums) \
                or (templates is None and names[i] in rule.zero_params()):
            continue  # (a zero template declares an index or shape argument constant)
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
    # Python sequences as array arguments: the cotangent has the same structure
    (np.sum, ([rn(3), rn(3)],), dict(axis=0)), (np.max, ([1.0, 3.0, 2.0],), {}),
    (np.mean, ((1.0, 2.5),), {}), (np.cumsum, ([1.0, 2.0],), {}),
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
PROD += [(np.dot, ([1.0, 2.0], [3.0, -1.0]), {}),
         (np.tensordot, ([[1.0, 2.0]], [3.0, 4.0]), dict(axes=1)),
         (np.dot, (rn(3, 4), rn(4, cplx=True)), {}), (np.vdot, (rn(4), rn(4, cplx=True)), {}),
         (np.matmul, (rn(3, 4, cplx=True), rn(4, 2)), {})]

S = rn(3, 1, 4)
SHAPE = [
    (operator.getitem, (A, (1, slice(None), [0, 2, 2])), {}), (operator.getitem, (A, 1), {}),
    (np.take, (A, [0, 2, 2]), {}), (np.take, (A, [[1, -1], [0, 1]]), dict(axis=1)),
    (np.take, (A, [4, 7]), dict(axis=-1, mode="wrap")), (np.take, (Z, 1), dict(axis=0)),
    (np.bincount, (np.array([0, 2, 2, 1]), np.array([0.5, -1.5, 2.0, 0.25])), {}),
    (np.bincount, (np.array([3, 0]), np.array([1.5, -0.5])), dict(minlength=5)),
    (np.reshape, (A, (4, 15)), {}), (np.reshape, (A, (15, 4)), dict(order="F")),
    (np.ravel, (A,), {}), (np.ravel, (A,), dict(order="F")), (np.squeeze, (S,), {}),
    (np.squeeze, (S,), dict(axis=1)), (np.expand_dims, (M,), dict(axis=(0, -1))),
    (build.flatten, (A,), {}), (build.item, (rn(1, 1),), {}),
    (build.astype, (M, np.complex128), {}), (build.astype, (Z, np.complex128), {}),
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


# --- closed forms --------------------------------------------------------------
def vjp(fn, i=0):
    return lookup(fn).vjps[i]


def test_max_min_ties_share_the_cotangent():
    x = np.array([1.0, 3.0, 3.0, 3.0, -2.0])
    np.testing.assert_allclose(vjp(np.max)(2.0, 3.0, x), [0, 2 / 3, 2 / 3, 2 / 3, 0])
    y = np.array([[1.0, 1.0], [0.0, 5.0]])
    np.testing.assert_allclose(vjp(np.min)(np.array([1.0, 1.0]), np.min(y, 1), y, axis=1),
                               [[0.5, 0.5], [1.0, 0.0]])
    # initial wins: nobody gets the cotangent
    np.testing.assert_allclose(vjp(np.amax)(1.0, 9.0, x, initial=9.0), np.zeros(5))


def test_prod_and_cumprod_with_zeros():
    x = np.array([0.0, 2.0, 3.0])
    np.testing.assert_allclose(vjp(np.prod)(1.0, 0.0, x), [6.0, 0.0, 0.0])
    np.testing.assert_allclose(vjp(np.prod)(1.0, 0.0, np.array([0.0, 0.0, 3.0])), [0, 0, 0])
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    # cumprod = [2, 0, 0, 0, 0]; d/dx1 of sum(cumprod) = 2 + 2*3 = 8, d/dx0 = 1
    np.testing.assert_allclose(vjp(np.cumprod)(np.ones(5), np.cumprod(x), x), [1, 8, 0, 0, 0])


def test_sort_and_norm_ties_and_values():
    x = np.array([3.0, 1.0, 2.0])
    np.testing.assert_allclose(vjp(np.sort)(np.array([10.0, 20.0, 30.0]), None, x), [30, 10, 20])
    v = np.array([1.0, -4.0, 4.0])
    np.testing.assert_allclose(vjp(np.linalg.norm)(1.0, 4.0, v, ord=np.inf), [0, -0.5, 0.5])
    np.testing.assert_allclose(vjp(np.linalg.norm)(1.0, 0.0, np.zeros(3)), np.zeros(3))


def test_dtypes_scalars_and_writability():
    x32 = np.ones((2, 2), np.float32)
    assert vjp(build.astype)(np.ones((2, 2)), None, x32, np.float64).dtype == np.float32
    assert vjp(np.sum)(np.float64(1.0), 4.0, x32).dtype == np.float32
    ct = vjp(np.sum)(1.0, 2.5, 2.5)
    assert np.shape(ct) == () and not isinstance(ct, np.ndarray)
    ct = vjp(np.broadcast_to)(np.ones((2, 3)), None, np.ones(3), (2, 3))
    assert ct.flags.writeable
    from s2s_runtime import unreduce
    out = unreduce(np.ones(3), np.ones((2, 3)), axis=0)
    assert out.flags.writeable and out.shape == (2, 3)
    assert np.shape(unreduce(2.0, 1.5)) == ()
    assert unreduce(np.ones((1, 3)), np.ones((2, 3)), axis=0, keepdims=True).flags.writeable


def test_unsupported_cases_raise_clearly():
    with pytest.raises(NotImplementedError):
        vjp(np.linalg.norm)(1.0, 1.0, np.ones((2, 2)), ord="bogus", axis=(0, 1))
    with pytest.raises(NotImplementedError):
        vjp(np.average)(1.0, 1.0, np.ones(3), None, np.ones(3), True)
    with pytest.raises(NotImplementedError):
        vjp(np.prod)(1.0, 1.0, np.ones(3), where=np.ones(3, bool))


# --- elementwise and arithmetic rules ------------------------------------------
def U(lo, hi, shape=(4,)):
    return RNG.uniform(lo, hi, shape)


def SC(lo, hi):
    return float(RNG.uniform(lo, hi))


def C(shape=(4,)):
    return RNG.uniform(0.3, 1.0, shape) * np.exp(1j * RNG.uniform(-1, 1, shape))


UNIT = ("arcsin", "arccos", "arctanh", "asin", "acos", "atanh")
POS = ("log", "log2", "log10", "sqrt", "log1p", "cbrt", "reciprocal", "fabs", "absolute")
NP_UNARY = [np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh,
            np.arcsinh, np.arccosh, np.arctanh, np.exp, np.exp2, np.expm1, np.log, np.log1p,
            np.log2, np.log10, np.sqrt, np.cbrt, np.square, np.reciprocal, np.negative,
            np.positive, np.absolute, np.fabs, np.conjugate, np.real, np.imag, np.deg2rad,
            np.rad2deg, np.sinc, np.angle]
MATH_UNARY = [math.sin, math.cos, math.tan, math.asin, math.acos, math.atan, math.sinh, math.cosh,
              math.tanh, math.asinh, math.acosh, math.atanh, math.exp, math.expm1, math.log,
              math.log1p, math.log2, math.log10, math.sqrt, math.erf, math.erfc, math.fabs,
              math.degrees, math.radians, operator.neg, operator.pos, abs, float]


def _domain(fn, scalar):
    name = fn.__name__
    lo, hi = (-0.8, 0.8) if name in UNIT else (1.5, 3.0) if "cosh" in name and "a" in name \
        else (0.5, 2.0) if name in POS else (-1.5, 1.5)
    return SC(lo, hi) if scalar else U(lo, hi)


EW = [(f, (_domain(f, False),), {}) for f in NP_UNARY]
EW += [(f, (_domain(f, True),), {}) for f in MATH_UNARY]
# holomorphic numpy functions (and conj/real/imag/abs) at complex points: x_bar = g f'(x)
EW += [(f, (C(),), {}) for f in NP_UNARY if f not in (np.fabs, np.cbrt, np.deg2rad,
                                                     np.rad2deg, np.exp2)]
EW += [(np.sinc, (np.array([0.0, 0.5, -1.3]),), {}), (abs, (C(()),), {})]
XB, YB = U(0.5, 2.0, (3, 1)), U(0.5, 2.0, (4,))
for f in (np.add, np.subtract, np.multiply, np.divide, np.power, np.float_power, np.arctan2,
          np.hypot, np.logaddexp, np.logaddexp2, np.maximum, np.minimum, np.fmax, np.fmin,
          operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, rt.power):
    EW.append((f, (XB, YB), {}))
EW.append((rt.power, (SC(0.5, 2), SC(0.5, 2)), {}))

# cmath at complex points (holomorphic: g f'(z)) and at real ones (cmath.exp(0.5) is complex:
# the real part of g f'(x))
EW += [(f, (complex(C(())),), {}) for f in (cmath.exp, cmath.log, cmath.log10, cmath.sqrt,
                                            cmath.sin, cmath.cos, cmath.tan, cmath.sinh,
                                            cmath.cosh, cmath.tanh, cmath.phase)]
EW += [(f, (SC(0.3, 1),), {}) for f in (cmath.exp, cmath.log, cmath.sqrt, cmath.sin,
                                        cmath.tanh)]
EW.append((cmath.log, (complex(C(())), SC(2, 3)), {}))
for f in (np.add, np.multiply, np.divide, operator.mul, operator.truediv, operator.pow):
    EW.append((f, (C((3, 1)), C()), {}))
EW += [
    (operator.add, (2.0, 3.5), {}), (operator.mul, (C(), 1.5), {}),
    (operator.mod, (np.array([5.3, 4.1]), np.array([1.7, 1.5])), {}),
    (operator.mod, (5.3, 1.7), {}),
    (math.log, (SC(0.5, 2), SC(2, 3)), {}), (math.pow, (SC(0.5, 2), SC(-1, 1)), {}),
    (math.hypot, (SC(-1, 1), SC(-1, 1)), {}), (math.atan2, (SC(-1, 1), SC(0.5, 1)), {}),
    (complex, (SC(-1, 1), SC(-1, 1)), {}),
    (rt.batch_complex, (U(-1, 1, (3, 1)), U(-1, 1)), {}),  # complex(re, im), elementwise
    (np.where, (U(-1, 1) > 0, U(-1, 1, (3, 1)), U(-1, 1)), {}),
    (np.clip, (np.array([-2.0, 0.1, 0.5, 3.0]), np.array([-1.0, 0.0, 0.2, -1.0]),
               np.array([1.0, 1.0, 1.0, 2.0])), {}),
    (np.maximum, (np.array([1.0, 2.0]), np.array([1.0, 3.0])), {}),    # a tie: half each
    (np.radians, (U(-1, 1),), {}), (np.degrees, (U(-1, 1),), {}),
    (np.nan_to_num, (np.array([0.3, np.inf, -1.2, np.nan, -np.inf]),), {}),  # finite entries only
    (np.unwrap, (np.array([0.1, 3.0, 6.5, 0.2, -3.1]),), {}),  # jumps of 2 pi added
]

EW += [
    (getattr, (collections.namedtuple("Pt", "x y")(1.5, rn(3)), "y"), {}),  # namedtuple field
    (pow, (SC(0.5, 2), SC(-1, 1)), {}),
    (max, (0.3, 0.7), {}), (max, (0.9, -0.2), {}), (min, (0.3, 0.7), {}), (min, (0.9, -0.2), {}),
    (sum, ([SC(-1, 1), U(-1, 1), C()], SC(-1, 1)), {}),
    (np.float64, (SC(-1, 1),), {}),
    (np.longdouble, (0.7,), {}),
    (np.complex128, (SC(-1, 1),), {}),
]


@pytest.mark.parametrize("case", EW, ids=_ids(EW))
def test_elementwise_vjp_matches_finite_differences(case):
    fn, args, kw = case
    check_vjp(fn, args, kw)


# --- the templates obey the restrictions of the template frontend --------------
# rules of the runtime helpers (generated code, differentiated again) are tested in
# test_rules_runtime.py
#: rule modules whose primitives have their own test module (runtime helpers:
#: tests/unit/test_rules_runtime.py; index writes: tests/unit/test_rules_index_writes.py)
TESTED_ELSEWHERE = {"s2s.rules.runtime_rules", "s2s.rules.runtime_rules_nonlinear",
                    "s2s.rules.index_writes",
                    "s2s.rules.custom_checks",  # tests/unit/test_rules_custom_checks.py
                    "s2s.rules.math_checks",  # tests/batch/test_math_errors.py
                    "s2s.rules.containers",  # tests/unit/test_rules_containers.py
                    # tests/unit/test_rules_linalg.py, test_rules_fft.py
                    "s2s.rules.linalg", "s2s.rules.linalg_decomp", "s2s.rules.fft",
                    "s2s.rules.linalg_api", "s2s.rules.linalg_lstsq",
                    # tests/unit/test_systematic_special.py (every rule has a row there)
                    "s2s.rules.special",
                    # tests/unit/test_systematic.py (every numpy rule has a row there)
                    "s2s.rules.statistics",
                    "s2s.rules.manipulation", "s2s.rules.contractions", "s2s.rules.linear_rules",
                    "s2s.rules.float_parts",  # and its builtins and math (systematic_table_builtins)
                    "s2s.batch.helper_rules",  # tests/batch/test_helper_rules.py
                    "s2s.batch.value_reads"}  # tests/batch/test_vmap_value_reads.py
ALL = [r for r in all_rules() if not r.nondiff
       and getattr(next(t for t in r.vjps if t is not None), "__module__", "")
       not in TESTED_ELSEWHERE]


def _template_problems(t):
    code = t.__code__
    problems = [f"{i.opname} (a condition, and/or, or a loop)" for i in dis.get_instructions(t)
                if "JUMP" in i.opname or i.opname == "FOR_ITER"]
    problems += ["a nested function or comprehension" for c in code.co_consts
                 if isinstance(c, types.CodeType)]
    for ins in dis.get_instructions(t):
        if ins.opname == "LOAD_GLOBAL":
            value = t.__globals__.get(ins.argval, getattr(__builtins__, ins.argval, None)
                                      if not isinstance(__builtins__, dict)
                                      else __builtins__.get(ins.argval))
            if not (isinstance(value, types.ModuleType) or callable(value)):
                problems.append(f"reads the module-level variable {ins.argval}")
    if code.co_freevars:
        problems.append(f"closes over {code.co_freevars}")
    return problems


@pytest.mark.parametrize("rule", ALL, ids=[getattr(r.fn, "__name__", str(r.fn)) for r in ALL])
def test_templates_are_straight_line_code(rule):
    for t in rule.vjps:
        if t is not None:
            assert not _template_problems(t), (rule.fn, _template_problems(t))


@pytest.mark.parametrize("rule", ALL, ids=[getattr(r.fn, "__name__", str(r.fn)) for r in ALL])
def test_template_signature_mirrors_the_primitive(rule):
    try:
        sig = inspect.signature(rule.fn)
    except (ValueError, TypeError):
        pytest.skip("no introspectable signature")
    params = [p for p in sig.parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    names = rule.param_names()
    kinds = [p.kind for p in sig.parameters.values()]
    if inspect.Parameter.VAR_POSITIONAL in kinds or inspect.Parameter.VAR_KEYWORD in kinds:
        # ``*operands`` / ``**kwargs`` (einsum, pad, atleast_1d): the template names the
        # slots they stand for; the named parameters before them must still agree
        first_var = next(i for i, k in enumerate(kinds) if k in (
            inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD))
        params = params[:first_var]
        names = names[:first_var]
    assert len(names) <= len(params), (names, params)
    for mine, theirs in zip(names, params):
        if theirs.kind is not theirs.POSITIONAL_ONLY:   # the name is part of the API
            assert mine == theirs.name, (names, [p.name for p in params])
    assert len(rule.vjps) <= len(names)


def test_template_restriction_checker_flags_violations():
    assert _template_problems(lambda g, ans, x: g if x > 0 else -g)
    assert _template_problems(lambda g, ans, x: g and x)
    assert _template_problems(lambda g, ans, x: [g for _ in x])
    assert _template_problems(lambda g, ans, x: g * RNG)
    assert not _template_problems(lambda g, ans, x: g * np.cos(x) + math.pi)


@pytest.mark.parametrize("rule", ALL, ids=[getattr(r.fn, "__name__", str(r.fn)) for r in ALL])
def test_templates_lower_through_the_frontend(rule):
    templates = pytest.importorskip("s2s.rules.templates")
    for t in rule.vjps:
        if t is not None:
            templates.template_ir(t)


@pytest.mark.parametrize("fn, args, wrong", [
    # vdot without the conjugation of a's cotangent
    (np.vdot, (C(), C()), lambda g, ans, a, b: g * b),
    # max with ties not shared: both tied entries get all of g
    (np.max, (np.array([2.0, 2.0, 1.0]),), lambda g, ans, a, axis=None, out=None,
     keepdims=False, initial=None, where=True: g * (a == ans)),
    # prod through ans / a (wrong where a == 0)
    (np.prod, (np.array([0.0, 2.0, 3.0]),), lambda g, ans, a, axis=None, dtype=None, out=None,
     keepdims=False, initial=None, where=True: g * ans / np.where(a == 0, 1.0, a)),
    # matmul with conjugation (not JAX's convention)
    (np.matmul, (C((2, 3)), C((3, 2))), lambda g, ans, x1, x2, out=None: g @ np.conj(x2).T),
    # an unbroadcast forgotten
    (np.multiply, (XB, YB), lambda g, ans, x, y: g * y),
])
def test_checker_rejects_wrong_rules(fn, args, wrong):
    with pytest.raises(AssertionError):
        check_vjp(fn, args, templates=(wrong,))


# --- every rule with templates is exercised ------------------------------------
NOT_TESTED = {   # fn -> reason
    np.float32: "single precision: checked by test_casts_return_the_input_dtype, not by FD",
    np.float16: "half precision: checked by test_casts_return_the_input_dtype, not by FD",
    np.complex64: "single precision: checked by test_casts_return_the_input_dtype, not by FD",
}


@pytest.mark.parametrize("cast", [np.float32, np.float16, np.complex64])
def test_casts_return_the_input_dtype(cast):
    """d cast(x)/dx = 1, and the cotangent comes back in x's own dtype (and real for real x)."""
    for x in (np.float32(0.7), np.float64(0.7), 0.7):
        (ct,) = [t(np.complex64(2.5 + 1j) if cast is np.complex64 else cast(2.5), cast(x), x)
                 for t in lookup(cast).vjps]
        assert ct == 2.5
        assert type(ct) is (float if type(x) is float else type(x)) or \
            np.result_type(ct) == np.result_type(x)


def test_every_registered_vjp_is_exercised():
    tested = {id(fn) for fn, _, _ in RED + PROD + SHAPE + EW}
    missing = [getattr(r.fn, "__name__", repr(r.fn)) for r in ALL
               if id(r.fn) not in tested and r.fn not in NOT_TESTED]
    assert not missing, f"VJP rules without a test: {missing}"
