"""The JVP templates of the reductions, products and structural primitives
(``s2s/rules/reductions.py``, ``products.py``, ``shape.py``), called directly.

Oracles, on the case tables of ``test_rules_vjp`` (float64):
- central finite differences: ``sum_i jvp_i(t_i) == (f(x + eps t) - f(x - eps t)) / (2 eps)``
  (each template alone, and all active parameters together);
- the registered VJP templates: ``Re sum(g * jvp(t)) == Re sum(vjp(g) * t)`` (JAX's
  convention is the transpose under this bilinear pairing), and for the holomorphic
  products (dot, inner, outer, matmul, tensordot) the complex sums agree exactly;
- closed forms for ties (max/min), zeros (prod/cumprod) and containers.
"""
import operator

import numpy as np
import pytest

from s2s.rules import lookup
from s2s.rules.registry import all_rules
from s2s_runtime import build

from test_rules_vjp import (PROD, RED, SHAPE, _axpy, _ids, _leaves, _pair, _rand_like,
                            _rebuild, _template_problems, rn)

MODULES = {"s2s.rules.reductions", "s2s.rules.products", "s2s.rules.shape"}
MINE = [r for r in all_rules() if not r.nondiff and r.vjps and
        next(t for t in r.vjps if t is not None).__module__ in MODULES]
HOLOMORPHIC = {np.dot, np.inner, np.outer, np.matmul, np.tensordot}


def _name(fn):
    return getattr(fn, "__name__", repr(fn))


def _active(rule, args, kwargs):
    """``(i, x_i)`` for every parameter with a template that the call passes."""
    names = rule.param_names()
    out = []
    for i in range(len(rule.jvps)):
        if names[i] in rule.zero_params():
            continue  # an index or shape argument, declared constant
        if i < len(args):
            out.append((i, args[i]))
        elif names[i] in kwargs:
            out.append((i, kwargs[names[i]]))
    return out


def _call_with(fn, rule, args, kwargs, updates):
    a, k = list(args), dict(kwargs)
    names = rule.param_names()
    for i, v in updates.items():
        if i < len(a):
            a[i] = v
        else:
            k[names[i]] = v
    return fn(*a, **k)


def _fd(fn, rule, args, kwargs, xs, ts, eps):
    plus = _call_with(fn, rule, args, kwargs, {i: _axpy(xs[i], eps, ts[i]) for i in ts})
    minus = _call_with(fn, rule, args, kwargs, {i: _axpy(xs[i], -eps, ts[i]) for i in ts})
    return [(np.asarray(p) - np.asarray(m)) / (2 * eps)
            for p, m in zip(_leaves(plus), _leaves(minus))]


def _assert_close(got, want, what, rtol=1e-6, atol=1e-7):
    got_l, want_l = _leaves(got), _leaves(want)
    assert len(got_l) == len(want_l), what
    for u, w in zip(got_l, want_l):
        scale = max(1.0, float(np.max(np.abs(w))) if np.size(w) else 1.0)
        np.testing.assert_allclose(np.asarray(u), np.asarray(w), rtol=rtol,
                                   atol=atol * scale, err_msg=what)


def _add(a, b):
    if a is None:
        return b
    return _rebuild(a, iter([np.asarray(u) + np.asarray(w)
                             for u, w in zip(_leaves(a), _leaves(b))]))


def check_jvp(fn, args, kwargs=None, eps=1e-6, templates=None, holomorphic=None, vjp=True):
    """Finite-difference and VJP-transpose checks of the JVP templates of ``fn``
    (or of ``templates`` instead of the registered ones; ``vjp=False`` skips the
    comparison with the VJP templates)."""
    rule = lookup(fn)
    assert rule is not None and not rule.nondiff, f"no rule for {fn}"
    jvps = templates or rule.jvps
    assert jvps, f"no JVP templates for {_name(fn)}"
    kwargs = dict(kwargs or {})
    ans = fn(*args, **kwargs)
    rng = np.random.default_rng(3)
    xs, ts, total, checked = {}, {}, None, 0
    for i, x in _active(rule, args, kwargs):
        template = jvps[i]
        if template is None:
            continue
        t = _rand_like(x, rng)
        c = template(t, ans, *args, **kwargs)
        what = f"{_name(fn)} arg {i}"
        # shape of ans; real for real results
        for cl, al in zip(_leaves(c), _leaves(ans)):
            assert np.shape(cl) == np.shape(al), (what, np.shape(cl), np.shape(al))
            if not np.iscomplexobj(al):
                assert not np.iscomplexobj(cl), f"{what}: complex tangent of a real result"
        assert len(_leaves(c)) == len(_leaves(ans)), what
        _assert_close(c, _fd(fn, rule, args, kwargs, {i: x}, {i: t}, eps), what)
        # transpose of the VJP template (Re pairing; complex equality if holomorphic)
        if vjp and rule.vjps[i] is not None:
            g = _rand_like(ans, rng)
            ct = rule.vjps[i](g, ans, *args, **kwargs)
            lhs, rhs = _pair(g, c), _pair(ct, t)
            assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs), abs(rhs)), \
                f"{what}: <g, jvp(t)> = {lhs!r} but <vjp(g), t> = {rhs!r}"
            holo = fn in HOLOMORPHIC if holomorphic is None else holomorphic
            if holo and np.iscomplexobj(x):   # a real input's cotangent is projected to real
                lc = np.sum(np.asarray(g) * np.asarray(c))
                rc = sum(np.sum(np.asarray(u) * np.asarray(w))
                         for u, w in zip(_leaves(ct), _leaves(t)))
                assert abs(lc - rc) <= 1e-9 * max(1.0, abs(lc)), (what, lc, rc)
        xs[i], ts[i] = x, t
        total = _add(total, c)
        checked += 1
    assert checked, "nothing was checked"
    if checked > 1:   # the tangent of the result: the sum over the active parameters
        _assert_close(total, _fd(fn, rule, args, kwargs, xs, ts, eps), f"{_name(fn)} all args")


