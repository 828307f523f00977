"""The gradient corpus checked against independent oracles.

Every case of ``corpus.CASES`` is checked against central finite
differences; cases with a hand-written gradient also against it; real-
analytic cases also against the complex step.  Further tests here cover
what does not fit the table: globals that change between calls, inline
lambdas, has_aux, value_and_grad, float32, complex numbers, and a larger
model checked with random directional derivatives.
"""
import math

import numpy as np
import pytest

import s2s

from . import corpus
from .corpus import CASES
from .oracles import (assert_tree_close, check_directional, complex_step_grad, fd_grad,
                      flatten)

IDS = [c.id for c in CASES]


def _grad(case):
    return s2s.grad(case.fn, argnums=case.argnums)(*case.args, **case.kwargs)


def _bind_closed(case):
    """The closed form, evaluated on the arguments with defaults/kwargs bound."""
    return case.closed(*case.args)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_against_finite_differences(case):
    expected = fd_grad(case.fn, case.args, case.argnums, kwargs=case.kwargs)
    assert_tree_close(_grad(case), expected, rtol=1e-6, atol=1e-7, what=case.id)


CLOSED = [c for c in CASES if c.closed is not None]


@pytest.mark.parametrize("case", CLOSED, ids=[c.id for c in CLOSED])
def test_against_closed_form(case):
    expected = _bind_closed(case)
    assert_tree_close(_grad(case), expected, rtol=1e-10, atol=1e-12, what=case.id)


@pytest.mark.parametrize("case", CLOSED, ids=[c.id for c in CLOSED])
def test_closed_form_is_right(case):
    """Guards the corpus itself: each hand-written gradient agrees with FD."""
    expected = fd_grad(case.fn, case.args, case.argnums, kwargs=case.kwargs)
    assert_tree_close(_bind_closed(case), expected, rtol=1e-6, atol=1e-7, what=case.id)


CSTEP = [c for c in CASES if c.cstep]


@pytest.mark.parametrize("case", CSTEP, ids=[c.id for c in CSTEP])
def test_against_complex_step(case):
    expected = complex_step_grad(case.fn, case.args, case.argnums)
    assert_tree_close(_grad(case), expected, rtol=1e-11, atol=1e-13, what=case.id)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_value_and_grad_value(case):
    value, g = s2s.value_and_grad(case.fn, argnums=case.argnums)(*case.args, **case.kwargs)
    np.testing.assert_allclose(value, case.fn(*case.args, **case.kwargs), rtol=1e-13, atol=0)
    expected = fd_grad(case.fn, case.args, case.argnums, kwargs=case.kwargs)
    assert_tree_close(g, expected, rtol=1e-6, atol=1e-7, what=case.id)


def test_corpus_size():
    fns = {id(c.fn) for c in CASES}
    assert len(fns) >= 70, len(fns)


# ------------------------------------------------------------ gradient types

def test_scalar_input_gives_scalar_gradient():
    g = s2s.grad(corpus.pow_int)(1.7)
    assert np.shape(g) == ()
    assert np.asarray(g).dtype == np.float64


def test_array_input_gradient_shape_and_dtype():
    x = np.linspace(0.1, 0.9, 6).reshape(2, 3)
    g = s2s.grad(corpus.methods_reshape)(x.reshape(6))
    assert g.shape == (6,) and g.dtype == np.float64


def test_float32_gradient_dtype():
    x = np.array([0.1, -0.4, 0.7], dtype=np.float32)
    g = s2s.grad(corpus.np_unary)(x)
    assert isinstance(g, np.ndarray)
    assert g.dtype == np.float32
    x64 = x.astype(np.float64)
    expected = (np.cos(x64) - np.sin(x64) * np.tan(x64) + np.cos(x64) / np.cos(x64) ** 2
                + np.exp(x64) + 1 / (x64 + 2) + 0.5 / np.sqrt(x64 + 2))
    np.testing.assert_allclose(g, expected, rtol=1e-5)


