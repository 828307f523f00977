"""jit(vmap(f)) and vmap(jit(f)) (issue 8): one compiled batched program, checked
against vmap's Python result and against a Python loop over the examples."""
import numpy as np
import pytest

import s2s
import s2s_runtime as rt
from s2s.errors import UnsupportedSyntaxError
from s2s.ir import nodes as ir
from s2s_runtime import BatchingRuntimeError
from tests.grad import oracles


def loop_scalar(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i]
    return s


def elementwise(x, w):
    return np.tanh(x * w) * 2.0 + 1.0


def reductions(x, w):
    return np.sum(np.tanh(x * w)) + x[0] * np.mean(x ** 2) - np.max(x) + np.min(w * x)


def prod_of(x):
    return np.prod(x + 1.0)


def branchy(x):
    s = 0.0
    if x[0] > 0.5:
        s = x[1] * 2.0
    else:
        s = np.sum(x)
    return s


def rows(x, w):
    s = np.zeros(3)
    for v in x:
        s = s + v * w
    return s


SCALE = np.array([1.0, -2.0, 0.5])


def smooth(x):
    return np.sum(np.sin(x) * x)


def with_global(x):
    return x * SCALE


def dotted(x, w):
    return np.dot(x, w)


def _loop(f, args, in_axes, out_axis=0):
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[k] for a, k in zip(args, axes) if k is not None)
    outs = [f(*[a if k is None else np.take(a, b, axis=k) for a, k in zip(args, axes)])
            for b in range(n)]
    return np.moveaxis(np.stack([np.asarray(o) for o in outs]), 0, out_axis)


rng = np.random.default_rng(8)
X = rng.normal(size=(6, 4))

CASES = [
    (loop_scalar, 0, 0, (X,)),
    (elementwise, (0, None), 0, (X, rng.normal(size=4))),
    (elementwise, (1, None), 1, (X, rng.normal(size=6))),
    (elementwise, (0, 0), 0, (X, rng.normal(size=(6, 4)))),
    (reductions, (0, None), 0, (X, rng.normal(size=4))),
    (prod_of, 0, 0, (rng.normal(size=(5, 2, 3)),)),
    (branchy, 0, 0, (rng.uniform(size=(7, 3)),)),
    (rows, (0, None), 0, (rng.normal(size=(4, 5, 3)), rng.normal(size=3))),
    (with_global, 0, 0, (rng.normal(size=(4, 3)),)),
]


@pytest.mark.parametrize("f,in_axes,out_axes,args", CASES)
def test_jit_of_vmap_matches_vmap_and_a_loop(f, in_axes, out_axes, args):
    jitted = s2s.jit(s2s.vmap(f, in_axes, out_axes))
    got = jitted(*args)
    np.testing.assert_allclose(got, s2s.vmap(f, in_axes, out_axes)(*args), rtol=1e-12)
    np.testing.assert_allclose(got, _loop(f, args, in_axes, out_axes), rtol=1e-12)
    assert jitted.signatures(), "compiled, not run in Python"


@pytest.mark.parametrize("f,in_axes,out_axes,args", CASES)
def test_vmap_of_jit_matches_a_loop(f, in_axes, out_axes, args):
    got = s2s.vmap(s2s.jit(f), in_axes, out_axes)(*args)
    np.testing.assert_allclose(got, _loop(f, args, in_axes, out_axes), rtol=1e-12)


def test_vmap_of_jit_is_compiled_once_and_reused():
    vf = s2s.vmap(s2s.jit(loop_scalar))
    vf(X)
    inner = vf._s2s_transforms
    (jitted,) = inner.values()
    assert isinstance(jitted, s2s.core.jit.Jitted) and len(jitted.signatures()) == 1
    vf(X[:3])  # another batch size: the same compiled code
    assert len(jitted.signatures()) == 1


def test_vmap_of_jit_maps_keywords_on_axis_0_and_leaves_defaults_alone():
    vf = s2s.vmap(s2s.jit(with_default), in_axes=1)
    w = rng.normal(size=6)
    np.testing.assert_allclose(vf(X.T), X * 2.0)  # the default w: the same for every example
    np.testing.assert_allclose(vf(X.T, w=w), X * w[:, None])  # by keyword: mapped on axis 0
    python = s2s.vmap(with_default, in_axes=1)
    np.testing.assert_allclose(vf(X.T, w=w), python(X.T, w=w))


def test_batch_size_is_not_baked_in():
    jitted = s2s.jit(s2s.vmap(loop_scalar))
    for n in (1, 3, 7):
        x = rng.normal(size=(n, 4))
        np.testing.assert_allclose(jitted(x), _loop(loop_scalar, (x,), 0), rtol=1e-12)


