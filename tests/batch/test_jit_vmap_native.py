"""jit(vmap(f)) compiles batched products, batched in-place writes and batched tapes
(issue 8 item 3): each result against vmap's Python result and a Python loop over the
examples; per-example gradients and matrix-Jacobian products against central finite
differences."""
import numpy as np
import pytest

import s2s
import s2s_runtime as rt
from tests.grad import oracles

rng = np.random.default_rng(11)
X = rng.normal(size=(5, 3))
A3 = rng.normal(size=(5, 3, 4))
M34 = rng.normal(size=(3, 4))
M43 = rng.normal(size=(4, 3))
V4 = rng.normal(size=4)


def _loop(f, args, axes):
    axes = axes if isinstance(axes, tuple) else (axes,) * len(args)
    n = next(np.shape(a)[k] for a, k in zip(args, axes) if k is not None)
    outs = [f(*[a if k is None else np.take(a, b, axis=k) for a, k in zip(args, axes)])
            for b in range(n)]
    return np.stack([np.asarray(o) for o in outs])


def _check(f, axes, *args, rtol=1e-12):
    jitted = s2s.jit(s2s.vmap(f, axes))
    got = jitted(*args)
    assert jitted.signatures(), "compiled, not run in Python"
    want = s2s.vmap(f, axes)(*args)
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-13)
    np.testing.assert_allclose(got, _loop(f, args, axes), rtol=rtol, atol=1e-13)
    return got


def dot(a, b):
    return np.dot(a, b)


def matmul(a, b):
    return a @ b


def mat_t(a, b):
    return np.tanh(a @ b.T)


def ein_rows(a, b):
    return np.einsum('ij,kj->ik', a, b)


def ein_all(a, b):
    return np.einsum('ij,ij', a, b)


def ein_diag(a, b):
    return np.einsum('ii,i->i', a, b)


def inner(a, b):
    return np.inner(a, b)


def outer(a, b):
    return np.outer(a, b)


def tensordot2(a, b):
    return np.tensordot(a, b, axes=2)


def tensordot_lists(a, b):
    return np.tanh(np.tensordot(a, b, axes=([1, 2], [0, 1])))


def vdot(a, b):
    return np.vdot(a, b)


PRODUCTS = [
    ("dot vv", dot, (0, None), (X, X[0])),
    ("dot vv both", dot, (0, 0), (X, X[::-1])),
    ("dot mv", dot, (0, None), (A3, V4)),
    ("dot vm", dot, (None, 0), (X[0], A3)),
    ("matmul vm", matmul, (0, None), (X, M34)),
    ("matmul mv both", matmul, (0, 0), (A3, rng.normal(size=(5, 4)))),
    ("matmul mm", mat_t, (0, None), (A3, M34)),
    ("matmul stacked", matmul, (None, 0), (rng.normal(size=(2, 3, 4)),
                                           rng.normal(size=(5, 4, 2)))),
    ("matmul axis 1", mat_t, (1, None), (A3.transpose(1, 0, 2), M34)),
    ("einsum ij,kj", ein_rows, (0, None), (A3, M34)),
    ("einsum implicit", ein_all, (0, None), (A3, M34)),
    ("einsum diagonal", ein_diag, (0, 0), (rng.normal(size=(5, 3, 3)), X)),
    ("inner", inner, (0, None), (X, X[1])),
    ("outer", outer, (0, None), (X, V4)),
    ("outer both", outer, (0, 0), (X, A3[:, 0])),
    ("tensordot", tensordot2, (0, None), (A3, M34)),
    ("tensordot lists", tensordot_lists, (0, None), (rng.normal(size=(5, 2, 3, 4)), A3[0])),
    ("vdot complex", vdot, (0, None), (X + 1j * X[::-1], 1j * X[0])),
    ("dot int", dot, (0, None), ((10 * X).astype(np.int64), X[0])),
]


@pytest.mark.parametrize("name,f,axes,args", PRODUCTS, ids=[p[0] for p in PRODUCTS])
def test_batched_products_compile(name, f, axes, args):
    _check(f, axes, *args)


def test_float32_products_stay_float32():
    x = X.astype(np.float32)
    _check(dot, (0, None), x, x[0], rtol=1e-5)


def test_a_product_shape_mismatch_is_a_value_error():
    with pytest.raises(ValueError, match="size 4 against 3"):
        s2s.jit(s2s.vmap(matmul, (0, None)))(X, M43)


def writes(x, w):
    y = np.zeros((3, 2))
    for i in range(3):
        y[i] = x[i] * w
        y[i, 1] = -x[i]
    y[-1, :] = 7.0
    return y


