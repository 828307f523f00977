"""Tests of the IR passes: single_exit, to_ssa, inline_calls, dce.

Each pass is checked against the shape its module docstring promises and,
where it rewrites code, against the original Python function (emit + load +
call on sample inputs: the computation must be unchanged).
"""

import numpy as np
import pytest

import s2s
from s2s.core import pipeline
from s2s.emit.load import load
from s2s.emit.python import emit_function
from s2s.frontend.lower import lower
from s2s.ir import nodes as ir
from s2s.passes.dce import dce
from s2s.passes.inline import inline_calls
from s2s.passes.single_exit import single_exit
from s2s.passes.ssa import to_ssa

import fixtures_fns as fx


def run_ir(func, freevars, *args):
    gen = load(emit_function(func), func.name)
    return gen(*args, **{name: fv.load() for name, fv in freevars.items()})


def returns_in(stmts):
    return [s for s in ir.walk(stmts) if isinstance(s, ir.Return)]


def same(a, b):
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(same, a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.allclose(a, b, equal_nan=True)


# --- fixtures --------------------------------------------------------------------

def early(x):
    if x > 0:
        return x
    y = x * 2
    return y


def nested_returns(x, flag):
    if flag:
        if x > 1.0:
            return x * 10.0
        z = x + 1.0
    else:
        z = x - 1.0
    w = z * 3.0
    return w


def maybe(x):
    if x > 0:
        return x


def no_return(x):
    y = x * 2  # noqa: F841


def unreachable_return(x):
    return x * 2.0
    return x * 3.0  # noqa


def straight(x):
    y = x * 2.0
    y = y + 1.0
    y = y * y
    return y


def merge(x):
    y = 1.0
    z = x
    if x > 0:
        y = x * 2
        y = y + 1.0
    else:
        z = x - 1.0
    return y + z


def with_loop(x):
    s = x
    k = 0
    for i in range(3):
        s = s + i * x
        k = k + 1
    t = s * k
    return t + s


def doubles_param(a):
    a = a * 2.0
    return a + 1.0


def calls_param_mutator(x):
    y = doubles_param(x)
    return x + y


GAIN = 1.5
OFFSETS = np.array([0.25, -1.0])


def helper_reads_global(v):
    return v * GAIN + np.sum(OFFSETS)


def caller_of_global_helper(x):
    return helper_reads_global(x) * 2.0


def fact(n):
    if n <= 1:
        return 1.0
    return n * fact(n - 1)


def calls_nested_helper(x):
    return calls_param_mutator(x) + fx.helper(x, b=x)


def dead_code(x):
    unused = np.sin(x) * 3.0  # noqa: F841
    also_unused = x + 1.0  # noqa: F841
    fx.log("effect", x)
    kept = fx.log("kept", x)  # noqa: F841  (an opaque call: not known to be pure)
    if x > 0:
        dead_in_branch = x * 5.0  # noqa: F841
    y = x * 2.0
    return y


# --- single_exit -------------------------------------------------------------------

def _one_exit(func):
    assert isinstance(func.body[-1], ir.Return)
    assert len(returns_in(func.body)) == 1


@pytest.mark.parametrize("fn,args", [
    (fx.piecewise, [(-3.0,), (0.5,), (4.0,)]),
    (early, [(2.0,), (-2.0,)]),
    (nested_returns, [(2.0, True), (0.5, True), (0.5, False)]),
    (maybe, [(2.0,), (-2.0,)]),
    (no_return, [(1.0,)]),
    (unreachable_return, [(1.5,)]),
])
def test_single_exit(fn, args):
    func, freevars = lower(fn)
    out = single_exit(func)
    _one_exit(out)
    for a in args:
        assert run_ir(out, freevars, *a) == fn(*a), (fn.__name__, a)


def test_single_exit_moves_code_after_a_returning_if_into_the_fall_through_branch():
    out = single_exit(lower(early)[0])
    assert [type(s) for s in out.body] == [ir.Assign, ir.If, ir.Return] or \
        [type(s) for s in out.body] == [ir.If, ir.Return]
    if_ = next(s for s in out.body if isinstance(s, ir.If))
    # y = x * 2 now lives in the else branch, not after the if
    in_else = {v.name for s in ir.walk(if_.orelse) for v in ir.stmt_defs(s)}
    in_body = {v.name for s in ir.walk(if_.body) for v in ir.stmt_defs(s)}
    assert "y" in in_else and "y" not in in_body
    after = {v.name for s in out.body[out.body.index(if_) + 1:] for v in ir.stmt_defs(s)}
    assert "y" not in after


def test_single_exit_falling_off_the_end_returns_none():
    out = single_exit(lower(no_return)[0])
    assert out.body[-1] == ir.Return(ir.Const(None), out.body[-1].loc)
    out = single_exit(lower(maybe)[0])
    assert run_ir(out, {}, -1.0) is None


def test_single_exit_keeps_a_single_return_function_unchanged():
    func = lower(straight)[0]
    assert single_exit(func).body == func.body


# --- to_ssa -----------------------------------------------------------------------

def _paths(stmts):
    """Every sequence of definitions along a path through straight code and ifs."""
    paths = [[]]
    for s in stmts:
        if isinstance(s, ir.If):
            branches = _paths(s.body) + _paths(s.orelse)
            paths = [p + b for p in paths for b in branches]
        elif isinstance(s, (ir.For, ir.While, ir.Try)):
            pass  # loops are opaque: their versions are (re)assigned inside, by contract
        else:
            paths = [p + [v.name for v in ir.stmt_defs(s)] for p in paths]
    return paths


def _assert_single_assignment(func):
    params = [p.var.name for p in func.params]
    for path in _paths(func.body):
        names = params + path
        dup = {n for n in names if names.count(n) > 1}
        assert not dup, (dup, path)


SSA_CASES = [
    (straight, [(1.5,)]),
    (merge, [(2.0,), (-2.0,)]),
    (with_loop, [(0.5,)]),
    (fx.arith, [(1.3, 0.4)]),
    (fx.swap, [(1.0, 5.0)]),
    (fx.fib, [(10,)]),
    (fx.defaults, [(1.0,), (1.0, 4.0, -1.0)]),
    (fx.halving, [(37.0,)]),
    (fx.loop_control, [(1.5,)]),
    (fx.piecewise, [(-3.0,), (0.5,), (4.0,)]),
    (nested_returns, [(2.0, True), (0.5, True), (0.5, False)]),
    (fx.chained, [(5.0,), (11.0,)]),
    (fx.boolops, [(0, 5), (3, 4)]),
    (fx.containers, [(1.0,), (3.0,)]),
    (fx.guarded, [(0.0,), (4.0,)]),
]


@pytest.mark.parametrize("fn,arg_sets", SSA_CASES, ids=[c[0].__name__ for c in SSA_CASES])
def test_ssa_single_assignment_and_same_computation(fn, arg_sets):
    func, freevars = lower(fn)
    out = to_ssa(single_exit(func))
    _assert_single_assignment(out)
    for args in arg_sets:
        assert same(run_ir(out, freevars, *args), fn(*args)), (fn.__name__, args)


def test_ssa_renames_reassignment():
    out = to_ssa(lower(straight)[0])
    targets = [s.target.name for s in out.body if isinstance(s, ir.Assign)]
    assert len(set(targets)) == 3 == len(targets)
    assert targets[0] == "y"


def test_ssa_merges_after_if():
    out = to_ssa(single_exit(lower(merge)[0]))
    if_ = next(s for s in out.body if isinstance(s, ir.If))
    ret = out.body[-1]
    # the returned sum reads one name for y and one for z, each defined in both branches
    add = next(s for s in out.body[out.body.index(if_) + 1:]
               if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call))
    for v in add.value.args:
        assert isinstance(v, ir.Var)
        defined_b = {d.name for s in if_.body for d in ir.stmt_defs(s)}
        defined_o = {d.name for s in if_.orelse for d in ir.stmt_defs(s)}
        assert v.name in defined_b and v.name in defined_o, (v, defined_b, defined_o)
    assert isinstance(ret, ir.Return)


