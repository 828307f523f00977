"""``vmap`` of the numpy functions batched by ``s2s/batch/rules_numpy.py`` and read as code
from ``s2s/rules/numpy_code``: each case against a Python loop over the
examples (``np.stack`` of the per-example results, leaf by leaf), with axes positive,
negative and ``None``, the batch on one operand or several, and ``in_axes`` other than 0;
and the per-example errors numpy raises (an example without the axis a call reads, a
rank the function refuses) raised under ``vmap`` too, never a value computed across the
batch."""
import warnings

import numpy as np
import pytest

import s2s
from s2s.batch.transform import BatchingError

RNG = np.random.default_rng(7)
N = 3
S = RNG.normal(size=N)                 # a number per example
V = RNG.normal(size=(N, 6))            # a vector per example
W = RNG.normal(size=(N, 4))            # a shorter vector per example
M = RNG.normal(size=(N, 4, 5))         # a matrix per example
Q = RNG.normal(size=(N, 4, 4))         # a square matrix per example
T = RNG.normal(size=(N, 2, 4, 5))      # a 3-D array per example
WITH_NAN = M.copy()
WITH_NAN[1, 2, 3] = np.nan
WITH_NAN[2, 0, 0] = np.nan
POS = np.abs(V) + 0.5
CPLX = M + 1j * RNG.normal(size=M.shape)


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


def _loop(f, args, in_axes):
    outs = []
    for i in range(N):
        example = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]
        outs.append(_leaves(f(*example)))
    return [np.stack(parts) for parts in zip(*outs)]


def _agree(f, args, in_axes=None):
    in_axes = tuple(in_axes) if in_axes is not None else (0,) * len(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _leaves(s2s.vmap(f, in_axes=in_axes)(*args))
        want = _loop(f, args, in_axes)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, equal_nan=True)


