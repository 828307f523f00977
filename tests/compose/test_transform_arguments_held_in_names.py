"""A transform made inside transformed code whose arguments are read from a global or
a closure variable (``vmap(f, in_axes=AXES)``, ``grad(f, argnums=nums)``), as JAX code
is written: an immutable constant held there (a number, a string, ``None`` or a tuple
of them) is part of the program, as a literal is; rebinding the name makes s2s read
the function again.  Gradients against central differences of the primal."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from tests.compose.finite_differences import fd_gradient

W = np.array([[0.3, 0.5], [0.1, -0.2]])
XS = np.array([[0.2, 0.4], [0.5, -0.3], [1.0, 0.1]])
AXES = (None, 0)


def predict(w, x):
    return np.tanh(w @ x)


def with_global_axes(w, xs):
    return np.sum(s2s.vmap(predict, in_axes=AXES)(w, xs) ** 2)


def with_closure_axes(axes):
    def loss(w, xs):
        return np.sum(s2s.vmap(lambda v, x: np.tanh(v @ x), in_axes=axes)(w, xs) ** 2)
    return loss


def with_closure_argnums(nums):
    def loss(w, x):
        g = s2s.grad(lambda a, b: np.sum(np.tanh(a @ b)), argnums=nums)(w, x)
        return np.sum(g ** 2)
    return loss


def _fd_in_w(loss, *rest):
    return fd_gradient(lambda v: loss(v.reshape(W.shape), *rest), W.ravel()).reshape(W.shape)


@pytest.mark.parametrize("loss", [with_global_axes, with_closure_axes((None, 0))],
                         ids=["global", "closure"])
@pytest.mark.parametrize("transform", ["grad", "jit(grad)"])
def test_in_axes_from_a_name(loss, transform):
    g = s2s.grad(loss) if transform == "grad" else s2s.jit(s2s.grad(loss))
    np.testing.assert_allclose(g(W, XS), _fd_in_w(loss, XS), rtol=1e-6, atol=1e-8)


def test_argnums_from_a_closure():
    loss = with_closure_argnums(0)
    x = XS[0]
    np.testing.assert_allclose(s2s.grad(loss)(W, x), _fd_in_w(loss, x), rtol=1e-5, atol=1e-7)


def test_rebinding_the_global_reads_the_function_again():
    global AXES
    g = s2s.grad(with_global_axes)
    first = g(W, XS)
    try:
        AXES = (None, 1)  # now the columns of xs.T: the same examples
        np.testing.assert_allclose(g(W, XS.T.copy()), first, rtol=1e-12)
    finally:
        AXES = (None, 0)


def test_a_mutable_value_held_in_a_name_stays_a_value():
    axes = [None, 0]  # a list may change in place: not read as part of the program

    def loss(w, xs):
        return np.sum(s2s.vmap(predict, in_axes=axes)(w, xs))
    with pytest.raises(s2s.S2SError):
        s2s.grad(loss)(W, XS)