def test_ssa_gives_loops_fresh_versions():
    out = to_ssa(lower(with_loop)[0])
    loop = next(s for s in out.body if isinstance(s, ir.For))
    in_loop = {v.name for s in ir.walk(loop.body) for v in ir.stmt_defs(s)}
    before = out.body[:out.body.index(loop)]
    before_defs = [v.name for s in before for v in ir.stmt_defs(s)]
    # the versions defined before the loop are never written inside it ...
    assert "s" in before_defs and "k" in before_defs
    assert "s" not in in_loop and "k" not in in_loop
    # ... the loop works on fresh versions, copied from them just before it
    copies = {s.target.name: s.value.name for s in before
              if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var)}
    fresh = {n for n in in_loop if copies.get(n) in ("s", "k")}
    assert len(fresh) == 2, (copies, in_loop)
    assert run_ir(out, {}, 0.5) == with_loop(0.5)


# --- inline_calls -------------------------------------------------------------------

def _inlined(fn):
    func, freevars = lower(fn)
    return inline_calls(func, freevars, pipeline.lowered)


def _user_calls(func):
    from s2s.passes.inline import is_user_function
    return [s.value.fn for s in ir.walk(func.body)
            if isinstance(getattr(s, "value", None), ir.Call) and is_user_function(s.value.fn)]


@pytest.mark.parametrize("fn,args", [
    (fx.calls_helper_kw, (1.5,)),
    (fx.uses_globals, (np.array([0.5, 1.5, -2.0]),)),
    (caller_of_global_helper, (1.25,)),
    (calls_param_mutator, (1.0,)),
    (calls_nested_helper, (0.75,)),
])
def test_inline_removes_user_calls_and_keeps_the_computation(fn, args):
    out, freevars = _inlined(fn)
    assert _user_calls(out) == []
    assert same(run_ir(single_exit(out), freevars, *args), fn(*args))


