"""Chains of elementwise statements compiled as one loop (``passes/elementwise_fusion.py``,
``ops/fused.py``): the same values, dtypes and errors as numpy, statement by statement,
and the chains the pass makes (fewer loops) where it may, none where it may not."""
import inspect
import traceback

import numpy as np
import pytest
from llvmlite import ir as ll

import s2s
import s2s_runtime
from s2s.backend.llvm.driver.compile import signature_form
from s2s.backend.llvm.driver.module import build_module
from s2s.backend.llvm.lower.function import FunctionLowering
from s2s.backend.llvm.ops.fused import ElementwiseShape, ElementwiseTree
from s2s.core.jit import Jitted
from s2s.ir import nodes as ir


def lowered_statements(fn, *args):
    """The statements ``jit(fn)`` lowers for ``args`` (after the fusion pass)."""
    func, load_free = Jitted(fn).compiled_ir(args)
    func, types, _ = signature_form(func, args, load_free)
    return list(ir.walk(FunctionLowering(ll.Module(), func, types, "kernel").func.body))


def fused_chains(fn, *args):
    """The fused calls (as tuples of their callables' names) of ``jit(fn)`` for ``args``
    (not a statement alone made a tree of one node to mark it part of a run:
    ``lower/fused_runs.py``)."""
    return [tuple(getattr(n.fn, "__name__", "?") for n in s.value.fn.nodes)
            for s in lowered_statements(fn, *args)
            if isinstance(getattr(s, "value", None), ir.Call)
            and isinstance(s.value.fn, ElementwiseTree) and len(s.value.fn.nodes) > 1]


def shape_stand_ins(fn, *args):
    """The names ``jit(fn)`` assigns only the shape of (``ElementwiseShape``)."""
    return [s.target.name for s in lowered_statements(fn, *args)
            if isinstance(getattr(s, "value", None), ir.Call)
            and isinstance(s.value.fn, ElementwiseShape)]


def poly(x, y):
    a = x * y
    b = np.exp(-a)
    c = b * 2.0 + y
    return c - x / 3.0


def mixed_ranks(m, v, s):
    t = m * v          # (3, 4) * (4,)
    u = np.sin(t) + s  # + a number
    return u * v[None, :] - m


def float32_chain(a, b, c):
    t = a * b
    return t + c * np.float32(0.5)


def int_chain(i, j):
    t = i * 3
    u = t // 2 - j
    return u % 5


def masks(x):
    inside = (x > 0.0) & (x < 1.0)
    return np.where(inside, x * 2.0, -x)


def complex_chain(z, w):
    t = np.conj(z) * w
    return t - z * 2.0


def loop_body(x, n):
    acc = np.zeros_like(x)
    for i in range(n):
        t = np.cos(x * i)
        acc = acc + t * t
    return acc


def reassigned_in_a_loop(x, n):
    s = x * 1.0
    for i in range(n):
        t = s * 0.5          # reads the value of the previous iteration
        s = np.sin(x) * i    # read once, by the next line, which assigns s again
        s = s + t
    return s


def in_place_root(x):
    a = np.copy(x)     # a fresh array nobody else holds
    a = a * 2.0 + x    # written into a's block
    return a


def shared_root(x):
    a = x * 1.0
    keep = a           # a second name for the same array
    a = a * 2.0 + x    # must not write into keep
    return a, keep


def parameter_root(x, y):
    x = x * 2.0 + y    # x is the caller's array: never written
    return x


def reassigned_leaf(x, y):
    t = x * 2.0
    x = y + 1.0        # x changes after t read it
    return t + x


