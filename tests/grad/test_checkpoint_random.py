"""Checkpointing random loop bodies (``progen``): the plain gradient, and central differences.

Each generated smooth program ``f(x0, x1, ...)`` becomes the step of a loop
``s = tanh(f(s, x1, ...))`` run n times, written three ways in one module:
plainly, as ``for i in s2s.checkpoint_loop(range(n), levels=L)``, and with
``f`` checkpointed (``s2s.checkpoint(f)``).  The three gradients must agree
(1e-12: a schedule sums the cotangent of a loop-invariant input segment by
segment) and the plain one must match central finite differences (where it does
not, the program is set aside: those are bugs of the plain path).
"""
import math
import os

import numpy as np
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

import s2s
from s2s.errors import UnsupportedSyntaxError

from . import progen

# S2S_PROGEN_SCALE=20 runs 20x the examples, with fresh random seeds (bug hunting)
SCALE = int(os.environ.get("S2S_PROGEN_SCALE", "1"))
SETTINGS = dict(deadline=None, derandomize=SCALE == 1, database=None, max_examples=15 * SCALE,
                report_multiple_bugs=False,
                phases=(Phase.explicit, Phase.reuse, Phase.generate),  # no slow shrinking
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

LOOPS = '''

import s2s

ck = s2s.checkpoint(f)


def loop_plain({params}, n):
    s = {first}
    for i in range(n):
        s = np.tanh(f(s, {rest}))
    return s


def loop_checkpointed({params}, n):
    s = {first}
    for i in s2s.checkpoint_loop(range(n), levels={levels!r}):
        s = np.tanh(f(s, {rest}))
    return s


def calls_checkpointed({params}, n):
    s = {first}
    for i in range(n):
        s = np.tanh(ck(s, {rest}))
    return s
'''


def _fd(f, args, i, h=1e-6):
    a, b = list(args), list(args)
    a[i] += h
    b[i] -= h
    return (f(*a) - f(*b)) / (2 * h)


@settings(**SETTINGS)
@given(prog=progen.scalar_program(analytic=True, dict_input=False),
       n=st.integers(0, 12), levels=st.sampled_from([1, 2, 3, "log"]),
       data=st.data())
def test_checkpointed_random_loops(prog, n, levels, data):
    assume(len(prog.params) >= 2)
    params = ", ".join(prog.params)
    src = prog.source + LOOPS.format(params=params, first=prog.params[0],
                                     rest=", ".join(prog.params[1:]), levels=levels)
    funcs = {name: progen.load(src, name)
             for name in ("loop_plain", "loop_checkpointed", "calls_checkpointed")}
    args = tuple(data.draw(st.lists(st.integers(-900, 900), min_size=len(prog.params),
                                    max_size=len(prog.params)), label="inputs"))
    args = tuple(a / 1000.0 + (j + 1) * math.sqrt(2.0) * 1e-4 for j, a in enumerate(args))
    with np.errstate(all="ignore"):
        y = funcs["loop_plain"](*args, n)
    assume(np.isfinite(y))
    nums = tuple(range(len(args)))
    try:
        plain = s2s.grad(funcs["loop_plain"], argnums=nums)(*args, n)
    except (UnsupportedSyntaxError, TypeError):
        # the plain path refuses (or, reported apart, fails on) ``x0 -= v`` in a loop
        # where it cannot tell ``x0`` is a number: nothing to compare with
        assume(False)
    assume(all(np.isfinite(g) and abs(g) < 1e6 for g in plain))
    fds = []
    for i in nums:
        fd = _fd(lambda *a: funcs["loop_plain"](*a, n), args, i)
        coarse = _fd(lambda *a: funcs["loop_plain"](*a, n), args, i, 1e-5)
        assume(math.isclose(fd, coarse, rel_tol=1e-3, abs_tol=1e-6))
        fds.append(fd)
    # the plain gradient must be right for the comparison to mean anything (two wrong
    # plain gradients hypothesis found are reported apart: a loop that may run zero
    # times over a value it overwrites with a constant; a swap of an inlined function's
    # parameters in a loop)
    assume(all(math.isclose(p, fd, rel_tol=1e-5, abs_tol=1e-7) for p, fd in zip(plain, fds)))
    for name in ("loop_checkpointed", "calls_checkpointed"):
        got = s2s.grad(funcs[name], argnums=nums)(*args, n)
        np.testing.assert_allclose(got, plain, rtol=1e-12, atol=1e-14, err_msg=name)
