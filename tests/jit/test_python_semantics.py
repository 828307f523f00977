"""s2s.jit keeps Python's semantics where Numba's default error model does (issue 19,
group 6), and names the user's line when it raises (group 7).

Oracles: Python itself (the same function run by the interpreter gives the value or
the exception class and message) and, for derivatives, central finite differences.
On Python numbers ``/``, ``//``, ``%``, ``divmod`` and ``0.0 ** -n`` raise
``ZeroDivisionError``; on numpy scalars and arrays they keep numpy's inf/nan/0.
"""
import inspect
import math
import traceback

import numpy as np
import pytest

import s2s
from tests.grad.oracles import fd_grad


def div(a, b):
    return a / b


def floordiv(a, b):
    return a // b


def mod(a, b):
    return a % b


def dm(a, b):
    return divmod(a, b)


def power(a, b):
    return a ** b


def aug_div(a, b):
    a /= b
    return a


def to_int(x):
    return int(x)


def floor_int(x):
    return math.floor(x)


def ceil_int(x):
    return math.ceil(x)


def pole(x):
    y = x - 1.0
    return x * x / y


def add_one(a):
    return a + 1


def pair(t, x):
    return t[0] * x + t[1]


def user_raise(x):
    if x < 0:
        raise ValueError("x must be >= 0")
    return math.sqrt(x)


def read(a, i):
    return a[i] + 1.0


def line_of(fn, text):
    """The line number in this file of the line of ``fn`` that contains ``text``."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


def assert_located(error, fn, text):
    """The error names this file and the user's line: the note quotes it, and the
    traceback ends at it."""
    line = line_of(fn, text)
    notes = "\n".join(getattr(error, "__notes__", []))
    assert f"{__file__}:{line}" in notes and text in notes
    last = traceback.extract_tb(error.__traceback__)[-1]
    assert (last.filename, last.lineno) == (__file__, line)


def python_outcome(fn, *args):
    with np.errstate(all="ignore"):
        try:
            return "value", fn(*args)
        except Exception as e:  # noqa: BLE001 - the oracle's exception, whatever it is
            return "error", (type(e), str(e))


ZERO_CASES = [(div, 1.0, 0.0, "a / b"), (div, 7, 0, "a / b"), (div, 1.5, -0.0, "a / b"),
              (floordiv, 7, 0, "a // b"), (floordiv, 7.0, 0.0, "a // b"),
              (mod, 7, 0, "a % b"), (mod, -2.5, 0.0, "a % b"),
              (dm, 7, 0, "divmod"), (dm, 7.0, 0.0, "divmod"), (dm, 7, 0.0, "divmod"),
              (power, 0.0, -1.0, "a ** b"), (power, 0.0, -0.5, "a ** b"),
              (aug_div, 3.0, 0.0, "a /= b"), (div, True, False, "a / b"),
              (div, 1j, 0j, "a / b")]


@pytest.mark.parametrize("fn, a, b, text", ZERO_CASES,
                         ids=[f"{c[0].__name__}-{c[1]!r}-{c[2]!r}" for c in ZERO_CASES])
def test_zero_division_of_python_numbers(fn, a, b, text):
    kind, (cls, message) = python_outcome(fn, a, b)
    assert kind == "error" and cls is ZeroDivisionError
    with pytest.raises(ZeroDivisionError) as info:
        s2s.jit(fn)(a, b)
    assert str(info.value).startswith(message)  # Python's own words
    assert_located(info.value, fn, text)


NUMPY_CASES = [(div, np.float64(1.0), 0.0), (div, 1.0, np.float64(0.0)),
               (div, np.float64(-1.0), np.float64(0.0)), (floordiv, np.float64(1.0), 0.0),
               (mod, np.float64(1.0), 0.0), (floordiv, np.int64(7), np.int64(0)),
               (mod, np.int64(7), np.int64(0)), (div, np.arange(3.0), 0.0),
               (floordiv, np.arange(4), 0), (mod, np.arange(4.0), 0.0),
               (dm, np.float64(5.0), np.float64(0.0)), (power, np.float64(0.0), -1.0)]


@pytest.mark.parametrize("fn, a, b", NUMPY_CASES,
                         ids=[f"{c[0].__name__}-{type(c[1]).__name__}-{k}"
                              for k, c in enumerate(NUMPY_CASES)])
def test_numpy_scalars_and_arrays_keep_numpys_semantics(fn, a, b):
    kind, want = python_outcome(fn, a, b)
    assert kind == "value"
    with np.errstate(all="ignore"):
        got = s2s.jit(fn)(a, b)
    np.testing.assert_equal(np.asarray(got), np.asarray(want))
    assert type(got) is type(want)


def test_floor_division_and_modulo_values_are_pythons():
    """CPython's float divmod (``1.0 // 0.1 == 9.0``, the remainder's sign is the
    divisor's, signed zeros), on edge values and random ones."""
    rng = np.random.default_rng(19)
    edge = [0.0, -0.0, 1.0, -1.0, 0.1, -0.1, 3.0, -7.5, 1e300, -1e-300, math.inf, -math.inf,
            math.nan, 5.0, -5.0, 2.0 ** 53, 1e-320]
    pairs = [(a, b) for a in edge for b in edge if b != 0.0]
    pairs += [tuple(x) for x in rng.normal(0, 10, (200, 2)).tolist()]
    jf, jm, jd = s2s.jit(floordiv), s2s.jit(mod), s2s.jit(dm)
    for a, b in pairs:
        for j, fn in ((jf, floordiv), (jm, mod)):
            np.testing.assert_equal(j(a, b), fn(a, b), err_msg=f"{fn.__name__}({a}, {b})")
            assert math.copysign(1.0, j(a, b)) == math.copysign(1.0, fn(a, b)) or \
                math.isnan(fn(a, b))
        np.testing.assert_equal(jd(a, b), divmod(a, b))
    ints = [(a, b) for a in (-7, 7, 0, -1, 2 ** 62, -(2 ** 63)) for b in (3, -3, 1, -1, 2 ** 40)]
    for a, b in ints:
        if a == -(2 ** 63) and b == -1:
            continue  # int64 wraps here (as Numba); Python's ints do not
        assert jd(a, b) == divmod(a, b) and jf(a, b) == a // b and jm(a, b) == a % b


