"""The special-function rows of the systematic table (``systematic_table_special.py``)
in every mode: first order (all rows, also those the main test runs only in its slow
variant), second order (forward over reverse and reverse over reverse against finite
differences of the gradient), batching (``vmap`` against the examples one by one) and
compilation (``jit`` of the function and of its gradient against Python: every
primitive here has a lowering, ``backend/llvm/ops/gamma.py`` for the gamma family).
"""
import math

import numpy as np
import pytest

import s2s
import s2s_runtime as rt
from s2s.rules import lookup
from s2s.rules import special
from s2s.rules.registry import implementation
from tests.unit.systematic_checks import check_first_order, check_second, inputs, module_for
from tests.unit.systematic_table_special import CASES, HAVE_SCIPY

_MOD = module_for([(c.expr, len(c.args)) for c in CASES])
_IDS = [c.name for c in CASES]

def _fns(i):
    return getattr(_MOD, f"f_{i}"), getattr(_MOD, f"h_{i}")


@pytest.mark.parametrize("i", range(len(CASES)), ids=_IDS)
def test_first_order(i):
    check_first_order(_fns(i)[0], CASES[i])


@pytest.mark.parametrize("i", range(len(CASES)), ids=_IDS)
def test_second_order(i):
    f, h = _fns(i)
    check_second(f, h, CASES[i])


def _stacked(case, n=3):
    examples = [inputs(case, seed)[1] for seed in range(n)]
    return examples, [np.stack([np.asarray(ex[k]) for ex in examples]) for k in
                      range(len(case.args))]


@pytest.mark.parametrize("i", range(len(CASES)), ids=_IDS)
def test_batched(i):
    case = CASES[i]
    f, h = _fns(i)
    examples, batched = _stacked(case)
    expected = np.stack([np.asarray(f(*ex)) for ex in examples])
    np.testing.assert_allclose(s2s.vmap(f)(*batched), expected, rtol=1e-12, atol=1e-14)
    w = np.ones_like(np.asarray(f(*examples[0])))
    grads = s2s.vmap(s2s.grad(h), in_axes=(0,) * len(case.args) + (None,))(*batched, w)
    for k, ex in enumerate(examples):
        np.testing.assert_allclose(np.asarray(grads)[k] if len(case.args) == 1 else grads[k],
                                   s2s.grad(h)(*ex, w), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("i", range(len(CASES)), ids=_IDS)
def test_compiled(i):
    case = CASES[i]
    f, h = _fns(i)
    _, args, _ = inputs(case, 0)
    w = np.ones_like(np.asarray(f(*args)))
    np.testing.assert_allclose(s2s.jit(f)(*args), f(*args), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.grad(h))(*args, w), s2s.grad(h)(*args, w),
                               rtol=1e-12, atol=1e-14)


def test_every_special_rule_has_a_row():
    covered = " ".join(c.expr for c in CASES)
    names = {id(f): n for n, f in vars(rt).items() if callable(f)}
    if HAVE_SCIPY:
        import scipy.special as sp
        names.update({id(f): f"sp.{n}" for n, f in vars(sp).items() if callable(f)})
    names.update({id(math.lgamma): "math.lgamma", id(math.gamma): "math.gamma"})
    for fn in special.ELEMENTWISE + [math.lgamma, math.gamma]:
        name = names[id(fn)]
        name = name if "." in name else f"rt.{name}"
        assert lookup(fn) is not None and name in covered, name


@pytest.mark.skipif(not HAVE_SCIPY, reason="scipy is not installed")
def test_implementations_replace_scipy_reductions():
    import scipy.special as sp
    for fn in (sp.logsumexp, sp.softmax, sp.log_softmax):
        assert implementation(fn) is not None and lookup(fn) is None
    x = np.array([[1.0, -np.inf], [-np.inf, -np.inf]])
    np.testing.assert_array_equal(s2s.jit(lambda v: sp.logsumexp(v, axis=1))(x),
                                  sp.logsumexp(x, axis=1))
    g = s2s.grad(lambda v: sp.logsumexp(v))(np.array([1000.0, 1000.0]))
    np.testing.assert_allclose(g, [0.5, 0.5])  # the max shift: no overflow


def test_psi_against_scipy_and_closed_forms():
    x = np.concatenate([np.linspace(-6.7, -0.2, 14), np.linspace(0.05, 40.0, 50), [1e6]])
    euler = 0.5772156649015329
    assert rt.digamma(1.0) == pytest.approx(-euler, rel=1e-15)
    assert rt.polygamma(1, 1.0) == pytest.approx(math.pi ** 2 / 6, rel=1e-15)
    assert rt.polygamma(2, 1.0) == pytest.approx(-2 * 1.2020569031595942, rel=1e-14)
    assert np.isnan(rt.digamma(-2.0))
    # -inf is a pole (the recurrence that shifts x upward never reached it: it hung)
    assert np.isnan(rt.polygamma(1, -np.inf)) and np.isnan(rt.digamma(-np.inf))
    assert np.isnan(rt.polygamma(2, np.array([-np.inf, 1.5]))[0])
    if HAVE_SCIPY:
        import scipy.special as sp
        for n in range(4):
            np.testing.assert_allclose(rt.polygamma(n, x), sp.polygamma(n, x), rtol=1e-12)
    with pytest.raises(ValueError, match="non-negative integer"):
        rt.polygamma(-1, 2.0)
