"""Reverse-mode regressions found by the samples, each against central differences."""
import numpy as np

import s2s

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