def tanh_loss(x, w):
    return np.sum(np.tanh(x * w) * x)


def test_per_example_gradients_compile_and_match_closed_form_and_finite_differences():
    got = s2s.jit(s2s.vmap(s2s.grad(smooth)))(X)
    np.testing.assert_allclose(got, np.sin(X) + X * np.cos(X), rtol=1e-12, atol=1e-14)
    w = rng.normal(size=4)
    got = s2s.jit(s2s.vmap(s2s.grad(tanh_loss), (0, None)))(X, w)
    want = np.stack([oracles.fd_grad(tanh_loss, (x, w), 0) for x in X])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_batched_tapes_and_products_compile():
    got = s2s.jit(s2s.vmap(s2s.grad(loop_scalar)))(X)
    np.testing.assert_allclose(got, np.sin(X) + X * np.cos(X), rtol=1e-12, atol=1e-14)
    x = rng.uniform(size=(5, 3))
    np.testing.assert_allclose(s2s.jit(s2s.vmap(dotted, (0, None)))(x, np.ones(3)), x.sum(1))


def stacked_items(x):
    return np.sum(np.hstack((x, x * 2.0)) ** 2)


def test_vmaps_joins_compile_by_calling_numpy():
    x = rng.uniform(size=(5, 3, 2))
    want = _loop(stacked_items, (x,), 0)
    np.testing.assert_allclose(s2s.vmap(stacked_items)(x), want)
    # batch_hstack has no native lowering: the compiled code calls it (ops/host_calls.py)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(stacked_items))(x), want, rtol=1e-14)


def with_default(x, w=2.0):
    return x * w


def test_in_axes_name_the_arguments_passed_and_defaults_are_not_mapped():
    np.testing.assert_allclose(s2s.jit(s2s.vmap(with_default, (0,)))(X), X * 2.0)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(with_default))(X), X * 2.0)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(with_default, (0, None)))(X, 3.0), X * 3.0)
    with pytest.raises(ValueError, match=r"len\(in_axes\)=1, len\(args\)=2"):
        s2s.jit(s2s.vmap(with_default, (0,)))(X, 3.0)  # JAX's words


def test_vmap_of_jit_of_grad_matches_the_closed_form():
    got = s2s.vmap(s2s.jit(s2s.grad(smooth)))(X)
    np.testing.assert_allclose(got, np.sin(X) + X * np.cos(X), rtol=1e-12, atol=1e-14)


def _while_until(x):
    s = np.sum(x * x) + 1.0
    k = 0
    while s < 50.0:
        s = s * 1.7 + np.sin(x[k % 3])
        k += 1
    return s / (k + 1)


def test_jit_of_a_batched_hessian_of_a_data_dependent_while():
    """The batched loop keeps or rewinds each iteration's tape pushes whole: where every
    example runs the same trips, ``jit(vmap(hessian))`` and ``jit(vmap(hvp))`` match
    second differences of the primal; where the trip counts differ, compiled code raises
    the ``BatchingRuntimeError`` that Python's batched code raises."""
    x0 = np.array([0.3, -0.7, 1.1])
    xs = x0 + np.array([[0.0], [0.01], [-0.01]])
    h = s2s.jit(s2s.vmap(s2s.hessian(_while_until)))(xs)
    for x, got in zip(xs, h):
        np.testing.assert_allclose(got, _second_differences(_while_until, x), rtol=1e-5,
                                   atol=1e-5)
    v = np.array([0.5, -1.0, 2.0])
    hvp = s2s.jit(s2s.vmap(lambda x: s2s.jvp(s2s.grad(_while_until), (x,), (v,))[1]))(xs)
    np.testing.assert_allclose(hvp, np.einsum("bij,j->bi", h, v), rtol=1e-10)
    mixed = np.array([[0.3, -0.7, 1.1], [0.2, 0.5, -1.0], [1.5, 0.1, 0.2]])
    for f in (s2s.vmap(s2s.hessian(_while_until)), s2s.jit(s2s.vmap(s2s.hessian(_while_until)))):
        with pytest.raises(BatchingRuntimeError, match="condition differs per example"):
            f(mixed)


def _second_differences(f, x, h=1e-4):
    n = x.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * h, np.eye(n)[j] * h
            out[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) \
                / (4 * h * h)
    return out



def _pair_energy(a, b):
    return np.sum(np.tanh(a * b)) + a[0] * b[-1]