def masked_writes(x):
    y = np.zeros(3)
    for i in range(3):
        if x[i] > 0:
            y[i] = x[i]
        else:
            y[i] = 2 * x[i]
    return y


def indexed_by_example(x, k):
    y = np.zeros(4)
    y[k] = x[k] + 1.0
    y[k - 1] = x[0]
    return y


def heat(u0, c):
    u = u0.copy()
    n = u.shape[0]
    for s in range(3):
        left = u[0]
        for i in range(1, n - 1):
            new = u[i] + c * (left - 2.0 * u[i] + u[i + 1])
            left = u[i]
            u[i] = new
    return np.sum(u * u)


def heat_values(u0, c):
    """``heat`` with its reads copied by hand (``u[i] + 0.0``)."""
    u = u0.copy()
    n = u.shape[0]
    for s in range(3):
        left = u[0] + 0.0
        for i in range(1, n - 1):
            new = u[i] + c * (left - 2.0 * u[i] + u[i + 1])
            left = u[i] + 0.0
            u[i] = new
    return np.sum(u * u)


def test_vmap_reads_numbers_as_values():
    u, want = rng.normal(size=(4, 6)), None
    want = _loop(heat, (u, 0.2), (0, None))
    np.testing.assert_allclose(s2s.vmap(heat, (0, None))(u, 0.2), want, rtol=1e-12)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(heat, (0, None)))(u, 0.2), want, rtol=1e-12)


def inplace_rows(x):
    y = np.ones((2, 3))
    y += x
    y[0] *= 2.0
    return y


def inplace_branch(x):
    y = x * 1.0
    k = 0
    if x[0] > 0:
        y += 1.0
        k += 2
    return y * k


def test_batched_in_place_writes_compile():
    _check(inplace_branch, 0, X)
    _check(writes, (0, None), X, np.ones(2))
    _check(writes, (None, 0), X[0], rng.normal(size=(5, 2)))
    _check(masked_writes, 0, X)
    _check(indexed_by_example, (0, 0), rng.normal(size=(5, 4)), np.array([0, 3, 2, 1, -1]))
    _check(heat_values, (0, None), rng.normal(size=(4, 6)), 0.2)
    _check(inplace_rows, 0, rng.normal(size=(4, 3)))


def list_reads(x, i):
    return x[[i, 0]] * 2.0 + x[[0, 2]] - x[1, [i, 0]][:, None]


def list_writes(x, i):
    y = x * 1.0
    y[[i, 0]] = 7.0
    y[[0, 2]] = x[1] * 3.0 + y[[0, 2]]
    y[1, [i, 0]] = -1.0
    y[:, [2, i]] = x[:, :2] + 1.0
    return y


def list_writes_into_a_new_array(x, i):
    y = np.zeros((3, 3))
    y[[i, 1]] = x[:2]
    return y


def list_reads_summed(x, i):
    return np.sum(x[[i, 0]] ** 2) + np.sum(x[[0, 2], 1] * x[1, [i, 2]])


def test_list_display_indices_are_one_advanced_index():
    """``x[[i, 0]]`` (one index per example or the same list for all) is numpy's advanced
    index along one axis, never the tuple ``x[i, 0]``, in batched reads, writes, writes into
    an array the same for every example, and their cotangents."""
    A33, idx = rng.normal(size=(4, 3, 3)), np.array([2, 1, 0, 2])
    for f in (list_reads, list_writes, list_writes_into_a_new_array, list_reads_summed):
        _check(f, (0, 0), A33, idx)
    got = s2s.jit(s2s.vmap(s2s.grad(list_reads_summed)))(A33, idx)
    for k in range(4):
        want = oracles.fd_grad(list_reads_summed, [A33[k], int(idx[k])], 0)
        np.testing.assert_allclose(got[k], want, rtol=1e-6, atol=1e-8)


def accumulates_through_views(x):
    y = x * 1.0
    y[0, 2, ...] += x[0, 2, ...] * 0.5
    y[:, None, None] += np.sin(x[:, None, None])
    y[..., -1] += y[..., 0]
    return np.sum(np.sin(y) ** 2)


