"""passes/negations.py: negations folded into products, checked against finite differences."""
import contextlib
import io

import numpy as np
import pytest

import s2s
from s2s.cli.main import main
from s2s.passes.negations import fold_negations
from tests.grad.oracles import fd_grad
from tests.unit import fixtures_negations as fx

CASES = [(fx.sigmoid, np.array([-1.5, 0.3, 2.0])), (fx.cos_of_negation, 0.7),
         (fx.three_negations, 1.3), (fx.negated_reused, -0.4)]


@pytest.mark.parametrize("fn, x", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradients_match_finite_differences(fn, x):
    np.testing.assert_allclose(s2s.grad(fn)(x), fd_grad(fn, (x,)), rtol=1e-6, atol=1e-9)
    # forward mode and second order go through the pass too
    np.testing.assert_allclose(s2s.jvp(fn, (x,), (np.ones_like(x),))[1],
                               np.sum(fd_grad(fn, (x,))), rtol=1e-6, atol=1e-9)
    if np.ndim(x) == 0:
        h = s2s.grad(s2s.grad(fn))(x)
        eps = 1e-5
        want = (s2s.grad(fn)(x + eps) - s2s.grad(fn)(x - eps)) / (2 * eps)
        np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-7)


def _adjoint_text(name, *signature):
    """The adjoint part of ``s2s dump`` of a fixture's gradient."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["dump", f"{fx.__file__}:{name}", "--mode", "grad", "--color", "never",
              *(("--signature", signature[0]) if signature else ())])
    return buf.getvalue().split("rt.grad_seed")[1]


def test_sigmoid_adjoint_has_no_negation():
    """The two negations of sigmoid's adjoint (of ``/`` and of ``-x``) cancel."""
    adjoint = _adjoint_text("sigmoid", "f64[:]")
    assert "-" not in adjoint, adjoint


def test_odd_number_of_negations_keeps_one():
    """Negations fold pairwise: of the three in this adjoint, one stays."""
    adjoint = _adjoint_text("cos_of_negation")
    assert adjoint.count("-") == 1, adjoint


def test_without_negations_the_function_is_unchanged():
    from s2s.ir import nodes as ir
    fn = ir.Function("f", (), (), temps=frozenset())
    assert fold_negations(fn) is fn
