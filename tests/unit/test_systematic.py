"""Systematic derivative tests of every rule (autograd's ``test_systematic`` is the model).

Each row of the tables (``systematic_table*.py``) is a numpy expression with
argument shapes and domains; every row is checked in float64 (and complex128
where the function is defined there) against central finite differences
(JVP) and by the dot-product test against the same finite differences (VJP);
second derivatives (the JVP of ``grad``) against finite differences of the
gradient.  See ``systematic_checks.py`` for the oracles.

The default run checks every rule on its main shapes; the exhaustive variant
(every shape and broadcasting pair, complex arguments everywhere they are
defined, second order everywhere, more seeds) is marked slow.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s2s.rules  # noqa: F401  (registers every rule)
from s2s.rules.registry import all_rules
from tests.unit import systematic_table, systematic_table_arrays, systematic_table_more
from tests.unit.systematic_checks import Arg, Case, check_first_order, check_second, module_for

CASES = systematic_table.CASES + systematic_table_arrays.CASES + systematic_table_more.CASES
_MOD = module_for([(c.expr, len(c.args)) for c in CASES])
_INDEX = {id(c): i for i, c in enumerate(CASES)}


def _fns(case):
    i = _INDEX[id(case)]
    return getattr(_MOD, f"f_{i}"), getattr(_MOD, f"h_{i}")


def _params(cases, slow_also=False):
    return [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.slow and not slow_also
                         else []) for c in cases]


@pytest.mark.parametrize("case", _params(CASES))
def test_first_order(case):
    check_first_order(_fns(case)[0], case)


@pytest.mark.parametrize("case", _params([c for c in CASES if c.cplx]))
def test_first_order_complex(case):
    check_first_order(_fns(case)[0], case, seed=1, cplx=True)


@pytest.mark.parametrize("case", _params([c for c in CASES if c.second]))
def test_second_order(case):
    f, h = _fns(case)
    check_second(f, h, case)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
@pytest.mark.parametrize("case", _params(CASES, slow_also=True))
def test_first_order_more_seeds(case, seed):
    check_first_order(_fns(case)[0], case, seed=seed)
