"""Arrays written element by element inside loops stay one buffer in the gradient
(issue 20, item 2): checked against central finite differences (float64) in Python
mode and compiled (``s2s.jit(s2s.grad(f))``), with the generated code inspected for
copies; names for one array used after a write into it are still refused."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.core import pipeline
from s2s.ad import aliases
from s2s.ir import nodes as ir

from . import buffer_kernels as K
from .oracles import assert_tree_close, fd_grad

RNG = np.random.default_rng(20)

CASES = {
    "ode": (K.ode, (RNG.normal(size=7), RNG.normal(size=7), 3), (0, 1)),
    "ode_reused": (K.ode_reused, (RNG.normal(size=7), RNG.normal(size=7), 3), (0, 1)),
    "fill2d": (K.fill2d, (RNG.normal(size=(3, 4)), 3), 0),
    "scan": (K.scan, (RNG.normal(size=6),), 0),
    "pingpong": (K.pingpong, (RNG.normal(size=7), 4), 0),
    "pingpong_read_whole": (K.pingpong_read_whole, (RNG.normal(size=7), 3), 0),
    "wave": (K.wave, (RNG.normal(size=7), 5), 0),
    "heat2d_swap": (K.heat2d_swap, (0.5 * RNG.normal(size=(4, 5)), 3), 0),
    "sweeps_while": (K.sweeps_while, (RNG.normal(size=6), 1e-3), 0),
    "helper_buffer": (K.helper_buffer, (RNG.normal(size=6), 3), 0),
    "mixture": (K.mixture, (RNG.normal(size=5), RNG.normal(size=3)), (0, 1)),
}


def grad_source(f, *args) -> str:
    return pipeline.emit(s2s.grad(f).specialised(args)).source


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences_in_python_mode(name):
    f, args, argnums = CASES[name]
    assert_tree_close(s2s.grad(f, argnums=argnums)(*args), fd_grad(f, args, argnums))


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_gradient_matches_finite_differences(name):
    f, args, argnums = CASES[name]
    assert_tree_close(s2s.jit(s2s.grad(f, argnums=argnums))(*args), fd_grad(f, args, argnums))


def test_a_buffer_made_each_step_is_written_in_place_and_pushed_once_per_step():
    code = grad_source(K.ode, *CASES["ode"][1])
    assert "index_updated" not in code and "rt.owned(" not in code  # no copy at all
    assert "z[i] = " in code
    assert code.count("tape = (z, tape)") == 1  # before np.empty, not before each write


def test_a_buffer_read_whole_then_written_again_is_copied_once_per_read():
    code = grad_source(K.ode_reused, *CASES["ode_reused"][1])
    assert "index_updated" not in code
    assert code.count("rt.owned(") == 1  # the snapshot np.sum(z * x) reads


@pytest.mark.parametrize("name", ["pingpong", "wave", "heat2d_swap", "helper_buffer"])
def test_swapped_and_rotated_buffers_are_written_in_place(name):
    code = grad_source(CASES[name][0], *CASES[name][1])
    assert "index_updated" not in code and "rt.owned(" not in code


def test_past_the_analysis_cap_writes_copy_and_the_gradient_stays_right(monkeypatch):
    monkeypatch.setattr(aliases, "CAP", 0)
    f, args, argnums = CASES["ode_reused"]
    assert "index_updated" in grad_source(f, *args)
    assert_tree_close(s2s.grad(f, argnums=argnums)(*args), fd_grad(f, args, argnums))


def test_another_name_used_after_the_write_is_refused():
    with pytest.raises(s2s.UnsupportedSyntaxError, match=r"another name for it \(w\)") as info:
        s2s.grad(K.alias_after_write)(RNG.normal(size=5))
    assert "u[i] = x[i] ** 2" in str(info.value)


def test_swapped_names_made_one_array_are_refused():
    with pytest.raises(s2s.UnsupportedSyntaxError, match="another name for it"):
        s2s.grad(K.swap_then_alias)(RNG.normal(size=6), 2)
    with pytest.raises(s2s.UnsupportedSyntaxError, match="another name for it"):
        s2s.jit(s2s.grad(K.swap_then_alias))(RNG.normal(size=6), 2)


def test_a_view_read_after_the_writes_raises_not_a_wrong_gradient():
    with pytest.raises(ValueError, match="view of an array that is written in place"):
        s2s.grad(K.view_after_write)(RNG.normal(size=5))


def _var(n):
    return ir.Var(n)


def _states(body, roots, tracked=("u", "v", "a", "b", "old", "z")):
    copies = lambda v: v.name if isinstance(v, ir.Var) else None  # noqa: E731
    return aliases.ObjectStates(body, set(tracked), roots, {}, copies)


def _loop(*body):
    return ir.For(_var("t"), _var("r"), tuple(body))


def test_object_states_tell_swapped_buffers_apart():
    """The analysis itself (hand-made IR): after ``u, v = v, u`` in a loop ``u`` and
    ``v`` never hold the same object; after ``v = u`` they may; an array made again in
    a loop is another object than the one made on the previous iteration."""
    mk_u = ir.Assign(_var("u"), ir.Call(np.zeros, (ir.Const(3),)))
    mk_v = ir.Assign(_var("v"), ir.Call(np.zeros, (ir.Const(3),)))
    swap = (ir.Assign(_var("a"), _var("v")), ir.Assign(_var("b"), _var("u")),
            ir.Assign(_var("u"), _var("a")), ir.Assign(_var("v"), _var("b")))
    probe = ir.ExprStmt(ir.Const(None))
    states = _states([mk_u, mk_v, _loop(probe, *swap)], [mk_u, mk_v])
    assert states.precise and not states.may_alias(probe, "u", "v")
    assert states.may_alias(probe, "u", "u")
    probe2 = ir.ExprStmt(ir.Const(None))
    same = ir.Assign(_var("v"), _var("u"))
    states = _states([mk_u, mk_v, _loop(probe2, *swap, same)], [mk_u, mk_v])
    assert states.may_alias(probe2, "u", "v")
    make_z = ir.Assign(_var("z"), ir.Call(np.zeros, (ir.Const(3),)))
    probe3 = ir.ExprStmt(ir.Const(None))
    keep = ir.Assign(_var("old"), _var("z"))
    states = _states([_loop(keep, make_z, probe3)], [make_z])
    assert not states.may_alias(probe3, "old", "z")
    states = _states([_loop(make_z, keep, probe3)], [make_z])
    assert states.may_alias(probe3, "old", "z")


@pytest.mark.parametrize("name", ["pingpong", "wave"])
def test_rotated_buffers_in_the_other_transforms(name):
    """jvp against the finite-difference gradient's directional derivative, forward over
    reverse (Hessian-vector product) against differences of gradients, vmap of grad
    against the gradient per example."""
    f, (x, steps), _ = CASES[name]
    v = np.random.default_rng(5).normal(size=x.shape)
    _, t = s2s.jvp(f, (x, steps), (v, 0))
    assert_tree_close(t, fd_grad(f, (x, steps)) @ v)
    g = s2s.grad(f)
    eps = 1e-5
    want = (g(x + eps * v, steps) - g(x - eps * v, steps)) / (2 * eps)
    assert_tree_close(s2s.jvp(g, (x, steps), (v, 0))[1], want, rtol=1e-5, atol=1e-7)
    both = s2s.vmap(g, in_axes=(0, None))(np.stack([x, 0.5 * x]), steps)
    assert_tree_close(both[1], fd_grad(f, (0.5 * x, steps)))