CASES = [
    (poly, lambda r: (r.normal(size=(5, 3)), r.normal(size=(5, 3)))),
    (poly, lambda r: (r.normal(size=(4, 1)), r.normal(size=(3,)))),
    (mixed_ranks, lambda r: (r.normal(size=(3, 4)), r.normal(size=4), 0.5)),
    (float32_chain, lambda r: tuple(r.normal(size=7).astype(np.float32) for _ in range(3))),
    (int_chain, lambda r: (r.integers(-50, 50, 9), r.integers(-5, 5, 9))),
    (masks, lambda r: (r.normal(size=(2, 6)),)),
    (complex_chain, lambda r: (r.normal(size=4) + 1j * r.normal(size=4),
                               r.normal(size=4) - 2j * r.normal(size=4))),
    (loop_body, lambda r: (r.normal(size=6), 4)),
    (reassigned_in_a_loop, lambda r: (r.normal(size=5), 4)),
    (in_place_root, lambda r: (r.normal(size=(2, 3)),)),
    (shared_root, lambda r: (r.normal(size=5),)),
    (parameter_root, lambda r: (r.normal(size=5), r.normal(size=5))),
    (reassigned_leaf, lambda r: (r.normal(size=5), r.normal(size=5))),
]


@pytest.mark.parametrize("fn,make", CASES, ids=[f.__name__ for f, _ in CASES])
def test_fused_chains_equal_numpy(fn, make):
    args = make(np.random.default_rng(7))
    originals = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*originals)
    got = s2s.jit(fn)(*args)
    for w, g in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,)):
        assert g.dtype == w.dtype and g.shape == w.shape
        if g.dtype.kind == "c":  # numpy's complex product may round its last bit otherwise
            np.testing.assert_allclose(g, w, rtol=1e-15, atol=0)
        else:  # the same operations, element by element
            np.testing.assert_array_equal(g, w)
    for a, o in zip(args, originals):  # the caller's arrays are never written
        np.testing.assert_array_equal(a, o)


def test_chains_are_fused():
    r = np.random.default_rng(0)
    x, y = r.normal(size=4), r.normal(size=4)
    assert fused_chains(poly, x, y) == [("mul", "neg", "exp", "mul", "add", "truediv", "sub")]
    assert fused_chains(masks, x) == [("gt", "lt", "and_", "mul", "neg", "where")]
    assert fused_chains(in_place_root, x) == [("mul", "add")]
    # the loop body is one chain: s's first value is read once, then s is assigned again
    assert fused_chains(reassigned_in_a_loop, x, 3) == [("sin", "mul", "mul", "add")]
    # ``a = x * 1.0`` does not join ``a * 2.0 + x``: ``keep = a`` reads it in between
    assert fused_chains(shared_root, x) == [("mul", "add")]


def test_a_leaf_written_between_is_not_moved():
    """``t = x * 2`` is not computed after ``x = y + 1`` (the fused call would read the
    new ``x``): ``x = y + 1`` is the root of its own chain and ``t`` is emitted first."""
    r = np.random.default_rng(1)
    x, y = r.normal(size=3), r.normal(size=3)
    assert fused_chains(reassigned_leaf, x, y) == []
    np.testing.assert_array_equal(s2s.jit(reassigned_leaf)(x, y), reassigned_leaf(x, y))


def test_gradients_of_fused_code_match_differences():
    def f(x):
        y = np.tanh(x * 1.5) * np.exp(-x * x)
        return np.sum(y * y + 0.5 * x)

    x = np.random.default_rng(2).normal(size=6)
    g = s2s.jit(s2s.grad(f))(x)
    fd = np.array([(f(x + h) - f(x - h)) / 2e-6 for h in np.eye(6) * 1e-6])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def mismatch(a, b, c):
    t = a * 2.0
    u = t + b  # the statement whose operands do not broadcast
    return u * c


def test_a_broadcast_error_names_its_own_statement():
    with pytest.raises(ValueError, match="could not be broadcast") as info:
        s2s.jit(mismatch)(np.ones(3), np.ones(4), np.ones(3))
    lines, start = inspect.getsourcelines(mismatch)
    line = start + next(k for k, text in enumerate(lines) if "u = t + b" in text)
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert (last.filename, last.lineno) == (__file__, line)
    # nothing broken: the same kernel on good operands
    np.testing.assert_array_equal(s2s.jit(mismatch)(np.ones(3), np.ones(3), np.ones(3)),
                                  mismatch(np.ones(3), np.ones(3), np.ones(3)))


def broadcast_loss(x, y, n):
    """Adjoints that sum over broadcast axes (``x`` is (3, 1), ``y`` (4,)) and adjoints
    accumulated into the same names in a loop."""
    total = 0.0
    for i in range(n):
        z = x * y + np.sin(x * i)
        total = total + np.sum(z * z * y)
    return total


