"""Reverse-mode regressions found by the samples, each against central differences."""
import numpy as np
import pytest

import s2s
from s2s.core import pipeline

from .oracles import assert_tree_close, fd_grad


def dict_entry_in_loop(p, x):
    s = 0.0
    for _ in range(3):
        s = s + p["w"] * x + p["inner"]["v"] ** 2
    return s


def dict_entry_in_branch(p, flag):
    s = p["w"] * 2.0
    if flag > 0:
        s = s + p["c"] * p["w"]
    return s


def float_accumulator_in_place(x):
    s = 0.0
    for v in x:
        s -= v * v
        s *= 0.9
    return s


def test_a_dict_entry_read_in_a_loop_gets_every_iteration():
    p = {"w": 2.0, "inner": {"v": 0.5}}
    g = s2s.grad(dict_entry_in_loop)(p, 1.5)
    assert_tree_close(g, fd_grad(dict_entry_in_loop, (p, 1.5)))
    assert np.isclose(g["w"], 4.5)


def test_a_dict_entry_read_in_one_branch():
    p = {"w": 2.0, "c": 1.0}
    for flag in (-1, 1):
        g = s2s.grad(dict_entry_in_branch)(p, flag)
        assert_tree_close(g, fd_grad(dict_entry_in_branch, (p, flag)))


def test_an_in_place_operator_on_a_float_in_a_loop_rebinds_it():
    x = np.array([1.0, -2.0, 0.5])
    assert_tree_close(s2s.grad(float_accumulator_in_place)(x),
                      fd_grad(float_accumulator_in_place, (x,)))


def nested_params_in_loop(params, xs):
    h = np.zeros(2)
    for x in xs:
        cell = params["cell"]
        h = np.tanh(cell["w"] @ h + cell["u"] * x + params["b"])
        if x > 0.0:
            h = h * params["cell"]["scale"]
    return np.sum(h ** 2)


def dict_read_in_a_loop_that_never_runs(p, n):
    s = p["a"] * 2.0
    for _ in range(n):
        s = s + p["missing"]
    return s


def test_entries_of_nested_dict_arguments_read_in_a_loop_are_summed_per_entry():
    rng = np.random.default_rng(5)
    params = {"cell": {"w": rng.normal(size=(2, 2)), "u": rng.normal(size=2), "scale": 0.9},
              "b": rng.normal(size=2)}
    xs = np.array([0.5, -0.3, 0.8])
    g = s2s.grad(nested_params_in_loop)(params, xs)
    assert_tree_close(g, fd_grad(nested_params_in_loop, (params, xs)))
    src = pipeline.emit(s2s.grad(nested_params_in_loop).specialised((params, xs))).source
    assert "params_cell_w = params_cell['w']" in src  # read once, before the loop
    assert "getitem_vjp" not in src  # no dict of zeros per read


def test_a_key_the_argument_lacks_is_not_read_ahead():
    p = {"a": 1.5}
    assert s2s.grad(dict_read_in_a_loop_that_never_runs)(p, 0) == {"a": 2.0}


def constant_updated_by_operator(x):
    m = np.zeros(3)
    s = 0.0
    for _ in range(3):
        s = s + np.sum(m * x)
        m += 1.0
    return s


def constant_updated_by_out(x):
    m = np.zeros(3)
    s = 0.0
    for _ in range(3):
        s = s + np.sum(m * x)
        np.add(m, 1.0, out=m)
    return s


def constant_updated_by_method(x):
    m = np.zeros(3)
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(m) * x)
        m.fill(i + 1.0)
    return s


@pytest.mark.parametrize("f", [constant_updated_by_operator, constant_updated_by_out,
                               constant_updated_by_method], ids=lambda f: f.__name__)
def test_an_array_without_derivatives_changed_in_place_after_a_differentiated_read(f):
    """The adjoint reads the values the statement saw (it read the final ones)."""
    x = np.array([0.3, -0.2, 0.5])
    assert_tree_close(s2s.grad(f)(x), fd_grad(f, (x,)))
    (g,) = s2s.vjp(f, x)[1](1.0)
    assert_tree_close(g, fd_grad(f, (x,)))


def out_argument_new_array(x):
    m = np.zeros(3)
    np.add(x, 1.0, out=m)
    return np.sum(m * m)


def out_argument_in_place(x):
    m = x * 1.0
    r = np.multiply(m, 2.0, out=m)
    return np.sum(m * r)


@pytest.mark.parametrize("f", [out_argument_new_array, out_argument_in_place],
                         ids=lambda f: f.__name__)
def test_out_arguments_are_writes_in_both_modes(f):
    """np.add(x, 1.0, out=m) is m[...] = x + 1.0 (its derivative was dropped)."""
    x = np.array([0.3, -0.2, 0.5])
    v = np.array([0.7, 0.1, -0.4])
    expected = fd_grad(f, (x,))
    assert_tree_close(s2s.grad(f)(x), expected)
    assert np.isclose(s2s.jvp(f, (x,), (v,))[1], np.dot(expected, v))


def keys_formatted_in_a_loop(x):
    d = {}
    for i, v in enumerate(x):
        k = "k%d" % (i % 2)
        d[k] = d.get(k, 0.0) + v * v
    return sum(d.values()) * d["k0"]


def test_string_formatting_with_percent_has_no_derivative_in_both_modes():
    """'k%d' % i formats a string: forward mode differentiated it as a modulo."""
    x = np.array([0.3, -0.2, 0.5])
    v = np.array([0.7, 0.1, -0.4])
    expected = fd_grad(keys_formatted_in_a_loop, (x,))
    assert_tree_close(s2s.grad(keys_formatted_in_a_loop)(x), expected)
    assert np.isclose(s2s.jvp(keys_formatted_in_a_loop, (x,), (v,))[1], np.dot(expected, v))


def in_place_after_a_copying_call_of_a_list(x):
    v0 = np.sin(x)
    v1 = np.concatenate([x, v0])
    v0 += x
    return np.sum(v1 * v1) + np.sum(v0 * v0)


def in_place_while_a_list_holds_it(x):
    v0 = np.sin(x)
    pair = [x, v0]
    v0 += x
    return np.sum(pair[1] * pair[1])


def test_in_place_operator_after_a_list_literal_a_call_copied():
    """np.concatenate([x, v0]) copies v0: v0 += x afterwards is x = x + v (it was refused)."""
    x = np.array([0.3, -0.2, 0.5])
    f = in_place_after_a_copying_call_of_a_list
    assert_tree_close(s2s.grad(f)(x), fd_grad(f, (x,)))
    with pytest.raises(s2s.UnsupportedSyntaxError, match=r"container holding it, \(pair\)"):
        s2s.grad(in_place_while_a_list_holds_it)(x)


def constant_changed_by_a_function_without_rule(x):
    m = np.ones(3)
    s = 0.0
    for _ in range(3):
        s = s + np.sum(m * x)
        done = np.copyto(m, m * 2.0)  # noqa: F841  (returns None; changes m)
    return s


def test_an_array_changed_by_a_function_s2s_cannot_see_is_read_through_a_snapshot():
    x = np.array([0.3, -0.2, 0.5])
    f = constant_changed_by_a_function_without_rule
    assert_tree_close(s2s.grad(f)(x), fd_grad(f, (x,)))