def test_float32_matmul_dtype():
    a = np.ones((3, 4), np.float32) * 0.1
    b = np.ones((4, 2), np.float32) * 0.2
    ga, gb = s2s.grad(corpus.prod_matmul, argnums=(0, 1))(a, b)
    assert ga.dtype == np.float32 and gb.dtype == np.float32
    exp_a, exp_b = fd_grad(corpus.prod_matmul, (a.astype(float), b.astype(float)), (0, 1))
    np.testing.assert_allclose(ga, exp_a, rtol=1e-4)
    np.testing.assert_allclose(gb, exp_b, rtol=1e-4)


# ------------------------------------------------------- globals / closures

def test_global_reassignment_is_seen(monkeypatch):
    x = np.array([0.5, -1.0, 2.0])
    g = s2s.grad(corpus.uses_global)
    np.testing.assert_allclose(g(x), 2 * np.array([1.0, -2.0, 3.0]) * x, rtol=1e-12)
    monkeypatch.setattr(corpus, "W_GLOBAL", np.array([10.0, 0.0, -1.0]))
    np.testing.assert_allclose(g(x), 2 * np.array([10.0, 0.0, -1.0]) * x, rtol=1e-12)
    # a fresh transform of the same function also sees the new value
    np.testing.assert_allclose(s2s.grad(corpus.uses_global)(x),
                               2 * np.array([10.0, 0.0, -1.0]) * x, rtol=1e-12)


def test_global_changes_kind(monkeypatch):
    """The global goes from an array to a float: the result must follow it."""
    x = np.array([0.5, -1.0, 2.0])
    g = s2s.grad(corpus.uses_global)
    g(x)
    monkeypatch.setattr(corpus, "W_GLOBAL", 4.0)
    np.testing.assert_allclose(g(x), 8.0 * x, rtol=1e-12)


def _other_helper(x):
    return x * 5.0


def test_global_helper_rebinding_is_seen(monkeypatch):
    """Rebinding a global *function* called by the differentiated function
    must change the gradient, like rebinding a global array does."""
    g = s2s.grad(corpus.uses_global_helper)
    assert math.isclose(g(1.5), 6.0, rel_tol=1e-12)
    monkeypatch.setattr(corpus, "_global_helper", _other_helper)
    assert corpus.uses_global_helper(1.5) == 1.5 * 5.0 * 1.5
    assert math.isclose(s2s.grad(corpus.uses_global_helper)(1.5), 15.0, rel_tol=1e-12)
    assert math.isclose(g(1.5), 15.0, rel_tol=1e-12)


def test_closure_cell_rebinding_is_seen():
    def make():
        c = 1.0

        def f(x):
            return c * x * x

        def set_c(v):
            nonlocal c
            c = v
        return f, set_c
    f, set_c = make()
    g = s2s.grad(f)
    assert math.isclose(g(1.5), 3.0, rel_tol=1e-12)
    set_c(4.0)
    assert math.isclose(g(1.5), 12.0, rel_tol=1e-12)


def test_two_closures_of_one_def():
    x = np.array([0.3, -0.2])
    for c in (1.5, -2.0):
        fn = corpus.make_closure(c)
        expected = 2 * c * np.cos(x) + np.array([c, 0.0])
        np.testing.assert_allclose(s2s.grad(fn)(x), expected, rtol=1e-12)


# ----------------------------------------------------------------- lambdas

def _local_helper(x, k=3.0):
    return np.sin(x) * k


def test_inline_lambda_calling_helper():
    g = s2s.grad(lambda x: _local_helper(x) * 2.0)(1.0)
    assert math.isclose(g, 6.0 * math.cos(1.0), rel_tol=1e-12)


def test_two_lambdas_in_one_line_inline():
    h1 = lambda x: x * 5.0; h2 = lambda x: x ** 4  # noqa: E702,E731
    assert math.isclose(s2s.grad(h1)(2.0), 5.0, rel_tol=1e-12)
    assert math.isclose(s2s.grad(h2)(2.0), 32.0, rel_tol=1e-12)


def test_lambda_as_decorator_target():
    @s2s.grad
    def df(x):
        return x ** 3 - 2.0 * x
    assert math.isclose(df(2.0), 10.0, rel_tol=1e-12)


