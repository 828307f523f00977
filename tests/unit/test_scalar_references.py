"""Real vectors made in the function, and the adjoint reads they spare (Python mode).

``ad/scalars.real_scalars`` counts ``v[i]`` of a real vector as a real scalar, also
for vectors the function makes (``np.copy``, ``np.zeros(n)``, copies, index writes);
``ad/references.scalar_references`` then stops the adjoint reading such values only
for their shape, so loops record less.  Gradients against central differences."""
import operator

import numpy as np
import pytest
import s2s_runtime as rt

import s2s
from s2s.ad.scalars import real_scalars
from s2s.ir import nodes as ir
from tests.grad.oracles import assert_tree_close, fd_grad


def _assign(name, fn, *args):
    atoms = tuple(a if isinstance(a, (ir.Var, ir.Const)) else ir.Var(a) for a in args)
    return ir.Assign(ir.Var(name), ir.Call(fn, atoms))


def _scalars(body, vectors=("u0",), seeds=("i",)):
    return real_scalars(body, set(seeds), lambda call: False, set(vectors))


def test_items_of_made_vectors_are_real_scalars():
    body = [_assign("u", np.copy, "u0"),
            ir.Assign(ir.Var("w"), ir.Var("u")),
            _assign("z", np.zeros, ir.Const(4)),
            _assign("w2", rt.index_updated, "w", "i", ir.Const(1.0)),
            _assign("a", operator.getitem, "w2", "i"),
            _assign("b", rt.read_copy, "z", ir.Const(2)),
            _assign("c", rt.read_checked, "u", "i", ir.Const("f.py:1"))]
    assert {"a", "b", "c"} <= _scalars(body)


@pytest.mark.parametrize("make", [
    _assign("u", np.zeros, "shape"),            # a shape that may be a tuple
    _assign("u", np.ones, ir.Const(3.0)),       # not an integer: no vector made
    _assign("u", np.copy, "m"),                 # a copy of an array of unknown rank
])
def test_items_of_other_arrays_are_not(make):
    body = [_assign("shape", rt.zeros_like, "m"), make,
            _assign("a", operator.getitem, "u", "i")]
    assert "a" not in _scalars(body)


def test_a_name_also_assigned_a_matrix_is_no_vector():
    body = [_assign("u", np.copy, "u0"),
            _assign("u", np.copy, "m"),
            _assign("a", operator.getitem, "u", "i")]
    assert "a" not in _scalars(body)


def stencil(u0, steps):
    u = u0.copy()
    for s in range(steps):
        left = u[0]
        for i in range(1, u.shape[0] - 1):
            new = u[i] + 0.3 * (left - 2.0 * u[i] + u[i + 1])
            left = u[i]
            u[i] = new
    return np.sum(u * u)


def stencil_2d(u0, steps):
    u = u0.copy()
    for s in range(steps):
        for i in range(1, u.shape[0] - 1):
            u[i, 0] = u[i, 0] + 0.3 * (u[i - 1, 0] - 2.0 * u[i, 0] + u[i + 1, 0]) * u[i, 1]
    return np.sum(u * u)


def test_linear_stencil_records_no_values():
    u = np.sin(np.linspace(0.0, 3.0, 9))
    g = s2s.grad(stencil)
    assert_tree_close(g(u, 4), fd_grad(stencil, (u, 4), 0), rtol=1e-6, atol=1e-8)
    source = g.generated([u, 4])[0].__s2s_source__
    assert "tape = (" not in source and "ctrl = (" in source


def test_two_d_stencil_gradient():
    u = np.cos(np.linspace(0.0, 2.0, 12)).reshape(6, 2)
    assert_tree_close(s2s.grad(stencil_2d)(u, 3), fd_grad(stencil_2d, (u, 3), 0),
                      rtol=1e-6, atol=1e-8)