def test_nested_vmap_inside_transformed_code():
    """``vmap(vmap(f))`` met in code another transform reads (jit, grad, an outer vmap):
    the inner vmap's batched IR is batched again; against loops over both axes and
    central differences."""
    rng = np.random.default_rng(3)
    xs, ys = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    pairwise = s2s.vmap(s2s.vmap(_pair_energy, in_axes=(None, 0)), in_axes=(0, None))
    want = np.array([[_pair_energy(x, y) for y in ys] for x in xs])
    np.testing.assert_allclose(s2s.jit(pairwise)(xs, ys), want, rtol=1e-12)
    three = s2s.vmap(s2s.vmap(s2s.vmap(lambda v: np.sin(v) * v[0])))
    cube = rng.normal(size=(2, 3, 4, 5))
    np.testing.assert_allclose(s2s.jit(three)(cube), np.sin(cube) * cube[..., :1], rtol=1e-12)

    def total(xs, ys):
        return np.sum(pairwise(xs, ys) ** 2)

    g = s2s.jit(s2s.grad(total, argnums=(0, 1)))(xs, ys)
    oracles.assert_tree_close(g, oracles.fd_grad(total, (xs, ys), (0, 1)), rtol=1e-6,
                              atol=1e-7)
    g_py = s2s.grad(total, argnums=(0, 1))(xs, ys)
    oracles.assert_tree_close(g_py, g, rtol=1e-12, atol=1e-12)


def _rotation(t, s):
    """A matrix from a nested display mixing constants and per-example numbers."""
    c = np.cos(t)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -np.sin(t) * s], [0.0, np.sin(t), c * s]])


def _nested_rows(v):
    """Three levels of displays of per-example arrays' items."""
    return np.array([[[v[0], v[1]], [v[2], 2.0]], [[v[1] * v[2], 0.5], [v[0], v[0] + v[1]]]])


