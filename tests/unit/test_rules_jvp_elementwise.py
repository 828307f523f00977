"""The JVP templates of ``s2s/rules/arith.py`` and ``s2s/rules/elementwise.py``,
called directly as Python functions.

Oracles, in float64 (complex128 for complex points, with complex tangents):

* central finite differences: with every differentiable parameter perturbed
  at once, ``sum_i jvp_i(t_i) ~ (f(x + eps t) - f(x - eps t)) / (2 eps)``
  elementwise; each contribution has the shape of ``ans`` and is real when
  ``ans`` is real;
* transposition against the registered VJP templates, per parameter:
  ``Re<g, jvp_i(t_i)> == Re<vjp_i(g), t_i>`` with the bilinear pairing
  ``Re(sum(a * b))`` (no conjugation: JAX's convention, the same pairing as
  ``test_rules_vjp.py``);
* coverage: every primitive of the two modules with VJP templates has JVP
  templates (as many, ``None`` in the same places) and a case here.
"""
import cmath
import collections
import dis
import importlib
import inspect
import math
import operator
import types

import numpy as np
import pytest

import s2s.rules.registry as registry
from s2s.rules import lookup  # importing s2s.rules registers every rule
from s2s_runtime import batch_complex, broadcast_like, cast_jvp, power, sum_builtin_jvp

RNG = np.random.default_rng(7)
MODULES = ("s2s.rules.arith", "s2s.rules.elementwise")


# --- pytrees of arguments (lists, tuples, namedtuples) ----------------------------
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
    return sum(float(np.real(np.sum(np.asarray(u) * np.asarray(w))))
               for u, w in zip(_leaves(a), _leaves(b)) if u is not None and w is not None)


# --- the checker -------------------------------------------------------------------
def check_jvp(fn, args, eps=1e-6, rtol=1e-6, atol=1e-7, templates=None):
    """Finite differences and VJP transposition of every JVP template of ``fn`` at ``args``
    (or of ``templates`` instead of the registered ones)."""
    rule = lookup(fn)
    assert rule is not None and not rule.nondiff, f"no rule registered for {fn}"
    jvps = templates or rule.jvps
    assert jvps, f"no JVP templates registered for {fn}"
    rng = np.random.default_rng(1)
    ans = fn(*args)
    active = [i for i, t in enumerate(jvps) if t is not None and i < len(args)]
    assert active, "nothing to check"
    tangents = {i: _rand_like(args[i], rng) for i in active}
    g = _rand_like(ans, rng)
    total = 0
    for i in active:
        c = jvps[i](tangents[i], ans, *args)
        assert np.shape(c) == np.shape(ans), \
            f"{fn.__name__} arg {i}: tangent shape {np.shape(c)} != result shape {np.shape(ans)}"
        if not np.iscomplexobj(ans):
            assert not np.iscomplexobj(c), f"{fn.__name__} arg {i}: complex tangent of a real result"
        total = total + np.asarray(c)
        # transposition: Re<g, J_i t_i> == Re<J_i^T g, t_i>
        if rule.vjps[i] is not None:
            ct = rule.vjps[i](g, ans, *args)
            lhs, rhs = _pair(g, c), _pair(ct, tangents[i])
            assert abs(lhs - rhs) <= 1e-9 * max(abs(lhs), abs(rhs), 1.0), \
                f"{fn.__name__} arg {i}: <g, jvp t> = {lhs!r} but <vjp g, t> = {rhs!r}"

    def at(s):
        a = list(args)
        for i in active:
            a[i] = _axpy(args[i], s, tangents[i])
        return np.asarray(fn(*a), dtype=np.result_type(ans))

    fd = (at(eps) - at(-eps)) / (2 * eps)
    scale = max(float(np.max(np.abs(fd), initial=0.0)), 1.0)
    np.testing.assert_allclose(total, fd, rtol=rtol, atol=atol * scale,
                               err_msg=f"{fn.__name__}: jvp vs finite differences")


# --- cases: (fn, args) ---------------------------------------------------------------
def U(lo, hi, shape=(4,)):
    return RNG.uniform(lo, hi, shape)


