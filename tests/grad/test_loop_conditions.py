"""Reverse mode through loops whose branches test ``and`` / ``or`` / ``not`` and chained
comparisons (``s2s/ad/loops.py``).

``a and b`` and ``a < b < c`` desugar to ``r = a; if r: r = b``: an ``if`` whose branch
assigns its own test.  Inside a loop the adjoint ``if`` once ran on the test's value
*after* the branch and so popped the tape in another order than the primal pushed it
(``IndexError`` in ``rt.reversed_range``, ``None * None``, or a wrong gradient).

Oracles: central finite differences in float64 (``tests/grad/oracles.py``, with a
second step size to skip points where a branch flips), the jvp/vjp dot-product test
(forward mode is an independent transform that keeps loops as they are), and the
tapes of the generated gradient, which must be empty once the adjoint sweep is done.
"""
import inspect
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import s2s
from s2s.batch.transform import BatchingError
from s2s_runtime.batching import BatchingRuntimeError
from tests.grad import progen
from tests.grad.oracles import fd_grad

from .test_random_programs import SETTINGS, SCALE


# -- the fuzzer's reproducers, minimised ----------------------------------------------
def and_in_for_in_while(x0, x1, n):
    s = x0 * x1
    u = x1 + 0.5
    g = 0.5 + x0 * x0
    while g < 2.0 + 0.5 * n:
        s = np.tanh(s + 0.5)
        for i in range(n):
            if s > 0.3 and x0 > 0.3:
                s = np.tanh(s * x1)
            else:
                s = np.tanh(s + x0)
            if -0.5 < x0 <= 0.5 and x1 > 0.3:
                s = np.tanh(s * u)
            else:
                s = np.tanh(0.5 * s)
            s = s + 0.1 * i * u
        g = g * 1.4 + 0.05
    return s * x0 + u * x1


def chained_in_while_in_while(x0, x1, n):
    s = x0 * x1
    u = x1 + 0.5
    g1 = 0.5 + x0 * x0
    while g1 < 2.0 + 0.5 * n:
        s = np.tanh(s)
        g0 = 0.5 + x0 * x0
        while g0 < 2.0 + 0.5 * n:
            if -0.5 < u <= 0.5:
                s = np.tanh(s * x0)
            else:
                s = np.tanh(x0 * 0.5 + s)
            g0 = g0 * 1.4 + 0.05
        g1 = g1 * 1.4 + 0.05
    return s * x0 + u * x1


def or_and_not_in_for(x0, x1, n):
    s = x0
    for i in range(n):
        if not (s > 0.2 or x1 < -0.1) and s < 1.5:
            s = s * x1 + 0.3
        elif s < x1 <= 2.0 or -1.0 < x0 < s < 0.9:
            s = np.sin(s) * x0
        else:
            s = 0.5 * s + x1
    return s


def flag_reassigned(x0, x1, n):  # user code of the same shape
    s = x0
    for i in range(n):
        c = s > 0.1
        if c:
            c = x1 > 0.2
            s = s * x1
        if c:
            s = np.tanh(s + x0)
    return s


REPRODUCERS = [
    (and_in_for_in_while, (0.0, 0.0, 1)),
    (and_in_for_in_while, (0.41, 0.37, 2)),
    (and_in_for_in_while, (0.21, 0.62, 3)),
    (chained_in_while_in_while, (0.001, 0.004, 0)),
    (chained_in_while_in_while, (0.31, -0.27, 1)),
    (chained_in_while_in_while, (0.73, 0.15, 2)),
    (or_and_not_in_for, (0.35, 0.81, 4)),
    (or_and_not_in_for, (-0.45, -0.6, 5)),
    (or_and_not_in_for, (0.13, 0.27, 6)),
    (flag_reassigned, (0.35, 0.81, 4)),
    (flag_reassigned, (0.35, 0.11, 3)),
]


def tapes_left(f, args, argnums):
    """What the tapes of ``grad(f)``'s generated code hold at its return: its source with
    ``return g`` made ``return g, tape, ctrl``, run in the generated module's globals."""
    g = s2s.grad(f, argnums=argnums)
    inner, free = g.generated(g._bind(list(args), {}))
    src = inspect.getsource(inner)
    lines = src.rstrip("\n").split("\n")
    assert lines[-1].startswith("    return "), src
    if "    tape = ()" not in lines or "    ctrl = ()" not in lines:
        return (), ()
    lines[-1] += ", tape, ctrl"
    namespace = dict(inner.__globals__)
    exec(compile("\n".join(lines) + "\n", "<tape check>", "exec"), namespace)
    *_, tape, ctrl = namespace[inner.__name__](*args, **free)
    return tape, ctrl


