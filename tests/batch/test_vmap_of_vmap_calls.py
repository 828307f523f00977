"""``vmap`` of code that itself calls ``vmap`` (JAX's nesting, written inside the mapped
function): the inner ``vmap`` call stays a call until the batching transform meets it,
then becomes ``vmap(inner vmap, in_axes=0 where batched)``, both batches merged into one
(``core/vmap.py``'s ``_mapped_whole``, ``core/vmap_nested.py``).  Every value against a
Python loop over the outer batch, derivatives against central differences."""
import numpy as np
import pytest

import s2s

from tests.grad.oracles import fd_grad

RNG = np.random.default_rng(5)
XS = RNG.normal(size=(4, 2))
YS = RNG.normal(size=(4, 3, 2))
ZS = RNG.normal(size=(4, 5, 3, 2))


def pair(a, b):
    return np.sin(a) * b + a[0] * b[1]


def row(x, ys):  # the inner vmap maps ys only
    return s2s.vmap(pair, in_axes=(None, 0))(x, ys).sum()


def row_swapped(x, ys):  # the inner vmap maps its first argument, on axis 0 of ys
    return np.sum(s2s.vmap(pair, in_axes=(0, None))(ys, x) ** 2)


def row_moved(x, ys):  # the inner batch placed on the last axis of the result
    return s2s.vmap(pair, in_axes=(None, 0), out_axes=1)(x, ys)[:, -1]


def pair_as_tuple(a, b):  # a 1-tuple result (as a pullback returns)
    return (pair(a, b),)


def row_of_tuples(x, ys):
    return s2s.vmap(pair_as_tuple, in_axes=(None, 0))(x, ys)[0].sum()


def grid(x, zs):  # three levels: vmap over code calling vmap over code calling vmap
    return s2s.vmap(row, in_axes=(None, 0))(x, zs).sum()


def _loop(f, *args, in_axes=None):
    in_axes = in_axes or (0,) * len(args)
    n = next(a.shape[0] for a, k in zip(args, in_axes) if k == 0)
    return np.stack([f(*[a[i] if k == 0 else a for a, k in zip(args, in_axes)])
                     for i in range(n)])


@pytest.mark.parametrize("f, args", [(row, (XS, YS)), (row_swapped, (XS, YS)),
                                     (row_moved, (XS, YS)), (grid, (XS, ZS)),
                                     (row_of_tuples, (XS, YS))],
                         ids=["row", "swapped", "out_axes", "three_levels", "one_tuple"])
@pytest.mark.parametrize("transform", ["python", "jit"])
def test_vmap_of_code_calling_vmap_matches_a_loop(f, args, transform):
    mapped = s2s.vmap(f)
    if transform == "jit":
        mapped = s2s.jit(mapped)
    np.testing.assert_allclose(mapped(*args), _loop(f, *args), rtol=1e-13)


@pytest.mark.parametrize("in_axes", [(None, 0), (0, None)])
def test_only_one_argument_batched_by_the_outer_vmap(in_axes):
    args = (XS[0] if in_axes[0] is None else XS, YS[0] if in_axes[1] is None else YS)
    got = s2s.vmap(row_swapped, in_axes=in_axes)(*args)
    np.testing.assert_allclose(got, _loop(row_swapped, *args, in_axes=in_axes), rtol=1e-13)


def test_grad_of_vmap_of_code_calling_vmap():
    def loss(x, ys):
        return np.sum(s2s.vmap(row)(x, ys) ** 2)

    fd = fd_grad(loss, (XS, YS), (0, 1))
    for transform in (lambda f: f, s2s.jit):
        got = transform(s2s.grad(loss, argnums=(0, 1)))(XS, YS)
        for a, b in zip(got, fd):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, args", [(row, (XS, YS)), (row_swapped, (XS, YS))],
                         ids=["row", "swapped"])
@pytest.mark.parametrize("transform", ["python", "jit"])
def test_vmap_of_grad_of_code_calling_vmap_against_finite_differences(f, args, transform):
    """The gradient code holds the inner vmap's batched code (``rt.batch_align``,
    ``rt.batch_axes``), which the outer vmap reads as code."""
    g = s2s.grad(f, argnums=(0, 1))
    mapped = s2s.vmap(g) if transform == "python" else s2s.jit(s2s.vmap(g))
    got = mapped(*args)
    for i in range(args[0].shape[0]):
        want = fd_grad(f, (args[0][i], args[1][i]), argnums=(0, 1))
        for a, b in zip(got, want):
            np.testing.assert_allclose(a[i], b, rtol=1e-6, atol=1e-8)
    looped = s2s.vmap(g, fallback="loop")(*args)
    for a, b in zip(got, looped):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