# --- extra cases (JVP-specific) --------------------------------------------------
EXTRA = [
    (np.linspace, (rn(3, cplx=True), 2.0), dict(num=4)),
    (operator.getitem, ((1.5, rn(3), rn(2)), slice(1, None)), {}),   # container tangent
    (operator.getitem, ([rn(3), 2.5], 0), {}),
    (np.array, ([[rn(2), rn(2)], [rn(2), rn(2)]],), dict(ndmin=2)),
    (np.array, ([[rn(2), rn(2)], [rn(2), rn(2)]],), dict(ndmin=4)),
    (np.array, ([1.0, 2.0 + 1j],), {}),
    (np.asarray, (rn(2, 3),), dict(dtype=np.complex128)),
    (build.astype, (rn(2, 3, cplx=True), np.float64), {}),         # Re(t)
    (np.full, ((2, 3), rn(3, cplx=True)), {}),
    (np.full_like, (rn(2, 3), 0.5), {}),
    (np.max, (rn(3, 4),), dict(axis=0, keepdims=True)),
    (np.average, (rn(3, 4),), dict(weights=rn(3, 4, lo=0.5, hi=2), keepdims=True)),
    (np.average, (rn(3, 4), (0, 1), rn(3, 4, lo=0.5, hi=2)), {}),
    (np.cumprod, (np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [0.0, 1.5, 2.0, -1.0, 0.5]]),),
     dict(axis=1)),
    (np.prod, (np.array([[0.0, 0.0, 2.0], [1.0, 0.0, 3.0]]),), dict(axis=1)),
    (np.std, (rn(3, 4),), dict(axis=0, keepdims=True)),
    (np.linalg.norm, (rn(2, 3, 4),), dict(axis=(2, 0), ord="fro")),
    (np.sort, (rn(3, 4, cplx=True).real,), dict(axis=1)),
]
#: cases whose VJP templates cannot be called (checked against finite differences only)
NO_VJP = [
    (np.linspace, (0.5, 2.0), dict(num=5, retstep=True)),   # (samples, step): VJP raises
]
CASES = RED + PROD + SHAPE + EXTRA


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_jvp_matches_finite_differences_and_the_vjp(case):
    fn, args, kw = case
    check_jvp(fn, args, kw)


@pytest.mark.parametrize("case", NO_VJP, ids=_ids(NO_VJP))
def test_jvp_matches_finite_differences(case):
    fn, args, kw = case
    check_jvp(fn, args, kw, vjp=False)


def test_array_vjp_with_ndmin():
    """np.array(..., ndmin=k) adds leading axes; the VJP takes them off again."""
    check_jvp(np.array, ([[1.0, 2.0]],), dict(ndmin=3))


# --- closed forms -------------------------------------------------------------------
def jvp(fn, i=0):
    return lookup(fn).jvps[i]


def test_max_min_ties_share_the_tangent():
    x = np.array([1.0, 3.0, 3.0, 3.0, -2.0])
    t = np.array([10.0, 1.0, 2.0, 6.0, 100.0])
    assert jvp(np.max)(t, 3.0, x) == pytest.approx(3.0)        # mean of t at the ties
    y = np.array([[1.0, 1.0], [0.0, 5.0]])
    np.testing.assert_allclose(jvp(np.min)(np.array([[2.0, 4.0], [8.0, 1.0]]), np.min(y, 1), y,
                                           axis=1), [3.0, 8.0])
    assert jvp(np.amax)(t, 9.0, x, initial=9.0) == 0.0          # initial wins


def test_prod_cumprod_with_zeros_and_sort_permutation():
    x = np.array([0.0, 2.0, 3.0])
    assert jvp(np.prod)(np.array([1.0, 0.0, 0.0]), 0.0, x) == 6.0
    assert jvp(np.prod)(np.array([1.0, 1.0, 1.0]), 0.0, np.array([0.0, 0.0, 3.0])) == 0.0
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    # d cumprod / dx1 = [0, 2, 2*3, 0, 0]
    np.testing.assert_allclose(jvp(np.cumprod)(np.eye(5)[1], np.cumprod(x), x), [0, 2, 6, 0, 0])
    x = np.array([3.0, 1.0, 2.0])
    np.testing.assert_allclose(jvp(np.sort)(np.array([30.0, 10.0, 20.0]), None, x),
                               [10, 20, 30])


