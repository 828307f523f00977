"""Loop versioning under jit (backend/llvm/lower/loop_versions.py): range loops whose accesses
have affine indices run a copy without per-access bounds checks when one precheck at the
preheader passes, else the fully checked loop.  Oracles: Python running the same function
(values, the IndexError message, the partial writes left in an input array), jit with
versioning switched off (the same error message, word for word), central finite
differences for gradients; the LLVM IR is deterministic, verified, and versioned only
where the plan says."""
from __future__ import annotations

import random
import re

import numpy as np
import pytest

import s2s
from s2s.core.jit import Jitted
from s2s.backend.llvm.driver import engine
from s2s.backend.llvm.lower import loop_versions
from s2s.backend.llvm.driver.compile import param_types
from s2s.backend.llvm.driver.module import build_module
from tests.grad import progen
from tests.grad.oracles import fd_grad
from tests.jit.loop_kernels import heat as stencil, lstm

RNG = np.random.default_rng(11)


def _outcome(f, args):
    """``(result or None, IndexError message or None, the inputs after the call)``."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        out, err = f(*args), None
    except IndexError as e:
        out, err = None, str(e)
    return out, err, args


def _unversioned(f):
    """jit(f) compiled without loop versioning (every access checked in the loop)."""
    j = s2s.jit(f)

    def call(*args):
        loop_versions.ENABLED = False
        try:
            return j(*args)
        finally:
            loop_versions.ENABLED = True
    return call


def check_like_python(f, args):
    """jit(f) returns Python's result, or raises Python's IndexError (message prefix)
    leaving the same partial writes in the array arguments."""
    want, want_err, want_args = _outcome(f, args)
    got, got_err, got_args = _outcome(s2s.jit(f), args)
    if want_err is None:
        assert got_err is None, got_err
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    else:
        assert got_err is not None and got_err.startswith(want_err), (got_err, want_err)
    for a, b in zip(got_args, want_args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    return got_err


# -- kernels: each runs versioned when its precheck passes -----------------------------------
def shifted(x, y, k):
    for i in range(1, x.shape[0] - k):
        y[i - 1] = x[i] + 2.0 * x[i + k] - x[i - 1]
    return np.sum(y)


def reversed_reads(x, y, n):
    for i in range(n):
        y[i] = x[n - 1 - i] * x[i]
    return np.sum(y)


def matvec_row(w, x, r):
    s = 0.0
    for q in range(x.shape[0]):
        s = s + w[r, q] * x[q]
    return s


def strided(x, y, start, stop, step):
    for i in range(start, stop, step):
        y[i // 1] = x[2 * i + 1] - x[i]
    return np.sum(y)


def with_break(x, y, limit):
    for i in range(x.shape[0]):
        if x[i] > limit:
            break
        y[i + 1] = x[i]
    return np.sum(y)


def with_continue(x, y, m):
    for i in range(0, x.shape[0] - 1):
        if x[i] < 0.0:
            continue
        y[i + m] = x[i + 1]
    return np.sum(y)


def early_return(x, y, m):
    for i in range(x.shape[0]):
        if x[i] > 1.0:
            return y[i + m]
        y[i] = x[i]
    return -1.0


def nested(a, out, k):
    for r in range(a.shape[0]):
        for c in range(1, a.shape[1]):
            out[r, c - 1] = a[r, c] + a[(r + k), c - 1]
    return np.sum(out)


def reassigned_array(x, n):
    y = np.zeros(n)
    for i in range(n - 1):
        y[i + 1] = y[i] + x[i]
        if x[i] > 0.5:
            y = y * 0.5
    return np.sum(y)


def reassigned_index(x, y, jump):
    for i in range(x.shape[0]):
        y[i] = x[i]
        i = i + jump
        y[i] = 1.0
    return np.sum(y)


def read_before_def(x, y):
    j = x.shape[0]  # out of bounds at the first iteration (j is i + 1 only later)
    for i in range(x.shape[0] - 1):
        y[i] = x[j]
        j = i + 1
    return np.sum(y)


def branch_offset(x, y, k):
    for i in range(x.shape[0]):
        j = i
        if x[i] > 0.8:
            j = i + k
        y[j] = x[i]
    return np.sum(y)


def negative_wrap(x, y, k):
    for i in range(x.shape[0]):
        y[i] = x[i - k]  # negative at the first iterations: counts from the end
    return np.sum(y)


X = RNG.uniform(-1.0, 1.0, size=9)
Y = np.zeros(9)
W = RNG.normal(size=(4, 9))
A = RNG.normal(size=(5, 6))

CASES = [
    (shifted, (X, Y, 2)), (shifted, (X, Y, 0)),
    (reversed_reads, (X, Y, 9)), (reversed_reads, (X, Y, 4)),
    (matvec_row, (W, X, 3)), (matvec_row, (W, X, -4)),
    (strided, (X, Y, 0, 4, 1)), (strided, (X, Y, 3, -1, -1)), (strided, (X, Y, 1, 4, 2)),
    (strided, (X, Y, 0, 4, 3)), (strided, (X, Y, 3, -1, -2)), (strided, (X, Y, 4, 4, 1)),
    (with_break, (X, Y, 0.5)), (with_break, (X, np.zeros(10), 5.0)),
    (with_continue, (X, Y, 1)), (with_continue, (X, Y, -2)),
    (early_return, (X * 2.0, Y, 0)), (early_return, (X, Y, 0)),
    (nested, (A, np.zeros((5, 5)), 0)), (nested, (A, np.zeros((5, 5)), -5)),
    (reassigned_array, (X, 9)),
    (reassigned_index, (X, np.zeros(20), 3)),
    (branch_offset, (X, np.zeros(11), 2)),
    (negative_wrap, (X, Y, 3)), (negative_wrap, (X, Y, 9)),
    (shifted, (X[::2], Y[1::2], 1)), (shifted, (X[::-1], Y, 2)),  # strided views
    (matvec_row, (np.asfortranarray(W), X, 2)), (nested, (A.T, np.zeros((6, 4)), 0)),
]


@pytest.mark.parametrize("fn,args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_same_results_as_python(fn, args):
    assert check_like_python(fn, args) is None


ERRORS = [
    (shifted, (X, Y, -1), "last iteration: i + k past the end"),
    (shifted, (X, Y, 10), "zero trip count: no error"),
    (reversed_reads, (X, Y, 10), "first iteration"),
    (strided, (X, Y, 0, 5, 1), "last iteration, 2*i + 1"),
    (strided, (X, Y, 8, -1, -2), "first iteration of a negative step"),
    (with_break, (X, Y[:8], 5.0), "write past the end at the last iteration"),
    (with_continue, (np.abs(X), Y, 2), "the last write past the end"),
    (early_return, (X * 2.0, Y, 9), "the returned read"),
    (nested, (A, np.zeros((5, 5)), 1), "outer loop's last row"),
    (reassigned_index, (X, np.zeros(10), 3), "the index variable reassigned"),
    (read_before_def, (X, Y), "a read before the index is defined"),
    (branch_offset, (np.linspace(0.0, 1.0, 9), np.zeros(9), 1), "under a branch, last"),
    (branch_offset, (np.array([0.9] + [0.0] * 8), np.zeros(9), 20), "under a branch, first"),
    (negative_wrap, (X, Y, 10), "a negative index past the start"),
    (matvec_row, (W, X, 4), "an invariant index out of bounds"),
]


@pytest.mark.parametrize("fn,args,what", ERRORS, ids=[e[2] for e in ERRORS])
def test_index_errors_like_python_and_unversioned(fn, args, what):
    err = check_like_python(fn, args)
    if what.startswith("zero trip"):
        assert err is None
        return
    assert err is not None, what
    _, plain_err, plain_args = _outcome(_unversioned(fn), args)
    assert err == plain_err  # the same message, site and source line as the checked loop
    versioned_args = _outcome(s2s.jit(fn), args)[2]
    for a, b in zip(versioned_args, plain_args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


# -- random programs: affine indices, any offsets and steps -------------------------------
def _random_program(rnd):
    k1, c1 = rnd.choice([1, -1, 2]), rnd.randint(-3, 3)
    k2, c2 = rnd.choice([1, -1, 3]), rnd.randint(-2, 4)
    start, stop = rnd.randint(-2, 10), rnd.randint(-2, 10)
    step = rnd.choice([1, 2, -1, -2, 3])
    guard = rnd.choice(["True", "x[i % 7] > 0.0", "i % 2 == 0"])
    tail = rnd.choice(["", "        if x[i % 7] > 0.9:\n            break\n",
                       "        if i == 3:\n            return acc\n"])
    src = (
        "def f(x, y, c):\n"
        "    acc = 0.0\n"
        f"    for i in range({start}, {stop}, {step}):\n"
        f"        j = {k1} * i + c\n"
        f"        acc = acc + x[j + ({c1})] * 0.5\n"
        f"        if {guard}:\n"
        f"            y[{k2} * i - ({c2})] = acc\n"
        f"{tail}"
        "    return acc + np.sum(y)\n")
    return src


@pytest.mark.parametrize("seed", range(24))
def test_random_affine_programs_like_python(seed):
    rnd = random.Random(seed)
    src = _random_program(rnd)
    f = progen.load("import numpy as np\n" + src)
    x = np.random.default_rng(seed).normal(size=rnd.randint(8, 14))
    for c in (0, rnd.randint(-9, 9)):
        try:
            check_like_python(f, (x, np.zeros(rnd.randint(9, 16)), c))
        except AssertionError as e:
            raise AssertionError(f"{e}\n{src}c={c}") from None


# -- gradients ------------------------------------------------------------------------------
def matvec_loss(w, x):
    total = 0.0
    for r in range(w.shape[0]):
        s = 0.0
        for q in range(x.shape[0]):
            s = s + w[r, q] * x[q] + w[r, x.shape[0] - 1 - q]
        total = total + np.tanh(s)
    return total


def strided_sum(x, k):
    acc = 0.0
    for i in range(x.shape[0] - 1, 0, -2):
        acc = acc + x[i] * x[i - k] + np.sin(x[i - 1])
    return acc


@pytest.mark.parametrize("fn,args", [
    (stencil, (np.sin(np.linspace(0.0, 3.0, 12)), 4)),
    (matvec_loss, (RNG.normal(size=(3, 5)), RNG.normal(size=5))),
    (strided_sum, (RNG.normal(size=9), 1)),
    (strided_sum, (RNG.normal(size=9), 3)),  # negative indices (wrap) at the start
], ids=["stencil", "matvec", "strided", "strided_wrap"])
def test_gradients_match_finite_differences(fn, args):
    g = s2s.jit(s2s.grad(fn))(*args)
    np.testing.assert_allclose(g, fd_grad(fn, args), rtol=1e-6, atol=1e-8)


# -- the IR -----------------------------------------------------------------------------------
def _versioned_loops(text):
    return len(re.findall(r"^for\.unchecked(\.\d+)?:", text, re.M))


def _module_text(fn, args):
    j = Jitted(fn)
    func, load_free = j.source_ir(args)
    return build_module(func, param_types(func, list(args) + load_free(), j.describe), True).text


@pytest.mark.parametrize("fn,args,copies", [
    (shifted, (X, Y, 2), 1),
    (nested, (A, np.zeros((5, 5)), 0), 1),  # the inner loop only
    (matvec_loss, (W, X), 1),
    # the primal's inner loop; the adjoint's keeps its window in registers (scalar_windows,
    # versioned on its own run-time test)
    (s2s.grad(stencil), (np.ones(6), 2), 1),
    # both inner products; h[q] reads an array the kernel owns, with no reuse to keep in
    # registers (scalar_windows leaves the loop to loop versioning)
    (lstm, (RNG.normal(size=(8, 3)), RNG.normal(size=(8, 2)), np.zeros(8), RNG.normal(size=(4, 3)),
            np.zeros(2), np.zeros(2)), 2),
], ids=["shifted", "nested", "matvec", "stencil_grad", "lstm"])
def test_ir_deterministic_verified_and_versioned(fn, args, copies):
    a, b = _module_text(fn, args), _module_text(fn, args)
    assert a == b
    engine.parse_verified(a)
    assert _versioned_loops(a) == copies


def test_not_versioned_without_affine_indices_or_without_checks():
    def gather(x, idx):
        s = 0.0
        for i in range(idx.shape[0]):
            s = s + x[idx[i] % 3]  # x's index is data: no precheck covers it
        return s
    text = _module_text(gather, (X, np.arange(4)))
    assert _versioned_loops(text) == 1  # idx[i] is prechecked, x[...] stays checked
    j = Jitted(shifted)
    args = (X, Y, 2)
    func, load_free = j.source_ir(args)
    text = build_module(func, param_types(func, list(args) + load_free(), j.describe),
                        False).text
    assert _versioned_loops(text) == 0  # boundscheck=False: nothing to hoist


def test_large_bodies_are_not_copied():
    def long_body(x, y):
        for i in range(x.shape[0] - 1):
            a = x[i] * 2.0
            b = np.sin(a) + np.cos(a) * x[i + 1]
            c = b * b - a
            d = np.exp(-c * c) + b
            e = np.tanh(d - a) * np.sin(b * c + d)
            y[i] = (a + b + c + d + e) / (1.0 + e * e)
        return np.sum(y)
    args = (X, Y)
    assert len(list(_body(long_body, args))) > loop_versions.MAX_BODY
    assert _versioned_loops(_module_text(long_body, args)) == 0
    assert check_like_python(long_body, args) is None


def _body(fn, args):
    from s2s.ir import nodes as ir
    func, _ = Jitted(fn).source_ir(args)
    loop = next(s for s in func.body if isinstance(s, ir.For))
    return ir.walk(loop.body)