def SC(lo, hi):
    return float(RNG.uniform(lo, hi))


def C(shape=(4,)):
    """Complex points of modulus 0.3..1 near the positive real axis (inside every branch cut)."""
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
    return SC(lo, hi) if scalar else U(lo, hi, (3, 4))


CASES = [(f, (_domain(f, False),)) for f in NP_UNARY]
CASES += [(f, (_domain(f, True),)) for f in MATH_UNARY]
# holomorphic functions (and conj, real, imag, abs) at complex points, complex tangents
CASES += [(f, (C((2, 3)),)) for f in NP_UNARY if f not in (np.fabs, np.cbrt, np.deg2rad,
                                                          np.rad2deg, np.exp2)]
CASES += [(f, (C(()),)) for f in (abs, operator.neg, operator.pos)]
# non-smooth points where the rule's value is the symmetric one (central FD sees it too)
CASES += [(np.sinc, (np.array([0.0, 0.5, -1.3]),)), (np.absolute, (np.array([0.0, 1.0, -2.0]),)),
          (np.absolute, (np.array([0j, 1 - 1j]),)), (abs, (0.0,)), (abs, (0j,)),
          (math.fabs, (-0.7,)), (float, (np.float64(1.25),))]

XB, YB = U(0.5, 2.0, (3, 1)), U(0.5, 2.0, (4,))     # both operands broadcast
BINARY = (np.add, np.subtract, np.multiply, np.divide, np.power, np.float_power, np.arctan2,
          np.hypot, np.logaddexp, np.logaddexp2, np.maximum, np.minimum, np.fmax, np.fmin,
          operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, power)
for f in BINARY:
    CASES += [(f, (XB, YB)), (f, (SC(0.5, 2), YB)), (f, (XB, SC(0.5, 2))),
              (f, (SC(0.5, 2), SC(0.5, 2)))]
for f in (np.add, np.subtract, np.multiply, np.divide, np.power, operator.add, operator.sub,
          operator.mul, operator.truediv, operator.pow):
    CASES += [(f, (C((3, 1)), C())), (f, (C(()), C((2, 3))))]
# cmath at complex points and at real ones (a complex result of a real operand)
CASES += [(f, (complex(C(())),)) for f in (cmath.exp, cmath.log, cmath.log10, cmath.sqrt,
                                           cmath.sin, cmath.cos, cmath.tan, cmath.sinh,
                                           cmath.cosh, cmath.tanh, cmath.phase)]
CASES += [(f, (SC(0.3, 1),)) for f in (cmath.exp, cmath.log, cmath.sqrt, cmath.sin,
                                       cmath.tanh)]
CASES.append((cmath.log, (complex(C(())), SC(2, 3))))
CASES += [
    (operator.mul, (C(), 1.5)), (operator.add, (U(-1, 1), C((2, 4)))), (np.power, (XB, 3)),
    (operator.pow, (SC(0.5, 2), 2)),
    # no x / y near an integer (the jumps of floor)
    (operator.mod, (np.array([[5.3], [4.1], [2.2]]), np.array([1.7, 1.5, 0.9, 2.3]))),
    (operator.mod, (5.3, 1.7)), (operator.mod, (np.array([5.3, -4.1]), 1.7)),
    (operator.mod, (-2.3, np.array([1.7, 0.9]))),
    (math.log, (SC(0.5, 2),)), (math.log, (SC(0.5, 2), SC(2, 3))),
    (math.pow, (SC(0.5, 2), SC(-1, 1))), (math.hypot, (SC(-1, 1), SC(-1, 1))),
    (math.atan2, (SC(-1, 1), SC(0.5, 1))), (math.atan2, (SC(0.5, 1), SC(-1, -0.5))),
    (complex, (SC(-1, 1), SC(-1, 1))), (complex, (SC(-1, 1),)),
    (batch_complex, (U(-1, 1, (3, 1)), U(-1, 1))),  # complex(re, im), elementwise
    (np.where, (U(-1, 1) > 0, U(-1, 1, (3, 1)), U(-1, 1))),
    (np.where, (U(-1, 1, (3, 4)) > 0, SC(-1, 1), U(-1, 1))),
    (np.where, (U(-1, 1) > 0, C((2, 4)), C(()))),
    (np.clip, (np.array([-2.0, 0.1, 0.5, 3.0]), np.array([-1.0, 0.0, 0.2, -1.0]),
               np.array([1.0, 1.0, 1.0, 2.0]))),
    # a_max larger than a and a_min: every contribution must be broadcast
    (np.clip, (np.array([-2.0, 0.1, 0.5, 3.0]), -1.0, np.array([[1.0], [2.5], [0.3]]))),
    (np.maximum, (np.array([1.0, 2.0]), np.array([1.0, 3.0]))),    # a tie: half each
    (np.minimum, (np.array([1.0, 2.0]), np.array([1.0, 3.0]))),
    (np.fmax, (np.array([1.0, np.nan, 2.0]), np.array([np.nan, 3.0, 1.0]))),
    (np.fmin, (np.array([1.0, np.nan, 2.0]), np.array([np.nan, 3.0, 1.0]))),
    (np.radians, (U(-1, 1),)), (np.degrees, (U(-1, 1),)),
    (np.nan_to_num, (np.array([0.3, np.inf, -1.2, np.nan, -np.inf]),)),  # finite entries only
    (np.unwrap, (np.array([0.1, 3.0, 6.5, 0.2, -3.1]),)),  # jumps of 2 pi added
]