def test_decorator_with_argnums():
    @s2s.grad(argnums=1)
    def df(x, y):
        return x * y ** 2
    assert math.isclose(df(3.0, 2.0), 12.0, rel_tol=1e-12)


# ------------------------------------------------- has_aux / value_and_grad

def loss_with_aux(w, x):
    pred = np.tanh(x @ w)
    loss = np.sum(pred ** 2)
    return loss, {"pred": pred, "n": x.shape[0]}


def test_has_aux_grad():
    w, x = np.array([0.3, -0.2]), np.array([[1.0, 2.0], [0.5, -1.0], [0.1, 0.1]])
    g, aux = s2s.grad(loss_with_aux, has_aux=True)(w, x)
    np.testing.assert_allclose(aux["pred"], np.tanh(x @ w), rtol=1e-14)
    assert aux["n"] == 3
    expected = fd_grad(lambda w, x: loss_with_aux(w, x)[0], (w, x))
    np.testing.assert_allclose(g, expected, rtol=1e-6)
    p = np.tanh(x @ w)
    np.testing.assert_allclose(g, x.T @ (2 * p * (1 - p ** 2)), rtol=1e-12)


def test_has_aux_value_and_grad_argnums_tuple():
    w, x = np.array([0.3, -0.2]), np.array([[1.0, 2.0], [0.5, -1.0]])
    (value, aux), (gw, gx) = s2s.value_and_grad(loss_with_aux, argnums=(0, 1),
                                                has_aux=True)(w, x)
    assert math.isclose(value, np.sum(np.tanh(x @ w) ** 2), rel_tol=1e-13)
    np.testing.assert_allclose(aux["pred"], np.tanh(x @ w))
    ew, ex = fd_grad(lambda w, x: loss_with_aux(w, x)[0], (w, x), (0, 1))
    np.testing.assert_allclose(gw, ew, rtol=1e-6)
    np.testing.assert_allclose(gx, ex, rtol=1e-6)


def test_value_and_grad_pytree_params():
    params = corpus._mlp_params
    x, y = np.linspace(-1, 1, 15).reshape(5, 3), np.linspace(0, 1, 10).reshape(5, 2)
    value, g = s2s.value_and_grad(corpus.mlp_loss)(params, x, y)
    assert math.isclose(value, corpus.mlp_loss(params, x, y), rel_tol=1e-13)
    assert sorted(g) == ["b1", "b2", "w1", "w2"]
    assert_tree_close(g, fd_grad(corpus.mlp_loss, (params, x, y)), rtol=1e-6, atol=1e-8)


# ------------------------------------------------------- large, directional

def test_large_mlp_directional():
    r = np.random.default_rng(7)
    w1, w2 = r.standard_normal((20, 30)) * 0.3, r.standard_normal((30, 5)) * 0.3
    x, y = r.standard_normal((40, 20)), r.standard_normal((40, 5))

    def f(w1, w2):
        return corpus.mlp_loss({"w1": w1, "b1": 0.0, "w2": w2, "b2": 0.0}, x, y)

    g1, g2 = s2s.grad(f, argnums=(0, 1))(w1, w2)
    check_directional(f, (w1, w2), 0, g1, n=3)
    check_directional(f, (w1, w2), 1, g2, n=3)


def test_large_softmax_directional():
    r = np.random.default_rng(8)
    logits = r.standard_normal((50, 10))
    labels = np.eye(10)[r.integers(0, 10, 50)]
    g = s2s.grad(corpus.softmax_xent)(logits, labels)
    check_directional(corpus.softmax_xent, (logits, labels), 0, g, n=4)


# ------------------------------------------------------------------ complex

def c_to_r(z):
    x = np.real(z)
    y = np.imag(z)
    return x ** 2 + y ** 2


def c_to_r_abs2(z):
    return np.real(z * np.conj(z))


def holo_sin(z):
    return np.sin(z)


def holo_poly(z):
    return z ** 3 + 2.0 * z