CASES = [
    # running and NaN-skipping reductions
    ("cumulative_sum", lambda x: np.cumulative_sum(x), (V,)),
    ("cumulative_sum-number", lambda x: np.cumulative_sum(x, include_initial=True), (S,)),
    ("cumulative_sum-axis", lambda x: np.cumulative_sum(x, axis=-1, include_initial=True), (M,)),
    ("cumulative_prod-axis0", lambda x: np.cumulative_prod(x, axis=0, include_initial=True),
     (M,)),
    ("cumulative_prod", lambda x: np.cumulative_prod(x, dtype=np.float32), (V,)),
    ("nancumsum-None", lambda x: np.nancumsum(x), (WITH_NAN,)),
    ("nancumsum-neg", lambda x: np.nancumsum(x, axis=-1), (WITH_NAN,)),
    ("nancumprod-0", lambda x: np.nancumprod(x, axis=0), (WITH_NAN,)),
    ("nanprod", lambda x: np.nanprod(x), (WITH_NAN,)),
    ("nanprod-axis-keep", lambda x: np.nanprod(x, axis=1, keepdims=True), (WITH_NAN,)),
    ("nanmedian", lambda x: np.nanmedian(x), (WITH_NAN,)),
    ("nanmedian-neg", lambda x: np.nanmedian(x, axis=-1), (WITH_NAN,)),
    # quantiles: q a number, a list, a nested list; axes None, positive, negative
    ("quantile", lambda x: np.quantile(x, 0.3), (M,)),
    ("percentile", lambda x: np.percentile(x, [25, 75], axis=-1), (M,)),
    ("quantile-keepdims", lambda x: np.quantile(x, [[0.2], [0.9]], axis=0, keepdims=True),
     (M,)),
    ("quantile-tuple", lambda x: np.quantile(x, (0.2, 0.8), axis=-1), (M,)),
    ("nanpercentile", lambda x: np.nanpercentile(x, 30.0, axis=1), (WITH_NAN,)),
    ("nanquantile", lambda x: np.nanquantile(x, [0.2, 0.9], axis=0), (WITH_NAN,)),
    ("quantile-q-unbatched-var", lambda x, q: np.quantile(x, q, axis=1), (M, np.array([0.1, 0.5])),
     (0, None)),
    ("quantile-q-batched", lambda x, q: np.quantile(x, q), (V, np.abs(S) / 4)),
    # order
    ("partition", lambda x: np.partition(x, 2), (V,)),
    ("partition-axis0", lambda x: np.partition(x, [0, 2], axis=0), (M,)),
    ("partition-None", lambda x: np.partition(x, 5, axis=None), (M,)),
    ("sort_complex", lambda x: np.sort_complex(x), (CPLX,)),
    ("sort_complex-real", lambda x: np.sort_complex(x), (M,)),
    ("unwrap", lambda x: np.unwrap(x * 4.0), (V,)),
    ("unwrap-axis0", lambda x: np.unwrap(x * 4.0, axis=0), (M,)),
    ("unwrap-period", lambda x, p: np.unwrap(x * 4.0, None, -1, period=p), (V, 5.0), (0, None)),
    ("unwrap-discont", lambda x, d: np.unwrap(x * 4.0, d), (V, np.abs(S) + 3.0)),
    # taking apart, adding, removing
    ("delete", lambda x: np.delete(x, 1), (M,)),
    ("delete-axis", lambda x: np.delete(x, [0, 2], axis=-1), (M,)),
    ("delete-axis0", lambda x: np.delete(x, slice(1, 3), axis=0), (M,)),
    ("insert", lambda x, y: np.insert(x, 1, y), (V, S)),
    ("insert-axis", lambda x, y: np.insert(x, [0, 2], y, axis=1), (M, W[:, :1])),
    ("append", lambda x, y: np.append(x, y), (M, V)),
    ("append-axis", lambda x, y: np.append(x, y, axis=0), (V, W)),
    ("append-unbatched", lambda x, y: np.append(x, y, axis=-1), (M, np.ones((4, 2))),
     (0, None)),
    ("ediff1d", lambda x: np.ediff1d(x), (M,)),
    ("ediff1d-ends", lambda x, y: np.ediff1d(x, to_end=y, to_begin=[1.0, 2.0]), (V, S)),
    ("compress", lambda x: np.compress([True, False, True], x, axis=1), (Q,)),
    ("compress-None", lambda x: np.compress([True, False, True], x), (M,)),
    ("resize", lambda x: np.resize(x, (3, 3)), (M,)),
    ("gradient", lambda x: np.gradient(x, 0.5, axis=-1), (M,)),
    # layout
    ("asanyarray", lambda x: np.asanyarray(x), (M,)),
    ("asanyarray-list", lambda x, y: np.asanyarray([x, y]), (S, S * 2)),
    ("ascontiguousarray-number", lambda x: np.ascontiguousarray(x), (S,)),
    ("ascontiguousarray", lambda x: np.ascontiguousarray(x, dtype=np.float32), (M,)),
    ("asfortranarray-number", lambda x: np.asfortranarray(x), (S,)),
    ("asfortranarray", lambda x: np.asfortranarray(x), (M,)),
    ("astype", lambda x: np.astype(x, np.int32), (M * 10,)),
    ("longdouble", lambda x: np.longdouble(x) * 2, (V,)),
    ("matrix_transpose", lambda x: np.matrix_transpose(x), (T,)),
    ("linalg.matrix_transpose", lambda x: np.linalg.matrix_transpose(x), (M,)),
    ("broadcast_arrays", lambda x, y: np.broadcast_arrays(x, y), (W, M[:, :, :1])),
    ("broadcast_arrays-unbatched", lambda x, y: np.broadcast_arrays(x, y, 2.0),
     (V[:, :5], np.ones((4, 1))), (0, None)),
    ("unstack", lambda x: np.unstack(x), (M,)),
    ("unstack-neg", lambda x: np.unstack(x, axis=-1), (M,)),
    ("array_split", lambda x: np.array_split(x, 3), (M,)),
    ("array_split-axis", lambda x: np.array_split(x, [1, 3], axis=-1), (M,)),
    ("hsplit", lambda x: np.hsplit(x, 3), (V,)),
    ("hsplit-2d", lambda x: np.hsplit(x, [1, 3]), (M,)),
    ("vsplit", lambda x: np.vsplit(x, 2), (M,)),
    ("dsplit", lambda x: np.dsplit(x, [1]), (T,)),
    ("row_stack", lambda x, y: np.row_stack([x, y]), (V, V * 2)),
    ("rollaxis", lambda x: np.rollaxis(x, 2), (T,)),
    ("rollaxis-neg", lambda x: np.rollaxis(x, -1, 1), (T,)),
    ("rollaxis-end", lambda x: np.rollaxis(x, 0, 3), (T,)),
    ("pad", lambda x: np.pad(x, 2), (V,)),
    ("pad-pair", lambda x: np.pad(x, (1, 2), constant_values=3.0), (M,)),
    ("pad-axes-reflect", lambda x: np.pad(x, ((1, 2), (0, 1)), mode="reflect"), (M,)),
    ("pad-edge", lambda x: np.pad(x, ((1,), (2,)), mode="edge"), (M,)),
    ("pad-mean", lambda x: np.pad(x, 1, mode="mean", stat_length=2), (M,)),
    ("pad-per-axis-values", lambda x: np.pad(x, 1, constant_values=((1, 2), (3, 4))), (M,)),
    # evenly spaced samples
    ("linspace", lambda x, y: np.linspace(x, y, 5), (S, S + 1)),
    ("linspace-axis", lambda x, y: np.linspace(x, y, 4, axis=-1), (W, W * 2)),
    ("linspace-one-end", lambda x, y: np.linspace(x, y, 3, axis=1), (W, 1.0), (0, None)),
    ("linspace-retstep", lambda x, y: np.linspace(x, y, 4, retstep=True), (S, S + 2)),
    ("logspace", lambda x, y: np.logspace(x, y, 5), (S, S + 1)),
    ("logspace-base", lambda x, y: np.logspace(x, y, 4, base=2.0, axis=-1), (W, W + 1)),
    ("geomspace", lambda x, y: np.geomspace(x, y, 5, endpoint=False), (POS[:, 0], POS[:, 1])),
    # polynomials
    ("polyadd", lambda x, y: np.polyadd(x, y), (W, V)),
    ("polysub", lambda x, y: np.polysub(x, y), (V, W)),
    ("polysub-unbatched", lambda x, y: np.polysub(x, y), (V, np.ones(8)), (0, None)),
    ("polymul", lambda x, y: np.polymul(x, y), (W, V)),
    ("polyder", lambda x: np.polyder(x), (V,)),
    ("polyder-2", lambda x: np.polyder(x, 2), (V,)),
    ("polyint", lambda x: np.polyint(x), (V,)),
    ("polyint-k", lambda x, k: np.polyint(x, 2, k=k), (V, W[:, :2])),
    # np.fft
    ("fft", lambda x: np.fft.fft(x), (M,)),
    ("ifft-axis0", lambda x: np.fft.ifft(x, axis=0), (M,)),
    ("rfft-n", lambda x: np.fft.rfft(x, n=8), (V,)),
    ("irfft", lambda x: np.fft.irfft(x), (CPLX,)),
    ("hfft", lambda x: np.fft.hfft(x, axis=-2), (CPLX,)),
    ("ihfft", lambda x: np.fft.ihfft(x), (M,)),
    ("fft2", lambda x: np.fft.fft2(x), (T,)),
    ("ifft2-axes", lambda x: np.fft.ifft2(x, axes=(0, -1)), (T,)),
    ("rfft2", lambda x: np.fft.rfft2(x, norm="ortho"), (M,)),
    ("irfft2", lambda x: np.fft.irfft2(x), (CPLX,)),
    ("fftn", lambda x: np.fft.fftn(x), (T,)),
    ("ifftn-s", lambda x: np.fft.ifftn(x, s=(4, 4)), (T,)),
    ("rfftn", lambda x: np.fft.rfftn(x), (T,)),
    ("irfftn-axes", lambda x: np.fft.irfftn(x, axes=(1,)), (CPLX,)),
    ("fftshift", lambda x: np.fft.fftshift(x), (M,)),
    ("ifftshift-axis", lambda x: np.fft.ifftshift(x, axes=-1), (M,)),
    # np.linalg's array-API names
    ("linalg.trace", lambda x: np.linalg.trace(x, offset=1), (T,)),
    ("linalg.diagonal", lambda x: np.linalg.diagonal(x, offset=-1), (M,)),
    ("linalg.svdvals", lambda x: np.linalg.svdvals(x), (T,)),
    ("linalg.matrix_norm", lambda x: np.linalg.matrix_norm(x, ord=1, keepdims=True), (M,)),
    ("linalg.cond", lambda x: np.linalg.cond(x), (Q,)),
    ("linalg.matmul", lambda x, y: np.linalg.matmul(x, y), (M, np.swapaxes(M, 1, 2))),
    ("linalg.matmul-vector", lambda x, y: np.linalg.matmul(x, y), (Q, W)),
    ("linalg.matmul-unbatched", lambda x, y: np.linalg.matmul(x, y), (M, np.ones((5, 2))),
     (0, None)),
    ("linalg.vecdot", lambda x, y: np.linalg.vecdot(x, y), (M, M[:, 0])),
    ("linalg.tensordot", lambda x, y: np.linalg.tensordot(x, y, axes=1),
     (M, np.swapaxes(T[:, 0], 1, 2))),
    ("linalg.multi_dot", lambda x, y: np.linalg.multi_dot([y, x, np.swapaxes(x, 0, 1)]),
     (M, W)),
    ("linalg.multi_dot-unbatched", lambda x, y: np.linalg.multi_dot([x, y, y.T]),
     (M, np.ones((5, 2))), (0, None)),
    ("linalg.matrix_rank", lambda x: np.linalg.matrix_rank(x), (M,)),
    ("tile-tuple", lambda x: np.tile(x, (2, 1, 3)), (M,)),
]


