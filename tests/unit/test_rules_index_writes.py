"""Rules of the index-write helpers (``s2s_runtime.index_writes``), called directly.

Oracles: central finite differences in float64 for the JVP templates and the
dot-product identity <ct, J t> = sum_i <vjp_i(ct), t_i> for the VJP templates;
the helpers that write in place get fresh copies of their arguments at every
call.  Also: duplicate integer indices (the last write wins).
"""
import numpy as np
import pytest

import s2s_runtime as rt
from s2s.rules import lookup

RNG = np.random.default_rng(3)


def _call(fn, args):
    return fn(*[np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args])


def _fd(fn, args, active, tans, eps=1e-6):
    def at(s):
        moved = list(args)
        for i, t in zip(active, tans):
            moved[i] = args[i] + s * t
        return np.asarray(_call(fn, moved), dtype=float)
    return (at(eps) - at(-eps)) / (2 * eps)


def check(fn, args, active):
    rule = lookup(fn)
    out = _call(fn, args)
    tans = [RNG.normal(size=np.shape(args[i])) for i in active]
    jv = sum(np.asarray(rule.jvps[i](t, out, *args)) for i, t in zip(active, tans))
    np.testing.assert_allclose(jv, _fd(fn, args, active, tans), rtol=1e-6, atol=1e-8)
    ct = RNG.normal(size=np.shape(out))
    lhs = np.sum(ct * _fd(fn, args, active, tans))
    rhs = 0.0
    for i, t in zip(active, tans):
        v = rule.vjps[i](ct, out, *args)
        assert np.shape(v) == np.shape(args[i])
        rhs += np.sum(np.asarray(v) * t)
    assert abs(lhs - rhs) <= 1e-6 * (1 + abs(lhs))
    for i in range(len(rule.vjps)):  # the others are indices / shapes: zero templates
        if i in active or rule.vjps[i] is None or i >= len(args):
            continue
        assert not np.any(rule.vjps[i](ct, out, *args))


INDICES = [1, slice(1, 3), (slice(None), 0), np.array([True, False, True, True]),
           np.array([2, 0, 2])]


@pytest.mark.parametrize("index", INDICES, ids=range(len(INDICES)))
@pytest.mark.parametrize("fn", [rt.index_set, rt.index_updated], ids=lambda f: f.__name__)
def test_writes(fn, index):
    y = RNG.normal(size=(4, 2)) if isinstance(index, tuple) else RNG.normal(size=4)
    v = RNG.normal(size=np.shape(y[index]))
    check(fn, (y, index, v), [0, 2])
    check(fn, (y, index, 0.7), [0, 2])  # a number broadcast over the places


@pytest.mark.parametrize("index", INDICES, ids=range(len(INDICES)))
def test_vjp_helpers(index):
    g = RNG.normal(size=(4, 2)) if isinstance(index, tuple) else RNG.normal(size=4)
    v = RNG.normal(size=np.shape(g[index]))
    check(rt.index_set_vjp_base, (g, index), [0])
    check(rt.index_set_vjp_value, (g, index, v), [0])
    check(rt.index_set_vjp_value, (g, index, 0.3), [0])
    check(rt.index_set_vjp_value_transpose, (v, g, index, v), [0])


def test_reads():
    y = RNG.normal(size=(3, 2))
    check(rt.read_copy, (y, 1), [0])
    check(rt.read_copy, (y, (1, 0)), [0])
    check(rt.read_checked, (y, (2, 1), "f.py:1"), [0])
    row = rt.read_copy(y, 0)
    y[0, 0] = 99.0
    assert row[0] != 99.0  # a copy, not a view
    with pytest.raises(ValueError, match="f.py:3: s2s: this reads a view"):
        rt.read_checked(y, 0, "f.py:3")


def test_duplicate_indices_only_the_last_write_counts():
    y = np.zeros(3)
    out = rt.index_updated(y, np.array([0, 2, 0]), np.array([1.0, 2.0, 3.0]))
    assert list(out) == [3.0, 0.0, 2.0] and not y.any()
    g = np.array([10.0, 20.0, 30.0])
    assert list(rt.index_set_vjp_value(g, np.array([0, 2, 0]), np.zeros(3))) == [0.0, 30.0, 10.0]
    assert list(rt.index_set_vjp_base(g, np.array([0, 2, 0]))) == [0.0, 20.0, 0.0]
