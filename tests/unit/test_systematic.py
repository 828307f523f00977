"""Systematic derivative tests of every rule (autograd's ``test_systematic`` is the model).

Each row of the tables (``systematic_table*.py``) is a numpy expression with
argument shapes and domains; every row is checked in float64 (and complex128
where the function is defined there) against central finite differences
(JVP) and by the dot-product test against the same finite differences (VJP);
second derivatives (forward over reverse and reverse over reverse) against
finite differences of the gradient; float32 arguments keep float32
cotangents.  Hypothesis draws broadcasting pairs, reductions with random
axes/keepdims and structural functions with random shapes and axes.  See
``systematic_checks.py`` for the oracles; ``test_every_numpy_and_math_rule_is_in_the_table``
makes a new rule without a row fail.

The default run checks every row to first order and the first row of each
function with complex arguments, to second order and in float32; the
exhaustive variant (every shape and broadcasting pair, every row in every
mode, more seeds) is marked slow.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s2s.rules  # noqa: F401  (registers every rule)
from s2s.rules.registry import all_rules
from tests.unit import (systematic_table, systematic_table_arrays, systematic_table_builtins,
                        systematic_table_edges, systematic_table_library, systematic_table_special)
from tests.unit.systematic_checks import (Arg, Case, check_first_order, check_second, inputs,
                                          module_for)

#: np.row_stack is deprecated (its row stays while numpy has it)
pytestmark = pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated:DeprecationWarning")

CASES = (systematic_table.CASES + systematic_table_arrays.CASES + systematic_table_library.CASES
         + systematic_table_edges.CASES + systematic_table_builtins.CASES
         + systematic_table_special.CASES)
NONDIFF = systematic_table_builtins.NONDIFF
_MOD = module_for([(c.expr, len(c.args)) for c in CASES + NONDIFF])
_INDEX = {id(c): i for i, c in enumerate(CASES + NONDIFF)}


def _fns(case):
    i = _INDEX[id(case)]
    return getattr(_MOD, f"f_{i}"), getattr(_MOD, f"h_{i}")


def _params(cases, slow_also=False):
    return [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.slow and not slow_also
                         else []) for c in cases]


@pytest.mark.parametrize("case", _params(CASES))
def test_first_order(case):
    check_first_order(_fns(case)[0], case)


def _first_row_of_each_function(cases):
    """The first row naming each function."""
    seen, out = set(), []
    for c in cases:
        key = re.findall(r"\b(?:np|math)\.[\w.]+|[-+*/%@]+|\b(?:abs|pow|max|min|float|complex)\(",
                         c.expr)
        key = key[0] if key else c.expr
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _default_or_slow(cases, default):
    return [pytest.param(c, id=c.name, marks=[] if id(c) in default else [pytest.mark.slow])
            for c in cases]


#: the default run: complex arguments on the first row of each function
_COMPLEX = [c for c in CASES if c.cplx]
_COMPLEX_DEFAULT = {id(c) for c in _first_row_of_each_function(_COMPLEX)}


@pytest.mark.parametrize("case", _default_or_slow(_COMPLEX, _COMPLEX_DEFAULT))
def test_first_order_complex(case):
    check_first_order(_fns(case)[0], case, seed=1, cplx=True)


#: second order in the default run: the first row of each elementwise function and
#: reduction (part 1 of the table), the rows that guard fixed second derivatives
#: (special points), and one row per kind of helper rule (apply_linear, einsum, sort,
#: quantile...); every other row runs in the slow variant
_SECOND_KEY_ROWS = {
    "np.einsum('ij,jk->ik', x, y)", "np.einsum('ii->i', x)", "np.pad(x, ((1, 0), (2, 1)))",
    "np.quantile(x, [0.1, 0.5, 1.0], axis=1)", "np.select([x > 0, x < 0.3], [y, x * x], x + y)",
    "np.interp(x, np.array([-1.0, 0.0, 0.5, 2.0]), y)", "np.sort(x, axis=0)", "np.kron(x, y)",
    "np.take_along_axis(x, np.array([[0, 2, 2], [1, 1, 0]]), axis=1)", "np.diff(x, n=2, axis=-1)",
    "np.nanvar(x)", "np.median(x, axis=0)", "x[[0, 2, 0]]", "np.dot(x, y)", "np.tensordot(x, y)",
    "np.concatenate((x, y), axis=1)", "np.linspace(x, y, 5)", "np.convolve(x, y)",
}
_PART1 = {id(c) for c in systematic_table.CASES}
_SECOND = [c for c in CASES if c.second]
_SECOND_DEFAULT = {id(c) for c in _first_row_of_each_function(
    [c for c in _SECOND if id(c) in _PART1 or c.expr in _SECOND_KEY_ROWS
     or any(a.domain in ("t", "O", "0") for a in c.args)])}


@pytest.mark.parametrize("case", _default_or_slow(_SECOND, _SECOND_DEFAULT))
def test_second_order(case):
    f, h = _fns(case)
    check_second(f, h, case)


#: complex second order in the default run: the elementwise functions of numpy
_SECOND_COMPLEX = [c for c in _SECOND if c.cplx]
_UNARY = {e for e, _, _ in systematic_table.NUMPY_UNARY} | {
    e for e, _, _, _ in systematic_table.NUMPY_BINARY}
_SECOND_COMPLEX_DEFAULT = {id(c) for c in _first_row_of_each_function(
    [c for c in _SECOND_COMPLEX if c.expr in _UNARY])}


@pytest.mark.parametrize("case", _default_or_slow(_SECOND_COMPLEX, _SECOND_COMPLEX_DEFAULT))
def test_second_order_complex(case):
    f, h = _fns(case)
    check_second(f, h, case, seed=4, cplx=True)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
@pytest.mark.parametrize("case", _params(CASES, slow_also=True))
def test_first_order_more_seeds(case, seed):
    check_first_order(_fns(case)[0], case, seed=seed)


# --- every rule is in the table ---------------------------------------------------------------
#: modules whose rules the linear-algebra / FFT tests check (tests/*linalg*, *fft*)
ELSEWHERE = ("numpy.linalg", "numpy.fft")


def _referenced(expr):
    """The numpy, math, operator and builtin callables an expression names (``np.a.b``,
    ``math.f``, ``operator.add``, ``divmod(``)."""
    import builtins
    import math
    import operator
    out = set()
    for name in re.findall(r"(?<![\w.])([a-z]\w*)\(", expr):
        if callable(getattr(builtins, name, None)):
            out.add(id(getattr(builtins, name)))
    roots = [("np", np), ("math", math), ("operator", operator)]
    try:
        import scipy.special
        roots.append(("sp", scipy.special))  # systematic_table_special's rows
    except ImportError:
        pass
    for root, mod in roots:
        for path in re.findall(rf"\b{root}\.([A-Za-z_][\w.]*)", expr):
            obj = mod
            for part in path.split("."):
                obj = getattr(obj, part, None)
            if obj is not None:
                out.add(id(obj))
    return out


def _qualname(fn):
    return f"{getattr(fn, '__module__', None) or 'numpy'}.{getattr(fn, '__name__', fn)}"


#: the modules whose callables a user calls by name (the rest are s2s's own helpers)
_PUBLIC = ("math", "builtins", "_operator", "operator")


def _public(rule) -> bool:
    mod = getattr(rule.fn, "__module__", None) or ""
    return mod in _PUBLIC or mod.startswith("numpy") or isinstance(rule.fn, np.ufunc)


def _numpy_and_math_rules():
    out = []
    for rule in all_rules():
        mod = getattr(rule.fn, "__module__", None) or ""
        if rule.nondiff or not _public(rule):
            continue
        if mod.startswith(ELSEWHERE) and id(rule.fn) not in _COVERED:
            continue
        out.append(rule)
    return out


_COVERED = set().union(*(_referenced(c.expr) for c in CASES))


def test_every_numpy_and_math_rule_is_in_the_table():
    """A new rule of a numpy, math, operator or builtin function without a row here fails
    this test."""
    missing = sorted(_qualname(r.fn) for r in _numpy_and_math_rules() if id(r.fn) not in _COVERED)
    assert not missing, "rules without a systematic test row: " + ", ".join(missing)


def test_the_coverage_check_sees_numpy_rules():
    names = {_qualname(r.fn) for r in _numpy_and_math_rules()}
    assert len(names) > 150 and "numpy.einsum" in names and "math.sin" in names


@pytest.mark.parametrize("case", _params(NONDIFF))
def test_non_differentiable_marks_have_zero_derivatives(case):
    """A callable marked non-differentiable gets a zero derivative: finite differences
    must agree (divmod, math.copysign and np.nextafter were marked once, wrongly)."""
    check_first_order(_fns(case)[0], case)


_NONDIFF_COVERED = set().union(*(_referenced(c.expr) for c in NONDIFF))


def test_every_non_differentiable_mark_is_checked():
    """Every public callable marked non-differentiable has a ``NONDIFF`` row (its zero
    derivative checked by finite differences) or is listed in ``NOT_NUMBERS``."""
    missing = sorted(
        _qualname(r.fn) for r in all_rules() if r.nondiff and _public(r)
        and id(r.fn) not in _NONDIFF_COVERED
        and _qualname(r.fn) not in systematic_table_builtins.NOT_NUMBERS)
    assert not missing, "non-differentiable marks without a zero-derivative row: " + \
        ", ".join(missing)


def test_the_non_differentiable_check_sees_the_marks():
    covered = {_qualname(r.fn) for r in all_rules() if r.nondiff and id(r.fn) in _NONDIFF_COVERED}
    assert {"builtins.round", "math.floor", "numpy.sign", "_operator.lt"} <= covered


def test_non_differentiable_functions_are_marked():
    from s2s.rules import lookup
    for fn in (np.argsort, np.argmax, np.argmin, np.floor_divide, np.less, np.greater_equal,
               np.equal, np.isnan, np.isinf, np.isfinite, np.sign, np.floor, np.ceil, np.round,
               np.rint, np.nonzero, np.searchsorted, np.nanargmax, np.isin, np.bitwise_and,
               np.logical_and, np.count_nonzero):
        rule = lookup(fn)
        assert rule is not None and rule.nondiff, fn


# --- hypothesis: shapes -----------------------------------------------------------------------
_BINARY = ["np.multiply(x, y)", "np.arctan2(x, y)", "np.hypot(x, y)", "x / y", "np.power(x, y)"]


@st.composite
def _broadcasting_pair(draw):
    a = draw(st.lists(st.integers(1, 3), min_size=0, max_size=3))
    b = [1 if draw(st.booleans()) else n for n in a][draw(st.integers(0, len(a))):]
    if draw(st.booleans()):
        a, b = b, a
    return tuple(a), tuple(b)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_broadcasting_pair(), st.sampled_from(_BINARY), st.integers(0, 2 ** 16))
def test_hypothesis_broadcasting(shapes, expr, seed):
    case = Case(expr, (Arg(shapes[0], "p"), Arg(shapes[1], "z")))
    check_first_order(getattr(module_for([(expr, 2)]), "f_0"), case, seed=seed)


@st.composite
def _reduction(draw):
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    axes = draw(st.lists(st.integers(-len(shape), len(shape) - 1),
                         unique_by=lambda a: a % len(shape), min_size=1, max_size=len(shape)))
    axis = axes[0] if len(axes) == 1 and draw(st.booleans()) else tuple(axes)
    fn = draw(st.sampled_from(["sum", "mean", "prod", "max", "min", "var", "nansum", "ptp"]))
    if fn == "ptp":
        axis = axes[0]
    keepdims = draw(st.booleans())
    return fn, shape, axis, keepdims


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_reduction(), st.integers(0, 2 ** 16))
def test_hypothesis_reductions(spec, seed):
    fn, shape, axis, keepdims = spec
    expr = f"np.{fn}(x, axis={axis!r}, keepdims={keepdims})"
    case = Case(expr, (Arg(shape, "d" if fn in ("max", "min", "ptp") else "z"),))
    check_first_order(getattr(module_for([(expr, 1)]), "f_0"), case, seed=seed)


# --- float32 arguments keep their dtype -------------------------------------------------------
def _float32_checkable(c):
    """Rows whose float32 result stays float32 in numpy (not math.*, float(), casts,
    vander, trapezoid with float64 sample points; no NaN domains)."""
    return not (re.search(r"math\.|float\(|float16|float64|longdouble|complex|vander|"
                          r"trapezoid\(x, np|astype|item\(\)", c.expr)
                or any(a.domain in ("N", "D", "Z") for a in c.args))


_F32 = [c for c in CASES if _float32_checkable(c)]
_F32_DEFAULT = {id(c) for c in _first_row_of_each_function([c for c in _F32 if id(c) in _PART1])}


@pytest.mark.parametrize("case", _default_or_slow(_F32, _F32_DEFAULT))
def test_float32_cotangents_keep_the_dtype(case):
    """JAX's convention: a cotangent has its primal's dtype (float32 stays float32)."""
    import s2s
    from tests.grad.oracles import flatten
    f = _fns(case)[0]
    _, args, _ = inputs(case, 0)
    args = [np.float32(a) if np.ndim(a) == 0 else np.asarray(a, np.float32) for a in args]
    value, pullback = s2s.vjp(f, *args)
    outs, rebuild = flatten(value)
    cts = pullback(rebuild([np.ones_like(np.asarray(o)) for o in outs]))
    assert [np.asarray(c).dtype for c in cts] == [np.dtype(np.float32)] * len(args)


@st.composite
def _structural(draw):
    """A structural function with a random shape and random axes (negative ones too)."""
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    nd = len(shape)
    ax = draw(st.integers(-nd, nd - 1))
    ax2 = draw(st.integers(-nd, nd - 1))
    n_ax = shape[ax]
    kind = draw(st.sampled_from(["moveaxis", "swapaxes", "expand_dims", "flip", "roll", "cumsum",
                                 "diff", "repeat", "take", "concatenate", "stack", "tile", "pad",
                                 "sort", "transpose", "split", "median", "cumprod"]))
    expr = {
        "moveaxis": f"np.moveaxis(x, {ax}, {ax2})", "swapaxes": f"np.swapaxes(x, {ax}, {ax2})",
        "expand_dims": f"np.expand_dims(x, {draw(st.integers(-nd - 1, nd))})",
        "flip": f"np.flip(x, {ax})", "roll": f"np.roll(x, {draw(st.integers(-4, 4))}, {ax})",
        "cumsum": f"np.cumsum(x, {ax})", "cumprod": f"np.cumprod(x, {ax})",
        "diff": f"np.diff(x, axis={ax})" if n_ax > 1 else "np.diff(x, axis=-1, prepend=0.0)",
        "repeat": f"np.repeat(x, {draw(st.integers(1, 3))}, axis={ax})",
        "take": f"np.take(x, {draw(st.lists(st.integers(0, n_ax - 1), min_size=1, max_size=4))}, "
                f"axis={ax})",
        "concatenate": f"np.concatenate([x, 2.0 * x], axis={ax})",
        "stack": f"np.stack([x, x * x], axis={draw(st.integers(-nd - 1, nd))})",
        "tile": f"np.tile(x, {tuple(draw(st.lists(st.integers(1, 2), min_size=1, max_size=4)))})",
        "pad": f"np.pad(x, {draw(st.integers(0, 2))}, mode="
               f"{draw(st.sampled_from(['constant', 'edge', 'wrap', 'reflect', 'symmetric']))!r})",
        "sort": f"np.sort(x, axis={ax})", "median": f"np.median(x, axis={ax})",
        "transpose": f"np.transpose(x, {tuple(draw(st.permutations(range(nd))))})",
        "split": f"np.array_split(x, {draw(st.integers(1, 3))}, axis={ax})[0] * 1.0",
    }[kind]
    return expr, shape, "d" if kind in ("sort", "median") else "z"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_structural(), st.integers(0, 2 ** 16))
def test_hypothesis_structural(spec, seed):
    expr, shape, dom = spec
    case = Case(expr, (Arg(shape, dom),))
    check_first_order(getattr(module_for([(expr, 1)]), "f_0"), case, seed=seed)