@pytest.mark.parametrize("f,args,in_axes", [pytest.param(c[1], c[2], c[3] if len(c) > 3 else None,
                                                         id=c[0]) for c in CASES])
def test_against_a_loop_over_the_batch(f, args, in_axes):
    _agree(f, args, in_axes)


def test_the_batch_on_another_axis_or_on_the_second_operand_only():
    _agree(lambda x: np.nanmedian(x, axis=0), (np.moveaxis(WITH_NAN, 0, 2),), (2,))
    _agree(lambda x: np.fft.fft2(x), (np.moveaxis(T, 0, 1),), (1,))
    _agree(lambda x, y: np.polyadd(x, y), (np.ones(2), V), (None, 0))
    _agree(lambda x, y: np.linalg.matmul(x, y), (np.ones((2, 4)), np.moveaxis(Q, 0, -1)),
           (None, 2))
    _agree(lambda x: np.pad(x, ((0, 1), (2, 0))), (np.moveaxis(M, 0, 1),), (1,))


def test_the_check_can_fail(monkeypatch):
    """The comparison is sharp: a reference computed across the batch (running sums over
    every example flattened, the bug a batching rule must not have) fails it."""
    import sys
    monkeypatch.setattr(sys.modules[__name__], "_loop",
                        lambda f, args, in_axes: [np.cumsum(args[0]).reshape(args[0].shape)])
    with pytest.raises(AssertionError):
        _agree(lambda x: np.cumulative_sum(x), (V,))


