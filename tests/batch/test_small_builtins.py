"""Small builtins and ``math`` functions under ``s2s.jit`` and ``s2s.vmap``: ``tuple``
and ``list`` of a list or tuple display, ``complex(re, im)`` of two real numbers (vmap:
``rt.batch_complex``, the parts set exactly as ``lax.complex``), ``math.remainder``
(IEEE, ties to even; Python's ``ValueError``), ``max``/``min`` of one iterable of numbers
(vmap: ``rt.batch_extreme_items``, Python's scan with its ties and NaNs), ``math.fsum`` (exactly rounded, Python's
result bit for bit with its ``OverflowError``/``ValueError``/inf/NaN) and the fields of
``np.linalg.slogdet``'s namedtuple in compiled code.

Each against Python/numpy: values bit for bit (the sign of a zero too), types, and
exceptions with their type and message; vmap against a Python loop over the examples;
``grad``, ``jit(grad)`` and ``vmap(grad)`` against central finite differences in
float64."""
import math
import warnings

import numpy as np
import pytest

import s2s
from s2s.errors import S2SError
from tests.compose.finite_differences import fd_gradient

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 3.0, 0.5, 1.5, 7.0, -7.5, 1e300, -1e-300, 5e-324,
           1.7976931348623157e308, math.inf, -math.inf, math.nan]


def _same_value(got, want):
    """Equal as Python sees numbers, NaN equal to NaN, the sign of a zero included, and
    of the same type."""
    if type(got) is not type(want):
        return False
    if isinstance(want, (tuple, list)):
        return len(got) == len(want) and all(map(_same_value, got, want))
    if isinstance(want, complex):
        return _same_value(got.real, want.real) and _same_value(got.imag, want.imag)
    if isinstance(want, np.ndarray):
        return got.dtype == want.dtype and got.shape == want.shape and all(
            _same_value(complex(a), complex(b)) for a, b in zip(got.ravel(), want.ravel()))
    if want != want:
        return got != got
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def test_the_comparison_can_fail():
    assert not _same_value(0.0, -0.0)
    assert not _same_value(1.0, np.float64(1.0))
    assert not _same_value(complex(math.inf, 1.0), complex(math.nan, 1.0))
    assert not _same_value((1.0, 2.0), [1.0, 2.0])
    assert _same_value(math.nan, math.nan)


