"""The fast paths of the adjoint run-time helpers give what their general paths give.

Several ``s2s_runtime`` helpers test for the common case first (float64 arrays,
a matrix times a vector, a tuple of cotangents with no zero) and then skip
their general code.  Oracles: numpy's own operation for the same maths
(``np.multiply.outer``, ``a.T @ g``, ``np.full``, ``np.concatenate``,
``np.add.at``), and the same helper on the same numbers in a float64 dtype
that equals numpy's but is another object, which the fast paths do not take
(``x.dtype is float64`` fails), so it runs the general path.
"""
import pickle

import numpy as np
import pytest

import s2s_runtime as rt

#: a float64 dtype equal to numpy's but not the same object: the general paths
OTHER_F64 = pickle.loads(pickle.dumps(np.dtype(np.float64)))


def _general(x):
    """``x`` in the float64 dtype the fast paths do not recognise."""
    assert OTHER_F64 == np.float64 and OTHER_F64 is not np.dtype(np.float64)
    return np.asarray(x).astype(OTHER_F64)


def _same(a, b):
    """Equal values (NaN equal to NaN), shape and dtype, and a writable array."""
    assert type(a) is type(b)
    assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
    np.testing.assert_array_equal(a, b)
    if isinstance(a, np.ndarray):
        assert a.flags.writeable


VALUES = [np.array([1.5, -2.0, 0.0, 3.25]), np.array([np.inf, -1.0, np.nan, 2.0]),
          np.array([1e300, 1e-300, -0.0, 5.0])]


@pytest.mark.parametrize("g", VALUES)
@pytest.mark.parametrize("b", [np.array([0.5, -3.0, 7.0]), np.array([np.inf, 0.0, 1e-310])])
def test_matmul_cotangent_of_the_matrix_is_the_outer_product(g, b):
    a = np.ones((g.size, b.size))
    with np.errstate(invalid="ignore"):
        want = np.multiply.outer(g, b)  # each entry one rounded product
        got = rt.matmul_vjp_lhs(g, a, b)
        general = rt.matmul_vjp_lhs(_general(g), _general(a), _general(b))
    _same(got, want)
    _same(general, want)
    assert got.flags.c_contiguous


@pytest.mark.parametrize("seed", range(4))
def test_matmul_cotangent_of_the_vector(seed):
    rng = np.random.default_rng(seed)
    a, g = rng.normal(size=(6, 4)), rng.normal(size=6)
    got = rt.matmul_vjp_rhs(g, a, rng.normal(size=4))
    np.testing.assert_allclose(got, a.T @ g, rtol=1e-14)
    general = rt.matmul_vjp_rhs(_general(g), _general(a), _general(rng.normal(size=4)))
    np.testing.assert_allclose(general, got, rtol=1e-14)


@pytest.mark.parametrize("g", [0.25, np.float64(-3.0), np.float64(np.inf)])
@pytest.mark.parametrize("shape", [(5,), (2, 3)])
def test_sum_cotangent_is_g_everywhere(g, shape):
    a = np.arange(np.prod(shape), dtype=float).reshape(shape)
    _same(rt.sum_vjp(g, a), np.full(shape, g))
    _same(rt.sum_vjp(g, _general(a)), np.full(shape, g))


@pytest.mark.parametrize("values, winner", [([3.0, 9.0, -1.0], 1), ([[1.0, 2.0], [8.0, 0.5]], 3)])
def test_one_extremum_gets_the_whole_cotangent(values, winner):
    a = np.array(values)
    for ans in (a.max(), a.min()):
        got = rt.max_vjp(2.5, ans, a)
        want = np.zeros(a.size)
        want[np.flatnonzero(a == ans)] = 2.5
        _same(got, want.reshape(a.shape))
        _same(rt.max_vjp(2.5, ans, _general(a)), got)


def test_tied_extrema_share_the_cotangent():
    a = np.array([4.0, 1.0, 4.0])
    _same(rt.max_vjp(3.0, 4.0, a), np.array([1.5, 0.0, 1.5]))


def test_split_cotangent_concatenates_the_pieces():
    pieces = [np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0])]
    x = np.zeros(6)
    _same(rt.split_vjp(pieces, x, 3), np.concatenate(pieces))
    _same(rt.split_vjp(tuple(pieces), x, 3), np.concatenate(pieces))
    with_zero = rt.split_vjp([pieces[0], None, pieces[2]], x, 3)
    _same(with_zero, np.array([1.0, 2.0, 0.0, 0.0, 5.0, 6.0]))


def test_unpack_cotangent_keeps_the_container_and_fills_zeros():
    a, b = np.array([1.0, 2.0]), np.array([3.0])
    out = rt.unpack_vjp((a, b), (np.zeros(2), np.zeros(1)))
    assert type(out) is tuple and out[0] is a and out[1] is b
    out = rt.unpack_vjp((a, b), [np.zeros(2), np.zeros(1)])
    assert type(out) is list and out[0] is a and out[1] is b
    out = rt.unpack_vjp((None, b), (np.zeros(2), np.zeros(1)))
    _same(out[0], np.zeros(2))
    assert out[1] is b
    stacked = rt.unpack_vjp((a, None), np.zeros((2, 2)))
    _same(stacked, np.array([[1.0, 2.0], [0.0, 0.0]]))


INDICES = [3, np.int64(2), np.int32(-1), (np.int64(1), slice(None)), (slice(1, 3), 0),
           (Ellipsis, np.int64(0)), (None, 1), True, (np.array([0, 0]),), np.array([1, 1, 3])]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_scatter_cotangents_against_add_at(index):
    """getitem_vjp and add_at with basic and advanced indices of every integer type:
    ``np.add.at`` (repeated indices accumulate) is the oracle."""
    x = np.arange(20.0).reshape(4, 5)
    g = np.asarray(x[index]) * 0.5 + 1.0
    want = np.zeros_like(x)
    np.add.at(want, index, g)
    _same(rt.getitem_vjp(g, x, index), want)
    acc = np.full(x.shape, 2.0)
    _same(rt.add_at(acc, g, x, index), want + 2.0)
    assert (acc == 2.0).all()  # a new value: the accumulator is not changed
    _same(rt.add_at(_general(acc), g, _general(x), index), want + 2.0)


@pytest.mark.parametrize("x", [2.0, np.float64(2.0)])
def test_unbroadcast_onto_a_real_scalar_sums(x):
    g = np.array([0.5, 1.5, 2.25])
    _same(rt.unbroadcast(g, x), np.float64(4.25))
    _same(rt.unbroadcast(_general(g), x), np.float64(4.25))
    _same(rt.unbroadcast(np.array([1.0 + 2.0j, 3.0]), x), np.float64(4.0))


def test_unbroadcast_of_equal_arrays_is_the_identity_and_sums_broadcast_axes():
    g = np.arange(6.0).reshape(2, 3)
    assert rt.unbroadcast(g, np.zeros((2, 3))) is g
    _same(rt.unbroadcast(g, np.zeros(3)), g.sum(axis=0))
    _same(rt.unbroadcast(g, np.zeros((2, 1))), g.sum(axis=1, keepdims=True))
    _same(rt.unbroadcast(g, np.zeros((2, 3), dtype=np.float32)), g.astype(np.float32))
