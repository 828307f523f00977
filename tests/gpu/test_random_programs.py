"""Randomly generated scalar programs (``tests/grad/progen.py``) as GPU kernels.

For each program ``f(x0, ..., xk)`` (branches, helpers, tuple assignment,
math/numpy functions): the host build of ``vectorize(f)`` over random
arrays equals ``f`` called on each element in Python, and the host build of
``vectorize(grad(f, argnums=all))`` matches central finite differences of
``f`` (smooth programs).  A few programs' PTX is assembled by ptxas.
Programs whose constructs the LLVM lowering does not compile are skipped
(that is the CPU JIT's coverage, tested in tests/jit).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import s2s
from s2s.backend.cuda.toolkit import has_libdevice, has_ptxas
from s2s.cuda import assemble, vectorize
from s2s.errors import UnsupportedSyntaxError

from .emulate import run_on_host


from grad import progen  # noqa: E402  (tests/grad/progen.py: tests/ is on sys.path)

SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       HealthCheck.data_too_large])
N = 6


def _program(data, analytic):
    prog = data.draw(progen.scalar_program(analytic=analytic, dict_input=False), label="program")
    f = progen.load(prog.source)
    rng = np.random.default_rng(len(prog.source))
    args = [rng.uniform(-1.3, 1.3, N) + 0.01 * k for k in range(len(prog.params))]
    return f, args


def _host(vec, args):
    try:
        return run_on_host(vec, *args)
    except UnsupportedSyntaxError:
        assume(False)


@settings(max_examples=20, **SETTINGS)
@given(st.data())
def test_random_programs_primal_and_grad(data):
    f, args = _program(data, analytic=data.draw(st.booleans(), label="analytic"))
    (out,), err = _host(vectorize(f), args)
    expected = np.array([f(*[float(a[i]) for a in args]) for i in range(N)], dtype=float)
    assert not err.any()
    np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-13)
    argnums = tuple(range(len(args)))
    grads, err = _host(vectorize(s2s.grad(f, argnums=argnums)), args)
    assert not err.any() and len(grads) == len(args)
    for k, g in enumerate(grads):
        for i in range(N):
            point = [float(a[i]) for a in args]
            fine = progen.fd(f, point, k)
            coarse = progen.fd(f, point, k, h_rel=1e-5)
            if abs(fine - coarse) > 1e-4 * (1 + abs(fine)):
                continue  # not smooth here (a branch threshold or a kink)
            assert g[i] == pytest.approx(fine, rel=1e-5, abs=1e-6), (k, i)


@pytest.mark.skipif(not (has_ptxas() and has_libdevice()),
                    reason="ptxas/libdevice not found: pip install 's2s[ptx]'")
@settings(max_examples=4, **SETTINGS)
@given(st.data())
def test_random_programs_assemble(data):
    f, args = _program(data, analytic=False)
    types = [np.float64] * len(args)
    try:
        ptx = vectorize(s2s.grad(f, argnums=0)).ptx(*types)
    except UnsupportedSyntaxError:
        assume(False)
    assert assemble(ptx, "sm_80").kernels
