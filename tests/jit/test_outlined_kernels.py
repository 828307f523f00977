"""Long kernels compile as glue calling functions (lower/outline.py, driver/module.py).

In a kernel with many top-level fused loops, every top-level call making an array (a
fused loop, a product, a reduction, a derivative helper) and the copy of a returned
argument are functions of their own; what is left, when it has no loop (a gradient's
in-place accumulations stay loops of the kernel), is compiled without LLVM's
optimisation (``optnone``); and each array allocation is one call of a helper
per rank that checks numpy's errors (``abi.new_array_block``).  These tests check that
the pieces are there and that nothing changes for the user: values equal Python mode's,
gradients equal central differences, errors are numpy's at the user's line, and a kernel
that raised works afterwards.
"""
import numpy as np
import pytest
from llvmlite import ir as ll

import s2s
from s2s.backend.llvm.driver import module
from s2s.backend.llvm.driver.compile import signature_form
from s2s.backend.llvm.driver.module import build_module, has_cycle, unoptimised_if_straight
from s2s.core.jit import Jitted


@pytest.fixture(autouse=True)
def small_glue(monkeypatch):
    """The functions here are long enough to outline but shorter than the size from
    which glue is left unoptimised: lower that size, so the tests run that code."""
    monkeypatch.setattr(module, "STRAIGHT_UNOPTIMISED_FROM", 200)


def long_glue(x, y, w):
    """Twenty fused statements, a product, a reduction, and an argument returned."""
    a = x * y
    b = np.sin(x) + y
    a = np.tanh(a * b) + 0.5 * np.cos(a)
    b = np.tanh(b) - a * 0.5
    c = a * x + b
    a = np.sin(c) + np.sin(b) * y
    a = np.tanh(a * b) + 0.5 * np.cos(a)
    b = np.tanh(b) - a * 0.5
    c = a * x + b
    a = np.sin(c) + np.sin(b) * y
    a = np.tanh(a * b) + 0.5 * np.cos(a)
    b = np.tanh(b) - a * 0.5
    c = a * x + b
    a = np.sin(c) + np.sin(b) * y
    a = np.tanh(a * b) + 0.5 * np.cos(a)
    b = np.tanh(b) - a * 0.5
    c = a * x + b
    a = np.sin(c) + np.sin(b) * y
    a = np.tanh(a * b) + 0.5 * np.cos(a)
    b = np.tanh(b) - a * 0.5
    p = w @ a
    s = np.sum(p * p)
    return a * s + b, p, y


def long_loss(x, y, w):
    a, p, _ = long_glue(x, y, w)
    return np.sum(a * a) + np.sum(np.cos(p))


def module_text(fn, *args):
    func, load_free = Jitted(fn).compiled_ir(args)
    func, types, _ = signature_form(func, args, load_free)
    return build_module(func, types).text


def kernel_header(text):
    return next(line for line in text.splitlines()
                if line.startswith("define") and '.kernel"(' in line)


def data(seed=0, n=6, m=3):
    r = np.random.default_rng(seed)
    return 0.5 * r.normal(size=n), 0.5 * r.normal(size=n), 0.5 * r.normal(size=(m, n))


