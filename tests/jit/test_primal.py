"""s2s.jit on the primal: results equal Python's (values and types), safety checks,
errors for code outside the compiled subset."""
from __future__ import annotations

import numpy as np
import pytest

import s2s

from . import kernels as K

rng = np.random.default_rng(7)


def same(got, want, rtol=1e-12):
    """Equal values, equal Python/numpy types and tree structure."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w, rtol)
        return
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-14)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-14)


JITTED = {}


def jit(fn, **kw):
    key = (fn, tuple(sorted(kw.items())))
    if key not in JITTED:
        JITTED[key] = s2s.jit(fn, **kw)
    return JITTED[key]


@pytest.mark.parametrize("fn, args", [
    (K.add, (1.5, 2.25)),
    (K.add, (3, 4)),
    (K.rk4, (1.0, 0.01, 200)),
    (K.heat, (np.linspace(0.0, 1.0, 17) ** 2, 30)),
    (K.logsumexp, (rng.normal(size=9),)),
    (K.steps_and_jumps, (20, 500)),
    (K.steps_and_jumps, (5, 10 ** 6)),
    (K.early_return, (0.7,)),
    (K.early_return, (0.01,)),
    (K.calls_helper, (0.3, -1.2)),
    (K.promote, (7, 2.5, True, np.float32(1.5), 1 + 2j)),
    (K.index_reads, (rng.normal(size=(4, 5)), 2, 3)),
    (K.index_reads, (rng.normal(size=(6, 9))[::2, 1::2], -2, 1)),
    (K.creation, (3, 4)),
    (K.reductions, (rng.normal(size=5), rng.normal(size=(5, 5)))),
    (K.elementwise, (rng.normal(size=(3, 4)), rng.normal(size=(3, 4)))),
    (K.elementwise, (rng.normal(size=6)[::2], 0.5)),
    (K.broadcast, (rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(3, 1)))),
    (K.tuples, ((1.5, 2.0), 0.25)),
    (K.try_seed, (4.0,)),
    (K.try_seed, (2.0,)),
    (K.loop_over_rows, (rng.normal(size=(4, 3)),)),
    (K.mixed_var, (3,)),
    (K.fdiv, (np.float64(1.0), np.float64(0.0))),
])
def test_matches_python(fn, args):
    with np.errstate(divide="ignore"):
        same(jit(fn)(*args), fn(*args))


def test_in_place_writes_visible_to_caller():
    a, b = rng.normal(size=(4, 3)), None
    b = a.copy()
    got = jit(K.writes)(a, 0.5)
    want = K.writes(b, 0.5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got, want)


def test_write_through_strided_view():
    base = np.zeros((8, 6))
    view = base[::2, 1::2]
    jit(K.writes)(view, 2.0)
    expect = np.zeros((8, 6))
    K.writes(expect[::2, 1::2], 2.0)
    np.testing.assert_array_equal(base, expect)


def test_returned_arrays_are_not_copies_of_each_other_and_own_memory():
    x = rng.normal(size=5)
    y1, y2 = jit(K.returns_pair)(x)
    assert y1 is not y2 or True
    y1[0] = 42.0
    assert y2[0] == 42.0  # the same block, returned twice, stays one array's memory
    r = jit(K.returns_input)(x)
    np.testing.assert_array_equal(r, x)
    r[0] = -1.0  # a returned input is a fresh array (compiled code returns owned memory)
    assert x[0] != -1.0


def test_bounds_checks():
    x = np.arange(4.0)
    with pytest.raises(IndexError, match=r"index 7 is out of bounds for axis 0 with size 4"):
        jit(K.read_at)(x, 7)
    with pytest.raises(IndexError, match=r"index -5 is out of bounds for axis 0 with size 4"):
        jit(K.read_at)(x, -5)
    with pytest.raises(IndexError, match="kernels.py"):
        jit(K.write_at)(x, 4)
    assert jit(K.read_at)(x, -1) == 3.0
    # without bounds checks negative indices still wrap around
    assert jit(K.read_at, boundscheck=False)(x, -2) == 2.0


def test_integer_division_by_zero():
    with pytest.raises(ZeroDivisionError):
        jit(K.idiv)(3, 0)
    assert jit(K.idiv)(-7, 2) == K.idiv(-7, 2)
    assert jit(K.idiv)(7, -2) == K.idiv(7, -2)
    # float division follows numpy
    q, r = jit(K.idiv)(np.float64(-7.5), np.float64(2.0))
    assert (q, r) == K.idiv(np.float64(-7.5), np.float64(2.0))
    with np.errstate(divide="ignore"):
        assert jit(K.fdiv)(np.float64(-1.0), np.float64(0.0)) == -np.inf


def test_user_raise_and_try():
    with pytest.raises(ValueError, match="x is too big"):
        jit(K.raises)(2.0)
    assert jit(K.raises)(0.5) == 0.5
    assert jit(K.try_seed)(4.0) == pytest.approx(np.sin(4.0) + np.pi)


def test_wrong_argument_types():
    jit(K.fdiv)(1.0, 2.0)
    with pytest.raises(TypeError, match=r"argument .a. is a set.*compiled for: .*\(float, float\)"):
        jit(K.fdiv)({1.0}, 2.0)  # (a list of numbers is an argument jit takes: lists.py)
    # a str is a compile-time constant (as in Numba): the operation on it is what fails
    with pytest.raises(s2s.S2SError, match=r"kernels.py:\d+:\d+: jit does not compile "
                                           r"operator.truediv\('a', float\)"):
        jit(K.fdiv)("a", 2.0)


def test_unsupported_constructs_name_the_line():
    with pytest.raises(s2s.S2SError, match=r"kernels.py:\d+:\d+: jit does not compile"):
        jit(K.uses_list)(1.0)


def test_one_specialisation_per_signature():
    j = s2s.jit(K.add)
    j(1.0, 2.0), j(1.0, 3.0), j(1, 2), j(np.float32(1), np.float32(2))
    assert sorted(j.signatures()) == sorted(["float, float", "int, int",
                                             "np.float32, np.float32"])
    assert type(j(np.float32(1), np.float32(2))) is np.float32


def test_decorator_forms():
    deco = s2s.jit(boundscheck=False)(K.read_at)
    assert deco(np.arange(3.0), 1) == 1.0
    assert s2s.jit(K.add)(a=1.0, b=2.0) == 3.0


def test_fast_path_of_numbers():
    """Signatures of Python numbers take the direct builtin entry (fastcall.py)."""
    j = s2s.jit(K.int_div)
    assert j(7, 2) == 3 and type(j(7, 2)) is int
    assert type(j.specs[(int, int)].fast).__name__ == "builtin_function_or_method"
    with pytest.raises(ZeroDivisionError):
        j(1, 0)
    with pytest.raises(OverflowError):
        j(2 ** 70, 3)
    assert j(-7, 2) == -4
    f = s2s.jit(K.add)
    assert f(1.5, np.float64(2.0)) == 3.5 and type(f(1.5, 2.0)) is float
    assert f(True, False) == 1


def test_arrays_made_in_a_loop_are_freed():
    """A new array per iteration runs in constant memory (blocks are reference counted):
    40000 iterations of two 8 kB arrays would be ~640 MB if nothing were freed."""
    import resource
    f = jit(K.fresh_arrays_in_loop)
    f(3, 1000)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert f(40000, 1000) == K.fresh_arrays_in_loop(40000, 1000)
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 100_000, grown_kb


def test_fast_path_of_arrays_checks_dtype_and_ndim():
    """Arrays take the builtin entry too; another dtype or ndim falls back to dispatch."""
    j = s2s.jit(K.read_at)
    x = np.arange(5.0)
    assert j(x, 1) == 1.0 and type(j(x, 1)) is np.float64
    xi = np.arange(5)
    assert j(xi, 2) == 2 and type(j(xi, 2)) is np.int64
    assert j(x, 3) == 3.0 and j(xi, 4) == 4  # alternating signatures
    with pytest.raises(TypeError):
        j(x.astype(">f8"), 1)  # non-native byte order: not a compiled dtype
    assert j(np.arange(6.0).reshape(2, 3)[1], 2) == 5.0
    with pytest.raises(IndexError):
        j(x, 9)


def test_array_promotion_follows_numpy():
    """NEP 50: a Python float keeps a float32 array float32; int arrays divide to float64."""
    x32 = np.linspace(-1, 1, 5).astype(np.float32)
    xi = np.arange(-2, 3)
    same(jit(K.array_promotion)(x32, xi, 1.5), K.array_promotion(x32, xi, 1.5), rtol=1e-6)


def test_axis_reductions():
    m = rng.normal(size=(3, 4))
    same(jit(K.axis_reductions)(m), K.axis_reductions(m))
    same(jit(K.axis_reductions)(m[:, ::2].T), K.axis_reductions(m[:, ::2].T))


def test_array_builders_and_reshapes():
    same(jit(K.builders)(5, 4), K.builders(5, 4))
    with pytest.raises(ValueError):
        jit(K.builders)(5, -1)


def test_no_return_value_and_writes_to_the_argument():
    out = np.zeros(4)
    assert jit(K.fill_in_place)(out, 2.0) is None
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0, 6.0])


def test_globals_and_closures_read_at_each_call(monkeypatch):
    j = s2s.jit(K.uses_globals)
    assert j(1.0) == K.uses_globals(1.0)
    monkeypatch.setattr(K, "SCALE", 3.0)
    assert j(1.0) == K.uses_globals(1.0)
    monkeypatch.setattr(K, "TABLE", np.array([0.0, 20.0]))  # another array: recompiled if needed
    assert j(1.0) == K.uses_globals(1.0)
    assert s2s.jit(K.make_closure(5.0))(2.0) == 11.0


def test_refusals_name_the_construct():
    with pytest.raises(s2s.S2SError, match="recursive call of fact"):
        jit(K.fact)(5)
    x = np.arange(3.0) - 1.0  # a mask index compiles now (fancy.py)
    np.testing.assert_array_equal(jit(K.mask_index)(x), K.mask_index(x))
    s, total = jit(K.empty_loop)(np.zeros(0))
    assert s == 0.0 and total == 0.0


def _misaligned(values):
    raw = np.zeros(8 * len(values) + 1, dtype=np.uint8)
    x = np.frombuffer(raw.data, dtype=np.float64, count=len(values), offset=1)
    x[:] = values
    assert not x.flags.aligned
    return x


def test_misaligned_arrays_run_on_aligned_copies():
    # arrays unpickled from a buffer at any offset (as Dask hands them to workers) are
    # copied to aligned memory; what the function writes reaches the caller's array
    x = _misaligned(np.arange(5.0) - 2.0)
    assert jit(K.read_at)(x, 1) == K.read_at(x.copy(), 1)
    np.testing.assert_array_equal(jit(K.returns_pair)(x)[0], K.returns_pair(x.copy())[0])
    want = x.copy()
    K.write_at(want, 2)
    jit(K.write_at)(x, 2)
    np.testing.assert_array_equal(x, want)
    assert not np.array_equal(x, np.arange(5.0) - 2.0)  # the write happened
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        jit(K.write_at)(x, 1)


def test_read_only_arrays_are_not_written():
    x = np.zeros((3, 3))
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        jit(K.writes)(x, 1.0)
    with pytest.raises(ValueError, match="read-only"):
        jit(K.write_at)(x[0], 1)
    assert not x.any()
    assert jit(K.read_at)(x[0], 1) == 0.0  # reading a read-only array is fine
    np.testing.assert_array_equal(jit(K.heat)(x[0], 2), x[0])  # heat copies first


def test_transforms_of_a_jitted_function_transform_its_python_function():
    """grad/jvp/vjp of ``jit(f)`` are those of ``f`` (JAX composes them the same way)."""
    jf = s2s.jit(_energy)
    args = (2.0, 1.0, 0.0, 0.01, 50)
    want = s2s.grad(_energy, argnums=(0, 1))(*args)
    assert s2s.grad(jf, argnums=(0, 1))(*args) == want
    eps = 1e-6
    fd = (_energy(2.0 + eps, *args[1:]) - _energy(2.0 - eps, *args[1:])) / (2 * eps)
    assert abs(want[0] - fd) < 1e-6 * max(1.0, abs(fd))
    assert s2s.jvp(jf, args, (1.0, 0.0, 0.0, 0.0, 0))[1] == pytest.approx(want[0], rel=1e-12)
    assert s2s.jit(s2s.grad(jf, argnums=(0, 1)))(*args) == pytest.approx(want, rel=1e-12)


def _energy(omega, x, v, dt, n):
    for _ in range(n):
        v = v - dt * omega * omega * x
        x = x + dt * v
    return 0.5 * v * v + 0.5 * omega * omega * x * x