def test_complex_to_real_jax_convention():
    # JAX: grad(f)(3+4j) == 6-8j  (conjugate of the Wirtinger 2 df/dz-bar)
    g = s2s.grad(c_to_r)(3.0 + 4.0j)
    assert np.iscomplexobj(g)
    assert np.isclose(g, 6.0 - 8.0j, rtol=1e-12, atol=0)


def test_complex_to_real_via_conj():
    g = s2s.grad(c_to_r_abs2)(1.0 - 2.0j)
    assert np.isclose(g, 2.0 + 4.0j, rtol=1e-12, atol=0)


def test_complex_to_real_array():
    z = np.array([1.0 + 2.0j, -0.5 + 0.1j])
    g = s2s.grad(lambda z: np.sum(c_to_r(z)))(z)
    np.testing.assert_allclose(g, 2 * np.conj(z), rtol=1e-12)


def test_holomorphic_sin():
    z = 0.3 + 0.7j
    g = s2s.grad(holo_sin, holomorphic=True)(z)
    assert np.isclose(g, np.cos(z), rtol=1e-12, atol=0)


def test_holomorphic_poly():
    z = -1.2 + 0.5j
    g = s2s.grad(holo_poly, holomorphic=True)(z)
    assert np.isclose(g, 3 * z ** 2 + 2.0, rtol=1e-12, atol=0)


def test_holomorphic_value_and_grad():
    z = 0.3 + 0.7j
    v, g = s2s.value_and_grad(holo_sin, holomorphic=True)(z)
    assert np.isclose(v, np.sin(z), rtol=1e-14)
    assert np.isclose(g, np.cos(z), rtol=1e-12)


# ------------------------------------------------------------ pytree extras

def test_int_leaf_gets_zero_gradient_of_its_shape():
    p = {"w": {"a": 1.5, "v": np.array([1.0, 2.0, 4.0])}, "n": 3, "idx": np.array([1, 2, 3])}

    def f(p):
        return p["w"]["a"] * p["n"] + np.sum(p["w"]["v"] * p["idx"])
    g = s2s.grad(f)(p)
    assert sorted(g) == ["idx", "n", "w"]
    assert np.shape(g["idx"]) == (3,) and np.all(np.asarray(g["idx"]) == 0)
    assert np.all(np.asarray(g["n"]) == 0)
    np.testing.assert_allclose(g["w"]["v"], [1.0, 2.0, 3.0], rtol=1e-14)
    assert math.isclose(g["w"]["a"], 3.0)


def test_namedtuple_gradient_type():
    g = s2s.grad(corpus.tree_namedtuple)(corpus.Point(1.5, 2.0))
    assert type(g) is corpus.Point
    assert math.isclose(g.x, 6.0) and math.isclose(g.y, 3.25)


def test_list_and_tuple_gradient_types():
    gl, gt = s2s.grad(corpus.tree_list_tuple, argnums=(0, 1))([0.5, 1.5], (2.0, -1.0))
    assert type(gl) is list and type(gt) is tuple
    flat = flatten((gl, gt))[0]
    np.testing.assert_allclose(flat, [-1.0, 6.0, 2.25, 0.5])


def test_float32_gradient_dtype_with_float64_partner():
    """JAX returns each cotangent in its primal's dtype, even when the
    computation promotes to float64 (float32 array * float64 array)."""
    x32 = np.array([0.5, 1.0], dtype=np.float32)
    y64 = np.array([1.0, 2.0])
    gx, gy = s2s.grad(lambda x, y: np.sum(x * y), argnums=(0, 1))(x32, y64)
    assert gx.dtype == np.float32, gx.dtype
    assert gy.dtype == np.float64
    np.testing.assert_allclose(gx, [1.0, 2.0])
    np.testing.assert_allclose(gy, [0.5, 1.0])


def test_float32_scalar_gradient_dtype():
    g = s2s.grad(lambda x: x * x * 3.0)(np.float32(1.5))
    assert np.asarray(g).dtype == np.float32
    assert math.isclose(float(g), 9.0, rel_tol=1e-6)
