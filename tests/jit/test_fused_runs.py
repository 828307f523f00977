"""Runs of fused statements of one known shape lowered as one loop
(``lower/fused_runs.py``, in functions with at least ``RUNS_FROM`` fused loops): the
values numpy computes, statement by statement, where names are reassigned, copied, read
before and after their reassignment, broadcast from smaller arrays, of other dtypes; the
gradients of such code against central differences; and that a long chain is lowered as
a few loops."""
import numpy as np
import pytest
from llvmlite import ir as ll

import s2s
from s2s.backend.llvm.driver.compile import signature_form
from s2s.backend.llvm.driver.module import build_module
from s2s.backend.llvm.lower.function import FunctionLowering
from s2s.backend.llvm.ops.fused import ElementwiseTree
from s2s.core.jit import Jitted
from s2s.ir import nodes as ir

from tests.compose.finite_differences import fd_gradient
from s2s.backend.llvm.passes import elementwise_fusion


@pytest.fixture(autouse=True)
def runs_everywhere(monkeypatch, request):
    """Runs are marked in functions of any length here (``RUNS_FROM``: from 128 fused
    loops otherwise), except where a test checks that threshold."""
    if "threshold" not in request.node.name:
        monkeypatch.setattr(elementwise_fusion, "RUNS_FROM", 0)


def run_members(fn, *args):
    func, load_free = Jitted(fn).compiled_ir(args)
    func, types, _ = signature_form(func, args, load_free)
    body = FunctionLowering(ll.Module(), func, types, "kernel").func.body
    return [s.target.name for s in body if isinstance(getattr(s, "value", None), ir.Call)
            and isinstance(s.value.fn, ElementwiseTree) and s.value.fn.run_shape]


def reassigned(x, y):
    a = x * y
    b = a + 1.0
    a = b * a          # a read before and after its reassignment
    c = a - b
    a = np.sin(c) * a
    return a + b * c


def copies(x, y):
    a = x * y
    t = a              # a copy of a name the run made
    a = a * 2.0 + y
    u = a              # ... then the name reassigned
    a = u * x
    return (t + a) * (u - x)


def argument_reassigned(x, y):
    a = x * y
    u = x              # a copy of an argument, then the argument reassigned
    x = x * a
    return (a + x) * (u - x)


def broadcast_leaves(x, y, s):
    a = x * y          # (n,) * (1,) or (1,) * (n,): the shape of the run
    b = a * x + y * s  # x and y broadcast into it
    c = np.cos(b) - a * y
    return c * b + x


def dtypes(i, x):
    a = i * 3          # ints
    b = a * x          # floats
    c = (b > 1.0) & (a < 9)
    d = np.where(c, b, -b)
    return d * 1j + b  # complex


def kept_and_dropped(x):
    t1 = np.exp(x)
    t2 = t1 * x        # read only in the run
    keep = t2 + t1     # read after it
    total = np.sum(keep)
    t3 = keep * total
    return t3 - keep


CASES = [
    (reassigned, lambda r: (r.normal(size=6), r.normal(size=6))),
    (copies, lambda r: (r.normal(size=5), r.normal(size=5))),
    (argument_reassigned, lambda r: (r.normal(size=5), r.normal(size=5))),
    (broadcast_leaves, lambda r: (r.normal(size=4), r.normal(size=1), 0.7)),
    (broadcast_leaves, lambda r: (r.normal(size=1), r.normal(size=4), 0.7)),
    (broadcast_leaves, lambda r: (r.normal(size=(3, 1)), r.normal(size=(3, 4)), 0.7)),
    (dtypes, lambda r: (r.integers(0, 5, size=7), r.normal(size=7))),
    (kept_and_dropped, lambda r: (r.normal(size=5),)),
]


@pytest.mark.parametrize("fn,make", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_runs_compute_what_numpy_computes(fn, make):
    args = make(np.random.default_rng(0))
    got, want = s2s.jit(fn)(*args), fn(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


def test_the_cases_hold_runs():
    r = np.random.default_rng(1)
    x, y = r.normal(size=6), r.normal(size=6)
    assert len(run_members(reassigned, x, y)) >= 4
    assert len(run_members(copies, x, y)) >= 3


def test_a_run_does_not_change_its_arguments():
    r = np.random.default_rng(2)
    x, y = r.normal(size=5), r.normal(size=5)
    x0, y0 = x.copy(), y.copy()
    s2s.jit(copies)(x, y)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)


def scalar_loss(x, y):
    return np.sum(reassigned(x, y) * copies(x, y))


@pytest.mark.parametrize("shapes", [((5,), (5,)), ((1,), (5,)), ((5,), (1,))])
def test_gradients_through_runs_match_differences(shapes):
    r = np.random.default_rng(3)
    x, y = 0.5 * r.normal(size=shapes[0]), 0.5 * r.normal(size=shapes[1])
    gx, gy = s2s.jit(s2s.grad(scalar_loss, argnums=(0, 1)))(x, y)
    np.testing.assert_allclose(gx, fd_gradient(lambda v: scalar_loss(v, y), x),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, fd_gradient(lambda v: scalar_loss(x, v), y),
                               rtol=1e-6, atol=1e-8)


def long_chain(x, y):
    """``test_elementwise_fusion.long_chain`` written again: a function of its own, so
    the kernels compiled here with runs (``RUNS_FROM`` lowered) are never the ones that
    file compiles without them (s2s shares the work of equal functions)."""
    a = x * y
    b = np.sin(x) + y
    for_each = [a, b]
    c = a * b + 0.5 * np.cos(a)
    d = np.tanh(b) - c * 0.5
    e = c * x + d
    f = np.sin(e) + np.sin(d) * y
    g = np.tanh(f * d) + 0.5 * np.cos(f)
    h = np.tanh(d) - g * 0.5
    k = g * x + h
    m = np.sin(k) + np.sin(h) * y
    return np.sum(m * g + for_each[0])


def test_a_long_gradient_is_a_few_loops():
    """The gradient of a chain of statements over arrays of one shape: its forward and
    adjoint sweeps are each one run (one outlined function; the adjoints summed into
    the arguments' shapes are loops of their own), and its values are Python mode's."""
    r = np.random.default_rng(4)
    x, y = r.normal(size=6), r.normal(size=6)
    grad = s2s.grad(long_chain, argnums=(0, 1))
    func, load_free = Jitted(grad).compiled_ir((x, y))
    func, types, _ = signature_form(func, (x, y), load_free)
    text = build_module(func, types).text
    runs = sum(line.startswith("define") and ".run" in line for line in text.splitlines())
    loops = sum(line.startswith("define") and (".run" in line or ".fused" in line)
                for line in text.splitlines())
    assert runs >= 2 and loops <= 10, (runs, loops)  # (a loop per chain: 31)
    for got, want in zip(s2s.jit(grad)(x, y), grad(x, y)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_below_the_threshold_a_function_has_no_runs():
    """A function with fewer fused loops than ``RUNS_FROM`` keeps a loop per chain (one
    loop per element computing a long dependent chain is slower)."""
    r = np.random.default_rng(5)
    x, y = r.normal(size=6), r.normal(size=6)
    assert run_members(reassigned, x, y) == []
    assert run_members(s2s.grad(long_chain, argnums=(0, 1)), x, y) == []
