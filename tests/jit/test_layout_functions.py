"""numpy's layout functions compiled by ``s2s.jit`` from their plain Python code:
``np.tile`` with a tuple of reps, ``np.pad`` (``rules/numpy_code/pads.py``),
``np.broadcast_arrays``, ``np.unstack``, ``np.array_split`` and ``np.squeeze`` without
``axis=`` (refused for an array with axes: the jit types arrays by rank, not lengths).
Each against numpy -- values (bit for bit), dtypes, shapes, the container, and the
exception type and message for bad input -- and ``jit(grad)`` against central finite
differences in float64."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s
from tests.grad.oracles import fd_grad

RNG = np.random.default_rng(11)
M = RNG.normal(size=(3, 4))
T3 = RNG.normal(size=(2, 3, 4))
V = RNG.normal(size=5)
I2 = RNG.integers(-5, 6, size=(2, 3))
B2 = I2 > 0
Z = np.array(2.5)
C2 = M + 1j * RNG.normal(size=(3, 4))
SPECIAL = np.array([[-0.0, np.inf, np.nan, 1.0]])


def _case(name, fn, *args):
    return pytest.param(fn, args, id=name)


def _same(got, want):
    """Bit-for-bit numpy: the container's type and length, each leaf's type, shape, dtype
    and values (NaN where NaN, the sign of zero)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert type(got) is type(want)
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want, strict=True)
    if np.asarray(want).dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


PRIMAL = [
    # np.tile: an int and tuples shorter than, as long as and longer than the rank
    _case("tile-int", lambda a: np.tile(a, 3), M),
    _case("tile-2x2", lambda a: np.tile(a, (2, 2)), M),
    _case("tile-short", lambda a: np.tile(a, (3,)), T3),
    _case("tile-long", lambda a: np.tile(a, (2, 1, 3)), M),
    _case("tile-1d-to-2d", lambda a: np.tile(a, (2, 3)), V),
    _case("tile-zero", lambda a: np.tile(a, (0, 2)), M),
    _case("tile-empty-axis", lambda a: np.tile(a, (2, 3)), np.zeros((2, 0))),
    _case("tile-0d", lambda a: np.tile(a, (2, 3)), Z),
    _case("tile-0d-empty-reps", lambda a: np.tile(a, ()), Z),
    _case("tile-empty-reps", lambda a: np.tile(a, ()), M),
    _case("tile-int-dtype", lambda a: np.tile(a, (1, 2)), I2),
    _case("tile-bool", lambda a: np.tile(a, (2, 1)), B2),
    _case("tile-complex", lambda a: np.tile(a, (1, 2)), C2),
    _case("tile-special", lambda a: np.tile(a, (2, 2)), SPECIAL),
    # np.pad: every form of pad_width and constant_values
    _case("pad-int", lambda a: np.pad(a, 2), V),
    _case("pad-pair", lambda a: np.pad(a, (1, 2)), M),
    _case("pad-per-axis", lambda a: np.pad(a, ((1, 2), (0, 3))), M),
    _case("pad-one-pair", lambda a: np.pad(a, ((1, 2),)), M),
    _case("pad-one", lambda a: np.pad(a, (3,)), M),
    _case("pad-list", lambda a: np.pad(a, [1, 2]), M),
    _case("pad-3d", lambda a: np.pad(a, ((0, 1), (2, 0), (1, 1))), T3),
    _case("pad-constant", lambda a: np.pad(a, 1, constant_values=7.5), M),
    _case("pad-constant-pair", lambda a: np.pad(a, 1, constant_values=(1, 2)), M),
    _case("pad-constant-per-axis",
          lambda a: np.pad(a, 1, "constant", constant_values=((1, 2), (3, 4))), M),
    _case("pad-int-truncates", lambda a: np.pad(a, 1, constant_values=2.7), I2),
    _case("pad-bool", lambda a: np.pad(a, 1), B2),
    _case("pad-0d", lambda a: np.pad(a, 2), Z),
    _case("pad-complex-wrap", lambda a: np.pad(a, 1, "wrap"), C2),
    _case("pad-special-reflect", lambda a: np.pad(a, 3, "reflect"), SPECIAL),
    _case("pad-empty-constant", lambda a: np.pad(a, 1), np.zeros((0, 3))),
    # np.broadcast_arrays
    _case("broadcast_arrays", lambda a, b: np.broadcast_arrays(a, b), M, V[:4]),
    _case("broadcast_arrays-dtypes", lambda a, b: np.broadcast_arrays(a, b, 2.0),
          I2[:, :1], V[:3]),
    _case("broadcast_arrays-one", lambda a: np.broadcast_arrays(a), M),
    _case("broadcast_arrays-four", lambda a, b: np.broadcast_arrays(a, b, a, b > 0),
          I2[:1, :1].reshape(1, 1), SPECIAL),
    _case("broadcast_arrays-complex", lambda a, b: np.broadcast_arrays(a[0, 0], b), M, C2),
    # np.unstack (a list in the jit: compared item by item) and np.array_split
    _case("unstack", lambda a: np.unstack(a), M),
    _case("unstack-axis", lambda a: np.unstack(a, axis=1), I2),
    _case("unstack-neg-axis", lambda a: np.unstack(a, axis=-1), T3),
    _case("unstack-empty", lambda a: np.unstack(a), np.zeros((0, 3))),
    _case("array_split-equal", lambda a: np.array_split(a, 2, axis=1), M),
    _case("array_split-neg-axis", lambda a: np.array_split(a, 3, axis=-2), RNG.normal(size=(6, 2))),
    _case("array_split-one", lambda a: np.array_split(a, 1), I2),
    _case("array_split-indices", lambda a: np.array_split(a, [2]), M[:, :1].ravel()[:2].repeat(2)),
    # np.squeeze without axis= of a 0-d array: itself
    _case("squeeze-0d", lambda a: np.squeeze(a), Z),
]

