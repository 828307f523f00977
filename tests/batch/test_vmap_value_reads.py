"""vmap keeps numpy's value/view semantics of reads followed by in-place writes
(``s2s/batch/value_reads.py``): a read whose examples are numbers is a value that a
later write leaves alone, a row read ``M[i]`` stays a view that sees the write.

Oracle: a Python loop over the examples (numpy itself); each function runs under
Python ``vmap`` and ``jit(vmap)``.  Per-example gradients (``vmap(grad(f))``) are
checked against central finite differences.  Every function is one where a batched
read that aliased (or failed to alias) its array would give a different number."""
import numpy as np
import pytest

import s2s
import s2s_runtime as rt
from s2s.batch import value_reads  # noqa: F401  (registers batch_value's derivative rules)
from s2s.cli.dump_vmap import vmap_source
from s2s.errors import UnsupportedSyntaxError
from s2s_runtime.batching import BatchingRuntimeError
from tests.grad import oracles

rng = np.random.default_rng(7)
U = rng.normal(size=(5, 6))
M = rng.normal(size=(5, 3, 4))
IDX = np.array([0, 2, 1, 2, 0])


def _loop(f, args, axes):
    n = next(np.shape(a)[0] for a, k in zip(args, axes) if k is not None)
    outs = [f(*[np.array(a[b]) if k is not None else a for a, k in zip(args, axes)])
            for b in range(n)]
    return np.stack([np.asarray(o) for o in outs])


def _check(f, axes, *args, jit=True):
    want = _loop(f, args, axes)
    got = s2s.vmap(f, axes)(*[np.array(a) for a in args])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    if jit:
        jitted = s2s.jit(s2s.vmap(f, axes))
        got = jitted(*[np.array(a) for a in args])
        assert jitted.signatures(), "compiled, not run in Python"
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    return want


# -- reads of numbers, then writes to the array read -------------------------------
def heat(u0, c):
    u = u0.copy()
    n = u.shape[0]
    for s in range(2):
        left = u[0]
        for i in range(1, n - 1):
            new = u[i] + c * (left - 2.0 * u[i] + u[i + 1])
            left = u[i]
            u[i] = new
    return np.sum(u * u)


def swap_neighbours(u0):
    u = u0.copy()
    for i in range(u.shape[0] - 1):
        a = u[i]
        u[i] = u[i + 1]
        u[i + 1] = a
    return u


def read_via_alias(u0):
    u = u0.copy()
    w = u
    v = w[1]
    u[1] = 10.0
    return v * u


def write_via_alias(u0):
    u = u0.copy()
    v = u[2]
    w = u
    w[2] = -3.0
    return v + u


def inplace_operator(u0):
    u = u0.copy()
    v = u[1]
    u += 1.0
    u[3] *= 2.0
    return v * u[1] + u[3]


def masked_write(u0):
    u = u0.copy()
    v = u[0]
    if v > 0:
        u[0] = -2.0 * v
    else:
        u[1] = v * v
    return v + u[0] * u[1]


def written_inside_expression(u0):
    u = u0.copy()
    a = u[0] + _bump(u)
    return a * u[0]


def _bump(u):
    u[0] = 10.0
    return 1.0


def loop_items(u0):
    u = u0.copy()
    s = 0.0
    k = 0
    for x in u:
        u[k] = 0.0
        if k + 1 < u.shape[0]:
            u[k + 1] += x
        s = s + x * x
        k += 1
    return s + np.sum(u)


def unpacked(u0):
    u = u0[:2].copy()
    a, b = u
    u[0] = 5.0
    u[1] *= 3.0
    return a * b + u[0] + u[1]


def while_reads(u0):
    u = u0.copy()
    s = 0.0
    while u[0] < 3.0:  # a condition that differs per example: a masked loop
        a = u[0]
        u[0] = a + 1.0
        s = s + a
    return s + u[0]


def nested_branches(u0):
    u = u0.copy()
    v = u[1]
    if u[0] > 0:
        if u[2] < u[4]:
            u[1] = 9.0
        u[3] += v
    return v * u[1] + u[3]


def list_of_reads(u0):
    u = u0.copy()
    items = [u[0], u[1]]
    u[0] = 7.0
    return items[0] + items[1] + u[0]


def per_example_index(u0, i):
    u = u0.copy()
    v = u[i]
    u[i] = 0.0
    return v + np.sum(u)


@pytest.mark.parametrize("f", [swap_neighbours, read_via_alias, write_via_alias,
                               inplace_operator, masked_write, loop_items, while_reads,
                               nested_branches, list_of_reads])
def test_number_reads_are_values(f):
    _check(f, (0,), U)


def test_unpacked_numbers_are_values():
    _check(unpacked, (0,), U, jit=False)  # jit: unpacking an array is not compiled


def test_heat():
    _check(heat, (0, None), U, 0.2)


def test_write_inside_an_expression():
    _check(written_inside_expression, (0,), U)


def test_number_read_at_a_per_example_index():
    _check(per_example_index, (0, 0), U, IDX)


# -- rows: numpy's views stay views ---------------------------------------------------
def row_sees_write(m0):
    m = m0.copy()
    r = m[1]
    m[1, 0] = 7.0
    m[1] *= 2.0
    return r * 3.0


def write_through_row(m0):
    m = m0.copy()
    r = m[2]
    r[1] = -1.0
    r += 0.5
    return m


def number_of_a_row(m0):
    m = m0.copy()
    r = m[1]
    v = r[2]
    c = m[:, 1]
    w = m[0, 1]
    m[1, 2] = 100.0
    m[0, 1] = -5.0
    return v + r[2] + w + c[0] + np.sum(c)