#: (name, function, the rank each example needs)
TOO_FEW_AXES = [
    ("partition", lambda x: np.partition(x, 0), 1),
    ("nanmedian", lambda x: np.nanmedian(x, axis=-1), 1),
    ("quantile", lambda x: np.quantile(x, [0.5], axis=-1), 1),
    ("unwrap", lambda x: np.unwrap(x), 1),
    ("sort_complex", lambda x: np.sort_complex(x), 1),
    ("fft", lambda x: np.fft.fft(x), 1),
    ("fft2", lambda x: np.fft.fft2(x), 2),
    ("unstack-neg", lambda x: np.unstack(x, axis=-1), 1),
    ("rollaxis", lambda x: np.rollaxis(x, -1), 1),
    ("matrix_transpose", lambda x: np.matrix_transpose(x), 2),
    ("linalg.svdvals", lambda x: np.linalg.svdvals(x), 2),
    ("linalg.trace", lambda x: np.linalg.trace(x), 2),
    ("linalg.vecdot", lambda x: np.linalg.vecdot(x, x), 1),
    ("linalg.matmul", lambda x: np.linalg.matmul(x, x), 1),
    # the core rules (batch/rules_core.py): an axis counted from the end
    ("sort", lambda x: np.sort(x), 1),
    ("concatenate", lambda x: np.concatenate([x, x], axis=-1), 1),
    ("stack", lambda x: np.stack([x, x], axis=-2), 1),
    ("swapaxes", lambda x: np.swapaxes(x, -1, -2), 2),
    ("moveaxis", lambda x: np.moveaxis(x, -1, 0), 1),
    ("diagonal", lambda x: np.diagonal(x, axis1=-2, axis2=-1), 2),
    ("flip", lambda x: np.flip(x, axis=-1), 1),
]


