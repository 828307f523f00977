"""Tests of reverse mode (``s2s.ad.reverse``) through the pipeline.

The shape of the generated code (activity, DCE, accumulation, adjoint ifs,
seed, comments) is checked on the IR and on the emitted text; the numbers
against central finite differences in float64 (never against another s2s
derivative).
"""
import math

import numpy as np
import pytest
import s2s_runtime as rt

import s2s
from s2s.core import pipeline
from s2s.ir import nodes as ir

import fixtures_fns as fx


def activity(x, flag):
    u = x * 7.0  # noqa: F841  (unused primal work)
    y = flag * 3
    if flag > 0:
        y = y + 1
        z = x * 2.0
    else:
        z = x * x
    return z + math.sin(x) * y


def unrelated_branch(x, c):
    if c > 0.0:
        y = c * c + 1.0
        z = x * y
    else:
        y = c - 1.0  # noqa: F841  (never reaches the output through x)
        z = np.exp(x)
    return z


def thrice(x):
    return x * x + math.sin(x)


def branchy(x):
    if x > 0.0:
        y = x * x
    else:
        y = -x
    return y * 3.0


def network(x, w):
    h = np.tanh(w @ x)
    return np.sum(h * h) + x.sum()


def array_methods_total(x):
    return np.sum(fx.array_methods(x))


def grad_ir(fn, *args, argnums=0):
    return s2s.grad(fn, argnums=argnums).specialised(list(args))


def grad_text(fn, *args, argnums=0):
    return pipeline.emit(grad_ir(fn, *args, argnums=argnums)).source


def numeric_grad(f, args, i, h=1e-6):
    """Central differences of scalar f with respect to args[i] (a float or an array)."""
    x = args[i]
    if isinstance(x, float):
        lo, hi = list(args), list(args)
        lo[i], hi[i] = x - h, x + h
        return (f(*hi) - f(*lo)) / (2 * h)
    out = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        lo, hi = list(args), list(args)
        lo[i], hi[i] = x.copy(), x.copy()
        lo[i][idx] -= h
        hi[i][idx] += h
        out[idx] = (f(*hi) - f(*lo)) / (2 * h)
    return out


# --- shape of the generated code ---------------------------------------------------

def test_inactive_values_get_no_adjoint():
    text = grad_text(activity, 1.0, 2)
    assert "y_bar" not in text and "flag_bar" not in text, text
    text = grad_text(unrelated_branch, 0.5, -2.0)
    assert "y_bar" not in text, text
    assert "c_bar" not in text, text


def test_dce_removes_unused_primal_work():
    func = grad_ir(activity, 1.0, 2)
    text = pipeline.emit(func).source
    assert "7.0" not in text, text
    defs = {v.name for s in ir.walk(func.body) for v in ir.stmt_defs(s)}
    assert "u" not in defs


def test_adjoints_accumulate():
    func = grad_ir(thrice, 0.8)
    x_bar_defs = [s for s in ir.walk(func.body)
                  if isinstance(s, ir.Assign) and s.target.name == "x_bar"]
    assert len(x_bar_defs) == 3
    # the first contribution assigns, the later ones add to what is there
    assert not (isinstance(x_bar_defs[0].value, ir.Var) and x_bar_defs[0].value.name == "x_bar")
    for s in x_bar_defs[1:]:
        assert s.value.args[0] == ir.Var("x_bar")
    g = s2s.grad(thrice)(0.8)
    assert g == pytest.approx(2 * 0.8 + math.cos(0.8), rel=1e-12)


def test_if_gets_an_adjoint_if_on_the_same_test():
    func = grad_ir(branchy, 1.5)
    ifs = [s for s in func.body if isinstance(s, ir.If)]
    assert len(ifs) == 2
    primal, adjoint = ifs
    assert not primal.loc.derived and adjoint.loc.derived
    assert adjoint.test == primal.test
    assert func.body.index(primal) < func.body.index(adjoint)
    assert s2s.grad(branchy)(1.5) == pytest.approx(9.0)
    assert s2s.grad(branchy)(-1.5) == pytest.approx(-3.0)


