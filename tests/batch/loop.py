"""The oracle of the batching tests: ``f`` called once per example in a Python loop
(nothing here imports s2s), the results stacked on the output axis."""
from __future__ import annotations

import numpy as np

from tests.grad.oracles import flatten


def _take(value, axis, k):
    if axis is None:
        return value
    if isinstance(axis, int):
        leaves, build = flatten(value)
        return build([np.take(np.asarray(v), k, axis=axis) if np.ndim(v) else v
                      for v in leaves])
    if isinstance(axis, dict):
        return {key: _take(value[key], axis[key], k) for key in value}
    return type(value)(_take(v, a, k) for v, a in zip(value, axis))


def batch_size(args, in_axes):
    axes = in_axes if isinstance(in_axes, (tuple, list)) else [in_axes] * len(args)
    for a, ax in zip(args, axes):
        if ax is None:
            continue
        if isinstance(ax, int):
            return np.shape(flatten(a)[0][0])[ax]
        if isinstance(ax, dict):
            return batch_size([a[k] for k in ax], [ax[k] for k in ax])
        return batch_size(list(a), list(ax))
    raise ValueError("nothing mapped")


def loop(f, args, in_axes=0, out_axes=0):
    """``vmap(f, in_axes, out_axes)(*args)`` computed by a loop over the examples."""
    n = batch_size(args, in_axes)
    axes = in_axes if isinstance(in_axes, (tuple, list)) else [in_axes] * len(args)
    outs = [f(*[_take(a, ax, k) for a, ax in zip(args, axes)]) for k in range(n)]
    leaves0, build = flatten(outs[0])
    per_leaf = [np.stack([np.asarray(flatten(o)[0][j]) for o in outs], axis=0)
                for j in range(len(leaves0))]
    if isinstance(out_axes, int):
        per_leaf = [np.moveaxis(x, 0, out_axes) for x in per_leaf]
    return build(per_leaf)


def assert_close(actual, expected, rtol=1e-10, atol=1e-12):
    la, _ = flatten(actual)
    le, _ = flatten(expected)
    assert len(la) == len(le), (actual, expected)
    for a, e in zip(la, le):
        assert np.shape(a) == np.shape(e), (np.shape(a), np.shape(e))
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol)