def same_shape_loss(x, y):
    d = x - y
    return np.sum(d * d * x)


@pytest.mark.parametrize("shapes", [((3, 1), (4,)), ((3, 4), (3, 4)), ((1, 4), (3, 4))])
def test_gradients_through_unbroadcast_match_differences(shapes):
    r = np.random.default_rng(3)
    x, y = r.normal(size=shapes[0]), r.normal(size=shapes[1])
    gx, gy = s2s.jit(s2s.grad(broadcast_loss, argnums=(0, 1)))(x, y, 3)
    for arg, g in ((0, gx), (1, gy)):
        base = [x, y]
        fd = np.zeros_like(base[arg])
        for k in np.ndindex(fd.shape):
            plus = [a.copy() for a in base]
            minus = [a.copy() for a in base]
            plus[arg][k] += 1e-6
            minus[arg][k] -= 1e-6
            fd[k] = (broadcast_loss(*plus, 3) - broadcast_loss(*minus, 3)) / 2e-6
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_adjoint_chains_through_unbroadcast_are_fused():
    """``x_bar = unbroadcast(g * y, x)`` and its accumulation join one loop (the
    identity where the shapes agree, checked at run time)."""
    x = np.random.default_rng(4).normal(size=5)
    chains = fused_chains(s2s.grad(same_shape_loss), x, x + 1.0)
    assert any("unbroadcast" in c for c in chains), chains
    g = s2s.jit(s2s.grad(same_shape_loss))(x, x + 1.0)
    fd = np.array([(same_shape_loss(x + h, x + 1.0) - same_shape_loss(x - h, x + 1.0)) / 2e-6
                   for h in np.eye(5) * 1e-6])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def sum_of_chain(x, y):
    d = x - y
    return np.sum(d * d * x)


def prod_of_chain(x, y):
    return np.prod(x * 0.5 + y)


def count_of_mask(b, n):
    return np.sum(b & (n > 2))


def sum_of_broadcast_chain(x, y):
    return np.sum(np.exp(x * y))  # (3, 1) * (4,): the array it sums is (3, 4)