def test_seed_line_is_present():
    func = grad_ir(thrice, 0.8)
    seeds = [s for s in ir.walk(func.body)
             if isinstance(getattr(s, "value", None), ir.Call) and s.value.fn is rt.grad_seed]
    assert len(seeds) == 1
    text = pipeline.emit(func).source
    alias = pipeline.emit(func).aliases["rt"]
    assert f"{alias}.grad_seed(" in text


def test_line_comments_above_derived_blocks():
    text = grad_text(activity, 1.0, 2)
    lines = text.splitlines()
    for needle in ("z = x * 2.0", "z = x * x", "if flag > 0:"):
        n, src = fx.line_of(activity, needle)
        comment = f"# line {n}: {src.strip()}"
        hits = [i for i, ln in enumerate(lines) if ln.strip() == comment]
        assert hits, (comment, text)
        # the comment sits directly above generated code, indented like it
        nxt = lines[hits[0] + 1]
        assert nxt.strip() and not nxt.strip().startswith("#")
        assert len(nxt) - len(nxt.lstrip()) == len(lines[hits[0]]) - len(lines[hits[0]].lstrip())
    # primal statements carry no comments
    first_comment = next(i for i, ln in enumerate(lines) if ln.strip().startswith("# line"))
    seed = next(i for i, ln in enumerate(lines) if "grad_seed" in ln)
    assert first_comment == seed - 1


def test_gradient_function_is_valid_and_named():
    func = grad_ir(thrice, 0.8)
    assert func.name == "grad_thrice"
    assert isinstance(func.body[-1], ir.Return)
    assert len([s for s in ir.walk(func.body) if isinstance(s, ir.Return)]) == 1


# --- numbers ---------------------------------------------------------------------------

A3 = np.array([0.3, -0.7, 1.1])
W23 = np.array([[0.2, -0.4, 0.6], [0.5, 0.1, -0.3]])

FD_CASES = [
    (fx.arith, (1.3, 0.4), (0, 1)),
    (fx.swap, (1.0, 5.0), (0, 1)),
    (fx.ifexp, (2.0,), (0,)),
    (fx.ifexp, (-3.0,), (0,)),
    (fx.piecewise, (-3.0,), (0,)),
    (fx.piecewise, (0.5,), (0,)),
    (fx.piecewise, (4.0,), (0,)),
    (fx.boolops, (2.0, 3.0), (0, 1)),
    (fx.defaults, (1.5,), (0,)),
    (fx.hygiene, (0.7,), (0,)),
    (fx.uses_globals, (A3,), (0,)),
    (fx.calls_helper_kw, (1.5,), (0,)),
    (fx.slicing, (np.array([0.5, -1.25, 2.0, 3.5, -0.75]),), (0,)),
    (array_methods_total, (W23,), (0,)),
    (activity, (1.0, 2), (0,)),
    (activity, (1.0, -2), (0,)),
    (unrelated_branch, (0.5, 2.0), (0, 1)),
    (unrelated_branch, (0.5, -2.0), (0, 1)),
    (thrice, (0.8,), (0,)),
    (branchy, (1.5,), (0,)),
    (branchy, (-1.5,), (0,)),
    (network, (A3, W23), (0, 1)),
]


@pytest.mark.parametrize("fn,args,argnums", FD_CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(FD_CASES)])
def test_gradient_matches_finite_differences(fn, args, argnums):
    grads = s2s.grad(fn, argnums=argnums)(*args)
    assert isinstance(grads, tuple) and len(grads) == len(argnums)
    for i, g in zip(argnums, grads):
        want = numeric_grad(fn, args, i)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7, err_msg=f"d/d arg{i}")
        assert np.shape(g) == np.shape(args[i])


def test_gradient_of_closure_matches_finite_differences():
    inner = fx.make_closure(0.75)
    g = s2s.grad(inner)(0.3)
    assert g == pytest.approx(numeric_grad(inner, (0.3,), 0), rel=1e-6)


def test_value_and_grad_agrees_with_the_function():
    value, g = s2s.value_and_grad(thrice)(0.8)
    assert value == thrice(0.8)
    assert g == pytest.approx(numeric_grad(thrice, (0.8,), 0), rel=1e-6)