def test_cotangents_of_in_place_adds_through_new_axes_and_ellipses():
    """``y[idx] += v`` with ``None`` or ``...`` in ``idx`` under ``jit(vmap(grad))``: the
    value's cotangent reads ``g[:, idx]`` (it crashed with a TypeError inside s2s)."""
    xs = rng.normal(size=(3, 4, 5, 3))
    got = s2s.jit(s2s.vmap(s2s.grad(accumulates_through_views)))(xs)
    want = s2s.vmap(s2s.grad(accumulates_through_views))(xs)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    g = s2s.grad(accumulates_through_views)(xs[1])
    for flat in (0, 31, 59):
        e = np.zeros_like(xs[1])
        e.flat[flat] = 1e-6
        fd = (accumulates_through_views(xs[1] + e) - accumulates_through_views(xs[1] - e)) / 2e-6
        assert got[1].flat[flat] == pytest.approx(fd, rel=1e-5, abs=1e-8)
    assert np.allclose(g, got[1])


def grown_list(x):
    vals = []
    for i in range(x.shape[0]):
        vals.append(x[i] * (i + 1.0))
    return sum(vals) + max(vals) * 0.5 + np.mean(np.array(vals) * x)


def test_tangents_of_lists_grown_per_example_compile():
    """``jit(vmap(jvp))`` of a list grown in a loop: one example's list (row ``k`` of
    every batched item, ``rt.batch_example`` of a list) for the calls run once per
    example, and the tangent of ``np.array`` of the list (``batch_array_jvp`` of a list of
    batched tangents). Both were refused ("jit does not compile batch_example(list[f8[:]],
    int)", "batch_array_jvp(list[f8[:]], ...)")."""
    xs, ts = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    jvp = lambda x, t: s2s.jvp(grown_list, (x,), (t,))[1]  # noqa: E731
    got = s2s.jit(s2s.vmap(jvp))(xs, ts)
    for k in range(4):
        fd = (grown_list(xs[k] + 1e-6 * ts[k]) - grown_list(xs[k] - 1e-6 * ts[k])) / 2e-6
        assert got[k] == pytest.approx(fd, rel=1e-6, abs=1e-8)


def sum_of_parts(x):
    return sum(np.sum(v ** 2) for v in (x, 2.0 * x, x[:2]))


def test_an_int_start_widened_through_the_tape():
    """``sum`` of a generator starts at the integer 0 and then holds floats: lifted over
    the batch, an ``i8[:]`` then ``f8[:]`` variable, which the jit widens even where its
    old values are pushed on a tape and popped back (the gradient)."""
    got = s2s.jit(s2s.vmap(s2s.grad(sum_of_parts)))(X)
    for k in range(X.shape[0]):
        want = oracles.fd_grad(sum_of_parts, [X[k]], 0)
        np.testing.assert_allclose(got[k], want, rtol=1e-6, atol=1e-8)


def shapes(x):
    return x * (len(x) + np.ndim(x) + np.size(x))


def test_per_example_shapes_compile():
    _check(shapes, 0, A3)


def broadcast_rows(x):
    return np.broadcast_to(x, (2,) + np.shape(x)) * np.arange(1.0, 3.0)[:, None, None]


def ellipsis_writes(x):
    out = np.zeros_like(x)
    out[...] = 3.0
    out[..., 1] = x[:, 0]
    out[0, ...] = out[0, ...] + x[1, ...]
    return out * x


def test_per_example_writes_through_an_ellipsis_compile():
    _check(ellipsis_writes, 0, A3)
    _check(lambda x: np.sum(np.full_like(x, 2.0) * x, axis=-1), 0, A3)


def test_per_example_tiles_compile():
    """``np.tile``'s reps padded by tuple concatenation (``rt.seq_concat`` of two tuples)."""
    _check(lambda x: np.tile(x, 2), 0, A3)
    _check(lambda x: np.tile(x, (2, 1, 3)), 0, A3)


def test_per_example_broadcast_to_compiles():
    """``rt.batch_broadcast_to`` read as code by the jit."""
    _check(broadcast_rows, 0, A3)


def test_a_batched_index_out_of_range_raises_index_error():
    with pytest.raises(IndexError, match="out of bounds"):
        s2s.jit(s2s.vmap(indexed_by_example, (0, 0)))(X, np.array([0, 1, 5, 1, 0]))


def test_writes_into_a_read_only_argument_are_refused():
    def write_arg(x):
        x[0] = 1.0
        return x
    x = X.copy()
    x.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        s2s.jit(s2s.vmap(write_arg))(x)


def loop_scalar(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i]
    return s


def tensordot_loss(a, b):
    return np.sum(tensordot_lists(a, b) ** 2)


def model(W, x):
    return np.sum(np.tanh(x @ W) ** 2)


def grow(x):
    k = 0
    while x < 5.0:
        x = x * 1.3 + 0.1
        k += 1
    return x * k


WTS = rng.normal(size=(2, 4, 2))


def stacked_model(W, x):
    return np.sum(np.tanh(W @ x) * WTS)