PAD_MODES = [pytest.param(mode, w, id=f"{mode}-{w}")
             for mode in ("edge", "reflect", "symmetric", "wrap")
             for w in (1, (2, 3), ((0, 7), (5, 1)), 9)]


@pytest.mark.parametrize("fn,args", PRIMAL)
def test_compiled_against_numpy(fn, args):
    want = fn(*args)
    got = s2s.jit(fn)(*args)
    if isinstance(want, tuple) and fn.__code__.co_names[-1] == "unstack":
        assert isinstance(got, list)  # (the jit's list: its length is known at run time)
    _same(got, want)


@pytest.mark.parametrize("mode,w", PAD_MODES)
def test_pad_modes_against_numpy(mode, w):
    """Widths up to more than twice the length: numpy's repeated reflections and wraps."""
    f = lambda a: np.pad(a, w, mode=mode)  # noqa: E731
    _same(s2s.jit(f)(M), f(M))
    w1 = w if np.ndim(w) < 2 else w[0]  # (a 1-D array: one pair)
    g = lambda a: np.pad(a, w1, mode)  # noqa: E731
    _same(s2s.jit(g)(V), g(V))
    h = lambda a: np.pad(a, 4, mode)  # noqa: E731
    _same(s2s.jit(h)(M[:1]), h(M[:1]))  # (reflect of one entry: numpy pads it as edge)


ERRORS = [
    _case("tile-negative", lambda a: np.tile(a, (2, -1)), M),
    _case("tile-int-negative", lambda a: np.tile(a, -1), M),
    _case("pad-negative", lambda a: np.pad(a, -1), M),
    _case("pad-float-width", lambda a: np.pad(a, 1.5), M),
    _case("pad-too-many-pairs", lambda a: np.pad(a, ((1, 2), (1, 2), (1, 2))), M),
    _case("pad-three-widths", lambda a: np.pad(a, (1, 2, 3)), M),
    _case("pad-unknown-mode", lambda a: np.pad(a, 1, "bogus"), M),
    _case("pad-empty-axis", lambda a: np.pad(a, 1, "edge"), np.zeros((0, 3))),
    _case("pad-empty-axis-wrap", lambda a: np.pad(a, ((0, 0), (1, 1)), "wrap"),
          np.zeros((3, 0))),
    _case("unstack-0d", lambda a: np.unstack(a), Z),
    _case("array_split-zero", lambda a: np.array_split(a, 0), V),
    _case("array_split-axis", lambda a: np.array_split(a, 2, axis=1), V),
]


@pytest.mark.parametrize("fn,args", ERRORS)
def test_bad_input_raises_numpys_error(fn, args):
    with pytest.raises(Exception) as want:
        fn(*args)
    with pytest.raises(want.type) as got:
        s2s.jit(fn)(*args)
    assert str(got.value).startswith(str(want.value).split(":")[0])


def test_axis_out_of_range_raises_axis_error():
    with pytest.raises(np.exceptions.AxisError):
        s2s.jit(lambda a: np.unstack(a, axis=2))(M)


def test_pad_keyword_the_mode_does_not_take_raises_value_error():
    f = lambda a: np.pad(a, 1, "edge", constant_values=3)  # noqa: E731
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        f(M)
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        s2s.jit(f)(M)


