"""Compiled gradients record only what the adjoint reads (backend/llvm/passes/lean_tapes.py)
and update adjoint arrays in place (inplace.py, unique_adjoints.py): gradients against central finite differences in
float64 (tests.grad.oracles), and the tapes left balanced -- every name pushed on a
tape is popped from it and the other way round -- on paths with break, continue, an
early return, a while loop and a try."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.backend.llvm.driver.compile import param_types
from s2s.backend.llvm.typing.infer import infer
from s2s.backend.llvm.passes.lean_tapes import lean_tapes, scalar_stand_in
from s2s.backend.llvm.typing import types as T
from s2s.backend.llvm.lower.stacks import find_stacks, is_pop
from s2s.ir import nodes as ir
from tests.grad.oracles import assert_tree_close, fd_grad

from . import tape_kernels as K


def _lean(fn, args, argnums=0):
    """The compiled gradient's IR before and after ``lean_tapes``."""
    func, load = s2s.jit(s2s.grad(fn, argnums=argnums)).source_ir(args)
    types = param_types(func, list(args) + list(load()), lambda: ("f", ""))
    names = [p.var.name for p in func.params]
    inferred, _ = infer(func, dict(zip(names, types)))
    return func, lean_tapes(func, inferred)


def _records(func):
    """stack -> (names pushed, names popped)."""
    stacks = find_stacks(func)
    out = {n: (set(), set()) for n in stacks}
    for s in ir.walk(func.body):
        if is_pop(s, stacks):
            out[s.value.name][1].add(s.targets[0].name)
        elif isinstance(s, ir.Assign) and s.target.name in stacks and isinstance(
                s.value, ir.Call) and s.value.args:
            out[s.target.name][0].add(s.value.args[0].name)
    return out


def _u(n, seed=0):
    return np.sin(np.linspace(0.0, 3.0, n)) + 0.1 * np.random.default_rng(seed).normal(size=n)


CASES = [
    ("heat", K.heat, (_u(12), 6), 0),
    ("continue_break", K.stencil_continue_break, (_u(10), 8, 0.9), 0),
    ("early_return", K.nonlinear_early_return, (_u(9), 5), 0),
    ("early_return_taken", K.nonlinear_early_return, (3.0 + _u(9), 5), 0),
    ("while", K.while_relax, (_u(10), 1e-3), 0),
    ("shared_adjoint", K.shared_adjoint, (_u(7), 3), 0),
    ("long_range_break", K.long_range_with_break, (0.7, 40), 0),
    ("try", K.try_in_loop, (_u(8) - np.linspace(0, 7, 8), 3), 0),
    ("gmm", K.gmm, (np.array([0.1, -0.3, 0.5]), np.random.default_rng(1).normal(size=(3, 2)),
                    0.1 * np.random.default_rng(2).normal(size=(3, 2)),
                    np.random.default_rng(3).normal(size=(6, 2))), (0, 1, 2)),
    ("lstm", K.lstm, tuple(0.4 * np.random.default_rng(4).normal(size=s)
                           for s in [(8, 3), (8, 2), 8, (4, 3), 2, 2]), (0, 1, 2, 4, 5)),
]


@pytest.mark.parametrize("name,fn,args,argnums", CASES, ids=[c[0] for c in CASES])
def test_gradient_against_finite_differences(name, fn, args, argnums):
    got = s2s.jit(s2s.grad(fn, argnums=argnums))(*args)
    expected = fd_grad(fn, args, argnums)
    assert_tree_close(got, expected, rtol=1e-6, atol=1e-8, what=name)


@pytest.mark.parametrize("name,fn,args,argnums", CASES, ids=[c[0] for c in CASES])
def test_tapes_stay_balanced(name, fn, args, argnums):
    before, after = _lean(fn, args, argnums)
    for stack, (pushed, popped) in _records(after).items():
        assert pushed == popped, (name, stack, pushed ^ popped)
    # only whole names go: what is still recorded was recorded before, with its pops
    old = _records(before)
    for stack, (pushed, _) in _records(after).items():
        assert pushed <= old[stack][0]


