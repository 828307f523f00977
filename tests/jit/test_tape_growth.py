"""Tapes of compiled gradients grow geometrically (``backend/llvm/lower/stacks.py``).

A loop nest reserves room on its tapes before every inner loop; the capacity it
asks for is at least twice the old one, so a first call at a new size
reallocates O(log size) times instead of once per inner loop (each growth moves
the whole tape).  Checked through the context block's debug counter
``abi.GROWTHS`` and its capacity words, never by timing; the gradients at big
sizes are checked against central finite differences of the compiled primal.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import s2s
from s2s.backend.llvm.values import abi


def _nest(x):
    n, d = x.shape
    s = 0.0
    for i in range(n):
        acc = 1.0
        for j in range(d):
            acc = acc * math.sin(x[i, j]) + 1.0
        s = s + acc
    return s


def _while_nest(x, m):
    s = 0.0
    i = 0
    while i < m:
        for j in range(x.shape[0]):
            s = s + math.cos(x[j] * s)
        i = i + 1
    return s


def _spec(j):
    spec, = j.specs.values()
    return spec


def _caps(spec):
    return [spec.caller.ctx[abi.TAPES + 2 * k + 1] for k in range(abi.CACHED_TAPES)]


def _fd_check(f, x, g, rng, count=6, h=1e-4):
    flat = x.reshape(-1)
    for k in rng.choice(flat.size, size=count, replace=False):
        e = np.zeros_like(flat)
        e[k] = h
        want = (f((flat + e).reshape(x.shape)) - f((flat - e).reshape(x.shape))) / (2 * h)
        assert g.reshape(-1)[k] == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_loop_nest_tape_grows_a_logarithmic_number_of_times():
    g = s2s.jit(s2s.grad(_nest))
    rng = np.random.default_rng(0)
    g(rng.random((3, 5)))
    spec = _spec(g)
    before = spec.caller.ctx[abi.GROWTHS]
    n = 20000
    x = rng.random((n, 5))
    got = g(x)
    growths = spec.caller.ctx[abi.GROWTHS] - before
    # one growth per inner loop would be n; doubling needs ~log2(n * 5) per tape
    assert 0 < growths <= 4 * math.ceil(math.log2(n * 5))
    again = g(x)  # the buffers are kept: the same size grows nothing
    assert spec.caller.ctx[abi.GROWTHS] - before == growths
    np.testing.assert_array_equal(got, again)
    _fd_check(s2s.jit(_nest), x, got, rng)


def test_each_growth_at_least_doubles_the_capacity():
    g = s2s.jit(s2s.grad(_nest))
    rng = np.random.default_rng(1)
    g(rng.random((1, 2)))
    spec = _spec(g)
    caps = _caps(spec)
    changes = 0
    for n in range(2, 400, 7):  # sizes creeping up: each growth must jump ahead
        g(rng.random((n, 2)))
        new = _caps(spec)
        for old, cap in zip(caps, new):
            if cap != old:
                changes += 1
                assert old == 0 or cap >= 2 * old
        caps = new
    assert changes > 0


def test_while_loop_around_counted_loop_grows_geometrically_and_is_right():
    g = s2s.jit(s2s.grad(_while_nest))
    rng = np.random.default_rng(2)
    g(rng.random(3) * 0.1, 2)
    spec = _spec(g)
    before = spec.caller.ctx[abi.GROWTHS]
    x = rng.random(50) * 0.01
    m = 3000
    got = g(x, m)
    assert spec.caller.ctx[abi.GROWTHS] - before <= 4 * math.ceil(math.log2(m * 50))
    primal = s2s.jit(_while_nest)
    _fd_check(lambda v: primal(v, m), x, got, rng, h=1e-6)


def test_big_loop_nest_gradient_matches_finite_differences():
    g = s2s.jit(s2s.grad(_nest))
    rng = np.random.default_rng(3)
    x = rng.random((200000, 3))
    _fd_check(s2s.jit(_nest), x, g(x), rng, count=4)