def _outcome(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return f(*args), None
        except Exception as exc:  # noqa: BLE001  (the transformed function must raise it)
            return None, exc


def _agrees(got, want):
    """``(value, error)`` pairs: the same value, or the same exception type and message."""
    (gv, ge), (wv, we) = got, want
    if we is not None or ge is not None:
        return type(ge) is type(we) and str(ge) == str(we)
    return _same_value(gv, wv)


def _jit_agrees(f, *args):
    want = _outcome(f, *args)
    got = _outcome(s2s.jit(f), *args)
    assert _agrees(got, want), (args, got, want)


def _vmap_agrees(f, *columns):
    """vmap over axis 0 of every column, against the loop over the examples (values as
    float64/complex128 arrays; an error of the loop must be the vmap's)."""
    loop = []
    for row in zip(*columns):
        value, error = _outcome(f, *(float(v) for v in row))
        if error is not None:
            got = _outcome(s2s.vmap(f), *columns)
            assert _agrees(got, (None, error)), (row, got, error)
            return
        loop.append(value)
    got, error = _outcome(s2s.vmap(f), *columns)
    assert error is None, error
    want = np.array(loop)
    if want.dtype == object:
        raise AssertionError(f"the loop's results do not stack: {loop}")
    assert _same_value(np.asarray(got), want), (got, want)


def _fd(f, args, k, eps=1e-6):
    up, down = list(args), list(args)
    up[k] += eps
    down[k] -= eps
    return (f(*up) - f(*down)) / (2 * eps)


def _check_derivatives(f, args, argnums=(0, 1), rtol=1e-6):
    """grad, jit(grad) and the forward mode (jacfwd) against central differences;
    vmap(grad) over a batch of the point and a shifted one against them."""
    for k in argnums:
        want = _fd(f, args, k)
        g = s2s.grad(f, argnums=k)
        np.testing.assert_allclose(g(*args), want, rtol=rtol, atol=1e-8)
        np.testing.assert_allclose(s2s.jit(g)(*args), want, rtol=rtol, atol=1e-8)
        np.testing.assert_allclose(s2s.jacfwd(f, argnums=k)(*args), want, rtol=rtol, atol=1e-8)
        other = [a + 0.125 for a in args]
        batched = s2s.vmap(g)(*[np.array([a, b]) for a, b in zip(args, other)])
        np.testing.assert_allclose(batched, [_fd(f, args, k), _fd(f, other, k)], rtol=rtol,
                                   atol=1e-8)


# --- tuple and list of a display -------------------------------------------------------
def tuple_of_list(x, y):
    return tuple([x, y])


def list_of_tuple(x, y):
    return list((x, x * y))


def tuple_of_tuple(x, y):
    return tuple((x, y, 2))


def empty(x, y):
    return tuple(), list()


@pytest.mark.parametrize("f", [tuple_of_list, list_of_tuple, tuple_of_tuple, empty])
def test_tuple_and_list_of_a_display(f):
    _jit_agrees(f, 0.5, -2.0)
    _jit_agrees(f, 3, 1.5)  # an int item stays an int
    got = s2s.vmap(f)(np.array([0.5, 1.0]), np.array([-2.0, 4.0]))
    want = [f(0.5, -2.0), f(1.0, 4.0)]
    assert type(got) is type(want[0])
    for k, item in enumerate(got):
        if f is empty:
            assert item == want[0][k]
            continue
        np.testing.assert_array_equal(item, [w[k] for w in want])


def test_tuple_of_an_example_array_is_its_rows_in_vmap():
    def f(x):
        a, b = tuple(x)
        return a * b
    x = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(s2s.vmap(f)(x), [f(r) for r in x])


def test_tuple_of_an_array_is_refused_by_the_jit():
    with pytest.raises(S2SError, match="jit does not compile tuple"):
        s2s.jit(lambda x: tuple(x)[0])(np.ones(3))


def test_tuple_and_list_derivatives():
    _check_derivatives(lambda x, y: tuple([x, y * x])[1] * list((x, y))[0], [0.7, -1.3])
    _check_derivatives(lambda x, y: sum(list((x, y * x))) * x, [0.7, -1.3])


def test_tuple_of_an_example_array_derivatives_in_vmap():
    def f(x):
        a, b = tuple(x)
        return a * b + list(x)[1] ** 2
    x = np.array([[0.5, -1.5], [2.0, 3.0]])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(x), [s2s.grad(f)(r) for r in x])
    np.testing.assert_allclose(s2s.grad(f)(x[0]), [x[0, 1], x[0, 0] + 2 * x[0, 1]])


# --- complex(re, im) --------------------------------------------------------------------
def complex_parts(x, y):
    return complex(x, y)


def complex_product(x, y):
    return complex(x, y).real * complex(x, y).imag


@pytest.mark.parametrize("x", SPECIAL[::2])
@pytest.mark.parametrize("y", SPECIAL[1::2])
def test_complex_of_two_numbers(x, y):
    _jit_agrees(complex_parts, x, y)
    _jit_agrees(complex_product, x, y)


def test_complex_of_ints_and_bools_in_the_jit():
    _jit_agrees(complex_parts, 3, True)
    _jit_agrees(complex_parts, np.float32(1.5), 2)


def test_complex_of_a_complex_number_is_refused_by_the_jit():
    with pytest.raises(S2SError, match="jit does not compile complex"):
        s2s.jit(complex_parts)(1.0 + 2.0j, 3.0)


def test_complex_batched_sets_the_parts_exactly():
    x = np.array(SPECIAL)
    y = np.array(SPECIAL[::-1])
    _vmap_agrees(complex_parts, x, y)
    _vmap_agrees(complex_product, x, y)
    _vmap_agrees(lambda x, y: complex(x, 2.0), x, y)  # one operand the same in every example
    _vmap_agrees(lambda x, y: complex(-0.0, y), x, y)
    _vmap_agrees(lambda x, y: complex(x), x, y)  # one argument: still np.complex128


def test_complex_derivatives():
    _check_derivatives(complex_product, [0.7, -1.3])
    _check_derivatives(lambda x, y: abs(complex(x * y, y)), [0.7, -1.3])


# --- math.remainder ---------------------------------------------------------------------
def remainder(x, y):
    return math.remainder(x, y)