@pytest.mark.parametrize("fn,make", [
    (sum_of_chain, lambda r: (r.normal(size=(4, 5)), r.normal(size=5))),
    (prod_of_chain, lambda r: (r.normal(size=6), r.normal(size=6))),
    (count_of_mask, lambda r: (r.normal(size=(3, 4)) > 0, r.integers(0, 5, (3, 4)))),
    (sum_of_broadcast_chain, lambda r: (r.normal(size=(3, 1)), r.normal(size=4))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_chain_ending_in_a_reduction(fn, make):
    """The sum adds the elements as they are computed, in C order, as the jit's sum of
    the stored array does (numpy's pairwise sum agrees to rounding)."""
    args = make(np.random.default_rng(5))
    got, want = s2s.jit(fn)(*args), fn(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-14)
    chains = fused_chains(fn, *args)
    assert len(chains) == 1 and chains[0][-1] in ("sum", "prod"), chains


def test_gradient_of_a_sum_of_squares_chain():
    def loss(w, x):
        r = np.tanh(x * w) - 0.5
        return np.sum(r * r)

    w, x = np.random.default_rng(6).normal(size=(2, 7))
    g = s2s.jit(s2s.grad(loss))(w, x)
    fd = np.array([(loss(w + h, x) - loss(w - h, x)) / 2e-6 for h in np.eye(7) * 1e-6])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def sum_along_axis(x, y):
    d = x - y
    return np.sum(d * d, axis=1)


def prod_keepdims(x, y):
    return np.prod(x * y + 1.0, axis=(0,), keepdims=True)


def count_along_last(x, y):
    return np.sum(x > y, axis=-1)


@pytest.mark.parametrize("fn,make", [
    (sum_along_axis, lambda r: (r.normal(size=(4, 5)), r.normal(size=5))),
    (sum_along_axis, lambda r: (r.normal(size=(3, 4, 5)), r.normal(size=5))),
    (prod_keepdims, lambda r: (r.normal(size=(4, 5)), r.normal(size=5))),
    (count_along_last, lambda r: (r.normal(size=(3, 4, 5)), r.normal(size=5))),
], ids=["axis1", "axis1_3d", "prod_keepdims", "count"])
def test_a_chain_reduced_along_an_axis(fn, make):
    args = make(np.random.default_rng(8))
    got, want = s2s.jit(fn)(*args), fn(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-14)
    chains = fused_chains(fn, *args)
    assert len(chains) == 1 and chains[0][-1] in ("sum", "prod"), chains


def test_a_reduction_along_a_bad_axis_is_numpys_error():
    with pytest.raises(Exception, match="axis"):
        s2s.jit(sum_along_axis)(np.ones(3), np.ones(3))


def residual_shapes(x, y):
    """Primal temporaries the adjoint reads only for their shape (``unbroadcast(g, t)``
    of ``t = np.sin(x)``, ``t = a * x``) and once by value, in the next statement."""
    a = np.sin(x) + y
    b = np.tanh(a * y) + 0.5 * np.cos(a)
    c = b * x + a
    return np.sum(np.sin(c) * y + b)


def central_differences(f, args, arg, h=1e-6):
    fd = np.zeros_like(args[arg])
    for k in np.ndindex(fd.shape):
        plus, minus = [a.copy() for a in args], [a.copy() for a in args]
        plus[arg][k] += h
        minus[arg][k] -= h
        fd[k] = (f(*plus) - f(*minus)) / (2 * h)
    return fd


@pytest.mark.parametrize("shapes", [((5,), (5,)), ((3, 1), (4,)), ((3, 4), (1, 4))])
def test_values_read_only_for_their_shape_are_not_stored(shapes):
    """The primal temporaries only ``unbroadcast`` reads besides their one reader get a
    shape stand-in and are computed inside their reader's loop; the gradient is the
    Python-mode gradient (the same operations in the same order, up to the last bit of
    the compiled sin/cos/tanh) and central differences, also where the adjoint sums over
    broadcast axes."""
    r = np.random.default_rng(5)
    x, y = r.normal(size=shapes[0]), r.normal(size=shapes[1])
    grad = s2s.grad(residual_shapes, argnums=(0, 1))
    assert shape_stand_ins(grad, x, y), "no temporary was read only for its shape"
    compiled = s2s.jit(grad)(x, y)
    for arg, g, g_python in zip((0, 1), compiled, grad(x, y)):
        np.testing.assert_allclose(g, g_python, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(g, central_differences(residual_shapes, [x, y], arg),
                                   rtol=1e-6, atol=1e-7)


def shape_mismatch_loss(x, y):
    t = np.sin(x)
    u = t * y  # the statement whose operands do not broadcast
    return np.sum(np.cos(u) + t)


def test_a_shape_stand_in_raises_its_statements_error():
    """``u``'s value is read by the next statement only, its shape by the adjoint: the
    broadcast error is raised where ``u`` was assigned, at its line."""
    grad = s2s.jit(s2s.grad(shape_mismatch_loss))
    with pytest.raises(ValueError, match="could not be broadcast") as info:
        grad(np.ones(3), np.ones(4))
    lines, start = inspect.getsourcelines(shape_mismatch_loss)
    line = start + next(k for k, text in enumerate(lines) if "u = t * y" in text)
    assert traceback.extract_tb(info.value.__traceback__)[-1].lineno == line
    x, y = np.linspace(0.1, 0.9, 4), np.linspace(-1.0, 1.0, 4)
    np.testing.assert_allclose(grad(x, y), central_differences(shape_mismatch_loss, [x, y], 0),
                               rtol=1e-6, atol=1e-7)


def two_broadcasts(x, y):
    a = x * y + np.sin(x)
    b = a * y - x / (1.0 + y * y)
    return np.sum(b * b + a * x)


def hessian_vector(x, y):
    """The x-block of the Hessian of ``two_broadcasts`` times ones (forward over reverse)."""
    return s2s.jvp(s2s.grad(two_broadcasts), (x, y), (np.ones_like(x), np.zeros_like(y)))[1]


@pytest.mark.parametrize("shapes", [((3, 1), (4,)), ((3, 4), (3, 1)), ((2, 1, 3), (4, 1))])
def test_chains_summing_over_broadcast_axes_are_computed_in_stages(shapes):
    """Fused adjoint chains holding several ``unbroadcast`` nodes, where the shapes
    differ at run time (each ``unbroadcast`` a sum, the loops between fused): the values
    of Python mode, for a gradient and a Hessian-vector product, and central differences
    of the gradient."""
    r = np.random.default_rng(6)
    x, y = r.normal(size=shapes[0]), r.normal(size=shapes[1])
    grad = s2s.grad(two_broadcasts, argnums=(0, 1))
    chains = fused_chains(grad, x, y) + fused_chains(hessian_vector, x, y)
    assert max(c.count("unbroadcast") for c in chains) >= 2, chains
    for got, want in zip(s2s.jit(grad)(x, y), grad(x, y)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(s2s.jit(hessian_vector)(x, y), hessian_vector(x, y),
                               rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(s2s.jit(grad)(x, y)[0],
                               central_differences(two_broadcasts, [x, y], 0),
                               rtol=1e-6, atol=1e-7)


def long_chain(x, y):
    """Enough fused loops at the top level for the kernel to outline them (outline.py)."""
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


def test_a_kernel_with_many_fused_loops_outlines_them():
    """Each top-level fused loop is a function of its own (the kernel's LLVM IR names
    them); the gradient is Python mode's and central differences', and a broadcast
    error inside an outlined loop is raised at its statement's line, leaving the kernel
    usable."""
    r = np.random.default_rng(7)
    x, y = r.normal(size=6), r.normal(size=6)
    grad = s2s.grad(long_chain, argnums=(0, 1))
    func, load_free = Jitted(grad).compiled_ir((x, y))
    func, types, _ = signature_form(func, (x, y), load_free)
    assert ".fused" in build_module(func, types).text  # the outlined loops
    compiled = s2s.jit(grad)
    for got, want in zip(compiled(x, y), grad(x, y)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(compiled(x, y)[0], central_differences(long_chain, [x, y], 0),
                               rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="could not be broadcast"):
        compiled(x, np.ones(5))
    np.testing.assert_allclose(compiled(x, y)[1], grad(x, y)[1], rtol=1e-13, atol=1e-14)


def many_reads(x, y):
    """``x`` read by several broadcasting statements: its adjoint adds one
    ``unbroadcast`` per read."""
    a = x * y
    b = np.sin(a) * x + y
    c = b * x - a * np.cos(x)
    return np.sum(c * b + a * x)


@pytest.mark.parametrize("shapes", [((5,), (5,)), ((1,), (5,)), ((3, 1), (4,)),
                                    ((3, 4), (1, 4))])
def test_unbroadcasts_into_one_array_are_summed_once(shapes):
    """``unbroadcast(u, x) + unbroadcast(v, x)`` with ``u`` and ``v`` of one known shape is
    ``unbroadcast(u + v, x)`` (the sum over broadcast axes is linear): the gradient has
    fewer ``unbroadcast`` nodes than reads of ``x`` and is Python mode's and central
    differences'."""
    r = np.random.default_rng(8)
    x, y = 0.5 * r.normal(size=shapes[0]), 0.5 * r.normal(size=shapes[1])
    grad = s2s.grad(many_reads, argnums=(0, 1))
    into_x = []
    for s in lowered_statements(grad, x, y):
        call = getattr(s, "value", None)
        if isinstance(call, ir.Call) and isinstance(call.fn, ElementwiseTree) and \
                ir.Var("x") in call.args:
            leaf = ("leaf", call.args.index(ir.Var("x")))
            into_x += [n for n in call.fn.nodes
                       if n.fn is s2s_runtime.unbroadcast and n.operands[1] == leaf]
    assert len(into_x) < 4, into_x  # (one per broadcast read of x before: 4)
    for got, want in zip(s2s.jit(grad)(x, y), grad(x, y)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s2s.jit(grad)(x, y)[0],
                               central_differences(many_reads, [x, y], 0),
                               rtol=1e-6, atol=1e-8)