def test_inline_callee_assigning_its_parameter_does_not_clobber_the_caller():
    out, freevars = _inlined(calls_param_mutator)
    assert calls_param_mutator(1.0) == 1.0 + 3.0
    assert run_ir(single_exit(out), freevars, 1.0) == 4.0
    # the caller's x is never reassigned by the inlined body
    assert not any(v.name == "x" for s in ir.walk(out.body) for v in ir.stmt_defs(s))


def test_inline_binds_keywords_and_defaults():
    out, freevars = _inlined(fx.calls_helper_kw)
    consts = [s.value.value for s in ir.walk(out.body)
              if isinstance(s, ir.Assign) and isinstance(s.value, ir.Const)]
    muls = [s.value for s in ir.walk(out.body)
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
            and s.value.fn.__name__ == "mul"]
    assert 2.0 in consts or any(ir.Const(2.0) in m.args for m in muls)  # a=2.0
    assert 3.0 in consts or any(ir.Const(3.0) in m.args for m in muls)  # default b=3.0
    assert run_ir(single_exit(out), freevars, 1.5) == fx.calls_helper_kw(1.5)


def test_inline_callee_globals_become_free_variables():
    out, freevars = _inlined(caller_of_global_helper)
    slots = {fv.slot for fv in freevars.values()}
    assert ("global", id(globals()), "GAIN") in slots
    assert ("global", id(globals()), "OFFSETS") in slots
    kw = {p.var.name for p in out.params if p.kwonly}
    assert kw == set(freevars)


def test_inline_recursion_is_an_error():
    with pytest.raises(s2s.UnsupportedSyntaxError, match="recursi"):
        _inlined(fact)


def test_inline_through_grad():
    g = s2s.grad(calls_param_mutator)(1.0)
    # d/dx (x + (2x + 1)) = 3
    assert g == pytest.approx(3.0)


# --- dce ------------------------------------------------------------------------

def test_dce_removes_dead_pure_assignments_and_keeps_effects():
    func, freevars = lower(dead_code)
    out = dce(single_exit(func))
    defs = {v.name for s in ir.walk(out.body) for v in ir.stmt_defs(s)}
    assert "unused" not in defs and "also_unused" not in defs
    assert "dead_in_branch" not in defs
    assert not any(isinstance(s, ir.If) for s in out.body), "an emptied if is dropped"
    effects = [s for s in ir.walk(out.body)
               if isinstance(getattr(s, "value", None), ir.Call) and s.value.fn is fx.log]
    assert len(effects) == 2
    assert any(isinstance(s, ir.ExprStmt) for s in effects)
    assert "y" in defs
    fx.CALLS.clear()
    assert run_ir(out, freevars, 2.0) == 4.0
    assert fx.CALLS == ["effect", "kept"]


def test_dce_keeps_loops_and_what_they_read():
    func, freevars = lower(with_loop)
    out = dce(func)
    assert any(isinstance(s, ir.For) for s in out.body)
    assert run_ir(out, freevars, 0.5) == with_loop(0.5)


def carried(x):
    a, b, dead = 0.0, 0.0, 0.0
    for i in range(4):
        b = b + a * 2.0  # reads the a of the previous iteration
        a = x + i
        dead = dead + a * 3.0  # carried, but never read after the loop
        if a > 100.0:
            break
    return b


def with_while(x):
    s, k, dead = x, 0, 0.0
    while s < 10.0:
        k += 1
        dead = s * 2.0
        if k == 2:
            s = s + 0.5
            continue
        s = s * 1.5
    return s + k


def break_in_try(x):
    y = 1.0
    for i in range(5):
        y = x * i  # read after the loop through the break inside the try
        try:
            if i == 2:
                break
        except ValueError:
            pass
        y = 0.0
    return y


@pytest.mark.parametrize("fn, dead", [(carried, "dead"), (with_while, "dead"),
                                      (break_in_try, None)])
def test_dce_inside_loops_keeps_what_a_later_iteration_or_exit_reads(fn, dead):
    func, freevars = lower(fn)
    out = dce(to_ssa(single_exit(func)))
    defs = {v.name for s in ir.walk(out.body) for v in ir.stmt_defs(s)}
    if dead:
        assert not any(d == dead or d.startswith(dead + "_") for d in defs), defs
    for x in (0.5, 2.0, 7.0):
        assert run_ir(out, freevars, x) == fn(x)


def test_dce_drops_a_loop_left_empty():
    def f(x):
        for i in range(3):
            unused = x * i
        return x
    out = dce(lower(f)[0])
    assert not any(isinstance(s, ir.For) for s in ir.walk(out.body))


def test_dce_is_idempotent_on_live_code():
    func = lower(straight)[0]
    assert dce(func).body == func.body
