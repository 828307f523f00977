"""Stencil loops with in-place writes under jit(grad) (``scalar_windows.py``,
``write_statements.py``): gradients against central finite differences and against
Python mode's gradient (bit for bit: the register form does the same operations in
the same order); where the register form applies (its registers are named ``win.*``
in the LLVM module) and where it must not, or must fall back at run time."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.cli.dump_llvm import llvm_text
from tests.grad import progen
from tests.grad.oracles import fd_grad

from . import stencil_kernels as K

RNG = np.random.default_rng(7)


def _windows(fn, args):
    """Names of the adjoint arrays held in registers in jit(grad(fn))'s module."""
    text = llvm_text(fn, args, grad_argnums=0, stage="unopt")
    return sorted({line.split('"')[1].split(".")[1] for line in text.splitlines()
                   if '"win.' in line and "alloca" in line})


def _groups(fn, args):
    """How many windows (array, fixed indices) jit(grad(fn)) keeps in registers."""
    text = llvm_text(fn, args, grad_argnums=0, stage="unopt")
    return len({tuple(line.split('"')[1].split(".")[1:3]) for line in text.splitlines()
                if '"win.' in line and "alloca" in line})


def _check(fn, args, rtol=1e-6, atol=1e-8):
    got = s2s.jit(s2s.grad(fn))(*args)
    np.testing.assert_array_equal(got, s2s.grad(fn)(*args))  # same operations, same order
    np.testing.assert_allclose(got, fd_grad(fn, args, 0), rtol=rtol, atol=atol)
    return got


APPLIES = [
    ("heat", (RNG.normal(size=9), 3), ["u_1_bar"]),
    ("five_point", (RNG.normal(size=10), 2), ["u_1_bar"]),
    ("sweep_down", (RNG.normal(size=8), 0.4), ["u_1_bar"]),
    ("recurrence", (RNG.normal(size=7), 0.8), ["y_1_bar"]),
    ("gather", (RNG.normal(size=8),), ["out_1_bar", "x_bar"]),
    ("rows", (RNG.normal(size=(3, 5)),), ["x_bar"]),
    ("local_table", (RNG.normal(size=7),), ["w_1_bar", "x_bar"]),
    ("scaled_rows", (RNG.normal(size=(3, 4)), RNG.normal(size=4)), ["icf_bar", "q_1_bar"]),
]


@pytest.mark.parametrize("name,args,arrays", APPLIES, ids=[c[0] for c in APPLIES])
def test_register_form_applies_and_matches_oracles(name, args, arrays):
    fn = getattr(K, name)
    assert _windows(fn, args) == arrays
    _check(fn, args)


NOT_APPLIED = [
    ("not_affine", (RNG.normal(size=6), 0.3)),
    ("writes_elsewhere", (RNG.normal(size=6), 0.3)),
    ("step_two", (RNG.normal(size=7), 0.3)),
    ("branchy", (RNG.normal(size=7), 0.3)),
]


@pytest.mark.parametrize("name,args", NOT_APPLIED, ids=[c[0] for c in NOT_APPLIED])
def test_left_alone_where_it_does_not_apply(name, args):
    fn = getattr(K, name)
    assert _windows(fn, args) == []
    _check(fn, args)


def test_two_dimensional_stencil():
    """Rows k - 1, k, k + 1 of the adjoint: three windows along the second axis."""
    args = (RNG.normal(size=(5, 6)), 2)
    assert _windows(K.heat2d, args) == ["u_1_bar"] and _groups(K.heat2d, args) == 3
    _check(K.heat2d, args, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("p", [0, 1, 2, -1])
def test_rows_that_may_coincide(p):
    """Rows k and p of one array: where p == k (or wraps to it) the loop runs as written."""
    args = (RNG.normal(size=(3, 5)), p)
    assert _groups(K.two_rows, args) == 2
    _check(K.two_rows, args)


def test_negative_indices_take_the_loop_as_written():
    """range(-1, n - 1) reaches u[-1] (which is u[n - 1]): the run-time check fails and
    the loop runs as written."""
    args = (RNG.normal(size=6), 0.3)
    assert _windows(K.wraps_around, args) == ["u_1_bar"]
    _check(K.wraps_around, args)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5])
def test_short_and_empty_loops(n):
    """Loops that run zero times or whose window is wider than the array."""
    u0 = RNG.normal(size=n)
    g = s2s.jit(s2s.grad(K.five_point))
    np.testing.assert_array_equal(g(u0, 2), s2s.grad(K.five_point)(u0, 2))
    if n:
        np.testing.assert_allclose(g(u0, 2), fd_grad(K.five_point, (u0, 2), 0),
                                   rtol=1e-6, atol=1e-8)


def test_strided_argument():
    """A non-contiguous input: the adjoint array is the kernel's own, the reads strided."""
    base = RNG.normal(size=20)
    _check(K.heat, (base[::2], 2))
    _check(K.gather, (base[1::3],))