@pytest.mark.parametrize("fn, x", [(to_int, math.nan), (to_int, math.inf), (to_int, -math.inf),
                                   (to_int, np.float64(math.nan)), (floor_int, math.nan),
                                   (floor_int, math.inf), (ceil_int, -math.inf)])
def test_int_of_nan_and_inf_raise_as_python(fn, x):
    kind, (cls, message) = python_outcome(fn, x)
    assert kind == "error"
    with pytest.raises(cls) as info:
        s2s.jit(fn)(x)
    assert str(info.value).startswith(message)
    assert_located(info.value, fn, "return")


def test_int_of_a_float_outside_int64_is_an_overflow_error():
    with pytest.raises(OverflowError, match="int64") as info:
        s2s.jit(to_int)(1e19)
    assert_located(info.value, to_int, "return int(x)")
    assert s2s.jit(to_int)(-3.7) == int(-3.7) and s2s.jit(to_int)(2.0 ** 62) == 2 ** 62


def test_int_argument_outside_int64_names_the_argument():
    j = s2s.jit(add_one)
    for k in range(3):  # the first call (general path), then the fast entry
        with pytest.raises(OverflowError, match=r"argument 'a'.*64 bits"):
            j(2 ** 70)
        with pytest.raises(OverflowError, match=r"argument 'a'"):
            j(-(2 ** 63) - 1)
        assert j(2 ** 63 - 2) == 2 ** 63 - 1 and j(-(2 ** 63)) == -(2 ** 63) + 1
    with pytest.raises(OverflowError, match=r"argument 't\[1\]' = 18446744073709551616"):
        s2s.jit(pair)((1, 2 ** 64), 2.0)
    assert s2s.jit(pair)((3, 4), 2.0) == 10.0


def test_compiled_derivative_agrees_with_python_mode_at_a_pole():
    g = s2s.grad(pole)
    with pytest.raises(ZeroDivisionError) as python_mode:
        g(1.0)
    with pytest.raises(ZeroDivisionError) as compiled:
        s2s.jit(g)(1.0)
    assert str(compiled.value).startswith(str(python_mode.value))
    assert_located(compiled.value, pole, "x * x / y")
    for x in (0.5, 2.0, -3.0):  # elsewhere both are the derivative (finite differences)
        h = 1e-6
        fd = (pole(x + h) - pole(x - h)) / (2 * h)
        assert s2s.jit(g)(x) == pytest.approx(fd, rel=1e-6) == g(x)