def _fd_per_example(f, args, axes, argnum):
    n = next(np.shape(a)[0] for a, k in zip(args, axes) if k is not None)
    return np.stack([oracles.fd_grad(f, tuple(a if k is None else a[b]
                                              for a, k in zip(args, axes)), argnum)
                     for b in range(n)])


@pytest.mark.parametrize("f,axes,args,argnum", [
    (loop_scalar, (0,), (X,), 0),
    (heat, (0, None), (rng.normal(size=(4, 6)), 0.2), 0),
    (grow, (0,), (np.array([1.2, 2.0, 0.7, 4.9]),), 0),
    (tensordot_loss, (0, None), (rng.normal(size=(5, 2, 3, 4)), A3[0]), 1),
    (model, (None, 0), (M43, A3), 0),
    (model, (None, 0), (M43, A3), 1),
    (model, (0, None), (rng.normal(size=(5, 4, 3)), A3[0]), 0),
    (stacked_model, (None, 0), (rng.normal(size=(1, 4, 3)), rng.normal(size=(5, 2, 3, 2))), 0),
    (stacked_model, (0, None), (rng.normal(size=(5, 1, 4, 3)), rng.normal(size=(2, 3, 2))), 0),
    (stacked_model, (0, 0), (rng.normal(size=(5, 1, 4, 3)), rng.normal(size=(5, 2, 3, 2))), 1),
], ids=["loop", "heat", "while", "tensordot", "model dW", "model dx", "model batched W", "stacked dW",
        "stacked batched dW", "stacked dx"])
def test_per_example_gradients_with_tapes_compile(f, axes, args, argnum):
    g = s2s.grad(f, argnums=argnum)
    jitted = s2s.jit(s2s.vmap(g, axes))
    got = jitted(*args)
    assert jitted.signatures()
    np.testing.assert_allclose(got, _fd_per_example(f, args, axes, argnum),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, s2s.vmap(g, axes)(*args), rtol=1e-12, atol=1e-13)


def extremes(x):
    return np.max(x) * np.mean(x * x) + np.min(x)


def test_per_example_max_mean_min_gradients_compile():
    x = rng.normal(size=(5, 3, 2))
    g = s2s.grad(extremes)
    got = s2s.jit(s2s.vmap(g))(x)
    np.testing.assert_allclose(got, _fd_per_example(extremes, (x,), (0,), 0),
                               rtol=1e-6, atol=1e-8)
    ties = np.round(x)  # tied extrema share the cotangent, as in Python mode
    np.testing.assert_allclose(s2s.jit(s2s.vmap(g))(ties), s2s.vmap(g)(ties), rtol=1e-12)


def until_large(x):
    s = 0.0
    i = 0
    while x[i] < 1.0 and i < 3:
        s = s + x[i]
        i = i + 1
    return s


def tuple_items(x, y):
    parts = (x, y * 2.0)
    s = 0.0
    for k in range(2):
        s = s + np.sum(parts[k] ** 2)
    return s


def array_of_items(x):
    y = np.array([x[0], x[1] * 2.0, x[2]])
    z = y.copy()
    z[0] = 1.0
    return y * z


def sizes_of(x, y):
    return rt.batch_size((x, None, y)) * 10 + rt.batch_shape((x, y))[0] + \
        rt.batch_shape((x, y))[1]


def test_batch_sizes_and_shapes_of_tuples_compile():
    x = rng.normal(size=(5, 3))
    assert s2s.jit(sizes_of)(x, x) == sizes_of(x, x) == 55


def test_batched_while_and_tuple_items_compile():
    _check(array_of_items, 0, X)
    x = rng.normal(size=(7, 5))
    x[0, :] = 0.0  # an example that runs to the bound
    _check(until_large, 0, x)
    _check(tuple_items, (0, 0), X, X[::-1])


def transposed(x):
    return np.sum(x.T * np.arange(3.0)) + np.transpose(x)[0, 1]


def test_per_example_transposes_and_their_cotangents_compile():
    x = rng.normal(size=(5, 3, 3))
    _check(transposed, 0, x)
    got = s2s.jit(s2s.vmap(s2s.grad(transposed)))(x)
    np.testing.assert_allclose(got, _fd_per_example(transposed, (x,), (0,), 0),
                               rtol=1e-6, atol=1e-8)


SCALE_G = np.ones((2, 4, 2))


def scaled_model(W, x):
    return np.sum(np.tanh(W @ x) * SCALE_G)


