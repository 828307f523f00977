"""Messages formatted at run time in ``s2s.jit`` code (``ops/messages.py``): f-strings,
``str.format`` and ``%`` of numbers raised, asserted and printed read exactly as in
Python (each number keeps its type: ``{x!r}`` of an ``np.float64`` shows it), with the
note that names the user's line; more numbers than the error words hold are handed on
too; an exception caught inside the compiled code costs nothing of its message."""
from __future__ import annotations

import numpy as np
import pytest

import s2s


def rows_check(x, n):
    if x.shape[0] != n:
        raise ValueError(f"expected {n} rows, got {x.shape[0]} (first {x[0]!r})")
    return x * 2


def first_negative(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            raise IndexError(f"negative at {i}: {x[i]:.3e} / {float(x[i])} "
                             f"flag={x[i] < 0} {'text'} {x[i] * 2}")
    return x


def percent(x):
    raise ValueError("n = %d, x = %.2f" % (x.shape[0], x[0]))


def percent_one(x):
    raise ValueError("n = %d" % x.shape[0])


def format_method(x):
    raise KeyError("a {} b {:>8.3f}".format(x.shape[0], x[1]))


def asserted(x):
    assert x[0] > 5, f"x[0] = {x[0]}, n = {x.shape[0]}"
    return x


def asserted_many(x):
    assert x[0] > 5, f"{x[0]} {x[1]} {x[0] * 3} {x.shape[0]} {np.float32(x[1])}"
    return x


def caught(x):
    s = 0.0
    try:
        raise ValueError(f"inner {x[0]} {x[1]} {x[0]} {x[1]} {x[0]}")
    except ValueError:
        s = 1.0
    return s


def escapes(x):
    raise ValueError(f"tab\there {x[0]}" "\n{literal}" f" {{b}} {x[1]!r}" rf"\t{x[0]}")


X = np.array([1.5, 2.0])
CASES = [(rows_check, (np.ones(3), 4), None),
         (first_negative, (np.array([1.0, -2.5]),), None),
         (percent, (X,), None), (percent_one, (X,), None), (format_method, (X,), None),
         (escapes, (X,), None),
         # pytest rewrites this module's asserts: the message Python gives, written out
         (asserted, (X,), f"x[0] = {X[0]}, n = 2"),
         (asserted_many, (X,), f"{X[0]} {X[1]} {X[0] * 3} 2 {np.float32(X[1])}")]


@pytest.mark.parametrize("fn,args,message", CASES, ids=[c[0].__name__ for c in CASES])
def test_messages_read_as_in_python(fn, args, message):
    with pytest.raises(Exception) as python:
        fn(*args)
    with pytest.raises(type(python.value)) as compiled:
        s2s.jit(fn)(*args)
    assert str(compiled.value) == (message or str(python.value))
    notes = "".join(getattr(compiled.value, "__notes__", []))
    assert "in jit-compiled code at" in notes and "test_run_time_messages.py" in notes


def test_adjacent_literals_and_escapes_in_python_mode():
    """The frontend joins an f-string with adjacent literals (the message was lost) and
    reads escapes in its text (``\\t`` stayed two characters)."""
    with pytest.raises(ValueError) as info:
        s2s.grad(lambda x: np.sum(escapes(x)))(X)
    assert str(info.value) == "tab\there 1.5\n{literal} {b} np.float64(2.0)\\t1.5"


def test_passing_checks_and_caught_errors():
    np.testing.assert_array_equal(s2s.jit(rows_check)(np.ones(3), 3), np.full(3, 2.0))
    np.testing.assert_array_equal(s2s.jit(asserted)(np.array([6.0, 1.0])), [6.0, 1.0])
    assert s2s.jit(caught)(np.array([1.5, 2.0])) == 1.0


def show(x):
    print(f"sum {np.sum(x)} n={x.shape[0]}", "and", 3)
    print("%d items, %.1e" % (x.shape[0], x[0]))
    return x


def test_printed_messages(capsys):
    show(np.array([1.5, 2.0]))
    python = capsys.readouterr().out
    s2s.jit(show)(np.array([1.5, 2.0]))
    assert capsys.readouterr().out == python == "sum 3.5 n=2 and 3\n2 items, 1.5e+00\n"


def returns_text(x):
    return f"{x[0]}"


def measures_text(x):
    return len(f"{x[0]}")


def test_other_uses_of_a_formatted_string_are_refused_by_name():
    with pytest.raises(s2s.UnsupportedSyntaxError, match="returning a string formatted"):
        s2s.jit(returns_text)(X)
    with pytest.raises(s2s.UnsupportedSyntaxError, match=r"len\(str\)"):
        s2s.jit(measures_text)(X)
