"""Small blocks are cached by size class in the context block (``abi.FREE_LISTS``).

A compiled gradient whose loop pushes a small array on its tape per iteration makes
and frees one block per iteration; freed blocks of at most 4 KiB go on their class's
free list instead of back to the C library, and the next allocation of that class
takes one from there (this call's or the next's).  Checked through the context
block's list words, never by timing: the lists fill, stay within ``abi.CLASS_BYTES``
per class, and a block taken for ``np.zeros`` is zero even though it held an array.
"""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.backend.llvm.values import abi


def _pushes_arrays(x, w):
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        v = x[i] * w           # a small array per iteration, pushed on the tape
        v = np.sin(v) * w
        s = s + np.sum(v * v)
    return s


def _spec(j):
    spec, = j.specs.values()
    return spec


def _cached(spec):
    ctx = spec.caller.ctx
    return [ctx[abi.FREE_BYTES + c] for c in range(abi.SIZE_CLASSES)]


def _fd(f, args, k, i, h=1e-6):
    up = [np.array(a, dtype=float) for a in args]
    down = [np.array(a, dtype=float) for a in args]
    up[k].reshape(-1)[i] += h
    down[k].reshape(-1)[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


def test_freed_blocks_are_reused_and_the_gradient_is_unchanged():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(50, 5)), rng.normal(size=5)
    g = s2s.jit(s2s.grad(_pushes_arrays, argnums=(0, 1)))
    first = g(x, w)
    spec = _spec(g)
    cached = _cached(spec)
    assert sum(cached) > 0  # the blocks freed by the first call wait for the next
    assert all(n % 16 == 0 for n in cached)  # whole blocks of their class
    for _ in range(3):  # calls that take their blocks from the lists
        again = g(x, w)
        np.testing.assert_array_equal(again[0], first[0])
        np.testing.assert_array_equal(again[1], first[1])
    assert _cached(spec) == cached  # each call gives back what it took
    primal = s2s.jit(_pushes_arrays)
    for k, i in [(0, 0), (0, 123), (0, 249), (1, 0), (1, 4)]:
        assert first[k].reshape(-1)[i] == pytest.approx(_fd(primal, (x, w), k, i),
                                                         rel=1e-6, abs=1e-8)


def test_each_class_keeps_at_most_its_byte_budget():
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(100000, 5)), rng.normal(size=5)  # 9.6 MB of blocks at once
    g = s2s.jit(s2s.grad(_pushes_arrays, argnums=1))
    g(x, w)
    held = _cached(_spec(g))
    c = max(range(abi.SIZE_CLASSES), key=held.__getitem__)
    assert abi.CLASS_BYTES - abi.class_size(c) < held[c] <= abi.CLASS_BYTES  # full, no more


def _zeros_after_arrays(x, n):
    z = np.zeros(x.shape[0])
    acc = 0.0
    for i in range(n):
        t = x * 7.0 + float(i)  # a block per iteration, freed on return
        acc = acc + t[0] * t[1]
    z[0] = z[0] + acc
    return z


def test_a_zeroed_array_from_a_cached_block_is_zero():
    x = np.arange(1.0, 5.0)
    f = s2s.jit(_zeros_after_arrays)
    want = _zeros_after_arrays(x, 3)
    np.testing.assert_array_equal(f(x, 3), want)
    assert sum(_cached(_spec(f))) > 0
    for _ in range(3):  # np.zeros now takes a block that held x * 7.0 + i
        np.testing.assert_array_equal(f(x, 3), want)


def _one_block_per_iteration(x, k):
    s = 0.0
    for i in range(k):
        t = x * float(i + 1)
        s = s + t[0] * t[-1]
    return s


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 10, 11, 12, 100, 505, 506, 507, 2000])
def test_a_block_goes_to_the_class_of_its_size(n):
    x = np.linspace(0.5, 1.5, n)
    f = s2s.jit(_one_block_per_iteration)
    assert f(x, 3) == _one_block_per_iteration(x, 3)
    total = 8 * n + abi.HEADER  # the array's bytes and the block's header
    fits = [c for c in range(abi.SIZE_CLASSES) if abi.class_size(c) >= total]
    want = [0] * abi.SIZE_CLASSES
    if fits:  # the smallest class that holds it; a larger block goes back to the C library
        want[fits[0]] = abi.class_size(fits[0])
    assert _cached(_spec(f)) == want
    assert f(x, 3) == _one_block_per_iteration(x, 3)  # now from the list
    assert _cached(_spec(f)) == want