@pytest.mark.parametrize("f,rank", [pytest.param(f, r, id=name) for name, f, r in TOO_FEW_AXES])
def test_an_example_without_the_axes_the_call_reads_raises_as_numpy(f, rank):
    """A per-example axis counted from the end is never the batch axis: where numpy
    refuses one example (too few axes), vmap raises too rather than reading the batch
    axis as the example's."""
    for batch in (S, V)[:rank]:  # examples of rank 0 (and 1 where two axes are needed)
        with pytest.raises((ValueError, IndexError, np.linalg.LinAlgError)):
            f(batch[0])
        with pytest.raises((ValueError, IndexError, np.linalg.LinAlgError)):
            s2s.vmap(f)(batch)


def test_a_running_sum_of_numbers_along_an_axis_is_refused_not_summed_across_the_batch():
    """numpy reads a number as a 1-D array in ``np.nancumsum(x, axis=-1)``; the batched
    rule raises numpy's AxisError for such examples (a limitation) rather than running
    the sum along the batch axis."""
    assert np.nancumsum(S[0], axis=-1).shape == (1,)
    with pytest.raises(np.exceptions.AxisError):
        s2s.vmap(lambda x: np.nancumsum(x, axis=-1))(S)
    _agree(lambda x: np.nancumsum(x), (S,))  # axis=None: the flattened number


def test_a_reduction_of_numbers_along_the_last_axis_is_refused_not_reduced_across_the_batch():
    """numpy's reductions (and ``np.squeeze``) accept ``axis=-1`` (and 0) of a number; the
    batched rule raises numpy's AxisError for such examples (a limitation) rather than
    reducing along the batch axis, in Python and compiled, and reduces along the
    example's last axis otherwise."""
    for f in (lambda x: np.sum(x, axis=-1), lambda x: np.argsort(x, axis=-1),
              lambda x: np.cumsum(x, axis=-1), lambda x: np.max(x, axis=-1),
              lambda x: np.squeeze(x, axis=-1)):
        f(S[0])  # numpy: the number itself
        for g in (s2s.vmap(f), s2s.jit(s2s.vmap(f))):
            with pytest.raises(np.exceptions.AxisError, match="dimension 0"):
                g(S)
            np.testing.assert_allclose(g(M[..., :1]), np.stack([f(m) for m in M[..., :1]]))
    f = lambda x: np.expand_dims(x, (-1, -3))  # noqa: E731  (axes of the result)
    _agree(f, (V,))
    np.testing.assert_allclose(s2s.jit(s2s.vmap(f))(V), np.stack([f(v) for v in V]))


def test_numpys_per_example_errors():
    with pytest.raises(ValueError, match="axis"):  # axis=None only for 1-D input
        s2s.vmap(lambda x: np.cumulative_sum(x))(M)
    with pytest.raises(ValueError, match="vsplit only works"):
        s2s.vmap(lambda x: np.vsplit(x, 2))(V)
    with pytest.raises(ValueError, match="dsplit only works"):
        s2s.vmap(lambda x: np.dsplit(x, 2))(M)
    with pytest.raises(TypeError, match="same_kind"):
        s2s.vmap(lambda x: np.ediff1d(x, to_end=1j))(V)
    with pytest.raises(ValueError):  # pad widths for 3 axes of a matrix example
        s2s.vmap(lambda x: np.pad(x, ((1, 1), (1, 1), (1, 1))))(M)
    with pytest.raises(BatchingError, match="number of samples"):
        s2s.vmap(lambda x, n: np.linspace(0.0, x, n))(S, np.array([2, 3, 4]))
    with pytest.raises(BatchingError, match="batched keyword argument"):  # a loop's case
        s2s.vmap(lambda x, p: np.unwrap(x, period=p))(V, S + 4.0)