def _mm(cplx):
    def r(*s):
        return RNG.standard_normal(s) + (1j * RNG.standard_normal(s) if cplx else 0)
    return [(operator.matmul, (r(4), r(4))), (operator.matmul, (r(3, 4), r(4))),
            (operator.matmul, (r(4), r(4, 2))), (operator.matmul, (r(3, 4), r(4, 2))),
            (operator.matmul, (r(5, 3, 4), r(4, 2))), (operator.matmul, (r(3, 4), r(5, 4, 2))),
            (operator.matmul, (r(4), r(5, 4, 2))), (operator.matmul, (r(2, 1, 3, 4), r(5, 4, 2)))]


CASES += _mm(False) + _mm(True) + [(operator.matmul, (U(-1, 1, (3, 4)), C((4, 2))))]

Pt = collections.namedtuple("Pt", "x y")
CASES += [
    (getattr, (Pt(1.5, U(-1, 1)), "y")), (getattr, (Pt(1.5, U(-1, 1)), "x")),
    (pow, (SC(0.5, 2), SC(-1, 1))), (pow, (U(0.5, 2, (3, 1)), U(-1, 1))), (pow, (C(), 2)),
    (max, (0.3, 0.7)), (max, (0.9, -0.2)), (max, (0.5, 0.5)),
    (min, (0.3, 0.7)), (min, (0.9, -0.2)), (min, (0.5, 0.5)),
    (sum, ([SC(-1, 1), U(-1, 1), C()],)), (sum, ([SC(-1, 1), U(-1, 1), C()], SC(-1, 1))),
    (sum, ([SC(-1, 1), SC(-1, 1)], U(-1, 1, (2, 3)))), (sum, (U(-1, 1, (3, 4)),)),
    (np.float64, (SC(-1, 1),)), (np.float64, (U(-1, 1),)), (np.float64, (np.complex128(C(())),)),
    (np.float64, (C(),)), (np.longdouble, (0.7,)),
    (np.complex128, (SC(-1, 1),)), (np.complex128, (U(-1, 1),)), (np.complex128, (C(()),)),
]


def _ids(cases):
    return [f"{getattr(fn, '__name__', fn)}-{i}" for i, (fn, _) in enumerate(cases)]


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_jvp_matches_finite_differences_and_vjp(case):
    fn, args = case
    check_jvp(fn, args)


# --- closed forms, dtypes, helpers ---------------------------------------------------------
def jvp(fn, i=0):
    return lookup(fn).jvps[i]