def test_numpy_scalar_derivative_at_a_pole_is_numpys():
    g = s2s.grad(pole)
    with np.errstate(all="ignore"):
        want = g(np.float64(1.0))
        got = s2s.jit(g)(np.float64(1.0))
    np.testing.assert_equal(got, want)


def test_user_raise_keeps_its_message_and_names_the_line():
    with pytest.raises(ValueError) as info:
        s2s.jit(user_raise)(-1.0)
    assert str(info.value) == "x must be >= 0"
    assert_located(info.value, user_raise, 'raise ValueError("x must be >= 0")')
    assert s2s.jit(user_raise)(4.0) == 2.0


def test_bounds_check_names_the_line():
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3") as info:
        s2s.jit(read)(np.ones(3), 5)
    assert_located(info.value, read, "a[i] + 1.0")


def test_error_in_compiled_derivative_names_the_users_line():
    with pytest.raises(IndexError) as info:
        s2s.jit(s2s.grad(read))(np.ones(3), 7)
    assert_located(info.value, read, "a[i] + 1.0")


# -- the math module's errors: CPython's rule (a nan from numbers: ValueError; an infinite
# result of finite numbers: OverflowError where it overflows, ValueError at a pole) ------
MATH_POINTS = [
    (math.acos, (2.0,)), (math.asin, (-1.5,)), (math.acosh, (0.5,)), (math.atanh, (1.0,)),
    (math.atanh, (0.5,)), (math.log1p, (-1.0,)), (math.log10, (0.0,)), (math.log2, (-1.0,)),
    (math.exp, (1000.0,)), (math.exp, (-1000.0,)), (math.expm1, (800.0,)),
    (math.cosh, (1000.0,)), (math.sinh, (-1000.0,)), (math.gamma, (0.0,)),
    (math.gamma, (-2.0,)), (math.gamma, (200.0,)), (math.gamma, (-2.5,)),
    (math.lgamma, (0.0,)), (math.lgamma, (-3.0,)), (math.lgamma, (1e308,)),
    (math.lgamma, (2.5,)), (math.sin, (math.inf,)), (math.exp, (math.nan,)),
    (math.exp, (math.inf,)), (math.pow, (10.0, 400.0)), (math.pow, (0.0, -1.0)),
    (math.pow, (-8.0, 1 / 3)), (math.pow, (math.inf, 2.0)), (math.pow, (math.nan, 0.0)),
    (math.pow, (-2.0, 3.0)), (math.fmod, (1.0, 0.0)), (math.fmod, (math.inf, 1.0)),
    (math.fmod, (5.0, math.inf)), (math.fmod, (-5.5, 2.0)),
]


@pytest.mark.parametrize("fn, args", MATH_POINTS,
                         ids=[f"{f.__name__}{a}" for f, a in MATH_POINTS])
def test_math_functions_raise_what_python_raises(fn, args):
    call = (lambda x: fn(x)) if len(args) == 1 else (lambda x, y: fn(x, y))
    try:
        expected = fn(*args)
    except (ValueError, OverflowError) as exc:
        with pytest.raises(type(exc), match=str(exc)):
            s2s.jit(call)(*args)
    else:
        got = s2s.jit(call)(*args)  # (CPython has its own gamma/lgamma: a few ulps apart)
        assert math.isclose(got, expected, rel_tol=1e-14) or (math.isnan(got) and math.isnan(expected))


# -- isinstance: answered from the compiled types, only the branch taken compiled --------
def _dispatch(x, t):
    if isinstance(x, (tuple, list)) or isinstance(t, dict):
        return t
    if not isinstance(x, np.ndarray):
        return x * 2.0
    return x + t


def _affine(p, x):
    if isinstance(p, tuple):  # the branch not taken would not compile for the other kind
        return p[0] * x + p[1]
    return p * x


def _float_or_array(x):
    if isinstance(x, np.ndarray):
        y = np.sum(x * 2.0)
    else:
        y = x + 1.0
    if isinstance(y, float) and not isinstance(y, (list, dict)):
        return y * 3.0
    return y