#: functions of one batched (N, 4, 5) array whose derivatives are batched too
DIFFERENTIATED = {
    "pad": lambda x: np.pad(x, ((1, 0), (2, 1)), mode="reflect"),
    "matrix_transpose": lambda x: np.matrix_transpose(x) * 2.0,
    "quantile": lambda x: np.quantile(x, [0.3, 0.6], axis=-1),
    "unwrap": lambda x: np.unwrap(x * 4.0),
    "nanprod": lambda x: np.nanprod(x, axis=0),
    "nanmedian": lambda x: np.nanmedian(x, axis=1),
    "cumulative_sum": lambda x: np.cumulative_sum(x, axis=1, include_initial=True),
    "cumulative_prod": lambda x: np.cumulative_prod(x, axis=-1),
    "polyder": lambda x: np.polyder(x[0], 2),
    "polyint": lambda x: np.polyint(x[0], 2),
    "polyadd": lambda x: np.polyadd(x[0], x[1, :2]),
    "svdvals": lambda x: np.linalg.svdvals(x),
    "fft": lambda x: np.fft.fft(x).real,
    "rfft": lambda x: np.abs(np.fft.rfft(x, n=7)),
    "irfft": lambda x: np.fft.irfft(x),
    "fft2-s": lambda x: np.fft.fft2(x, s=(3, 6)).imag,
    "fftshift": lambda x: np.fft.fftshift(x) * x,
    "linspace": lambda x: np.linspace(x[0, 0], x[1], 4, axis=-1),
    "linspace-one-end": lambda x: np.linspace(x[0], 2.0, 4),
    "geomspace": lambda x: np.geomspace(np.abs(x[0]) + 1.0, 3.0, 4),
    "broadcast_arrays": lambda x: np.broadcast_arrays(x[0], x[:, :1])[1] * x,
    "delete": lambda x: np.delete(x, 1, axis=-1),
    "ediff1d": lambda x: np.ediff1d(x),
    "multi_dot": lambda x: np.linalg.multi_dot([x[:, 0], x, x.T]),
    "tile-tuple": lambda x: np.tile(x, (2, 1)) * np.tile(x[0], (3, 1, 2)).sum(),
    "tile": lambda x: np.tile(x, 2) ** 2,
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIATED))
def test_derivatives_of_batched_code_and_batched_derivatives(name):
    """``grad(vmap(f))`` and ``vmap(grad(f))`` (the derivative code's helpers batched:
    ``rt.scan_slots``, ``rt.fft_axes``, ``rt.fit_to``...) against central differences
    of the loop over the examples."""
    from tests.grad.oracles import fd_grad
    f = DIFFERENTIATED[name]
    x = RNG.normal(size=(N, 4, 5))

    def batched_loss(x):
        return np.sum(s2s.vmap(f)(x) ** 2)

    def loop_loss(x):
        return sum(np.sum(f(x[i]) ** 2) for i in range(N))

    want = fd_grad(loop_loss, (x,), max_entries=N * 20)
    np.testing.assert_allclose(s2s.grad(batched_loss)(x), want, rtol=1e-5, atol=1e-6)
    per_example = s2s.vmap(s2s.grad(lambda e: np.sum(f(e) ** 2)))(x)
    np.testing.assert_allclose(per_example, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", [
    pytest.param(lambda x: np.fft.fft(x), id="fft"),
    pytest.param(lambda x: np.nanprod(x, axis=-1), id="nanprod"),
    pytest.param(lambda x: np.pad(x, 1), id="pad"),
    pytest.param(lambda x: np.matrix_transpose(x), id="matrix_transpose"),
    pytest.param(lambda x: np.cumulative_sum(x, axis=-1), id="cumulative_sum"),
])
def test_vmap_of_vmap(f):
    """An outer vmap reads the inner one's axis checks and pad widths as code."""
    x = RNG.normal(size=(2, N, 4, 5))
    want = np.stack([np.stack([f(e) for e in row]) for row in x])
    np.testing.assert_allclose(s2s.vmap(s2s.vmap(f))(x), want, rtol=1e-12, atol=1e-12)