def test_jit_of_vmap_of_nested_array_displays():
    """``np.array`` of nested list displays whose items are batched (numbers lifted
    beside them): the compiled batched code against a loop over the examples, and
    its tangents (``jvp`` inside ``vmap``, one basis vector per example) against
    central differences."""
    rng = np.random.default_rng(5)
    ts, ss = rng.normal(size=4), rng.normal(size=4)
    want = np.stack([_rotation(t, s) for t, s in zip(ts, ss)])
    np.testing.assert_array_equal(s2s.jit(s2s.vmap(_rotation))(ts, ss), want)
    vs = rng.normal(size=(5, 3))
    np.testing.assert_array_equal(s2s.jit(s2s.vmap(_nested_rows))(vs),
                                  np.stack([_nested_rows(v) for v in vs]))

    def tangent(v, e):
        return s2s.jvp(_nested_rows, (v,), (e,))[1]

    v0 = vs[0]
    basis = np.eye(3)
    got = s2s.jit(s2s.vmap(tangent, in_axes=(None, 0)))(v0, basis)
    h = 1e-6
    for k in range(3):
        fd = (_nested_rows(v0 + h * basis[k]) - _nested_rows(v0 - h * basis[k])) / (2 * h)
        np.testing.assert_allclose(got[k], fd, rtol=1e-7, atol=1e-9)
    rot_t = s2s.jit(s2s.vmap(lambda t, s: s2s.jvp(_rotation, (t, s), (1.0, 0.0))[1]))(ts, ss)
    fd = np.stack([(_rotation(t + h, s) - _rotation(t - h, s)) / (2 * h)
                   for t, s in zip(ts, ss)])
    np.testing.assert_allclose(rot_t, fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(rot_t, s2s.vmap(lambda t, s: s2s.jvp(
        _rotation, (t, s), (1.0, 0.0))[1])(ts, ss), rtol=1e-13)


def dict_predict(params, x):
    h = np.tanh(params["w1"] @ x + params["b1"])
    return params["w2"] @ h + params["b2"]


def dict_loss(params, x, y):
    return np.sum((dict_predict(params, x) - y) ** 2) * params["scale"]


DICT_PARAMS = {"w1": rng.normal(size=(4, 3)), "b1": rng.normal(size=4),
               "w2": rng.normal(size=(2, 4)), "b2": rng.normal(size=2), "scale": 0.5}


def test_jit_of_vmap_takes_dict_arguments_mapped_or_not():
    xs, ys = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    got = s2s.jit(s2s.vmap(dict_predict, in_axes=(None, 0)))(DICT_PARAMS, xs)
    np.testing.assert_allclose(got, np.stack([dict_predict(DICT_PARAMS, x) for x in xs]),
                               rtol=1e-13)
    grads = s2s.jit(s2s.vmap(s2s.grad(dict_loss), in_axes=(None, 0, 0)))(DICT_PARAMS, xs, ys)
    assert sorted(grads) == sorted(DICT_PARAMS)
    for i in range(len(xs)):  # each example's gradient, against finite differences
        oracles.assert_tree_close({k: v[i] for k, v in grads.items()},
                                  oracles.fd_grad(dict_loss, (DICT_PARAMS, xs[i], ys[i])),
                                  rtol=1e-6, atol=1e-8)
    stacked = {k: np.stack([v] * 5) for k, v in DICT_PARAMS.items()}  # a dict mapped on 0
    stacked["scale"] = np.linspace(0.5, 1.5, 5)
    got = s2s.jit(s2s.vmap(dict_loss))(stacked, xs, ys)
    want = [dict_loss({k: v[i] for k, v in stacked.items()}, xs[i], ys[i]) for i in range(5)]
    np.testing.assert_allclose(got, want, rtol=1e-13)


def joined(x, w):
    """``np.hstack`` and ``np.vstack`` of a batched and an unbatched item, per example."""
    return np.sum(np.hstack([x, w * x]) ** 2 * np.cos(x).sum()) + np.sum(np.vstack([x, w]) ** 3)


@pytest.mark.parametrize("shape", [(4,), (2, 3)], ids=["vectors", "matrices"])
def test_cotangents_of_joins_batched_and_compiled(shape):
    # hstack_vjp / vstack_vjp batched as vmap's batch_hstack_vjp / batch_vstack_vjp (one
    # split of the batched cotangent), which the jit cuts into pieces natively
    x, w = rng.normal(size=(5,) + shape), rng.normal(size=shape)
    want = [np.stack([oracles.fd_grad(joined, (xk, w), k) for xk in x]) for k in (0, 1)]
    batched = s2s.vmap(s2s.grad(joined, argnums=(0, 1)), (0, None))
    for got in (batched(x, w), s2s.jit(batched)(x, w)):
        for g, f in zip(got, want):
            np.testing.assert_allclose(g, f, rtol=1e-6, atol=1e-8)


def differences(x):
    return np.sum(np.diff(x, n=2) ** 2) + np.sum(np.append(x, x[0] * x[-1]) ** 3)


def test_calls_once_per_example_compile_as_loops():
    # np.diff's and np.append's cotangents have no batching rule: vmap calls them once
    # per example (rt.batch_loop), which the jit compiles as a loop over the examples
    # (passes/per_example_loops.py), each call typed for one example
    x = rng.normal(size=(4, 6))
    want = np.stack([oracles.fd_grad(differences, (xk,), 0) for xk in x])
    batched = s2s.vmap(s2s.grad(differences))
    np.testing.assert_allclose(batched(x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(batched)(x), batched(x), rtol=1e-13, atol=1e-15)
    func, _ = s2s.jit(batched).source_ir([x])
    called = {s.value.fn for s in ir.walk(func.body) if isinstance(getattr(s, "value", None), ir.Call)}
    assert rt.batch_example in called and rt.batch_loop not in called


def test_calls_once_per_example_that_numpy_runs_stay_one_call():
    # np.linalg.matrix_rank has no batching rule and the jit runs it in numpy: the whole
    # per-example loop stays one call into Python (ops/host_calls.py)
    def ranked(x):
        return np.sum(x) * np.linalg.matrix_rank(np.outer(x, x) + np.eye(x.shape[0]))

    x = rng.normal(size=(3, 4))
    batched = s2s.vmap(ranked)
    np.testing.assert_allclose(s2s.jit(batched)(x), [ranked(xk) for xk in x], rtol=1e-13)
    func, _ = s2s.jit(batched).source_ir([x])
    assert any(isinstance(getattr(s, "value", None), ir.Call) and s.value.fn is rt.batch_loop
               for s in ir.walk(func.body))


def _per_example_fd(f, xs):
    return np.stack([oracles.fd_grad(f, (x,), 0) for x in xs])


STATISTICS = [
    lambda a: np.quantile(a, 0.3) + np.median(a) * np.percentile(a, 70),
    lambda a: np.sum(np.quantile(a.reshape(2, 3), [0.2, 0.7], axis=1) ** 2),
    lambda a: np.sum(np.cov(a.reshape(2, 3))) + np.sum(np.corrcoef(a.reshape(3, 2), rowvar=False)),
    lambda a: np.sum(np.pad(a, 1, mode="edge") ** 2) + np.sum(np.convolve(a, a[:3]) ** 2),
    lambda a: np.sum(np.pad(a.reshape(2, 3), ((1, 2), (0, 3)), mode="reflect") ** 3),
    lambda a: np.sum(np.pad(a.reshape(2, 3), (2,), mode="wrap") ** 3),
]


@pytest.mark.parametrize("f", STATISTICS, ids=["quantiles", "quantiles-axis", "cov",
                                               "pad-convolve", "pad-pairs", "pad-one"])
def test_statistics_and_pads_batched_gradients_compile(f):
    # the quantiles' linear maps take a spec holding strings (never lifted in compiled
    # code), np.cov's axis is known only at run time, np.pad's widths are pairs per axis
    x = rng.uniform(0.2, 0.9, size=(3, 6))
    batched = s2s.vmap(s2s.grad(f))
    np.testing.assert_allclose(batched(x), _per_example_fd(f, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(batched)(x), batched(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(f))(x), [f(xk) for xk in x], rtol=1e-12)


def test_axis_known_when_running_is_checked_per_example():
    def cumulative(a, axis):
        return np.cumsum(a, axis=axis) * 2.0

    x = rng.normal(size=(2, 3, 4))
    compiled = s2s.jit(s2s.vmap(cumulative, (0, None)))
    for axis in (0, 1, -1, -2):
        np.testing.assert_allclose(compiled(x, axis), [cumulative(xk, axis) for xk in x])
    for axis in (2, -3):
        with pytest.raises(np.exceptions.AxisError,
                           match=f"axis {axis} is out of bounds for array of dimension 2"):
            compiled(x, axis)


def test_pad_widths_that_do_not_fit_the_rank_raise_numpys_error():
    with pytest.raises(ValueError, match="could not be broadcast"):
        s2s.jit(s2s.vmap(lambda a: np.pad(a, (1, 2, 3))))(np.ones((2, 3, 4)))


def spectrum(a):
    return np.sum(np.abs(np.fft.fft2(a)) ** 2) + np.sum(np.real(np.fft.ifft2(np.fft.fft2(a) * 2)))


def test_axes_known_when_running_as_a_tuple():
    # np.fft.fft2's axes reach rt.batch_axis_in as a tuple of integers the jit knows when
    # running: each is shifted past the batch axis and checked against the example's rank
    x = rng.uniform(0.2, 0.9, size=(3, 3, 4))
    want = np.stack([oracles.fd_grad(spectrum, (xk,), 0) for xk in x])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(spectrum))(x), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(s2s.grad(spectrum)))(x), want, rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(spectrum))(x), [spectrum(xk) for xk in x],
                               rtol=1e-12)