@pytest.mark.parametrize("fn, args", [
    (_dispatch, (np.arange(3.0), np.ones(3))), (_dispatch, (1.5, 2.0)),
    (_dispatch, ((1.0, 2.0), 3.0)), (_affine, ((2.0, 1.0), np.arange(3.0))),
    (_affine, (2.0, np.arange(3.0))), (_float_or_array, (np.arange(3.0),)),
    (_float_or_array, (2.5,)),
])
def test_isinstance_matches_python(fn, args):
    expected, got = fn(*args), s2s.jit(fn)(*args)
    assert type(got) is type(expected)
    np.testing.assert_array_equal(got, expected)


def test_isinstance_gradient_against_finite_differences():
    x, h = np.array([0.3, -1.2, 2.0]), 1e-6
    g = s2s.jit(s2s.grad(lambda x: np.sum(_affine((1.5, 0.5), x) ** 2)))(x)
    f = lambda x: np.sum(_affine((1.5, 0.5), x) ** 2)  # noqa: E731
    fd = [(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_isinstance_not_known_when_compiling_is_refused_naming_the_line():
    def floating(v):
        if isinstance(v, np.floating):  # an f8 may be a float or an np.float64
            return v
        return v + 1.0

    with pytest.raises(s2s.UnsupportedSyntaxError) as e:
        s2s.jit(floating)(np.arange(2.0)[0])
    text = str(e.value)
    assert "isinstance of a np.float64 is not known when compiling" in text
    assert "if isinstance(v, np.floating):" in text


def test_shape_size_ndim_of_a_number_match_numpy():
    def of_number(v):
        return np.size(v) + 10 * np.ndim(v) + 100 * len(np.shape(v))

    for v in (2.5, np.float32(1.5), 3):
        assert s2s.jit(of_number)(v) == of_number(v)


# -- *args and **kwargs: one compiled function per call shape (core/varargs.py adapters) --
def sum_of_squares(*xs):
    return sum(np.sum(x ** 2) for x in xs)


def scaled(a, *rest, scale=2.0, **extra):
    return a * scale + sum(rest) + extra.get("shift", 0.0)


def test_jit_of_varargs_functions_matches_python():
    a = np.arange(3.0)
    compiled = s2s.jit(sum_of_squares)
    for args in ((a,), (a, 2 * a), (a, a, a)):
        assert compiled(*args) == pytest.approx(sum_of_squares(*args), rel=1e-14)
    g = s2s.jit(scaled)
    for args, kw in (((1.0, 2.0, 3.0), {}), ((1.0,), {"scale": 3.0}),
                     ((1.0, 2.0), {"scale": 3.0, "shift": 1.5})):
        assert g(*args, **kw) == pytest.approx(scaled(*args, **kw), rel=1e-14)
    grad = s2s.jit(s2s.grad(sum_of_squares, argnums=1))(a, 3 * a)
    np.testing.assert_allclose(grad, fd_grad(sum_of_squares, (a, 3 * a), 1), rtol=1e-6)
    inside = lambda x: compiled(x, np.sin(x))  # noqa: E731  (jit of *args inside grad)
    np.testing.assert_allclose(s2s.grad(inside)(a), fd_grad(inside, (a,)), rtol=1e-6)
    rows = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(s2s.vmap(compiled)(rows, rows),
                               [sum_of_squares(r, r) for r in rows], rtol=1e-14)


# -- an array variable assigned arrays of two dtypes holds the promoted one ---------------
def accumulate(x, n):
    total = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(n):
        total = total + x * i  # int array, then float arrays
    return total


def test_an_accumulator_of_int_then_float_arrays_compiles():
    x = np.linspace(0.0, 1.0, 4)
    np.testing.assert_allclose(s2s.jit(accumulate)(x, 3), accumulate(x, 3), rtol=1e-14)
    rows = np.arange(8.0).reshape(2, 4)  # the batched form of `sum(generator)`
    np.testing.assert_allclose(s2s.jit(s2s.vmap(sum_of_squares))(rows, rows),
                               [sum_of_squares(r, r) for r in rows], rtol=1e-14)


def test_a_variable_of_two_dtypes_that_is_written_in_a_loop_stays_refused():
    def written(x, n):
        total = np.zeros(x.shape[0], dtype=np.int64)
        for i in range(n):
            total = total + x * i
        total[0] = 1.0  # written in place: a conversion copy would be seen
        return total

    with pytest.raises(s2s.S2SError, match="holds values of types"):
        s2s.jit(written)(np.ones(3), 2)


def test_a_name_given_values_of_two_types_in_straight_code_is_two_variables():
    def aliased(a, x):
        total = a  # the caller's int array: not converted, a variable of its own
        total = total + x
        return total

    def retyped(x):
        y = 2  # an int, then an array, then a tuple
        y = x * y
        y = (y, np.sum(y))
        return y

    a = np.arange(3)
    np.testing.assert_array_equal(s2s.jit(aliased)(a, np.ones(3)), aliased(a, np.ones(3)))
    assert a.dtype == np.int64 and list(a) == [0, 1, 2]
    got, want = s2s.jit(retyped)(np.ones(3)), retyped(np.ones(3))
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def test_sum_of_a_tuple_of_arrays_or_of_no_items():
    def of_arrays(a, b):
        return np.sum(sum((a * b, np.sin(a), 1.0)) ** 2)

    def of_nothing(a):
        return sum(()) + sum((), 2.5) * a

    a, b = np.linspace(0.1, 0.9, 3), np.linspace(1.0, 2.0, 3)
    assert s2s.jit(of_arrays)(a, b) == pytest.approx(of_arrays(a, b), rel=1e-14)
    assert s2s.jit(of_nothing)(1.5) == of_nothing(1.5)
    for k in (0, 1):
        np.testing.assert_allclose(s2s.jit(s2s.grad(of_arrays, argnums=k))(a, b),
                                   fd_grad(of_arrays, (a, b), k), rtol=1e-6)


def _dispatch_or(a, b):
    if a.ndim == 1 or b.ndim == 1:  # known when compiling: one branch is compiled
        return np.dot(a, b)
    return (a @ b)[0]


def _dispatch_and(a, b):
    if a.ndim == 2 and b.ndim == 2:
        return (a @ b)[0]
    return np.dot(a, b)


def _optional(x, y=None):
    empty = y is None or y.shape[0] == 0  # y.shape is never compiled for a None y
    return np.sum(x) if empty else np.sum(x * y)


def _operands(x):
    b = x[1] or 2.0  # `or` and `and` give an operand, as Python's
    c = x[0] > 0 and x[1]
    return b + c * x[2] + (0.0 and x[0])


@pytest.mark.parametrize("fn", [_dispatch_or, _dispatch_and])
def test_and_or_of_compile_time_tests_compile_only_the_branch_taken(fn):
    v, m = np.linspace(0.5, 1.5, 3), np.arange(9.0).reshape(3, 3)
    for args in ((v, v), (m, m), (m, v), (v, m)):
        got, want = s2s.jit(fn)(*args), fn(*args)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_is_none_of_a_default_none_is_known_when_compiling():
    x = np.linspace(0.1, 0.9, 4)
    assert s2s.jit(_optional)(x) == pytest.approx(_optional(x), rel=1e-14)
    assert s2s.jit(_optional)(x, 2 * x) == pytest.approx(_optional(x, 2 * x), rel=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.grad(_optional))(x, 2 * x),
                               fd_grad(_optional, (x, 2 * x)), rtol=1e-6)


@pytest.mark.parametrize("x", [np.array([0.5, 0.7, 2.0]), np.array([-0.5, 1.5, 2.0])])
def test_and_or_values_and_their_gradients(x):
    assert s2s.jit(_operands)(x) == _operands(x)
    np.testing.assert_allclose(s2s.jit(s2s.grad(_operands))(x), fd_grad(_operands, (x,)),
                               rtol=1e-6, atol=1e-8)
    falsy = np.array([0.5, 0.0, 2.0])  # x[1] or 2.0 is 2.0 (a kink: values only)
    assert s2s.jit(_operands)(falsy) == _operands(falsy) == 2.0


def test_an_in_place_operator_whose_operand_overlaps_its_target_reads_it_first():
    def reversed_sum(x):
        z = x.copy()
        z += z[::-1]  # numpy reads the operand whole before it writes
        return z

    def symmetrised(m):
        a = m.copy()
        a += a.T
        a *= a[:1]  # a row broadcast over the rows it overlaps
        return a

    def itself(x):
        z = x.copy()
        z *= z  # the operand is the target's own view: no copy needed
        z -= z[1:2]
        return z

    x, m = np.arange(1.0, 6.0), np.arange(9.0).reshape(3, 3)
    for fn, arg in ((reversed_sum, x), (symmetrised, m), (itself, x)):
        np.testing.assert_array_equal(s2s.jit(fn)(arg), fn(arg))