@pytest.mark.parametrize("x", SPECIAL + [6.0, -4.5, 3.7])
def test_math_remainder_in_the_jit(x):
    for y in SPECIAL + [4.0, -3.0, 1.5]:
        _jit_agrees(remainder, x, y)
    _jit_agrees(remainder, 7, 2)  # ints: Python converts them to floats
    _jit_agrees(remainder, 5, 2)


def test_math_remainder_errors():
    for x, y in [(1.0, 0.0), (math.inf, 1.0), (-math.inf, math.inf), (0.0, -0.0)]:
        with pytest.raises(ValueError, match="^math domain error"):  # (a note says where)
            s2s.jit(remainder)(x, y)
        with pytest.raises(ValueError, match="^math domain error"):
            s2s.vmap(remainder)(np.array([2.0, x]), np.array([1.0, y]))


def test_math_remainder_batched():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-6, 6, 200),
                        np.arange(-12, 12) * 0.5, [0.0, -0.0, math.nan, 3.0, 1e308]])
    y = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-6, 6, 200),
                        np.ones(24), [2.0, 2.0, 1.0, math.inf, -math.nan]])
    _vmap_agrees(remainder, x, y)  # the ties of x / 1 and the specials included
    _vmap_agrees(lambda x, y: math.remainder(x, 0.75), x, y)


def test_math_remainder_derivatives():
    _check_derivatives(remainder, [7.3, 2.1])
    _check_derivatives(remainder, [-5.2, 1.7])


# --- math.fsum --------------------------------------------------------------------------
def fsum3(x, y):
    return math.fsum([x, y, x * y])


FSUM_ITEMS = [
    [1e-16, 1.0, 1e16], [1.0, 1e100, 1.0, -1e100], [0.1] * 10, [1e308, 1e308, -1e308],
    [math.inf, -math.inf], [math.inf, 1.0, math.inf], [math.nan, 1.0], [math.inf, math.nan],
    [-0.0, -0.0], [], [2.0 ** 53, 1.0, 1e-16], [-2.0 ** 53, -1.0, -1e-16],
    [1.7976931348623157e308, 9.979201547673598e291], [5e-324, 5e-324, -1e-320],
    [1e16, 1.0, 1e-16], [1.0, 1.0 + 2.0 ** -52, -1.0, 1e-16, 3e-17, -2.0 ** -60],
]


@pytest.mark.parametrize("items", FSUM_ITEMS, ids=[str(k) for k in range(len(FSUM_ITEMS))])
def test_math_fsum_in_the_jit(items):
    _jit_agrees(lambda xs: math.fsum(xs), np.array(items, dtype=np.float64))
    if len(items) == 3:
        _jit_agrees(lambda a, b, c: math.fsum([a, b, c]), *items)
        _jit_agrees(lambda a, b, c: math.fsum((c, b, a)), *items)


def test_math_fsum_of_random_sums_in_the_jit():
    rng = np.random.default_rng(1)
    f = s2s.jit(lambda xs: math.fsum(xs))
    for n in (1, 2, 5, 17, 60):
        for _ in range(40):
            xs = rng.normal(size=n) * 10.0 ** rng.integers(-30, 30, n)
            assert _same_value(f(xs), math.fsum(xs))


def test_math_fsum_errors():
    with pytest.raises(OverflowError, match="^intermediate overflow in fsum"):
        s2s.jit(fsum3)(1e308, 1.0)  # (x * y is finite: the sum overflows)
    with pytest.raises(ValueError, match=r"^-inf \+ inf in fsum"):
        s2s.jit(fsum3)(math.inf, -1.0)
    with pytest.raises(OverflowError, match="^intermediate overflow in fsum"):
        s2s.vmap(fsum3)(np.array([1.0, 1e308]), np.array([2.0, 1.0]))
    with pytest.raises(ValueError, match=r"^-inf \+ inf in fsum"):
        s2s.vmap(fsum3)(np.array([1.0, math.inf]), np.array([2.0, -1.0]))


def test_math_fsum_batched():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(size=50) * 1e8, [1e16, 1e-16, math.inf, math.nan]])
    y = np.concatenate([rng.normal(size=50) * 1e-8, [1.0, 1e16, 2.0, 1.0]])
    _vmap_agrees(fsum3, x, y)
    xs = rng.normal(size=(4, 7)) * 10.0 ** rng.integers(-20, 20, (4, 7))
    got = s2s.vmap(lambda xs: math.fsum(xs))(xs)
    assert _same_value(got, np.array([math.fsum(r) for r in xs]))


