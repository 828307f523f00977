"""Randomly generated programs (tests/grad/progen.py) under ``jit(jacrev)``,
``jit(jacfwd)`` and ``jit(hessian)``: the compiled Jacobian passes the finite-difference
check of Python mode's gradient tests (tests/grad/test_random_programs.py) and the
compiled Hessian matches central differences of the gradient, or jit refuses the
program with a clear s2s error -- never a wrong value or a crash."""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import s2s
from tests.grad import progen
from tests.grad.test_random_programs import SETTINGS, _args, _check_fd, _primal


COMPILED, REFUSED = [], []


def _compiled(fn, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args)
    except s2s.S2SError as e:
        assert "jit" in str(e) or "unsupported" in str(e), str(e)
        REFUSED.append(str(e).splitlines()[0])
        return None
    COMPILED.append(fn)
    return out


def _hessian_fd(raw, args, h=1e-5):
    """Central differences of Python mode's gradient (itself checked against differences
    of values by tests/grad/test_random_programs.py)."""
    x = np.asarray(args[0], dtype=float)
    g = s2s.grad(raw)
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        up, down = g(x + e, *copy.deepcopy(args[1:])), g(x - e, *copy.deepcopy(args[1:]))
        cols.append((up - down) / (2 * h))
    return np.stack(cols, axis=-1)


@settings(max_examples=5, **SETTINGS)
@given(st.data())
def test_random_array_programs(data):
    prog = data.draw(progen.array_program())
    args = _args(prog, data)
    raw = progen.load(prog.source)

    def f(*a):
        return raw(*copy.deepcopy(a))

    y = _primal(f, args)
    scale = max(1.0, abs(y))
    for mode in (s2s.jacrev, s2s.jacfwd):
        J = _compiled(s2s.jit(mode(raw)), *args)
        if J is not None:
            assert J.shape == np.shape(args[0])
            _check_fd(J, f, args, 0, scale, f"{mode.__name__}\n{prog.source}")
    H = _compiled(s2s.jit(s2s.hessian(raw)), *args)
    if H is not None:
        want = _hessian_fd(raw, args)
        coarse = _hessian_fd(raw, args, 1e-4)
        assume(np.allclose(want, coarse, rtol=1e-3, atol=1e-3 * scale))  # no kink nearby
        np.testing.assert_allclose(H, want, rtol=1e-4, atol=1e-5 * scale,
                                   err_msg=f"hessian\n{prog.source}")


def test_most_random_programs_compiled():
    """The property above checked compiled Jacobians, not only refusals."""
    if COMPILED or REFUSED:
        assert len(COMPILED) >= len(REFUSED), REFUSED


# -- the gradient corpus ---------------------------------------------------------------------
def _corpus_cases():
    from tests.grad import corpus, corpus_control  # noqa: F401  (registers the cases)
    seen, out = set(), []
    for c in corpus.CASES:
        if c.fn not in seen and not c.kwargs:
            seen.add(c.fn)
            out.append(c)
    return out


CORPUS = _corpus_cases()
SAMPLE = CORPUS[::9]


def _check_corpus_case(case, mode):
    from tests.grad.oracles import assert_tree_close, fd_grad
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = s2s.jit(mode(case.fn, argnums=case.argnums))(*case.args)
    except s2s.S2SError as e:
        assert "jit" in str(e) or "unsupported" in str(e), str(e)
        return
    except TypeError as e:  # arguments jit does not take (dicts, namedtuples...)
        assert "jit" in str(e), str(e)
        return
    assert_tree_close(got, fd_grad(case.fn, case.args, case.argnums), rtol=1e-5, atol=1e-6,
                      what=case.id)


@pytest.mark.parametrize("mode", [s2s.jacrev, s2s.jacfwd], ids=["jacrev", "jacfwd"])
@pytest.mark.parametrize("case", SAMPLE, ids=[c.id for c in SAMPLE])
def test_corpus_sample_against_finite_differences(case, mode):
    """The gradient corpus's scalar functions: jit(jacrev/jacfwd) is their gradient."""
    _check_corpus_case(case, mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", [s2s.jacrev, s2s.jacfwd], ids=["jacrev", "jacfwd"])
@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
def test_corpus_against_finite_differences(case, mode):
    _check_corpus_case(case, mode)
