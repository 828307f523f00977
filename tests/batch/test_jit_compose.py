"""jit(vmap(f)) and vmap(jit(f)) (issue 8): one compiled batched program, checked
against vmap's Python result and against a Python loop over the examples."""
import numpy as np
import pytest

import s2s
from s2s.errors import UnsupportedSyntaxError


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
    if x[0] > 0.5:
        return x[1]
    return x[2]


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
    assert isinstance(jitted, s2s.api_jit.Jitted) and len(jitted.signatures()) == 1
    vf(X[:3])  # another batch size: the same compiled code
    assert len(jitted.signatures()) == 1


def test_batch_size_is_not_baked_in():
    jitted = s2s.jit(s2s.vmap(loop_scalar))
    for n in (1, 3, 7):
        x = rng.normal(size=(n, 4))
        np.testing.assert_allclose(jitted(x), _loop(loop_scalar, (x,), 0), rtol=1e-12)


def test_a_helper_outside_the_subset_is_a_clear_jit_error():
    x = rng.uniform(size=(5, 3))
    with pytest.raises(UnsupportedSyntaxError, match="jit does not compile batch_mask") as e:
        s2s.jit(s2s.vmap(branchy))(x)
    assert "test_jit_compose.py" in str(e.value)