def _smooth_at(f, args, i):
    """No branch flips near ``args[i]``: central differences with two steps agree."""
    def along(v):
        a = list(args)
        a[i] = v
        return f(*a)
    x = args[i]
    d1 = (along(x + 1e-6) - along(x - 1e-6)) / 2e-6
    d2 = (along(x + 1e-4) - along(x - 1e-4)) / 2e-4
    left, right = (along(x) - along(x - 1e-6)) / 1e-6, (along(x + 1e-6) - along(x)) / 1e-6
    return abs(d1 - d2) < 1e-5 * (1 + abs(d1)) and abs(left - right) < 1e-3 * (1 + abs(d1))


def check_program(f, args, require_smooth=True, jit=False):
    """The gradient against finite differences, the dot-product test against forward
    mode, the pullback run twice, and empty tapes after the adjoint sweep; with ``jit``,
    the compiled gradient against the same differences and the Python gradient."""
    nums = (0, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value, grads = s2s.value_and_grad(f, argnums=nums)(*args)
        assert math.isclose(value, f(*args), rel_tol=1e-12, abs_tol=1e-12)
        want = fd_grad(f, list(args), nums)
        compiled = s2s.jit(s2s.grad(f, argnums=nums))(*args) if jit else grads
        for i in nums:
            if require_smooth or _smooth_at(f, args, i):
                assert math.isclose(grads[i], want[i], rel_tol=1e-5, abs_tol=1e-6), \
                    (i, grads[i], want[i])
                assert math.isclose(compiled[i], want[i], rel_tol=1e-5, abs_tol=1e-6)
            assert math.isclose(compiled[i], grads[i], rel_tol=1e-10, abs_tol=1e-12)
        t = (0.7, -1.3)
        _, jv = s2s.jvp(f, args, t + (0,))
        assert math.isclose(jv, grads[0] * t[0] + grads[1] * t[1], rel_tol=1e-9,
                            abs_tol=1e-10)
        _, pull = s2s.vjp(f, *args)
        for _ in range(2):
            ct = pull(2.0)
            assert math.isclose(ct[0], 2 * grads[0], rel_tol=1e-12, abs_tol=1e-12)
            assert math.isclose(ct[1], 2 * grads[1], rel_tol=1e-12, abs_tol=1e-12)
        assert tapes_left(f, args, nums) == ((), ())


@pytest.mark.parametrize("f, args", REPRODUCERS, ids=lambda v: getattr(v, "__name__", ""))
def test_reproducers_against_differences_and_forward_mode(f, args):
    check_program(f, args)


def test_the_reproducer_as_reported():
    # grad(f, argnums=(0, 1))(0.0, 0.0, 1) raised IndexError in rt.reversed_range:
    # here s is constant, so the gradient is (tanh(0.5), u + x1) in closed form
    def f(x0, x1, n):
        s = x0 * x1
        u = x1 + 0.5
        g1 = 0.5 + x0 * x0
        while g1 < 2.0 + 0.5 * n:
            s = np.tanh(0.5)
            for i0 in range(n):
                if s > 0.3 and x0 > 0.3:
                    s = np.tanh(0.5)
                else:
                    s = np.tanh(0.5)
                s = np.tanh(0.5)
                if -0.5 < x0 <= 0.5 and x0 > 0.3:
                    s = np.tanh(0.5)
                else:
                    s = np.tanh(0.5)
                s = s + 0.1 * i0 * u
            g1 = g1 * 1.4 + 0.05
        return s * x0 + u * x1

    for x0, x1 in ((0.0, 0.0), (0.4, 0.2), (-0.3, 0.9)):
        g = s2s.grad(f, argnums=(0, 1))(x0, x1, 1)
        assert math.isclose(g[0], np.tanh(0.5), rel_tol=1e-14)
        assert math.isclose(g[1], x1 + 0.5 + x1, rel_tol=1e-14)


def _ifs_assigning_their_test(src):
    """The ``if NAME:`` lines of ``src`` whose block assigns ``NAME`` (``NAME = ...``,
    ``NAME, tape = tape``)."""
    lines = src.splitlines()
    found = []
    for k, ln in enumerate(lines):
        head = ln.strip()
        if not (head.startswith("if ") and head.endswith(":") and head[3:-1].isidentifier()):
            continue
        name, indent = head[3:-1], len(ln) - len(ln.lstrip())
        for inner in lines[k + 1:]:
            if inner.strip() and len(inner) - len(inner.lstrip()) <= indent:
                break
            if inner.strip().startswith((f"{name} = ", f"{name}, ")):
                found.append(head)
    return found


def test_the_branch_decision_is_a_fresh_copy_in_the_generated_code():
    g = s2s.grad(flag_reassigned)
    src = inspect.getsource(g.generated(g._bind([0.3, 0.4, 2], {}))[0])
    assert "if c:" in src and "c = x1 > 0.2" in src  # the program's own test and flag
    # no if (primal or adjoint) tests a name its own branch reassigns
    assert _ifs_assigning_their_test(src) == [], src
    assert _ifs_assigning_their_test(inspect.getsource(flag_reassigned)) == ["if c:"]


def decision_reassigned_in_inner_loop(x, n):
    s = x
    for k in range(3):
        c = s > 0.1
        if c:
            for j in range(n):
                c = s < 0.5 + j
                s = s * x + 0.1
        if c:
            s = np.tanh(s)
    return s


def range_reassigned_in_its_loop(x, n):
    s = x
    for k in range(2):
        r = range(n)
        for i in r:
            s = s * np.sin(x + i)
            r = range(1)
    return s


def while_test_with_and_or(x, n):
    s = x
    k = 0
    while k < n and (s < 5.0 or not s > 9.0):
        s = s * 1.5 + x if 0.1 < s <= 2.0 or s < x else s + np.sin(x)
        k = k + 1
    return s




@pytest.mark.parametrize("f, args", [
    (decision_reassigned_in_inner_loop, (0.3, 2)), (decision_reassigned_in_inner_loop, (0.05, 2)),
    (range_reassigned_in_its_loop, (0.4, 3)), (while_test_with_and_or, (0.3, 3)),
    (while_test_with_and_or, (1.7, 4))], ids=lambda v: getattr(v, "__name__", ""))
def test_one_argument_programs(f, args):
    g = s2s.grad(f)(*args)
    assert math.isclose(g, fd_grad(f, list(args), 0), rel_tol=1e-6, abs_tol=1e-8)
    assert math.isclose(s2s.jvp(f, args, (1.0, 0))[1], g, rel_tol=1e-12, abs_tol=1e-12)
    assert tapes_left(f, args, 0) == ((), ())


@pytest.mark.parametrize("f", [f for f in dict.fromkeys(f for f, _ in REPRODUCERS)],
                         ids=lambda f: f.__name__)
def test_jit_and_vmap_of_grad_agree_with_finite_differences(f):
    x0 = np.array([0.41, 0.21, 0.0, -0.35, 1.1])
    x1 = np.array([0.37, 0.62, 0.0, 0.55, -0.2])
    n = 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [fd_grad(f, [float(a), float(b), n], (0, 1)) for a, b in zip(x0, x1)]
        for k in range(len(x0)):
            jitted = s2s.jit(s2s.grad(f, argnums=(0, 1)))(float(x0[k]), float(x1[k]), n)
            for i in range(2):
                assert math.isclose(jitted[i], want[k][i], rel_tol=1e-5, abs_tol=1e-6)
        # vmap: the per-example gradients, or (where branches in a loop record on the
        # tape differently per example, which vmap does not batch yet) a clear error
        try:
            got = s2s.vmap(s2s.grad(f, argnums=(0, 1)), in_axes=(0, 0, None))(x0, x1, n)
        except (BatchingError, BatchingRuntimeError) as e:
            assert "vmap" in str(e)
            return
        for k in range(len(x0)):
            for i in range(2):
                assert math.isclose(got[i][k], want[k][i], rel_tol=1e-5, abs_tol=1e-6)


# -- random programs: nested while/for loops with boolean branch conditions ------------
NAMES = ["s", "u", "x0", "x1"]
_COMPARE = ["{v} > {c}", "{v} < {w}", "{c} < {v} <= {d}", "{v} >= {w}", "{c} < {v} < {w}",
            "{v} * {w} < {c}", "-1.0 < {v} < {w} <= 1.5"]


@st.composite
def boolean_condition(draw, depth=2):
    """A comparison, chained comparison, or ``and``/``or``/``not`` of conditions."""
    if depth > 0 and draw(st.integers(0, 2)) > 0:
        form = draw(st.sampled_from(["{a} and {b}", "{a} or {b}", "not {a}", "not ({a} and {b})",
                                     "({a} or {b}) and {b}"]))
        return form.format(a=draw(boolean_condition(depth - 1)),
                           b=draw(boolean_condition(depth - 1)))
    c, d = sorted(draw(st.sampled_from([-0.5, -0.2, 0.1, 0.3, 0.5, 0.8])) for _ in range(2))
    return draw(st.sampled_from(_COMPARE)).format(
        v=draw(st.sampled_from(NAMES)), w=draw(st.sampled_from(NAMES)), c=c, d=d)


@st.composite
def nested_loop_program(draw):
    """``def f(x0, x1, n)``: a ``while`` or ``for`` loop with another inside, whose bodies
    assign through ``if``/``elif``/``else`` on boolean conditions, conditional
    expressions and boolean flags reassigned in their own branch; ``while`` tests
    with ``and``, ``break`` and ``continue`` under boolean conditions."""
    fresh = iter(range(100))

    def expr():
        return draw(progen.scalar_expr(NAMES, 1, True))

    def stmt(indent):
        v = draw(st.sampled_from(["s", "s", "u"]))
        kind = draw(st.integers(0, 4))
        if kind == 0:
            return [f"{v} = np.tanh({expr()})"]
        if kind == 1:
            return [f"{v} = np.tanh({expr()}) if {draw(boolean_condition())} else {expr()} * 0.5"]
        if kind == 2:
            c = f"c{next(fresh)}"
            return [f"{c} = {draw(boolean_condition(1))}", f"if {c}:",
                    f"    {c} = {draw(boolean_condition(1))}", f"    {v} = np.tanh({expr()})",
                    f"if {c}:", f"    s = np.tanh(s * {expr()})"]
        lines = [f"if {draw(boolean_condition())}:", f"    {v} = np.tanh({expr()})"]
        if kind == 3:
            lines += [f"elif {draw(boolean_condition())}:", f"    {v} = np.sin({expr()})"]
        return lines + ["else:", f"    {v} = np.tanh({expr()} + 0.5)"]

    def loop(depth):
        body = []
        for _ in range(draw(st.integers(1, 3))):
            body += stmt(depth)
        if depth < 2 and (depth == 0 or draw(st.booleans())):
            body += loop(depth + 1)
            for _ in range(draw(st.integers(0, 1))):
                body += stmt(depth)
        if draw(st.booleans()):
            i = f"i{next(fresh)}"
            head = [f"for {i} in range({draw(st.sampled_from(['', '1, ']))}n):"]
            body.append(f"s = s + 0.1 * {i} * u")
        else:
            g = f"g{next(fresh)}"
            extra = draw(st.sampled_from(["", "", f" and {draw(boolean_condition(1))}",
                                          f" and not ({draw(boolean_condition(1))})"]))
            head = [f"{g} = 0.5 + x0 * x0", f"while {g} < 2.0 + 0.5 * n{extra}:"]
            # the counter first: a continue after it cannot make the loop endless
            body.insert(0, f"{g} = {g} * 1.4 + 0.05")
        if draw(st.integers(0, 3)) == 0:
            jump = [f"if {draw(boolean_condition(1))}:",
                    f"    {draw(st.sampled_from(['break', 'continue']))}"]
            starts = [k for k, ln in enumerate(body) if k and not ln.startswith((" ", "el"))]
            at = draw(st.sampled_from(starts + [len(body)]))  # between statements
            body[at:at] = jump
        return head + ["    " + line for line in body]

    lines = ["s = x0 * x1", "u = x1 + 0.5"] + loop(0) + ["return s * x0 + u * x1"]
    return progen.HEADER + "def f(x0, x1, n):\n" + "".join(f"    {ln}\n" for ln in lines)


# inputs off the round constants the conditions compare with
_point = st.integers(-900, 900).map(lambda k: k / 1000.0 + 1.2345e-4)


@settings(max_examples=40 * SCALE, **SETTINGS)
@given(nested_loop_program(), _point, _point, st.integers(0, 3))
def test_random_nested_loops_with_boolean_conditions(src, x0, x1, n):
    f = progen.load(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = f(x0, x1, n)
    assume(np.isfinite(value) and abs(value) < 1e4)
    try:
        check_program(f, (x0, x1, n), require_smooth=False, jit=True)
    except AssertionError as e:
        raise AssertionError(f"{src}\nx0={x0!r}, x1={x1!r}, n={n!r}") from e