def test_broadcast_arrays_that_do_not_broadcast_raise_value_error():
    f = lambda a, b: np.broadcast_arrays(a, b)  # noqa: E731
    with pytest.raises(ValueError):
        f(M, V[:3])
    with pytest.raises(ValueError, match="broadcast"):
        s2s.jit(f)(M, V[:3])


@pytest.mark.parametrize("fn,args,words", [
    pytest.param(lambda a: np.squeeze(a), (M[:1],), "pass axis=", id="squeeze"),
    pytest.param(lambda a: a.squeeze(), (T3[:, :1],), "pass axis=", id="squeeze-method"),
    pytest.param(s2s.grad(lambda a: np.sum(np.squeeze(a))), (M[:1],), "pass axis=",
                 id="grad-squeeze"),
    pytest.param(lambda a: np.pad(a, 1, "linear_ramp"), (M,), "mode='linear_ramp'",
                 id="pad-linear_ramp"),
    pytest.param(lambda a: np.pad(a, 1, "maximum"), (M,), "mode='maximum'", id="pad-maximum"),
    pytest.param(lambda a: np.pad(a, 1, "reflect", reflect_type="odd"), (M,),
                 "reflect_type='odd'", id="pad-odd"),
])
def test_what_is_not_compiled_is_refused_when_compiling(fn, args, words):
    with pytest.raises(s2s.S2SError, match="jit does not compile") as info:
        s2s.jit(fn)(*args)
    assert words in str(info.value)


def test_array_split_into_unequal_parts_says_so():
    f = lambda a: np.array_split(a, 3)  # noqa: E731
    assert [len(p) for p in f(V)] == [2, 2, 1]
    with pytest.raises(NotImplementedError, match="s2s.jit: np.array_split into parts of "
                                                  "unequal lengths"):
        s2s.jit(f)(V)


def _fd_case(name, fn, x=M):
    return pytest.param(fn, x, id=name)


W34 = RNG.normal(size=(3, 4))
GRAD = [
    _fd_case("tile-tuple", lambda a: np.sum(np.sin(np.tile(a, (2, 3))) * np.tile(W34, (2, 3)))),
    _fd_case("tile-long", lambda a: np.sum(np.tile(a * a, (2, 1, 2))[1] * np.tile(W34, (1, 2)))),
    _fd_case("tile-short", lambda a: np.sum(np.tile(a, (3,)) ** 3), T3),
    _fd_case("squeeze-0d", lambda a: np.squeeze(a) ** 3, Z),
    _fd_case("pad-constant",
             lambda a: np.sum(np.pad(a, ((1, 2), (0, 3)), constant_values=3.0) ** 2)),
    _fd_case("broadcast_arrays", lambda a: np.sum(np.broadcast_arrays(a[:, :1], a[1], 2.0)[0] ** 3)
             + np.sum(np.sin(np.broadcast_arrays(a[:, :1], a[1], 2.0)[1]))),
    _fd_case("unstack", lambda a: np.sum(np.unstack(a)[1] ** 2)
             + np.sum(np.unstack(a, axis=1)[2] * np.unstack(a, axis=1)[0])),
    _fd_case("array_split", lambda a: np.sum(np.array_split(a, 2, axis=1)[1] ** 3)
             + np.sum(np.sin(np.array_split(a, 3)[0]))),
    _fd_case("append-flat", lambda a: np.sum(np.append(a, a[0, 0] * 2.0) ** 2)),
    _fd_case("append-axis0", lambda a: np.sum(np.sin(np.append(a, a[:1] * 3.0, axis=0)))),
    _fd_case("append-axis1", lambda a: np.sum(np.append(a[:, :2] ** 2, a, axis=1) * 1.5)),
    _fd_case("append-number-first", lambda a: np.sum(np.append(a[0, 1] ** 2, a * 2.0) ** 2)),
]
for _mode in ("constant", "edge", "reflect", "symmetric", "wrap"):
    for _w in (1, ((2, 5), (0, 3)), 9):
        _shape = np.pad(M, _w, mode=_mode).shape
        _weights = RNG.normal(size=_shape)
        GRAD.append(_fd_case(f"pad-{_mode}-{_w}", lambda a, w=_w, m=_mode, c=_weights:
                             np.sum(np.sin(np.pad(a * a, w, mode=m)) * c)))


@pytest.mark.parametrize("fn,x", GRAD)
def test_compiled_gradient_against_finite_differences(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = s2s.jit(s2s.grad(fn))(x)
    want = fd_grad(fn, (x,))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert np.shape(got) == np.shape(x)
