"""Random loop programs with in-place index writes, against central differences
and forward mode (which keeps the writes as they are: an independent path).

Each program fills or updates an array the function made (``np.zeros`` or a
copy of the input) in a loop, reading earlier entries, rows or the whole
array between writes, and returns a smooth scalar of everything.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import s2s

from . import progen
from .test_random_programs import SCALE, SETTINGS

N = 5

#: statements of the loop body over ``i`` in ``range(1, N)``; ``y`` is the array
#: (length N), ``s`` a float accumulator, ``x`` the input (length N)
BODY = [
    "y[i] = y[i - 1] * {c} + x[i]",
    "y[i] += np.sin(y[i - 1]) * x[i]",
    "y[i] = y[i] * x[i - 1] + {c}",
    "y[i - 1] *= {c}",
    "s = s + y[i] * x[i]",
    "s = s + np.sum(y * x) * {c}",
    "y[:i] = y[:i] * {c}",
    "y[y > {t}] = {c}",
    "y[i] = s * {c}",
    "s = s * {c} + y[i - 1] ** 2",
    "if y[i] > {t}:\n            y[i] = y[i] * {c}\n        else:\n            s = s + y[i]",
]
START = ["y = np.zeros(N)", "y = x.copy()", "y = x * {c}"]
CONSTS = ["0.5", "0.9", "1.3", "-0.7"]
TESTS = ["0.3", "-0.2", "0.8"]


@st.composite
def programs(draw):
    fmt = lambda t: t.format(c=draw(st.sampled_from(CONSTS)),  # noqa: E731
                             t=draw(st.sampled_from(TESTS)))
    start = fmt(draw(st.sampled_from(START)))
    body = [fmt(b) for b in draw(st.lists(st.sampled_from(BODY), min_size=1, max_size=4))]
    lines = [f"def f(x):", f"    N = {N}", f"    {start}", "    s = 0.0",
             "    for i in range(1, N):"]
    lines += [f"        {b}" for b in body]
    lines.append("    return s + np.sum(np.tanh(y) * x)")
    return progen.HEADER + "\n".join(lines) + "\n"


@settings(max_examples=40 * SCALE, **SETTINGS)
@given(programs(), st.integers(0, 2 ** 16))
def test_random_index_write_programs(src, seed):
    f = progen.load(src)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, N) * 0.9 + 0.0123
    value, g = s2s.value_and_grad(f)(x)
    assert np.isclose(value, f(x))
    v = rng.normal(size=N)
    _, jv = s2s.jvp(f, (x,), (v,))
    np.testing.assert_allclose(np.dot(g, v), jv, rtol=1e-9, atol=1e-10, err_msg=src)
    eps = 1e-6
    fd = (f(x + eps * v) - f(x - eps * v)) / (2 * eps)
    # piecewise programs (a test on y, a mask write): a kink near x breaks differences
    if abs(fd - jv) > 1e-5 * (1 + abs(fd)):
        fd2 = (f(x + 0.1 * eps * v) - f(x - 0.1 * eps * v)) / (0.2 * eps)
        assert abs(fd2 - fd) > 1e-6 * (1 + abs(fd)), f"{src}\njvp {jv} fd {fd}"