def central_differences(f, args, arg, h=1e-6):
    x = np.array(args[arg], dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up = [np.array(a, dtype=float) for a in args]
        down = [np.array(a, dtype=float) for a in args]
        up[arg][i] += h
        down[arg][i] -= h
        out[i] = (f(*up) - f(*down)) / (2 * h)
    return out


def test_the_kernel_of_a_long_function_is_unoptimised_glue():
    x, y, w = data()
    text = module_text(long_glue, x, y, w)
    header = kernel_header(text)
    assert "optnone" in header and "noinline" in header and "alwaysinline" not in header
    assert '.kernel.call' in text  # the product and the reduction
    assert '.kernel.owned' in text  # the copy of the returned argument
    assert '@"s2s.new_block.1"' in text  # allocations through the helper
    # ... whose checks the caller's loops still know of (sizes >= 0: trip counts)
    assert '@"llvm.assume"' in text
    assert 'define internal noalias i8* @"s2s.new_block.1"' in text  # fresh memory


def test_a_short_kernel_is_optimised_as_before():
    def short(x, y):
        return np.sin(x) * y + x

    header = kernel_header(module_text(short, *data()[:2]))
    assert "optnone" not in header and "alwaysinline" in header


def test_values_are_python_modes_and_the_returned_argument_is_a_copy():
    x, y, w = data(1)
    got = s2s.jit(long_glue)(x, y, w)
    want = long_glue(x, y, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-13, atol=1e-14)
    assert not np.shares_memory(got[2], y)
    got[2][0] = 99.0
    assert y[0] != 99.0


@pytest.mark.parametrize("arg", [0, 1, 2])
def test_the_compiled_gradient_matches_central_differences(arg):
    x, y, w = data(2)
    args = (x, y, w)
    compiled = s2s.jit(s2s.grad(long_loss, argnums=(0, 1, 2)))(x, y, w)
    python = s2s.grad(long_loss, argnums=(0, 1, 2))(x, y, w)
    np.testing.assert_allclose(compiled[arg], python[arg], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(compiled[arg], central_differences(long_loss, args, arg),
                               rtol=1e-6, atol=1e-7)


def test_an_error_in_an_outlined_call_is_raised_at_the_users_line():
    x, y, w = data(3)
    f = s2s.jit(long_glue)
    with pytest.raises(ValueError) as info:
        f(x, y, np.ones((3, 5)))  # w @ a: 5 columns against 6 elements
    where = str(info.value) + "".join(getattr(info.value, "__notes__", []))
    assert "p = w @ a" in where
    for g, v in zip(f(x, y, w), long_glue(x, y, w)):  # the kernel still works
        np.testing.assert_allclose(g, v, rtol=1e-13, atol=1e-14)


def test_allocation_errors_through_the_helper_are_numpys():
    """The allocation helper's three errors, each at the user's line."""
    def long_zeros(x, n):
        a = x * x
        for_sum = np.zeros(n)
        b = np.sin(a) + a
        return np.sum(b) + np.sum(for_sum)

    f = s2s.jit(long_zeros)
    x = np.linspace(0.1, 0.5, 4)
    for n, exc, words in ((-1, ValueError, "negative dimensions are not allowed"),
                          (2 ** 61 + 1, ValueError, "array is too big"),
                          (10 ** 14, MemoryError, "Unable to allocate")):
        with pytest.raises(exc, match=words) as info:
            f(x, n)
        where = str(info.value) + "".join(getattr(info.value, "__notes__", []))
        assert "for_sum = np.zeros(n)" in where, where
    np.testing.assert_allclose(f(x, 3), long_zeros(x, 3), rtol=1e-14)


def _function(blocks_and_edges):
    """A void function with the named blocks, each ending in a branch to its successors
    (none: ``ret``; two: a conditional branch; more: a switch)."""
    module = ll.Module()
    fn = ll.Function(module, ll.FunctionType(ll.VoidType(), [ll.IntType(1), ll.IntType(32)]),
                     "f")
    blocks = {name: fn.append_basic_block(name) for name, _ in blocks_and_edges}
    for name, succ in blocks_and_edges:
        b = ll.IRBuilder(blocks[name])
        b.add(fn.args[1], fn.args[1])
        if not succ:
            b.ret_void()
        elif len(succ) == 1:
            b.branch(blocks[succ[0]])
        elif len(succ) == 2:
            b.cbranch(fn.args[0], blocks[succ[0]], blocks[succ[1]])
        else:
            sw = b.switch(fn.args[1], blocks[succ[0]])
            for k, target in enumerate(succ[1:]):
                sw.add_case(k, blocks[target])
    return fn


@pytest.mark.parametrize("cfg, cyclic", [
    ([("a", ["b"]), ("b", [])], False),
    ([("a", ["b", "c"]), ("b", ["d"]), ("c", ["d"]), ("d", [])], False),  # a diamond
    ([("a", ["b"]), ("b", ["c", "d"]), ("c", ["b"]), ("d", [])], True),  # a loop
    ([("a", ["b"]), ("b", ["d", "c", "a"]), ("c", []), ("d", [])], True),  # by a switch
    ([("a", ["c"]), ("b", ["b"]), ("c", [])], False),  # a cycle no path reaches
])
def test_has_cycle(cfg, cyclic):
    assert has_cycle(_function(cfg)) is cyclic


def test_unoptimised_if_straight_needs_size_and_no_loop():
    straight = _function([("a", ["b", "c"]), ("b", []), ("c", [])])
    assert not unoptimised_if_straight(straight, least=100)  # too small
    assert "optnone" not in straight.attributes
    assert unoptimised_if_straight(straight, least=2)
    assert {"optnone", "noinline"} <= set(straight.attributes)
    looping = _function([("a", ["b"]), ("b", ["b", "c"]), ("c", [])])
    assert not unoptimised_if_straight(looping, least=2)