def stacked_einsum(b):
    return np.sum(np.einsum("...ij,...jk->...ik", b, b)) + np.sum(
        np.einsum("...ij,...j->...i", b, b[:, 0]) ** 2)


def test_einsum_with_an_ellipsis_batched_and_compiled():
    # the batched subscripts 'z...ij,z...jk->z...ik' are written out for the operands' ranks
    x = rng.uniform(0.2, 0.9, size=(3, 2, 3, 3))
    want = np.stack([oracles.fd_grad(stacked_einsum, (xk,), 0) for xk in x])
    np.testing.assert_allclose(s2s.jit(s2s.vmap(s2s.grad(stacked_einsum)))(x), want,
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(stacked_einsum))(x),
                               [stacked_einsum(xk) for xk in x], rtol=1e-12)


def log_samples(a):
    return np.sum(np.logspace(0.0, a[0], 4)) + np.sum(np.logspace(a[1], 1.0, 3, base=2.0) ** 2)


def test_logspace_of_batched_ends_compiles():
    # vmap passes np.logspace an axis (its ends are batched): read as code with it
    x = rng.uniform(0.2, 0.9, size=(3, 2))
    want = np.stack([oracles.fd_grad(log_samples, (xk,), 0) for xk in x])
    np.testing.assert_allclose(s2s.jit(s2s.vmap(s2s.grad(log_samples)))(x), want, rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(s2s.jit(s2s.vmap(log_samples))(x), [log_samples(xk) for xk in x],
                               rtol=1e-12)


def selected(a):
    return np.sum(np.select([a > 0.6, a < 0.3], [a ** 2, np.sin(a)], default=a * 3))


def test_select_batched_gradients():
    # np.select's "no condition holds" mask (rt.select_none) read as code under vmap
    x = rng.uniform(0.1, 0.9, size=(4, 6))
    want = np.stack([oracles.fd_grad(selected, (xk,), 0) for xk in x])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(selected))(x), want, rtol=1e-6, atol=1e-8)