def test_index_errors_are_still_raised():
    """An out-of-bounds access in the primal raises IndexError as it does without jit."""
    def bad(u0):
        u = u0.copy()
        for i in range(1, u.shape[0] + 1):
            u[i] = u[i] + 0.5 * u[i - 1]
        return np.sum(u)
    with pytest.raises(IndexError):
        bad(np.ones(4))
    with pytest.raises(IndexError):
        s2s.jit(s2s.grad(bad))(np.ones(4))


def _random_stencil(seed):
    """A 1-D stencil over offsets from -2..2 in a random direction, linear or not."""
    rng = np.random.default_rng(seed)
    offsets = sorted(rng.choice([-2, -1, 0, 1, 2], size=rng.integers(1, 5), replace=False))
    terms = []
    for c in offsets:
        ref = "u[i]" if c == 0 else f"u[i {'+' if c > 0 else '-'} {abs(c)}]"
        coef = round(float(rng.uniform(-0.4, 0.4)), 3)
        kind = rng.integers(3)
        terms.append(f"{coef} * {ref}" if kind == 0 else
                     f"{coef} * {ref} * {ref}" if kind == 1 else f"{coef} * math.sin({ref})")
    loop = "range(2, n - 2)" if rng.integers(2) else "range(n - 3, 1, -1)"
    carried = rng.integers(2)
    body = (f"            new = u[i] + w * ({' + '.join(terms)}) + 0.1 * prev\n"
            "            prev = u[i]\n            u[i] = new\n") if carried else \
        f"            u[i] = u[i] + w * ({' + '.join(terms)})\n"
    return ("import math\nimport numpy as np\n\n\ndef f(u0, w):\n    u = u0.copy()\n"
            "    n = u.shape[0]\n    for s in range(2):\n        prev = 0.0\n"
            f"        for i in {loop}:\n{body}    return np.sum(u * u)\n")


@pytest.mark.parametrize("seed", range(8))
def test_random_stencils(seed):
    src = _random_stencil(seed)
    f = progen.load(src)
    for n in (3, 7, 11):
        args = (np.random.default_rng(seed + n).normal(size=n), 0.3)
        got = s2s.jit(s2s.grad(f))(*args)
        np.testing.assert_array_equal(got, s2s.grad(f)(*args), err_msg=src)
        fd = fd_grad(f, args, 0)
        np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-7 * max(1.0, np.abs(fd).max()),
                                   err_msg=src)


def test_in_place_writes_do_not_rebind():
    """write_statements: ``t = rt.index_set(y, i, v); y = t`` becomes the statement
    ``rt.index_set(y, i, v)`` (no reference counting per write), ``y = index_set(y, ...)``
    too; a temporary read again keeps its assignment."""
    import s2s_runtime as rt
    from s2s.backend.llvm.passes.write_statements import write_statements
    from s2s.ir import nodes as ir

    y, t, u, i, v = (ir.Var(n) for n in ("y", "t", "u", "i", "v"))
    write = ir.Call(rt.index_set, (y, i, v))
    params = tuple(ir.Param(x) for x in (y, i, v))

    def func(*body):
        return ir.Function(name="f", params=params, body=tuple(body))

    out = write_statements(func(ir.Assign(t, write), ir.Assign(y, t), ir.Return(y)))
    assert out.body == (ir.ExprStmt(write), ir.Return(y))
    out = write_statements(func(ir.Assign(y, write), ir.Return(y)))
    assert out.body == (ir.ExprStmt(write), ir.Return(y))
    kept = func(ir.Assign(t, write), ir.Assign(y, t), ir.Assign(u, t), ir.Return(u))
    assert write_statements(kept) is kept


def test_module_text_is_deterministic():
    args = (RNG.normal(size=(5, 6)), 2)
    assert llvm_text(K.heat2d, args, grad_argnums=0) == llvm_text(K.heat2d, args, grad_argnums=0)


def test_huge_ranges_raise_index_error():
    """Ranges near the ends of int64: the run-time check must not overflow into the
    register form (an IndexError, never a crash)."""
    f = s2s.jit(K.adjoint_by_hand)
    x = np.ones(6)
    assert _jit_windows(K.adjoint_by_hand, (x, 1, 3)) == ["acc"]
    np.testing.assert_array_equal(f(x, 1, 3), K.adjoint_by_hand(x, 1, 3))
    for a, b in ((2 ** 63 - 3, 2 ** 63 - 1), (5, 2 ** 63 - 1), (-2 ** 63, -2 ** 63 + 2)):
        with pytest.raises(IndexError):
            f(x, a, b)


def _jit_windows(fn, args):
    text = llvm_text(fn, args, stage="unopt")
    return sorted({line.split('"')[1].split(".")[1] for line in text.splitlines()
                   if '"win.' in line and "alloca" in line})
