"""Shapes a kernel's variables are known to share (``passes/symbolic_shapes.py``): what
the analysis vouches for, what it refuses to, and the compiled derivatives that rely on
it (fused ``unbroadcast`` nodes known to be the identity get no summing path), checked
against Python mode and central differences where a wrong claim would show."""
import operator

import numpy as np
import pytest
from llvmlite import ir as ll

import s2s
from s2s.backend.llvm.driver.compile import signature_form
from s2s.backend.llvm.lower.function import FunctionLowering
from s2s.backend.llvm.ops.fused import ElementwiseTree
from s2s.backend.llvm.passes import elementwise_fusion
from s2s.backend.llvm.passes.symbolic_shapes import symbolic_shapes
from s2s.backend.llvm.typing import types as T
from s2s.core.jit import Jitted
from s2s.ir import nodes as ir

from tests.compose.finite_differences import fd_gradient


def lowering(fn, *args):
    """``(shapes, statements)``: what ``symbolic_shapes`` found for ``jit(fn)``'s kernel
    for ``args``, and the statements lowered after fusion."""
    found = []

    def recording(func, types):
        found.append(real(func, types))
        return found[-1]

    real = elementwise_fusion.symbolic_shapes
    elementwise_fusion.symbolic_shapes = recording
    try:
        func, load_free = Jitted(fn).compiled_ir(args)
        func, types, _ = signature_form(func, args, load_free)
        body = FunctionLowering(ll.Module(), func, types, "kernel").func.body
    finally:
        elementwise_fusion.symbolic_shapes = real
    return found[-1], list(ir.walk(body))


def unbroadcast_nodes(stmts):
    return [n for s in stmts if isinstance(getattr(s, "value", None), ir.Call)
            and isinstance(s.value.fn, ElementwiseTree)
            for n in s.value.fn.nodes if getattr(n.fn, "__name__", "") == "unbroadcast"]


def one_argument_chain(x):
    a = x * 2.0
    b = np.sin(a) + x
    c = a * b - np.cos(b)
    return np.sum(c * c * x)


def two_argument_chain(x, y):
    a = x * y
    b = np.sin(x) + y
    c = a * b
    return np.sum(c * np.tanh(a))


def test_a_chain_of_one_argument_shares_its_shape():
    x = np.linspace(0.1, 0.9, 5)
    shapes, stmts = lowering(s2s.grad(one_argument_chain), x)
    assert shapes["a"] == shapes["b"] == shapes["c"] == shapes["x"] == \
        (frozenset({("x", 0)}),)
    nodes = unbroadcast_nodes(stmts)
    assert nodes and all(n.shape_from is not None for n in nodes)
    np.testing.assert_allclose(s2s.jit(s2s.grad(one_argument_chain))(x),
                               fd_gradient(one_argument_chain, x), rtol=1e-6, atol=1e-8)


def test_broadcast_sizes_are_united_and_the_arguments_stay_apart():
    x, y = np.linspace(0.1, 0.9, 4), np.linspace(1.0, 2.0, 4)
    shapes, stmts = lowering(s2s.grad(two_argument_chain, argnums=(0, 1)), x, y)
    both = (frozenset({("x", 0), ("y", 0)}),)
    assert shapes["a"] == shapes["b"] == shapes["c"] == both
    assert shapes["x"] != both and shapes["y"] != both
    # the adjoints summed into x's and y's shapes keep their run-time test
    assert any(n.shape_from is None for n in unbroadcast_nodes(stmts))


@pytest.mark.parametrize("shapes", [((4,), (4,)), ((1,), (4,)), ((4,), (1,)),
                                    ((3, 1), (4,))])
def test_gradients_where_the_sizes_differ_at_run_time(shapes):
    r = np.random.default_rng(0)
    x, y = r.normal(size=shapes[0]), r.normal(size=shapes[1])
    grad = s2s.grad(two_argument_chain, argnums=(0, 1))
    for got, want in zip(s2s.jit(grad)(x, y), grad(x, y)):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s2s.jit(grad)(x, y)[0],
                               fd_gradient(lambda v: two_argument_chain(v, y), x),
                               rtol=1e-6, atol=1e-8)


def carried_broadcast(x, z, n):
    """``a`` is ``x``'s shape before the loop and ``z``'s broadcast with it after."""
    a = x * 1.5
    for i in range(n):
        a = a * z + np.sin(a)
    return np.sum(a * a)