def test_ties_and_zeros():
    # np.maximum / max at a tie: half of each tangent (as in the VJP and JAX)
    assert jvp(np.maximum, 0)(np.array([2.0]), np.array([1.0]), np.array([1.0]),
                              np.array([1.0]))[0] == 1.0
    assert jvp(max, 1)(4.0, 0.5, 0.5, 0.5) == 2.0
    assert jvp(min, 0)(4.0, 0.2, 0.2, 0.7) == 4.0 and jvp(min, 1)(4.0, 0.2, 0.2, 0.7) == 0.0
    # |x| at 0 has tangent 0 (real and complex), sinc'(0) = 0
    assert jvp(abs)(3.0, 0.0, 0.0) == 0.0 and jvp(abs)(1 + 2j, 0.0, 0j) == 0.0
    assert jvp(np.sinc)(np.array([5.0]), np.array([1.0]), np.array([0.0]))[0] == 0.0
    # fmax ignores the NaN operand
    x, y = np.array([1.0, np.nan]), np.array([np.nan, 3.0])
    ans = np.fmax(x, y)
    np.testing.assert_array_equal(jvp(np.fmax, 0)(np.array([2.0, 5.0]), ans, x, y), [2.0, 0.0])
    np.testing.assert_array_equal(jvp(np.fmax, 1)(np.array([7.0, 5.0]), ans, x, y), [0.0, 5.0])


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("cast", [np.float64, np.float32, np.float16, np.longdouble,
                                  np.complex128, np.complex64])
def test_casts_give_the_tangent_in_the_result_type(cast):
    """d cast(x) = cast(dx): the tangent has the result's dtype (Re(t) for a real cast of complex x)."""
    for x, t in ((np.float32(0.7), np.float32(2.5)), (0.7, 2.5), (np.ones(3), np.full(3, 2.5)),
                 (np.complex128(0.5 + 1j), np.complex128(2.5 - 3j))):
        ans = cast(x)
        c = jvp(cast)(t, ans, x)
        assert np.result_type(c) == np.result_type(ans) and np.shape(c) == np.shape(ans)
        assert np.all(c == cast(np.real(t) if not np.iscomplexobj(ans) else t))


def test_helpers():
    assert cast_jvp(np.array([1 + 2j]), np.array([1.0])).tolist() == [1.0]
    assert isinstance(cast_jvp(np.float64(2.0), np.float32(1.0)), np.float32)
    # sum(): None (a symbolic zero) skipped; broadcast to the result; all-None is zero
    ans = sum([np.ones(3), 2.0], np.zeros((2, 3)))
    out = sum_builtin_jvp([None, 2.0], ans)
    assert out.shape == (2, 3) and np.all(out == 2.0)
    assert np.all(sum_builtin_jvp([None, None], ans) == 0) and \
        np.shape(sum_builtin_jvp([None], ans)) == (2, 3)
    assert broadcast_like(np.ones(3), np.zeros((2, 3))).flags.writeable


def test_getattr_reads_the_field_of_the_tangent():
    p, dp = Pt(1.0, np.ones(2)), Pt(3.0, np.full(2, 4.0))
    assert jvp(getattr)(dp, p.x, p, "x") == 3.0


# --- the checker can fail -------------------------------------------------------------------
@pytest.mark.parametrize("fn, args, wrong", [
    # broadcast_like forgotten: the contribution of the smaller x has the wrong shape
    (operator.add, (XB, YB), (lambda t, ans, x, y: t, lambda t, ans, x, y: broadcast_like(t, ans))),
    # conjugate treated as holomorphic (t instead of conj(t))
    (np.conjugate, (C(),), (lambda t, ans, x: t,)),
    # |z| without the real part: a complex tangent of a real result
    (np.absolute, (C(),), (lambda t, ans, x: np.conj(x) * t / ans,)),
    # |z| with conj(t) x instead of conj(x) t: right for real x, wrong for complex
    (abs, (C(()),), (lambda t, ans, x: np.real(np.conj(t) * x) / ans * 1j,)),
    # the wrong sign for the divisor
    (operator.truediv, (XB, YB), (lambda t, ans, x, y: t / y, lambda t, ans, x, y: t * ans / y)),
    # atan2's arguments swapped (y first)
    (math.atan2, (0.3, 0.8), (lambda t, ans, y, x: -t * y / (x * x + y * y),
                              lambda t, ans, y, x: t * x / (x * x + y * y))),
    # complex(re, im): im's tangent not multiplied by 1j
    (complex, (0.3, 0.8), (lambda t, ans, real, imag=0.0: complex(t),
                           lambda t, ans, real, imag=0.0: complex(t))),
])
def test_checker_rejects_wrong_jvps(fn, args, wrong):
    with pytest.raises(AssertionError):
        check_jvp(fn, args, templates=wrong)