def test_globals_of_generated_code_are_read_at_every_call(monkeypatch):
    import sys
    jitted = s2s.jit(s2s.vmap(s2s.grad(scaled_model), (None, 0)))
    W, x = rng.normal(size=(1, 4, 3)), rng.normal(size=(5, 2, 3, 2))
    first = jitted(W, x)
    monkeypatch.setattr(sys.modules[__name__], "SCALE_G", 2.0 * SCALE_G)
    np.testing.assert_allclose(jitted(W, x), 2.0 * first, rtol=1e-12)


def predict(W, b, inputs):
    return 0.5 * (np.tanh((np.dot(inputs, W) + b) / 2) + 1)


def _fd_jacobian(f, x, eps=1e-6):
    return np.stack([(f(x + eps * e) - f(x - eps * e)) / (2 * eps)
                     for e in np.eye(x.size)], axis=-1)


def test_vmap_of_vjp_fun_compiles_to_matrix_jacobian_products():
    inputs, W = rng.normal(size=(4, 3)), rng.normal(size=3)
    f = lambda W: predict(W, 0.1, inputs)  # noqa: E731
    y, vjp_fun = s2s.vjp(f, W)
    U = rng.normal(size=(16,) + y.shape)
    jitted = s2s.jit(s2s.vmap(vjp_fun))
    (got,) = jitted(U)
    J = _fd_jacobian(f, W)
    np.testing.assert_allclose(got, U @ J, rtol=1e-6, atol=1e-8)
    (got,) = s2s.vmap(s2s.jit(vjp_fun))(U)
    np.testing.assert_allclose(got, U @ J, rtol=1e-6, atol=1e-8)
    S = rng.normal(size=(16,) + W.shape)
    jvp_of = lambda s: s2s.jvp(f, (W,), (s,))[1]  # noqa: E731
    np.testing.assert_allclose(s2s.jit(s2s.vmap(jvp_of))(S), S @ J.T, rtol=1e-6, atol=1e-8)


def test_vmap_of_vjp_fun_with_a_python_tape_compiles():
    x = rng.normal(size=4)
    _, vjp_fun = s2s.vjp(loop_scalar, x)
    u = rng.normal(size=6)
    (got,) = s2s.jit(s2s.vmap(vjp_fun))(u)
    np.testing.assert_allclose(got, u[:, None] * oracles.fd_grad(loop_scalar, (x,), 0),
                               rtol=1e-6, atol=1e-8)
    _, vjp_heat = s2s.vjp(lambda u0: heat(u0, 0.2), x)
    (got,) = s2s.jit(s2s.vmap(vjp_heat))(u)
    np.testing.assert_allclose(got, u[:, None] * oracles.fd_grad(heat, (x, 0.2), 0),
                               rtol=1e-6, atol=1e-8)


def three_operands(a, b, c):
    return np.einsum('i,i,i->', a, b, c)


def orthogonal_factor(a):
    return np.linalg.qr(a)[0]


def guarded_factor(a):
    try:
        return np.linalg.qr(a)[0]
    except np.linalg.LinAlgError:
        return a


def test_what_stays_outside_the_subset_is_a_clear_error():
    want = np.array([three_operands(x, x, x) for x in X])  # einsum compiles now
    np.testing.assert_allclose(s2s.jit(s2s.vmap(three_operands))(X, X, X), want, rtol=1e-13)
    stack = np.stack([np.eye(3) + 0.1, 2 * np.eye(3)])  # qr compiles now: numpy runs it
    np.testing.assert_array_equal(s2s.jit(s2s.vmap(orthogonal_factor))(stack),
                                  np.linalg.qr(stack)[0])
    with pytest.raises(s2s.S2SError, match="np.linalg.qr inside a try block") as e:
        s2s.jit(s2s.vmap(guarded_factor))(stack)
    assert "test_jit_vmap_native.py" in str(e.value)
    # an advanced index beside a new axis: refused by name (it crashed inside s2s)
    with pytest.raises(s2s.S2SError, match="jit does not compile batch_setitem"):
        s2s.jit(s2s.vmap(list_beside_a_new_axis))(A3, np.array([1, -2, 0, 2, 1]))


def list_beside_a_new_axis(x, i):
    y = x * 1.0
    y[[i, 2, 1], None] = 7.5
    return y


def test_the_batched_kernel_is_deterministic_and_verified():
    from s2s.cli.dump_llvm import llvm_text
    g = s2s.vmap(s2s.grad(model), (None, 0))
    first = llvm_text(g, [M43, A3], stage="unopt")
    assert first == llvm_text(g, [M43, A3], stage="unopt")
    from llvmlite import binding
    binding.parse_assembly(first).verify()