def test_a_loop_carried_value_whose_shape_changes_is_not_vouched_for():
    x, z = np.array([0.4]), np.linspace(0.1, 0.5, 4)
    shapes, _ = lowering(s2s.grad(carried_broadcast), x, z, 3)
    assert shapes["a"] == shapes["x"]  # before the loop
    assert "a_1" not in shapes  # the loop's (kernel IR names)
    g = s2s.jit(s2s.grad(carried_broadcast))(x, z, 3)
    np.testing.assert_allclose(g, s2s.grad(carried_broadcast)(x, z, 3), rtol=1e-12)
    np.testing.assert_allclose(g, fd_gradient(lambda v: carried_broadcast(v, z, 3), x),
                               rtol=1e-6, atol=1e-8)


def carried_same(x, z, n):
    """``a`` keeps the broadcast of ``x`` and ``z`` on every trip."""
    a = x * z
    for i in range(n):
        a = a * z + np.sin(a)
    return np.sum(a * x)


def test_a_loop_carried_value_that_keeps_its_shape_is_vouched_for():
    x, z = np.linspace(0.1, 0.5, 4), np.linspace(0.2, 0.3, 4)
    # the primal's (its gradient pops ``a`` from the tape: an unpacking, not followed)
    shapes, _ = lowering(carried_same, x, z, 3)
    assert shapes["a"] == (frozenset({("x", 0), ("z", 0)}),)
    for xs, zs in (((4,), (4,)), ((1,), (4,)), ((4,), (1,))):
        r = np.random.default_rng(1)
        xv, zv = 0.3 * r.normal(size=xs), 0.3 * r.normal(size=zs)
        grad = s2s.grad(carried_same, argnums=(0, 1))
        for got, want in zip(s2s.jit(grad)(xv, zv, 3), grad(xv, zv, 3)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def grown_in_a_loop(x, n):
    """Arrays made in a loop have another size on each trip: ``prev`` (the last trip's)
    and ``z`` (this trip's) must not be taken for one shape."""
    prev = x[:1] * 1.0
    total = 0.0
    for i in range(1, n):
        z = np.ones(i) * x[0]
        w = prev * z + np.sin(z)
        total = total + np.sum(w * w * prev)
        prev = z
    return total


def test_arrays_made_in_a_loop_get_no_shape_of_their_own():
    x = np.array([0.3, 0.7])
    shapes, _ = lowering(s2s.grad(grown_in_a_loop), x, 3)
    assert "z" not in shapes and "w" not in shapes and "prev_1" not in shapes
    g = s2s.jit(s2s.grad(grown_in_a_loop))(x, 3)
    np.testing.assert_allclose(g, s2s.grad(grown_in_a_loop)(x, 3), rtol=1e-12)
    np.testing.assert_allclose(g, fd_gradient(lambda v: grown_in_a_loop(v, 3), x),
                               rtol=1e-6, atol=1e-8)


def made_once(x, n):
    """``z`` is made once, outside every loop, by a call the analysis does not follow:
    its own sizes, shared by what is computed from it alone."""
    z = np.linspace(0.0, 1.0, n) * 1.0
    w = np.sin(z) * 2.0 + z
    return np.sum(w * x)


def test_a_value_made_once_outside_loops_has_sizes_of_its_own():
    x = np.linspace(0.1, 0.9, 5)
    shapes, _ = lowering(s2s.grad(made_once), x, 5)
    assert shapes["w"] == shapes["z"] != shapes["x"]
    np.testing.assert_allclose(s2s.jit(s2s.grad(made_once))(x, 5),
                               fd_gradient(lambda v: made_once(v, 5), x), rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="broadcast"):
        s2s.jit(s2s.grad(made_once))(x, 4)


def test_a_name_a_loop_or_an_unpacking_assigns_is_not_vouched_for():
    """Names are the kernel IR's, which may reuse a name for a loop's variable or an
    unpacked item: such an assignment is not followed, whatever the others say."""
    x, m, a, b, c = (ir.Var(n) for n in "xmabc")
    body = (ir.Assign(a, ir.Call(operator.mul, (x, ir.Const(2.0)))),
            ir.Assign(b, ir.Call(operator.mul, (x, ir.Const(3.0)))),
            ir.For(a, m, (ir.Assign(c, ir.Call(operator.mul, (a, x))),)),
            ir.Unpack((b, c), m))
    func = ir.Function("f", (ir.Param(x), ir.Param(m)), body)
    vec = T.Array("f8", 1)
    shapes = symbolic_shapes(func, {"x": vec, "m": T.Array("f8", 2), "a": vec, "b": vec,
                                    "c": vec})
    assert shapes["x"] == (frozenset({("x", 0)}),)
    assert "a" not in shapes and "b" not in shapes and "c" not in shapes