def zero_d_view(u0):
    u = u0.copy()
    v = u[0, ...]  # numpy: a 0-d view of u, which sees the write
    w = u[1]
    u[0] = 5.0
    u[1] = 6.0
    return v * 2.0 + w


def row_in_loop(m0):
    m = m0.copy()
    for i in range(m.shape[0] - 1):
        r = m[i + 1]
        m[i + 1] = m[i] + r
        r[0] = r[0] * 0.5
    return m


@pytest.mark.parametrize("f", [row_sees_write, write_through_row, row_in_loop,
                               number_of_a_row])
def test_row_reads_stay_views(f):
    _check(f, (0,), M)


def row_at_per_example_index(m0, i):
    m = m0.copy()
    r = m[i]
    m[i, 0] = 7.0
    return r * 3.0


def row_copy_at_per_example_index(m0, i):
    m = m0.copy()
    r = m[i].copy()
    m[i, 0] = 7.0
    return r * 3.0 + np.sum(m[i])


def test_zero_d_views_stay_views():
    _check(zero_d_view, (0,), U, jit=False)  # jit: indices with ... are not compiled


def test_row_at_a_per_example_index_is_refused_clearly():
    """numpy's row is a view; a gather cannot be one: refused, naming the line."""
    with pytest.raises(BatchingRuntimeError, match=r"test_vmap_value_reads\.py:\d+:\d+: "
                       r"vmap: .*view.*\n    r = m\[i\]\n"):
        s2s.vmap(row_at_per_example_index, (0, 0))(M, IDX)
    with pytest.raises(UnsupportedSyntaxError, match=r"r = m\[i\]"):
        s2s.jit(s2s.vmap(row_at_per_example_index, (0, 0)))(M, IDX)
    _check(row_copy_at_per_example_index, (0, 0), M, IDX)


# -- no copies where no write can reach the read ---------------------------------------
def read_only(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i]
    return s


def test_reads_no_write_can_reach_are_not_copied():
    assert "batch_value" not in vmap_source(read_only, (np.zeros(4),), "0")
    assert "batch_value" not in vmap_source(row_copy_at_per_example_index,
                                            (np.zeros((3, 4)), 1), "0,0")
    src = vmap_source(heat, (np.zeros(6), 0.2), "0,None")
    assert src.count("rt.batch_value(") == 2  # the two reads into `left`, kept across writes
    assert src == vmap_source(heat, (np.zeros(6), 0.2), "0,None")  # deterministic
    _check(read_only, (0,), U)


# -- per-example gradients through such code -------------------------------------------
@pytest.mark.parametrize("f,args,axes", [
    (heat, (U, 0.2), (0, None)),
    (lambda u: np.sum(swap_neighbours(u) * np.arange(6.0)), (U,), (0,)),
    (inplace_operator, (U,), (0,)),
    (masked_write, (U,), (0,)),
])
def test_per_example_gradients(f, args, axes):
    got = s2s.vmap(s2s.grad(f), axes)(*args)
    for b in range(U.shape[0]):
        example = tuple(a[b] if k is not None else a for a, k in zip(args, axes))
        want = oracles.fd_grad(f, example)
        np.testing.assert_allclose(got[b], want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", [heat, masked_write])
def test_per_example_gradients_compiled(f):
    args, axes = ((U, 0.2), (0, None)) if f is heat else ((U,), (0,))
    jitted = s2s.jit(s2s.vmap(s2s.grad(f), axes))
    got = jitted(*args)
    assert jitted.signatures(), "compiled, not run in Python"
    for b in range(U.shape[0]):
        example = tuple(a[b] if k is not None else a for a, k in zip(args, axes))
        np.testing.assert_allclose(got[b], oracles.fd_grad(f, example), rtol=1e-6, atol=1e-7)


def _through_helpers(u):
    col = u[:, 1]
    return np.sum(np.sin(rt.batch_value(col, u)) * rt.batch_gathered_value(u[:, 2], "unused"))


def test_helpers_pass_derivatives_through():
    """``batch_value``/``batch_gathered_value`` are the identity on values: their
    derivative rules (for code that differentiates batched code) pass tangents and
    cotangents through."""
    want = oracles.fd_grad(_through_helpers, (U,))
    np.testing.assert_allclose(s2s.grad(_through_helpers)(U), want, rtol=1e-6, atol=1e-8)
    t = rng.normal(size=U.shape)
    _, tangent = s2s.jvp(_through_helpers, (U,), (t,))
    np.testing.assert_allclose(tangent, np.sum(want * t), rtol=1e-6)


def _doubles_through_a_view(x):
    y = x.copy()
    v = y[1:3]
    v *= 2.0
    return np.sum(y ** 2)


def test_gradient_of_batched_code_writing_through_a_view_is_refused_as_unbatched():
    # the batched read of a slice is a view (rt.batch_value's record says so): reverse
    # mode refuses the write through it, as it does for the unbatched function, where it
    # once differentiated the write as if it changed a copy (a wrong gradient)
    xs = rng.normal(size=(3, 4))
    np.testing.assert_allclose(s2s.vmap(_doubles_through_a_view)(xs),
                               [_doubles_through_a_view(x) for x in xs], rtol=1e-13)
    with pytest.raises(UnsupportedSyntaxError, match="may be shared"):
        s2s.grad(_doubles_through_a_view)(xs[0])
    with pytest.raises(UnsupportedSyntaxError, match="may be shared"):
        s2s.grad(lambda a: np.sum(s2s.vmap(_doubles_through_a_view)(a)))(xs)