def test_checker_catches_a_jvp_inconsistent_with_the_vjp():
    """FD alone would pass a JVP of np.imag that matches FD; the transposition test also
    compares it with the registered VJP (here a deliberately wrong VJP)."""
    rule = lookup(np.imag)
    saved = rule.vjps
    try:
        rule.vjps = (lambda g, ans, val: 1j * np.real(g),)   # sign error
        with pytest.raises(AssertionError, match="vjp g"):
            check_jvp(np.imag, (C(),))
    finally:
        rule.vjps = saved


# --- coverage and the template restrictions ----------------------------------------------------
def _module_primitives(modname, monkeypatch):
    """The primitives given VJP templates by the rule module ``modname`` (its source re-run
    with a recording ``defvjp``)."""
    mod = importlib.import_module(modname)
    found = []
    monkeypatch.setattr(registry, "defvjp", lambda fn, *t, **k: found.append((fn, t)))
    monkeypatch.setattr(registry, "defjvp", lambda fn, *t: None)
    monkeypatch.setattr(registry, "defnondiff", lambda *f, **k: None)
    src = inspect.getsource(mod).replace("from .registry import", "from s2s.rules.registry import")
    exec(compile(src, mod.__file__, "exec"), {"__name__": modname + "._probe"})
    return [fn for fn, templates in found if any(t is not None for t in templates)]


@pytest.fixture
def primitives(monkeypatch):
    out = []
    for m in MODULES:
        out += _module_primitives(m, monkeypatch)
    assert len(out) > 90   # the probe found the modules' defvjp calls
    return out


def test_every_vjp_has_matching_jvp_templates(primitives):
    bad = []
    for fn in primitives:
        rule = lookup(fn)
        if [t is None for t in rule.jvps] != [t is None for t in rule.vjps]:
            bad.append(getattr(fn, "__name__", repr(fn)))
    assert not bad, f"JVP templates missing or not matching the VJP templates: {bad}"


def test_every_jvp_is_exercised(primitives):
    tested = {id(fn) for fn, _ in CASES}
    missing = [getattr(fn, "__name__", repr(fn)) for fn in primitives
               if id(fn) not in tested and fn not in (np.float32, np.float16, np.complex64)]
    assert not missing, f"JVP rules without a case: {missing}"


def _template_problems(t):
    problems = [f"{i.opname} (a condition, and/or, or a loop)" for i in dis.get_instructions(t)
                if "JUMP" in i.opname or i.opname == "FOR_ITER"]
    problems += ["a nested function or comprehension" for c in t.__code__.co_consts
                 if isinstance(c, types.CodeType)]
    for ins in dis.get_instructions(t):
        if ins.opname == "LOAD_GLOBAL":
            value = t.__globals__.get(ins.argval, getattr(__import__("builtins"), ins.argval, None))
            if not (isinstance(value, types.ModuleType) or callable(value)):
                problems.append(f"reads the module-level variable {ins.argval}")
    if t.__code__.co_freevars:
        problems.append(f"closes over {t.__code__.co_freevars}")
    return problems


def test_template_checker_flags_violations():
    assert _template_problems(lambda t, ans, x: t if x > 0 else -t)
    assert _template_problems(lambda t, ans, x: t * RNG)
    assert not _template_problems(lambda t, ans, x: t * np.cos(x) + math.pi)


def test_jvp_templates_are_straight_line_and_lower(primitives):
    from s2s.rules.templates import template_ir
    for fn in primitives:
        for t in lookup(fn).jvps:
            if t is not None:
                assert not _template_problems(t), (fn, _template_problems(t))
                template_ir(t)