def test_math_fsum_derivatives():
    _check_derivatives(fsum3, [0.7, -1.3])


# --- slogdet's fields in compiled code -------------------------------------------------
A = np.array([[2.0, 1.0, 0.5], [0.3, -3.0, 1.0], [1.0, 0.2, 1.5]])


def logabsdet(x):
    return getattr(np.linalg.slogdet(x), "logabsdet")


def test_slogdet_fields_in_the_jit():
    """(The jit factors the matrix itself: log|det| to rounding, the sign exactly.)"""
    for a in (A, -A[:2, :2], np.stack([A, 2 * A]), np.zeros((2, 2))):
        got, want = s2s.jit(logabsdet)(a), logabsdet(a)
        assert type(got) is type(want)
        np.testing.assert_allclose(got, want, rtol=1e-14)
        _jit_agrees(lambda x: np.linalg.slogdet(x).sign, a)
        got, want = s2s.jit(np.linalg.slogdet)(a), np.linalg.slogdet(a)
        assert type(got) is type(want)  # numpy's namedtuple, as numpy gives it
        assert _same_value(got.sign, want.sign)
        np.testing.assert_allclose(got.logabsdet, want.logabsdet, rtol=1e-14)


def test_slogdet_field_derivatives():
    want = np.linalg.inv(A).T  # d log|det A| / dA
    g = s2s.grad(logabsdet)
    np.testing.assert_allclose(g(A), want, rtol=1e-10)
    np.testing.assert_allclose(s2s.jit(g)(A), want, rtol=1e-10)
    fd = np.zeros_like(A)
    for i in np.ndindex(A.shape):
        e = np.zeros_like(A)
        e[i] = 1e-6
        fd[i] = (logabsdet(A + e) - logabsdet(A - e)) / 2e-6
    np.testing.assert_allclose(want, fd, rtol=1e-6)


# --- compositions -----------------------------------------------------------------------
@pytest.mark.parametrize("f", [remainder, complex_product, tuple_of_list, list_of_tuple])
def test_jit_of_vmap_and_grad_of_vmap(f):
    x, y = np.array([7.3, -5.2, 2.0]), np.array([2.1, 1.7, 0.75])
    want = s2s.vmap(f)(x, y)
    got = s2s.jit(s2s.vmap(f))(x, y)
    for g, w in zip(got if isinstance(want, (tuple, list)) else [got],
                    want if isinstance(want, (tuple, list)) else [want]):
        assert _same_value(np.asarray(g), np.asarray(w))
    if f in (remainder, complex_product):
        grad = s2s.grad(lambda x, y: np.sum(s2s.vmap(f)(x, y)), argnums=(0, 1))(x, y)
        for k in (0, 1):
            fd = [_fd(f, [a, b], k) for a, b in zip(x, y)]
            np.testing.assert_allclose(grad[k], fd, rtol=1e-6)


def test_fsum_batched_once_per_example_compiles_and_is_differentiated():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    # the jit runs the per-example loop (rt.batch_loop) by a call into Python
    np.testing.assert_array_equal(s2s.jit(s2s.vmap(fsum3))(x, y),
                                  [fsum3(a, b) for a, b in zip(x, y)])
    # the derivative of that loop: the loop written out, fsum's rule per example
    got = s2s.grad(lambda x, y: np.sum(s2s.vmap(fsum3)(x, y)), argnums=(0, 1))(x, y)
    for k in (0, 1):
        np.testing.assert_allclose(got[k], [_fd(fsum3, [a, b], k) for a, b in zip(x, y)],
                                   rtol=1e-6)


# --- max / min of one iterable of numbers per example ---------------------------------------
def max_of_list(x):
    vals = []
    for i in range(x.shape[0]):
        vals.append(x[i] * (i + 1.0))
    return max(vals) + 0.5 * min(vals)


def extremes_of_rows(x):
    return max(x) - 2.0 * min(x)


def extremes_of_tuple(x):
    return max((x[0], 0.25, x[2] ** 2)) * min([x[1], 0.4, x[3]])


EXTREMES = [max_of_list, extremes_of_rows, extremes_of_tuple]
# ties (the first item is chosen), a NaN first (kept), a NaN later (passed over)
X_EXTREMES = np.array([[0.1, 0.9, 0.5, 0.3], [0.7, 0.2, 0.7, 0.9], [0.5, 0.5, 0.5, 0.5],
                       [math.nan, 0.1, 0.2, 0.3], [0.3, math.nan, 0.2, 0.1]])