def test_linear_stencil_records_no_values():
    """The heat stencil is linear: its adjoint reads no recorded value, so nothing is
    pushed on the value tape in Python mode (the reads of the array are real scalars:
    ad/scalars.py, ad/references.py), where only loop ranges and indices stay (on
    ``ctrl``); compiled, those are recomputed too.  The Python-mode gradient is checked against finite differences."""
    args = (_u(12), 6)
    before, after = _lean(K.heat, args)
    records = _records(before)
    assert "tape" not in records and records["ctrl"][0]
    assert all(n.startswith("t") for n in records["ctrl"][0])
    # compiled, the index i + 1 and the inner range are recomputed (remat_pops.py):
    # the gradient records nothing at all
    assert _records(after) == {}
    assert_tree_close(s2s.grad(K.heat)(*args), fd_grad(K.heat, args, 0), rtol=1e-6, atol=1e-8)


def test_lstm_recomputes_indices_and_weights():
    """The LSTM's matrix-vector loops record nothing compiled: their indices and the
    weights (inputs no one writes) are recomputed; the gates' values stay recorded."""
    args = CASES[-1][2]
    before, after = _lean(K.lstm, args, 1)
    pushed = set().union(*(p for p, _ in _records(after).values()))
    assert not pushed & {"t8", "t11", "t14", "t15"}
    recorded = set().union(*(p for p, _ in _records(before).values()))
    assert "t15" in recorded  # (an index tuple (t, q) no longer snapshots q: nothing
    assert not any(n.endswith("_snapshot") for n in recorded)  # changes it in place)
    assert {"ig", "fg", "og", "g"} <= pushed


def test_float32_stencil_gradient():
    """Scalar references of float32 values become float32 constants (same types)."""
    u = _u(10).astype(np.float32)
    got = s2s.jit(s2s.grad(K.heat))(u, 4)
    expected = fd_grad(K.heat, (u.astype(np.float64), 4), 0)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=2e-4, atol=1e-5)


def test_scalar_stand_ins_have_exactly_the_type():
    for t in (T.FLOAT, T.INT, T.BOOL, T.COMPLEX, T.Scalar("f8"), T.Scalar("f4"),
              T.Scalar("i8"), T.Scalar("c16")):
        c = scalar_stand_in(t)
        assert c is not None and T.value_type(c.value) == t
    assert scalar_stand_in(T.Array("f8", 1)) is None


def test_vjp_closure_tape_from_python_is_left_alone():
    """A ``vjp`` closure's tape was pushed in Python: its pops stay."""
    u = _u(8)
    out, pull = s2s.vjp(K.heat, u, 3)
    got = s2s.jit(pull)(1.0)[0]
    assert_tree_close(got, fd_grad(K.heat, (u, 3), 0), rtol=1e-6, atol=1e-8)


def test_same_gradient_ir_twice_is_identical():
    a = s2s.jit(s2s.grad(K.heat))
    b = s2s.jit(s2s.grad(K.heat))
    args = (_u(12), 6)
    a(*args)
    b(*args)
    (sa,), (sb,) = a.specs.values(), b.specs.values()
    assert sa.module.text == sb.module.text


