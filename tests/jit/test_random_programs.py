"""Randomly generated programs (tests/grad/progen.py) under jit: the compiled primal
equals Python's, and the compiled gradient passes the same finite-difference check as
Python mode (tests/grad/test_random_programs.py), or jit refuses the program with a
clear s2s error -- never a wrong value or a crash."""
from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import s2s
from tests.grad import progen
from tests.grad.test_random_programs import SETTINGS, _args, _check_fd, _primal

REFUSED = []


def _jit_or_refused(fn):
    def call(*args):
        try:
            return fn(*args)
        except s2s.S2SError as e:
            assert "jit" in str(e)
            REFUSED.append(str(e).splitlines()[0])
            return None
    return call


def check(prog, args):
    f = progen.load(prog.source)
    y = _primal(f, args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _jit_or_refused(s2s.jit(f))(*args)
    if got is None:
        return
    np.testing.assert_allclose(got, y, rtol=1e-10, atol=1e-12)
    g = _jit_or_refused(s2s.jit(s2s.grad(f)))(*args)
    if g is not None:
        _check_fd(g, f, args, 0, max(1.0, abs(y)), f"\n{prog.source}")


@settings(max_examples=6, **SETTINGS)
@given(st.data())
def test_random_scalar_programs(data):
    prog = data.draw(progen.scalar_program(dict_input=False))
    check(prog, _args(prog, data))


@settings(max_examples=6, **SETTINGS)
@given(st.data())
def test_random_array_programs(data):
    prog = data.draw(progen.array_program())
    check(prog, _args(prog, data))
