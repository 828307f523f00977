"""The systematic table, batching and lowering: every primitive's vmap and jit modes.

``test_systematic.py`` checks each rule's JVP against finite differences and its
VJP by the dot-product test.  Here the first row of each function is also run
under ``vmap`` (against a loop over the batch: two examples drawn like the
derivative tests draw theirs, stacked on axis 0) and under ``jit`` (against the
Python result).  A row whose primitive has no batching rule or no lowering is
listed with the reason in ``systematic_open_modes.py`` and must still fail, with
s2s's error (never a wrong value, never a bare exception of numpy); any other row
must agree.  With ``s2s rules`` (``test_rule_modes.py``) a primitive missing a
mode is either listed with its reason or fails.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s
from s2s.errors import S2SError
from tests.unit.systematic_checks import inputs, leaves
from tests.unit.systematic_open_modes import NO_JIT, NO_VMAP
from tests.unit.test_systematic import CASES, _first_row_of_each_function, _fns

ROWS = _first_row_of_each_function(CASES)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore::RuntimeWarning")


def _close(got, want):
    gl, wl = leaves(got), leaves(want)
    assert len(gl) == len(wl)
    for g, w in zip(gl, wl):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12,
                                   equal_nan=True)


def _open(listed, run):
    """A listed gap: it must still fail with an s2s error (a closed gap leaves the list);
    a ``NotImplementedError`` counts where s2s raised it (its message says ``s2s``: a
    refusal that depends on run-time lengths)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            run()
        except (S2SError, TypeError, ValueError) as e:
            return e
        except NotImplementedError as e:
            if not str(e).startswith("s2s"):
                raise
            return e
    pytest.fail(f"listed as open ({listed}) but it works now: take it off the list")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in ROWS])
def test_vmap_against_a_loop_over_the_batch(case):
    f = _fns(case)[0]
    _, a1, _ = inputs(case, 0)
    _, a2, _ = inputs(case, 1)
    stacked = [np.stack([p, q]) for p, q in zip(a1, a2)]
    if case.expr in NO_VMAP:
        _open(NO_VMAP[case.expr], lambda: s2s.vmap(f)(*stacked))
        return
    got = s2s.vmap(f)(*stacked)
    for i, args in enumerate((a1, a2)):
        want = f(*args)
        _close([np.asarray(g)[i] for g in leaves(got)], leaves(want))


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in ROWS])
def test_jit_against_the_python_result(case):
    f = _fns(case)[0]
    _, args, _ = inputs(case, 0)
    if case.expr in NO_JIT:
        _open(NO_JIT[case.expr], lambda: s2s.jit(f)(*args))
        return
    _close(s2s.jit(f)(*args), f(*args))


def test_the_lists_name_rows_of_the_table():
    exprs = {c.expr for c in ROWS}
    assert set(NO_VMAP) <= exprs and set(NO_JIT) <= exprs
    assert len(ROWS) > 200