def test_container_tangents():
    t = {"a": 1.0, "b": np.ones(2)}
    assert jvp(operator.getitem)(t, None, {"a": 0.5, "b": np.zeros(2)}, "b") is t["b"]
    pieces = jvp(np.split)(np.arange(6.0), None, np.zeros(6), 3)
    assert isinstance(pieces, list) and [p.tolist() for p in pieces] == [[0, 1], [2, 3], [4, 5]]
    # np.array of a nested list whose tangent has symbolic zeros (None)
    obj = [[1.0, 2.0], [3.0, 4.0]]
    out = jvp(np.array)([[None, 1.0], None], np.array(obj), obj)
    np.testing.assert_array_equal(out, [[0.0, 1.0], [0.0, 0.0]])


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_dtypes_copies_and_views_follow_the_primal():
    x = np.ones((2, 2))
    t = np.arange(4.0).reshape(2, 2)
    assert jvp(np.asarray)(t, np.asarray(x), x) is t                 # asarray: no copy
    assert not np.shares_memory(jvp(np.array)(t, np.array(x), x), t)  # array: a copy
    assert not np.shares_memory(jvp(np.copy)(t, np.copy(x), x), t)
    assert not np.shares_memory(jvp(build.astype)(t, x, x, np.float64), t)
    # casts to integers have a zero tangent, to float32 a float32 one
    out = jvp(build.astype)(t + 0.5, x.astype(int), x, int)
    assert out.dtype == np.float64 and not out.any()
    assert jvp(build.astype)(t, x.astype(np.float32), x, np.float32).dtype == np.float32
    assert jvp(np.sum)(2.0, 2.5, 2.5) == 2.0
    assert np.isnan(jvp(np.std)(np.ones(3), 0.0, np.zeros(3)))       # 0/0, like the VJP


def test_unsupported_cases_raise_clearly():
    with pytest.raises(NotImplementedError):
        jvp(np.average)(np.ones(3), 1.0, np.ones(3), None, np.ones(3), True)
    with pytest.raises(NotImplementedError):
        jvp(np.prod)(np.ones(3), 1.0, np.ones(3), where=np.ones(3, bool))


@pytest.mark.parametrize("fn, args, wrong", [
    # ties not shared: every tied entry passes its full tangent
    (np.max, (np.array([2.0, 2.0, 1.0]),), lambda t, ans, a, axis=None, out=None,
     keepdims=False, initial=None, where=True: np.sum(t * (a == ans))),
    # prod through ans / a (wrong where a == 0)
    (np.prod, (np.array([0.0, 2.0, 3.0]),), lambda t, ans, a, axis=None, dtype=None, out=None,
     keepdims=False, initial=None, where=True: ans * np.sum(t / np.where(a == 0, 1.0, a))),
    # vdot without the conjugation of ta
    (np.vdot, (rn(3, cplx=True), rn(3, cplx=True)), lambda t, ans, a, b: np.dot(t, b)),
    # var forgetting the factor 2
    (np.var, (rn(4),), lambda t, ans, a, axis=None, dtype=None, out=None, ddof=0,
     keepdims=False, where=True, mean=None, correction=None: np.mean((a - np.mean(a)) * t)),
    # a transposed contraction
    (np.matmul, (rn(3, 3), rn(3, 3)), lambda t, ans, x1, x2, out=None: np.matmul(t.T, x2)),
])
def test_checker_rejects_wrong_rules(fn, args, wrong):
    with pytest.raises(AssertionError):
        check_jvp(fn, args, templates=(wrong,))


# --- the templates: coverage and the restrictions of the template frontend -------------
@pytest.mark.parametrize("rule", MINE, ids=[_name(r.fn) for r in MINE])
def test_every_vjp_rule_has_matching_jvp_templates(rule):
    assert len(rule.jvps) == len(rule.vjps), (_name(rule.fn), rule.jvps, rule.vjps)
    assert [t is None for t in rule.jvps] == [t is None for t in rule.vjps], _name(rule.fn)


def test_coverage_is_complete_and_exercised():
    names = {_name(r.fn) for r in MINE}
    assert {"sum", "dot", "getitem", "concatenate", "sort", "linspace"} <= names, names
    tested = {id(fn) for fn, _, _ in CASES}
    missing = [_name(r.fn) for r in MINE if id(r.fn) not in tested]
    assert not missing, f"JVP rules without a test: {missing}"


@pytest.mark.parametrize("rule", MINE, ids=[_name(r.fn) for r in MINE])
def test_jvp_templates_are_straight_line_and_lower(rule):
    from s2s.rules import templates
    for t in rule.jvps:
        if t is not None:
            assert not _template_problems(t), (rule.fn, _template_problems(t))
            templates.template_ir(t)
