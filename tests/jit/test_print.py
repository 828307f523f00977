"""print(...) inside s2s.jit prints when the compiled code runs (as in Numba), the values as
Python prints them; unsupported values are refused by name.  Oracle: the same function
run by Python, its output captured the same way."""
import numpy as np
import pytest

import s2s


def loop(x, n):
    acc = 0.0
    for i in range(n):
        acc += x * i
        print("step", i, acc, i > 1, sep=", ")
    print("done", None, np.float32(1.5), end="!\n")
    return acc


def with_grad(x):
    y = x * x
    print("y =", y)
    return y * 3.0


def prints_array(x):
    print(x)
    return x


def test_compiled_output_is_python_output(capsys):
    expected_value = loop(0.1, 4)
    expected = capsys.readouterr().out
    assert s2s.jit(loop)(0.1, 4) == expected_value
    assert capsys.readouterr().out == expected
    assert "0.30000000000000004" in expected and "done None 1.5!" in expected


def test_print_in_a_jitted_gradient(capsys):
    assert s2s.jit(s2s.grad(with_grad))(2.0) == 12.0
    assert capsys.readouterr().out == "y = 4.0\n"


def test_arrays_are_refused_by_name():
    with pytest.raises(s2s.S2SError, match=r"jit does not compile print\(f8\[:\]\)"):
        s2s.jit(prints_array)(np.ones(2))


def prints_tuples(x):
    y = np.sin(x)
    print("shape", y.shape, (x.shape[0], 1.5, True), (np.sum(x), (2, "a")), (), sep="|")
    return np.sum(y ** 2)


def test_tuples_print_as_python_shows_them(capsys):
    """A shape or other tuple of numbers and constants: each item by its repr, a numpy
    scalar as ``np.float64(15.0)``, as Python's tuples show them (it was refused)."""
    x = np.arange(6.0)
    prints_tuples(x)
    expected = capsys.readouterr().out
    assert "(np.float64(15.0), (2, 'a'))" in expected
    s2s.jit(prints_tuples)(x)
    assert capsys.readouterr().out == expected
    s2s.jit(s2s.grad(prints_tuples))(x)
    assert capsys.readouterr().out == expected
