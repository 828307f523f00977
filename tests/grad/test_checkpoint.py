"""``s2s.checkpoint`` and ``s2s.checkpoint_loop``: the same derivatives with less tape.

Every program is written once and built twice, with the checkpoint and with
an identity in its place (``_plain``), so the checkpointed gradient is
compared with the plain one of the very same source (bit for bit where the
arithmetic is the same, 1e-12 where a schedule sums a loop-invariant
input's cotangent in another order), and both with central finite
differences.  Memory is compared as a ratio of tracemalloc peaks.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import s2s
from s2s.errors import UnsupportedSyntaxError

from .oracles import assert_tree_close, check_directional, fd_grad


def _plain(f):
    """Stands for ``checkpoint``: changes nothing."""
    return f


def _plain_loop(r, levels=2):
    """Stands for ``checkpoint_loop``: changes nothing."""
    return r


def _same(a, b, rtol=0.0):
    for x, y in zip(np.atleast_1d(a) if not isinstance(a, tuple) else a,
                    np.atleast_1d(b) if not isinstance(b, tuple) else b):
        if rtol:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-300)
        else:
            assert np.array_equal(x, y), (x, y)


# -- checkpointed functions ------------------------------------------------------------

def make_functions(ck):
    @ck
    def step(s, k):
        a = np.sin(s) * k
        if np.sum(a) > 0.0:
            a = a * a
        else:
            a = a - 1.0
        return s + 0.1 * a

    @ck
    def pair(u, v, scale=2.0):
        return u * v, scale * np.tanh(u + v)

    @ck
    def looped(x, n):
        acc = 0.0 * x
        for i in range(n):
            acc = acc + np.cos(x * i)
        return acc

    @ck
    def outer(x, k):
        return step(step(x, k), k) * 2.0

    def scalar_loop(x, k):
        s = x
        for i in range(7):
            s = step(s, k)
        return s * s

    def arrays(x, k):
        s = step(x, k)
        p, q = pair(s, x)
        m, _ = pair(q, p, scale=k)  # the second output unused: a None cotangent
        return np.sum(m * looped(x, 4)) + np.sum(outer(s, k))

    def branches(x, k):
        if x > 0.5:
            y = looped(x, 3)
        else:
            y = step(x, k) ** 2
        return y * k

    return scalar_loop, arrays, branches


CK = make_functions(s2s.checkpoint)
PLAIN = make_functions(_plain)
CASES = [(0, (0.3, 0.7)), (0, (-0.4, 1.3)), (1, (np.array([0.3, -0.2, 0.5]), 0.8)),
         (2, (0.9, 0.4)), (2, (0.2, 1.1))]


@pytest.mark.parametrize("i, args", CASES)
def test_checkpointed_function_gradients_equal_plain_and_fd(i, args):
    g = s2s.grad(CK[i], argnums=(0, 1))(*args)
    _same(g, s2s.grad(PLAIN[i], argnums=(0, 1))(*args))
    assert_tree_close(g, fd_grad(PLAIN[i], args, argnums=(0, 1)), rtol=1e-6)


@pytest.mark.parametrize("i, args", CASES)
def test_checkpointed_function_forward_mode(i, args):
    out, t = s2s.jvp(CK[i], args, tuple(np.ones_like(a) for a in args))
    out0, t0 = s2s.jvp(PLAIN[i], args, tuple(np.ones_like(a) for a in args))
    _same((out, t), (out0, t0))
    g = s2s.grad(PLAIN[i], argnums=(0, 1))(*args)
    np.testing.assert_allclose(t, sum(np.sum(x) for x in g), rtol=1e-10)


def test_the_adjoint_calls_the_checkpoint_and_records_only_arguments():
    gen, _ = s2s.grad(CK[0], argnums=(0, 1)).generated([0.3, 0.7])
    text = gen.__s2s_source__
    assert "_checkpoint_step(" in text and "_checkpoint_step_vjp(" in text
    pushes = [line for line in text.splitlines() if "tape = (" in line and "tape)" in line]
    assert pushes == ["        tape = (s_1, tape)"], pushes  # the argument, nothing of step


def test_transforms_take_a_checkpointed_function_directly():
    _, arrays, _ = PLAIN
    step_ck = s2s.checkpoint(lambda x: np.sum(np.sin(x) ** 2))
    x = np.array([0.3, 1.1])
    g = s2s.grad(step_ck)(x)
    np.testing.assert_allclose(g, 2 * np.sin(x) * np.cos(x), rtol=1e-14)
    out, pull = s2s.vjp(step_ck, x)
    np.testing.assert_allclose(pull(2.0)[0], 4 * np.sin(x) * np.cos(x), rtol=1e-14)
    np.testing.assert_allclose(s2s.hessian(step_ck)(x), np.diag(2 * np.cos(2 * x)), rtol=1e-12)
    assert s2s.checkpoint(np.sin) is np.sin  # a primitive records only its argument already


def test_second_order_through_checkpointed_calls():
    scalar_loop_ck, scalar_loop = CK[0], PLAIN[0]

    def d1(f):
        return lambda k: s2s.grad(f, argnums=1)(0.3, k)

    h = s2s.grad(d1(scalar_loop_ck))(0.7)
    _same(h, s2s.grad(d1(scalar_loop))(0.7))
    np.testing.assert_allclose(h, fd_grad(d1(scalar_loop), (0.7,)), rtol=1e-6)
    H = s2s.hessian(CK[1])(np.array([0.3, -0.2, 0.5]), 0.8)
    np.testing.assert_allclose(H, s2s.hessian(PLAIN[1])(np.array([0.3, -0.2, 0.5]), 0.8),
                               rtol=1e-12)


def test_hessian_of_a_checkpointed_custom_vjp_uses_the_rule_closed_form():
    # hessian pushes forward only the cotangents of the vjp code, so the checkpointed
    # primal (which calls the custom_vjp function) is never pushed forward
    @s2s.custom_vjp
    def cube(x):
        return x ** 3

    cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (g * 3.0 * x * x,))
    inner = s2s.checkpoint(lambda x: np.sum(cube(x) * np.sin(x)))
    x = np.array([0.3, -0.8, 1.2])
    # d2/dx2 (x^3 sin x) = 6x sin x + 6x^2 cos x - x^3 sin x, on the diagonal
    want = np.diag(6 * x * np.sin(x) + 6 * x ** 2 * np.cos(x) - x ** 3 * np.sin(x))
    np.testing.assert_allclose(s2s.hessian(inner)(x), want, rtol=1e-12, atol=1e-12)


def test_static_argnums_and_policies():
    def f(x, y):
        return x * y

    ck = s2s.checkpoint(f, static_argnums=1)

    def use(x, y):
        return ck(x, y) * x

    np.testing.assert_allclose(s2s.grad(use, argnums=(0, 1))(2.0, 3.0), (12.0, 0.0))
    assert s2s.checkpoint(f, policy=s2s.checkpoint_policies.everything_saveable) is f
    assert s2s.checkpoint(f, policy=s2s.checkpoint_policies.nothing_saveable)(2.0, 3.0) == 6.0
    with pytest.raises(ValueError, match="policy"):
        s2s.checkpoint(f, policy=lambda *a: True)
    assert s2s.remat is s2s.checkpoint


# -- what the recomputation could not repeat -----------------------------------------

LOG = []
BUFFER = np.zeros(3)


@s2s.checkpoint
def appends(x):
    LOG.append(x)
    return x * 2.0


@s2s.checkpoint
def writes_argument(x, y):
    y[0] = x
    return x * 2.0


@s2s.checkpoint
def prints(x):
    print(x)
    return x * 2.0


@s2s.checkpoint
def draws(x):
    return x * np.random.rand()


@s2s.checkpoint
def writes_global(x):
    BUFFER[1] = x
    return x * 2.0


@s2s.checkpoint
def owns_its_copy(x, y):
    y = y.copy()
    y[0] = x
    return x * np.sum(y)


@pytest.mark.parametrize("fn, construct, line", [
    (appends, "LOG.append(...)", "LOG.append(x)"),
    (writes_argument, "index assignment into 'y'", "y[0] = x"),
    (prints, "print()", "print(x)"),
    (draws, "random numbers", "np.random.rand()"),
    (writes_global, "index assignment into 'BUFFER'", "BUFFER[1] = x"),
])
def test_side_effects_a_replay_would_repeat_are_errors(fn, construct, line):
    with pytest.raises(UnsupportedSyntaxError) as info:
        s2s.grad(lambda x: fn(x, np.ones(3)) if fn is writes_argument else fn(x))(1.0)
    msg = str(info.value)
    assert construct in msg and "checkpointed function" in msg and line in msg
    assert "test_checkpoint.py:" in msg and "^" in msg
    assert LOG == []


def test_a_function_writing_its_own_copy_is_fine():
    # x * (x + 2): 2x + 2
    assert s2s.grad(lambda x: owns_its_copy(x, np.ones(3)))(1.5) == pytest.approx(5.0)


# -- checkpointed loops ------------------------------------------------------------------

def make_loops(loop):
    def oscillator(x, k, n):
        s = x
        v = 0.0 * x
        acc = 0.0
        for i in loop(range(n)):
            a = -k * np.sin(s)
            v = v + 0.01 * a
            s = s + 0.01 * v
            acc = acc + np.sum(s * s)
        return acc + np.sum(v)

    def branchy(x, k, n):
        s = x
        t = 0.0 * x
        for i in loop(range(1, n, 2), levels=3):
            if np.sum(s) > 0.5:
                s = s * 0.9 + np.cos(t) * k
            else:
                s = s + 0.1 * i
            t = t + s
            for j in range(2):
                t = t * 0.5 + np.tanh(s)
        return np.sum(t * s)

    def fills(x, k, n):
        y = np.zeros(n)
        s = x
        for i in loop(range(n), levels="log"):
            s = np.sin(s) + k * s
            y[i] = s
        return np.sum(y * y)

    def backwards(x, k, n):
        s = x
        for i in loop(range(n, 0, -3), levels=1):
            s = s * k + 1.0 / i
        return s

    return oscillator, branchy, fills, backwards


LOOPS = make_loops(s2s.checkpoint_loop)
LOOPS_PLAIN = make_loops(_plain_loop)
X = np.array([0.3, 0.45])
LOOP_CASES = [(0, (X, 0.5), n) for n in (0, 1, 2, 9, 40)] + \
    [(1, (X, 0.7), n) for n in (1, 4, 30)] + [(2, (0.6, 0.4), n) for n in (1, 17)] + \
    [(3, (0.6, 0.9), n) for n in (0, 10)]


@pytest.mark.parametrize("i, args, n", LOOP_CASES)
def test_checkpointed_loop_gradients_equal_plain_and_fd(i, args, n):
    g = s2s.grad(LOOPS[i], argnums=(0, 1))(*args, n)
    g0 = s2s.grad(LOOPS_PLAIN[i], argnums=(0, 1))(*args, n)
    _same(g[0], g0[0])  # the carried state: the same operations in the same order
    _same(g[1], g0[1], rtol=1e-12)  # k: its cotangent summed segment by segment
    plain = LOOPS_PLAIN[i]
    assert_tree_close(g, fd_grad(lambda x, k: plain(x, k, n), args, argnums=(0, 1)),
                      rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("i, args, n", LOOP_CASES[::3])
def test_checkpointed_loop_vjp_jvp_and_second_order(i, args, n):
    f, f0 = LOOPS[i], LOOPS_PLAIN[i]
    out, pull = s2s.vjp(f, *args, n)
    out0, pull0 = s2s.vjp(f0, *args, n)
    assert out == out0
    _same(pull(1.5)[:2], pull0(1.5)[:2], rtol=1e-12)
    tangents = (np.ones_like(args[0]), 1.0, None)
    _same(s2s.jvp(f, (*args, n), tangents), s2s.jvp(f0, (*args, n), tangents))
    check_directional(lambda x, k: f0(x, k, n), args, 1, s2s.grad(f, argnums=1)(*args, n))

    def dk(k):
        return s2s.grad(f, argnums=1)(args[0], k, n)

    def dk0(k):
        return s2s.grad(f0, argnums=1)(args[0], k, n)

    np.testing.assert_allclose(s2s.grad(dk)(args[1]), s2s.grad(dk0)(args[1]), rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(dk)(args[1]), fd_grad(dk0, (args[1],)),
                               rtol=1e-5, atol=1e-8)


@s2s.checkpoint
def _segment_step(s, k):
    return s + 0.01 * np.sin(s) * k


def _checkpoints_inside_checkpoints(x, k, n):
    s = x
    for i in s2s.checkpoint_loop(range(n)):
        s = _segment_step(s, k)
    return s


def _checkpoints_inside_checkpoints_plain(x, k, n):
    s = x
    for i in range(n):
        s = _segment_step.fun(s, k)
    return s


@s2s.checkpoint
def _loop_in_checkpoint(x, k):
    return _checkpoints_inside_checkpoints(x, k, 25) ** 2


def test_checkpoints_nest():
    g = s2s.grad(_checkpoints_inside_checkpoints, argnums=(0, 1))(0.4, 0.9, 30)
    g0 = s2s.grad(_checkpoints_inside_checkpoints_plain, argnums=(0, 1))(0.4, 0.9, 30)
    _same(g, g0, rtol=1e-12)
    g2 = s2s.grad(lambda x: _loop_in_checkpoint(x, 0.9) * x)(0.4)
    plain = lambda x: _checkpoints_inside_checkpoints_plain(x, 0.9, 25) ** 2 * x  # noqa: E731
    np.testing.assert_allclose(g2, fd_grad(plain, (0.4,)), rtol=1e-7)


def _in_outer_loop(p, n, loop):
    s = 0.5
    for j in range(3):
        for i in loop(range(n), 3):
            s = s * p["w"] + np.sin(s) * p["b"]
        s = s + j
    return s


def test_a_checkpointed_loop_inside_a_loop_with_dict_parameters():
    p = {"w": 0.9, "b": 0.3}
    g = s2s.grad(lambda p: _in_outer_loop(p, 20, s2s.checkpoint_loop))(p)
    g0 = s2s.grad(lambda p: _in_outer_loop(p, 20, _plain_loop))(p)
    assert sorted(g) == ["b", "w"]
    for key in g:
        np.testing.assert_allclose(g[key], g0[key], rtol=1e-12)
    fd = fd_grad(lambda w, b: _in_outer_loop({"w": w, "b": b}, 20, _plain_loop), (0.9, 0.3),
                 argnums=(0, 1))
    np.testing.assert_allclose((g["w"], g["b"]), fd, rtol=1e-6)


def _long_loop(x, k, n, loop):
    s = x
    v = 0.0
    acc = 0.0
    for i in loop(range(n)):
        a = -k * np.sin(s)
        v = v + 0.001 * a
        s = s + 0.001 * v
        acc = acc + s * s
    return acc + v


def _long_plain(x, k, n):
    return _long_loop(x, k, n, _plain_loop)


def _long_checkpointed(x, k, n):
    return _long_loop(x, k, n, s2s.checkpoint_loop)


def _peak(fn, *args):
    fn(*args)  # specialised and compiled before measuring
    tracemalloc.start()
    try:
        out = fn(*args)
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_checkpointed_long_loop_needs_a_tenth_of_the_memory():
    n = 2000  # about 1/50 of the plain peak; a second or so under tracemalloc
    g, peak = _peak(s2s.grad(_long_checkpointed, argnums=(0, 1)), 0.3, 0.5, n)
    g0, peak0 = _peak(s2s.grad(_long_plain, argnums=(0, 1)), 0.3, 0.5, n)
    assert g[0] == g0[0]
    np.testing.assert_allclose(g[1], g0[1], rtol=1e-12)
    assert peak / peak0 < 0.1, (peak, peak0)


# -- loops the schedule cannot take -------------------------------------------------------

def _breaks(x, n):
    s = x
    for i in s2s.checkpoint_loop(range(n)):
        s = s * 0.5
        if s < 0.1:
            break
    return s


def _first_assigned_inside(x, n):
    s = x
    for i in s2s.checkpoint_loop(range(n)):
        last = s
        s = s * 0.5
    return last + s


def _prints_in_loop(x, n):
    s = x
    for i in s2s.checkpoint_loop(range(n)):
        s = s * 0.5
        print(s)
    return s


def _reads_loop_variable(x, n):
    s = x
    for i in s2s.checkpoint_loop(range(n)):
        s = s * 0.5
    return s * i


def _writes_argument_in_loop(x, n):
    for i in s2s.checkpoint_loop(range(n)):
        x[i] = x[i] * 2.0
    return np.sum(x)


def _returns_in_loop(x, n):
    for i in s2s.checkpoint_loop(range(n)):
        x = x * 2.0
        if x > 10.0:
            return x
    return x


def _grows(x, n):
    out = []
    s = x
    for i in s2s.checkpoint_loop(range(n)):
        s = s * 0.9
        out.append(s)
    return sum(out)


def test_a_state_that_changes_shape_is_an_error():
    with pytest.raises(s2s.S2SError, match="fixed shape") as info:
        s2s.grad(_grows)(1.0, 50)
    assert "test_checkpoint.py:" in str(info.value)


@pytest.mark.parametrize("fn, words", [
    (_writes_argument_in_loop, "in-place write into the argument 'x' inside a checkpointed"),
    (_returns_in_loop, "'return' inside a checkpointed loop"),
    (_breaks, "'break' inside a checkpointed loop"),
    (_first_assigned_inside, "'last', first assigned inside a checkpointed loop"),
    (_prints_in_loop, "print() inside a checkpointed loop"),
    (_reads_loop_variable, "the loop variable 'i' of a checkpointed loop"),
])
def test_loops_the_schedule_cannot_take_are_errors(fn, words):
    with pytest.raises(UnsupportedSyntaxError) as info:
        s2s.grad(fn)(np.ones(5) if fn is _writes_argument_in_loop else 1.0, 5)
    assert words in str(info.value) and "test_checkpoint.py:" in str(info.value)


def test_outside_reverse_mode_a_checkpointed_loop_runs_as_written():
    assert _long_checkpointed(0.3, 0.5, 50) == _long_plain(0.3, 0.5, 50)
    with pytest.raises(TypeError, match="range"):
        s2s.checkpoint_loop([1, 2, 3])
    with pytest.raises(ValueError, match="levels"):
        s2s.checkpoint_loop(range(3), levels=0)


def test_generated_code_is_deterministic():
    from s2s.core import pipeline
    from s2s.core.reverse import ReverseTransform
    from s2s.emit.python import emit_function

    def text(fn, values):
        t = ReverseTransform(fn, (0, 1), False, False, "grad")
        return emit_function(t.specialised(values)).source

    for fn, values, name in ((LOOPS[0], [X, 0.5, 9], "_checkpoint_loop_oscillator_"),
                             (CK[1], [np.array([0.3, 0.2]), 0.8], "_checkpoint_pair_vjp(")):
        first = text(fn, values)
        pipeline._FRONT.pop(fn, None)  # lowered afresh: new checkpoint objects, same text
        assert text(fn, values) == first and name in first
