"""Tests of the frontend (``s2s.frontend.lower``): the IR it promises.

Oracles: the original Python function (exec-equivalence of the emitted IR),
the source text itself (locations are found by searching the fixture's
lines, never hard-coded), and the contract in ``lower.py``'s docstring.
"""
import math
import operator

import numpy as np
import pytest

import s2s
from s2s.emit.load import load
from s2s.emit.python import emit_function
from s2s.frontend.lower import lower
from s2s.ir import nodes as ir

import fixtures_fns as fx

ATOMS = (ir.Var, ir.Const)


def run_lowered(fn, *args, **kwargs):
    """Lower, emit, load and call ``fn`` (free variables passed as keywords)."""
    func, freevars = lower(fn)
    gen = load(emit_function(func), func.name)
    return gen(*args, **kwargs, **{name: fv.load() for name, fv in freevars.items()})


def calls(func):
    out = []
    for s in ir.walk(func.body):
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call):
            out.append(v)
    return out


def assigns(func):
    return [s for s in ir.walk(func.body) if isinstance(s, ir.Assign)]


def same(a, b):
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(same, a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.allclose(a, b, equal_nan=True)


# --- exec-equivalence ------------------------------------------------------------

M = np.arange(6.0).reshape(2, 3) / 7.0
V5 = np.array([0.5, -1.25, 2.0, 3.5, -0.75])

EQUIV_CASES = [
    (fx.arith, [(1.3, 0.4), (-2.0, 3.0)]),
    (fx.swap, [(1.0, 5.0)]),
    (fx.rotate, [(1, 2, 3)]),
    (fx.fib, [(0,), (1,), (10,)]),
    (fx.unpack_nested, [(((1, 2), 3),)]),
    (fx.chained, [(-1.0,), (5.0,), (10.0,), (11.0,)]),
    (fx.boolops, [(0, 5), (3, 0), (3, 4), (0, 0)]),
    (fx.ifexp, [(2.0,), (-3.0,)]),
    (fx.defaults, [(1.0,), (1.0, 4.0), (1.0, 4.0, -1.0)]),
    (fx.array_methods, [(M,)]),
    (fx.slicing, [(V5,)]),
    (fx.uses_globals, [(np.array([0.5, 1.5, -2.0]),)]),
    (fx.halving, [(0.5,), (37.0,)]),
    (fx.loop_control, [(1.5,)]),
    (fx.piecewise, [(-3.0,), (0.5,), (4.0,)]),
    (fx.inplace, [(1.5,)]),
    (fx.containers, [(1.0,), (3.0,), (4.5,)]),
    (fx.guarded, [(0.0,), (4.0,)]),
    (fx.matrix_index, [(np.arange(9.0).reshape(3, 3), 1)]),
    (fx.docstring_fn, [(2.5,)]),
    (fx.calls_helper_kw, [(1.5,)]),
]


@pytest.mark.parametrize("fn,arg_sets", EQUIV_CASES, ids=[c[0].__name__ for c in EQUIV_CASES])
def test_exec_equivalence(fn, arg_sets):
    for args in arg_sets:
        want = fn(*args)
        got = run_lowered(fn, *args)
        assert same(got, want), (fn.__name__, args, got, want)


def test_exec_equivalence_of_closure():
    inner = fx.make_closure(0.75)
    assert same(run_lowered(inner, 0.3), inner(0.3))


def test_exec_equivalence_of_lambdas():
    assert run_lowered(fx.scale_lambda, 4.0) == fx.scale_lambda(4.0)
    for lam in (*fx.LAMBDAS_DIFFERENT_OPS, *fx.LAMBDAS_DIFFERENT_PARAMS):
        assert run_lowered(lam, 4.0) == lam(4.0)


# --- IR shape ----------------------------------------------------------------------

@pytest.mark.parametrize("fn", [c[0] for c in EQUIV_CASES], ids=[c[0].__name__ for c in EQUIV_CASES])
def test_three_address(fn):
    func, _ = lower(fn)
    allowed = (ir.Assign, ir.Unpack, ir.ExprStmt, ir.If, ir.For, ir.While, ir.Break,
               ir.Continue, ir.Return, ir.Raise, ir.Try, ir.Assert)
    for s in ir.walk(func.body):
        assert isinstance(s, allowed), s
        v = getattr(s, "value", None)
        if isinstance(s, (ir.Assign, ir.ExprStmt)):
            assert isinstance(v, (ir.Var, ir.Const, ir.Call)), s
        elif isinstance(s, (ir.Unpack, ir.Return)):
            assert isinstance(v, ATOMS), s
        if isinstance(v, ir.Call):
            assert callable(v.fn), s
            for a in v.operands():
                assert isinstance(a, ATOMS), s
        for a in ir.stmt_uses(s):
            assert isinstance(a, ATOMS), s


@pytest.mark.parametrize("fn", [c[0] for c in EQUIV_CASES], ids=[c[0].__name__ for c in EQUIV_CASES])
def test_every_statement_has_a_location(fn):
    func, _ = lower(fn)
    path = fx.__file__
    for s in ir.walk(func.body):
        assert s.loc.file == path, s
        assert s.loc.line > 0, s
        assert s.loc.text.strip(), s


def test_locations_point_at_the_construct():
    func, _ = lower(fx.located)
    by_target = {s.target.name: s for s in assigns(func)}
    line_y, text_y = fx.line_of(fx.located, "y = x * 2.0")
    y = by_target["y"]
    assert (y.loc.file, y.loc.line, y.loc.col, y.loc.text) == (fx.__file__, line_y, 4, text_y)
    # the call of math.sin sits on the continuation line, column of "math"
    line_sin, text_sin = fx.line_of(fx.located, "math.sin(x))")
    sin = next(s for s in assigns(func)
               if isinstance(s.value, ir.Call) and s.value.fn is math.sin)
    assert (sin.loc.line, sin.loc.col, sin.loc.text) == (line_sin, text_sin.index("math"), text_sin)
    line_z, text_z = fx.line_of(fx.located, "z = (y +")
    z = by_target["z"]
    assert (z.loc.line, z.loc.col, z.loc.text) == (line_z, 4, text_z)
    ret = func.body[-1]
    assert isinstance(ret, ir.Return)
    assert ret.loc.line == fx.line_of(fx.located, "return z")[0]
    assert func.loc.line == fx.line_of(fx.located, "def located")[0]
    assert str(y.loc) == f"{fx.__file__}:{line_y}:5"


def test_location_of_nested_def():
    inner = fx.make_closure(1.0)
    func, _ = lower(inner)
    line_def, _ = fx.line_of(fx.make_closure, "def inner(x):")
    assert func.loc.line == line_def
    assert func.name == "inner"
    line_w, text_w = fx.line_of(fx.make_closure, "w = x * k + np.sum(arr)")
    w = next(s for s in assigns(func) if s.target.name == "w")
    assert (w.loc.line, w.loc.col, w.loc.text) == (line_w, 8, text_w)


def test_decorated_functions():
    func, _ = lower(fx.decorated)
    line_ret, text_ret = fx.line_of(fx.decorated, "return x + 1.0")
    assert func.body[-1].loc.line == line_ret
    assert func.loc.line in (fx.line_of(fx.decorated, "@identity_decorator")[0],
                             fx.line_of(fx.decorated, "def decorated")[0])
    func2, _ = lower(fx.decorated_twice.__wrapped__)
    assert func2.name == "decorated_twice"
    assert func2.body[-1].loc.line == fx.line_of(fx.decorated_twice.__wrapped__, "return x * 3.0")[0]
    assert run_lowered(fx.decorated_twice.__wrapped__, 2.0) == 6.0


def test_lambda_sharing_its_line():
    func, freevars = lower(fx.scale_lambda)
    line, text = fx.line_of(fx.scale_lambda, "scale_lambda = lambda")
    ret = func.body[-1]
    assert isinstance(ret, ir.Return)
    assert ret.loc.line == line
    # the lambda's body "x * K" starts after "lambda x: "
    mul = next(s for s in assigns(func) if isinstance(s.value, ir.Call))
    assert mul.loc.col == text.index("x * K")
    assert set(freevars) == {"K"}


@pytest.mark.parametrize("pair", ["LAMBDAS_DIFFERENT_OPS", "LAMBDAS_DIFFERENT_PARAMS",
                                  "LAMBDAS_SAME_SHAPE"])
def test_two_lambdas_on_one_line_each_find_their_own_source(pair):
    first, second = getattr(fx, pair)
    for lam in (first, second):
        assert run_lowered(lam, 4.0) == lam(4.0), pair
    c1 = lower(first)[0].body[-1].loc.col
    c2 = lower(second)[0].body[-1].loc.col
    assert c1 < c2


# --- desugaring ----------------------------------------------------------------------

def test_augmented_assignment_becomes_binary_call():
    func, _ = lower(fx.arith)
    ops = [s.value.fn for s in assigns(func) if s.target.name == "a" and isinstance(s.value, ir.Call)]
    # x op= v on a name is Python's in-place operator (arrays are updated in place)
    assert ops == [operator.add, operator.iadd, operator.isub, operator.imul, operator.ipow,
                   operator.ifloordiv]
    for s in assigns(func)[1:]:
        if s.target.name == "a" and s.loc.text.strip() == "a -= y / 2":
            assert s.value.args[0] == ir.Var("a")


def test_tuple_unpacking_uses_unpack():
    func, _ = lower(fx.unpack_nested)
    unpacks = [s for s in ir.walk(func.body) if isinstance(s, ir.Unpack)]
    assert len(unpacks) == 2
    assert unpacks[0].value == ir.Var("t")
    assert [v.name for v in unpacks[1].targets] == ["a", "b"]


def test_swap_preserves_semantics():
    assert run_lowered(fx.swap, 1.0, 5.0) == fx.swap(1.0, 5.0) == 5.0 - 2.0
    assert run_lowered(fx.rotate, 1, 2, 3) == 312


def nested_swap(a, b, c, d):
    (a, b), c = (c, d), a
    return a, b, c


def test_swap_with_nested_target_reads_old_values():
    # Python evaluates the whole right-hand side before binding anything: c gets the OLD a.
    assert nested_swap(1, 2, 3, 4) == (3, 4, 1)
    assert run_lowered(nested_swap, 1, 2, 3, 4) == (3, 4, 1)


def test_chained_comparison_evaluates_middle_once_and_short_circuits():
    def chain(a, b, c):
        return fx.log("lo", a) < fx.log("mid", b) < fx.log("hi", c)

    fx.CALLS.clear()
    assert run_lowered(chain, 1, 2, 3) is True
    assert fx.CALLS == ["lo", "mid", "hi"]
    fx.CALLS.clear()
    assert run_lowered(chain, 5, 2, 3) is False
    assert fx.CALLS == ["lo", "mid"]
    func, _ = lower(chain)
    assert sum(1 for c in calls(func) if c.fn is fx.log) == 3
    assert any(isinstance(s, ir.If) for s in func.body)


def test_and_or_short_circuit():
    def both(a, b):
        return fx.log("a", a) and fx.log("b", b)

    def either(a, b):
        return fx.log("a", a) or fx.log("b", b)

    fx.CALLS.clear()
    assert run_lowered(both, 0, 7) == 0 and fx.CALLS == ["a"]
    fx.CALLS.clear()
    assert run_lowered(both, 2, 7) == 7 and fx.CALLS == ["a", "b"]
    fx.CALLS.clear()
    assert run_lowered(either, 2, 7) == 2 and fx.CALLS == ["a"]
    fx.CALLS.clear()
    assert run_lowered(either, 0, 7) == 7 and fx.CALLS == ["a", "b"]
    func, _ = lower(either)
    assert any(isinstance(s, ir.If) for s in func.body)


def test_conditional_expression_evaluates_one_branch():
    def pick(c):
        return fx.log("yes", 1.0) if c else fx.log("no", 2.0)

    fx.CALLS.clear()
    assert run_lowered(pick, True) == 1.0 and fx.CALLS == ["yes"]
    fx.CALLS.clear()
    assert run_lowered(pick, False) == 2.0 and fx.CALLS == ["no"]
    func, _ = lower(pick)
    ifs = [s for s in func.body if isinstance(s, ir.If)]
    assert len(ifs) == 1 and ifs[0].body and ifs[0].orelse


def test_defaults_recorded_on_params():
    func, _ = lower(fx.defaults)
    params = {p.var.name: p for p in func.params}
    assert params["x"].default is None
    assert params["y"].default == ir.Const(2.0)
    assert params["z"].default == ir.Const(None)
    assert not any(p.kwonly for p in func.params)


def kwonly_params(x, *, k=1.0, m):
    return x * k * m


def test_keyword_only_params_stay_keyword_only():
    func, _ = lower(kwonly_params)
    params = {p.var.name: p for p in func.params}
    assert params["k"].kwonly and params["m"].kwonly
    assert params["k"].default == ir.Const(1.0)
    assert run_lowered(kwonly_params, 2.0, m=3.0) == 6.0


def test_array_attribute_and_method():
    def f(x):
        return x.T, x.sum(axis=0), x.shape

    func, _ = lower(f)
    cs = calls(func)
    fns = [c.fn for c in cs]
    assert np.transpose in fns and np.shape in fns
    s = next(c for c in cs if c.fn is np.sum)
    assert s.args == (ir.Var("x"),)
    assert s.kwargs == (("axis", ir.Const(0)),)
    assert same(run_lowered(f, M), f(M))


# --- free variables ----------------------------------------------------------------------

def test_module_functions_and_modules_become_consts():
    func, freevars = lower(fx.uses_globals)
    fns = [c.fn for c in calls(func)]
    assert np.dot in fns and fx.helper in fns
    assert "np" not in freevars and "helper" not in freevars


def test_global_array_becomes_keyword_only_free_variable():
    func, freevars = lower(fx.uses_globals)
    assert set(freevars) == {"W", "SCALE"}
    kw = {p.var.name for p in func.params if p.kwonly}
    assert kw == {"W", "SCALE"}
    assert [p.var.name for p in func.params if not p.kwonly] == ["x"]
    assert freevars["W"].load() is fx.W
    old = fx.SCALE
    try:
        fx.SCALE = 10.0  # read afresh at every load
        assert freevars["SCALE"].load() == 10.0
    finally:
        fx.SCALE = old


def test_closure_cells():
    inner = fx.make_closure(0.5)
    func, freevars = lower(inner)
    assert set(freevars) == {"k", "arr"}
    assert freevars["k"].load() == 0.5
    assert freevars["arr"].slot[0] == "cell"
    fns = [c.fn for c in calls(func)]
    assert math.exp in fns and fx.helper in fns and np.sum in fns


def test_closure_cell_holding_a_function_is_const():
    g = math.sin

    def f(x):
        return g(x)

    func, freevars = lower(f)
    assert freevars == {}
    assert [c.fn for c in calls(func)] == [math.sin]


def test_builtins_resolve():
    def f(x):
        return abs(x) + len([x]) + max(x, 0.0)

    func, freevars = lower(f)
    assert freevars == {}
    fns = {c.fn for c in calls(func)}
    assert {abs, len, max} <= fns
    assert run_lowered(f, -2.0) == f(-2.0)


def test_empty_closure_cell_is_a_name_error():
    def outer():
        def f(x):
            return later * x

        with pytest.raises(s2s.NameResolutionError, match="later"):
            lower(f)
        later = 1.0
        return later

    outer()


def scaled_by_module_attribute(x):
    return x * fx.SCALE


def test_number_read_through_a_module_attribute_is_not_stale():
    # ``fx.SCALE`` is a number (not a module, callable or class): like a global name it
    # must be read at every call, not frozen into the IR when the function is lowered.
    old = fx.SCALE
    g = s2s.grad(scaled_by_module_attribute)
    try:
        assert g(1.0) == old
        fx.SCALE = 7.0
        assert run_lowered(scaled_by_module_attribute, 1.0) == 7.0
        assert g(1.0) == 7.0
    finally:
        fx.SCALE = old


def aug_assign_index(x):
    x[fx.log("index", 1)] += 10.0
    return x


def test_augmented_subscript_evaluates_the_index_once():
    fx.CALLS.clear()
    out = run_lowered(aug_assign_index, np.zeros(3))
    assert fx.CALLS == ["index"]
    assert list(out) == [0.0, 10.0, 0.0]