def _qtimesx_args(d=5, n=4):
    rng = np.random.default_rng(5)
    return (0.3 * rng.normal(size=d + d * (d - 1) // 2), rng.normal(size=(n, d)))


def _layout(fn, args, argnums=0):
    from s2s.cli.dump_llvm import tape_layout
    return {r["source"]: r for r in tape_layout(fn, args, grad_argnums=argnums)}


def test_triangular_loop_records_only_its_index():
    """GMM's ``qxc[j] = qxc[j] + l[idx] * xc[i]``: ``xc[i]`` and ``l[idx]`` are re-read in
    the adjoint (``xc`` and ``l`` are never written; ``idx`` is a tuple-free int here),
    the inner range is recomputed, so the inner loop records one int per iteration
    (8 bytes; before: the index, both products' operands and the range, in 32-byte
    slots shared with the arrays on the same tape)."""
    args = _qtimesx_args()
    rows = _layout(K.qtimesx, args)
    inner = rows["for j in range(i + 1, d):"]
    assert inner["bytes_per_iteration"] == 8, inner
    assert "for i in range(d):" not in rows  # range(i + 1, d) recomputed: nothing pushed
    assert_tree_close(s2s.jit(s2s.grad(K.qtimesx))(*args), fd_grad(K.qtimesx, args, 0),
                      rtol=1e-6, atol=1e-8, what="qtimesx")


def test_items_take_their_own_size():
    """A float pushed on a tape that also holds arrays takes 8 bytes, not an array's slot."""
    args = _qtimesx_args()
    outer = _layout(K.qtimesx, args)["for ix in range(n):"]
    assert outer["slot_bytes"]["tape"] is None
    sizes = {"f8[:]": 32, "np.float64": 8, "float": 8, "int": 8}
    assert outer["tape_bytes"]["tape"] == sum(sizes[t] for t in outer["pushes"]["tape"])
    assert "f8[:]" in outer["pushes"]["tape"]


def test_full_covariance_gmm_inner_loop_records_only_the_index():
    """The benchmarks' ADBench GMM (``benchmarks/adbench_objectives.py``, ``l[ik, idx]``):
    8 bytes per inner iteration, ``idx`` of the index tuple (``ik`` is the adjoint loop's
    counter: split_records.py; before: 88 bytes); the gradient against finite
    differences."""
    import sys
    from pathlib import Path
    bench = str(Path(__file__).resolve().parents[2] / "benchmarks")
    sys.path.insert(0, bench)
    try:
        from adbench_objectives import gmm_objective
    finally:
        sys.path.remove(bench)
    rng = np.random.default_rng(7)
    d, k, n = 4, 3, 5
    icf = np.concatenate([0.1 * rng.normal(size=(k, d)),
                          0.3 * rng.normal(size=(k, d * (d - 1) // 2))], axis=1)
    args = (rng.normal(size=k), rng.normal(size=(k, d)), icf, rng.normal(size=(n, d)), 1.0, 0)
    rows = _layout(gmm_objective, args, (0, 1, 2))
    inner = rows["for j in range(i + 1, d):"]
    assert inner["bytes_per_iteration"] == 8 and inner["pushes"] == {"ctrl": ["int"]}
    assert "for i in range(d):" not in rows
    assert_tree_close(s2s.jit(s2s.grad(gmm_objective, argnums=(0, 1, 2)))(*args),
                      fd_grad(gmm_objective, args, (0, 1, 2)), rtol=1e-6, atol=1e-8,
                      what="gmm_objective")


def _rereads(func, name):
    """Statements recomputing a recorded value (``remat_pops``) that read ``name``."""
    return [s for s in ir.walk(func.body) if isinstance(s, ir.Assign)
            and "_again" in s.target.name and ir.Var(name) in ir.stmt_uses(s)]


def test_an_array_written_in_place_stays_recorded():
    """``v[i]`` is written after it is read: the adjoint reads the recorded element, not
    ``v`` again (which by then holds the new values)."""
    args = (np.linspace(0.2, 1.1, 6), 3)
    _, after = _lean(K.scaled_in_place, args)
    assert not _rereads(after, "v")
    _, after = _lean(K.qtimesx, _qtimesx_args())  # (the same check sees a re-read)
    assert _rereads(after, "xc") and _rereads(after, "l")
    assert_tree_close(s2s.jit(s2s.grad(K.scaled_in_place))(*args),
                      fd_grad(K.scaled_in_place, args, 0), rtol=1e-6, atol=1e-8,
                      what="scaled_in_place")