@pytest.mark.parametrize("f", EXTREMES)
def test_max_min_of_numbers_batched_as_python_scans(f):
    want = np.array([f(x) for x in X_EXTREMES])
    assert _same_value(s2s.vmap(f)(X_EXTREMES), want)
    assert _same_value(s2s.jit(s2s.vmap(f))(X_EXTREMES), want)


@pytest.mark.parametrize("f", EXTREMES)
def test_max_min_of_numbers_derivatives_batched(f):
    X = np.array([[0.1, 0.9, 0.7, 0.3], [0.7, 0.2, 0.6, 0.9], [0.45, 0.55, 0.35, 0.25]])
    want = np.array([fd_gradient(f, x) for x in X])
    for g in (s2s.vmap(s2s.grad(f)), s2s.jit(s2s.vmap(s2s.grad(f))),
              s2s.vmap(s2s.jit(s2s.grad(f))),
              s2s.grad(lambda Z: np.sum(s2s.vmap(f)(Z)))):
        np.testing.assert_allclose(g(X), want, rtol=1e-6, atol=1e-9)
    T = np.array([[1.0, -2.0, 3.0, 0.5], [0.3, 0.1, -1.0, 2.0], [1.0, 1.0, 1.0, 1.0]])
    jvps = s2s.vmap(lambda x, t: s2s.jvp(f, (x,), (t,))[1])(X, T)
    np.testing.assert_allclose(jvps, np.sum(want * T, axis=1), rtol=1e-6)
    hess = s2s.vmap(s2s.hessian(f))(X)  # against differences of the gradient checked above
    grad = s2s.grad(f)
    want = np.array([[fd_gradient(lambda y: grad(y)[i], x) for i in range(4)] for x in X])
    np.testing.assert_allclose(hess, want, rtol=1e-6, atol=1e-8)


def test_max_with_key_per_example_is_refused_by_name():
    def keyed(x):
        return max([x[0], x[1]], key=abs)

    with pytest.raises(S2SError, match="key"):
        s2s.vmap(keyed)(X_EXTREMES)


def test_accumulator_declared_before_a_loop_stays_a_number_under_grad_of_vmap():
    """``t += v * v`` in a loop with an early return: the pipeline declares ``v = None``
    before the loop, which no longer hides that ``t`` holds one number per example (it
    was taken for an array written in place, and grad(vmap(f)) was refused)."""
    def early_return(x):
        s = np.sum(x)
        if s > 100.0:
            return s
        t = 0.0
        for v in x:
            if v < 0.0:
                return t
            t += min(v, 0.3) + v * v
        return t * s

    X = np.array([[0.1, 0.9, 0.5], [0.7, -0.2, 0.6], [0.45, 0.55, 0.35]])
    want = np.array([fd_gradient(early_return, x) for x in X])
    got = s2s.grad(lambda Z: np.sum(s2s.vmap(early_return)(Z)))(X)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


# --- math.prod, read as code in every transform ---------------------------------------------
def products(x):
    return math.prod([1.0 + v for v in x[:3]]) + math.prod(x[3:], start=2.0) \
        + math.prod((x[0], x[1] * 0.0, x[2]))  # (a zero item: the product rule stays exact)


def test_math_prod_values_types_and_derivatives():
    """``math.prod`` (it had no rule: "no derivative rule for math.prod"): Python's values
    and types (ints stay ints), and derivatives against differences in every mode."""
    x = np.array([0.3, 0.7, 0.9, 0.2, 0.6])
    assert s2s.jit(products)(x) == pytest.approx(products(x), rel=1e-15)
    assert _same_value(s2s.jit(lambda: math.prod([2, 3], start=4))(), 24)
    want = fd_gradient(products, x)
    X = np.stack([x, x[::-1]])
    want_batch = np.stack([fd_gradient(products, r) for r in X])
    np.testing.assert_allclose(s2s.grad(products)(x), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2s.jit(s2s.grad(products))(x), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2s.vmap(products)(X), [products(r) for r in X], rtol=1e-14)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(products))(X), want_batch, rtol=1e-6,
                               atol=1e-9)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(s2s.grad(products)))(X), want_batch,
                               rtol=1e-6, atol=1e-9)
    t = np.linspace(-1.0, 1.0, 5)
    assert s2s.jvp(products, (x,), (t,))[1] == pytest.approx(want @ t, rel=1e-6)
