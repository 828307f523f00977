"""Rules of the list, dict, sequence and record helpers (``s2s/rules/containers.py``),
called directly.

Oracles (float64): central finite differences for the JVP templates (the sum of
the active parameters' contributions against ``(f(x + eps t) - f(x - eps t)) /
(2 eps)``) and the dot-product identity ``<ct, J t> == sum_i <vjp_i(ct), t_i>`` for
the VJP templates, with ``J t`` from finite differences.  Containers are compared
leaf by leaf on their numeric leaves (keys and positions are not differentiated).
A coverage test keeps every rule of the module exercised.
"""
import dataclasses
import typing

import numpy as np
import pytest

import s2s_runtime as rt
from s2s.rules import lookup
from s2s.rules.registry import all_rules

RNG = np.random.default_rng(5)
EPS = 1e-6


def rn(*shape):
    return RNG.standard_normal(shape) if shape else float(RNG.standard_normal())


@dataclasses.dataclass
class Rec:
    a: float
    b: np.ndarray
    c: float = dataclasses.field(default=0.0, init=False)


class Pair(typing.NamedTuple):
    a: float
    b: float


# --- numeric leaves (a small walk of its own: dict in sorted key order) ---------------------
def _is_num(x):
    return isinstance(x, (float, int, np.ndarray, np.number)) and not isinstance(x, bool)


def _leaves(x):
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in _leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _leaves(item)]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return [v for f in dataclasses.fields(x) for v in _leaves(getattr(x, f.name))]
    return [x] if _is_num(x) else []


def _map(f, x, *rest):
    """``x`` with each numeric leaf replaced by ``f(leaf, matching leaves of rest)``."""
    if isinstance(x, dict):
        return {k: _map(f, v, *(r[k] for r in rest)) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [_map(f, v, *(r[i] for r in rest)) for i, v in enumerate(x)]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return rt.records.record_map(lambda *vs: _map(f, *vs), x, *rest)
    return f(x, *rest) if _is_num(x) else x


def _rand_like(x):
    return _map(lambda v: rn(*np.shape(v)) if np.ndim(v) else rn(), x)


def _dot(a, b):
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb), (a, b)
    return sum(float(np.sum(np.asarray(u) * np.asarray(w))) for u, w in zip(la, lb))


def _fd(fn, args, active, tans):
    plus, minus = list(args), list(args)
    for i, t in zip(active, tans):
        plus[i] = _map(lambda v, w: v + EPS * w, args[i], t)
        minus[i] = _map(lambda v, w: v - EPS * w, args[i], t)
    return _map(lambda p, m: (np.asarray(p) - np.asarray(m)) / (2 * EPS), fn(*plus), fn(*minus))


def _close(a, b, what):
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb), (what, a, b)
    for u, w in zip(la, lb):
        assert np.shape(u) == np.shape(w), (what, np.shape(u), np.shape(w))
        np.testing.assert_allclose(u, w, rtol=1e-6, atol=1e-7, err_msg=what)


def check(fn, args, active):
    """JVP (FD), VJP (dot-product identity) and zero templates of ``fn`` at ``args``."""
    rule = lookup(fn)
    assert rule is not None and not rule.nondiff, fn
    assert len(rule.jvps) == len(rule.vjps)
    what = getattr(fn, "__name__", repr(fn))
    out = fn(*args)
    tans = [_rand_like(args[i]) for i in active]
    total = None
    for i, t in zip(active, tans):
        c = rule.jvps[i](t, out, *args)
        total = c if total is None else _map(lambda u, w: u + w, total, c)
    expected = _fd(fn, args, active, tans)
    _close(total, expected, what)
    ct = _rand_like(out)
    lhs = _dot(ct, expected)
    rhs = 0.0
    for i, t in zip(active, tans):
        v = rule.vjps[i](ct, out, *args)
        assert len(_leaves(v)) == len(_leaves(args[i])), (what, i, v, args[i])
        rhs += _dot(v, t)
    assert abs(lhs - rhs) <= 1e-6 * (1 + abs(lhs)), (what, lhs, rhs)
    zero = rule.zero_params()
    names = rule.param_names()
    for i in range(min(len(rule.vjps), len(args))):  # positions, keys, shapes: zero
        if i in active or names[i] not in zero:
            continue
        assert all(np.all(np.asarray(v) == 0) for v in _leaves(rule.vjps[i](ct, out, *args)))
        assert all(np.all(np.asarray(v) == 0) for v in _leaves(rule.jvps[i](ct, out, *args)))


def _lst():
    return [rn(), rn(2), rn()]


def _dct():
    return {"a": rn(), "b": rn(3)}


L = _lst()
D = _dct()
CASES = [
    (rt.list_append, (_lst(), rn(2)), [0, 1]),
    (rt.list_append, ([], rn()), [1]),
    (rt.list_extend, (_lst(), [rn(), rn(3)]), [0, 1]),
    (rt.list_extend, (_lst(), (rn(), rn())), [0, 1]),
    (rt.list_extend, (_lst(), rn(2, 3)), [0, 1]),
    (rt.list_insert, (_lst(), 0, rn(2)), [0, 2]),
    (rt.list_insert, (_lst(), 2, rn()), [0, 2]),
    (rt.list_insert, (_lst(), 3, rn()), [0, 2]),
    (rt.list_remove, (L, 1, L[1]), [0]),
    (rt.list_remove, (L, 2, L[2]), [0]),
    (rt.list_set, (L, 1, rn(4), L[1]), [0, 2]),
    (rt.list_set, (L, 0, rn(), L[0]), [0, 2]),
    (rt.seq_concat, (_lst(), [rn(2)]), [0, 1]),
    (rt.seq_concat, ((rn(), rn(2)), (rn(),)), [0, 1]),
    (rt.seq_repeat, ([rn(), rn(2)], 3), [0]),
    (rt.seq_repeat, ((rn(),), 2), [0]),
    (rt.seq_repeat, ([rn()], 0), [0]),
    (rt.seq_repeat_ct, ([rn(), rn(2), rn(), rn(2)], [rn(), rn(2)]), [0]),
    (rt.seq_repeat_ct, ((rn(), rn()), (rn(),)), [0]),
    (rt.seq_tile, ([rn(), rn(2)], [rn(), rn(2), rn(), rn(2)]), [0]),
    (sorted, ([0.3, -1.2, 0.7],), [0]),
    (sorted, ((0.3, -1.2, 0.7),), [0]),
    (sorted, (np.array([0.3, -1.2, 0.7]),), [0]),
    (sorted, ({"b": 1.0, "a": 2.0},), [0]),
    (rt.sorted_ct, ([rn(), rn(), rn()], [0.3, -1.2, 0.7]), [0]),
    (rt.sorted_tangent, ([rn(), rn(), rn()], [0.3, -1.2, 0.7]), [0]),
    (rt.reversed_items, (_lst(),), [0]),
    (rt.reversed_items, (rn(3, 2),), [0]),
    (rt.sequence, (_lst(),), [0]),
    (rt.sequence, ((rn(), rn()),), [0]),
    (rt.sequence, (rn(3, 2),), [0]),
    (rt.sequence, (_dct(),), [0]),
    (list, ((rn(), rn(2)),), [0]),
    (list, (rn(3, 2),), [0]),
    (list, (rn(3),), [0]),
    (tuple, (_lst(),), [0]),
    (dict, (_dct(),), [0]),
    (rt.seq_cast, ([rn(2), rn(2)], rn(2, 2)), [0]),
    (rt.seq_cast, ([rn(), rn()], (rn(), rn())), [0]),
    (rt.seq_cast, ([rn(), rn()], Pair(1.0, 2.0)), [0]),
    (rt.seq_cast, ([rn(), rn()], {"a": 1.0, "b": 2.0}), [0]),
    (rt.seq_cast_transpose, (rn(2, 2), [rn(2), rn(2)], rn(2, 2)), [0]),
    (rt.seq_cast_transpose, ({"a": rn(), "b": rn()}, ["a", "b"], {"a": 1.0, "b": 2.0}), [0]),
    (rt.max_of, ([0.3, 1.7, -0.2],), [0]),
    (rt.max_of, (np.array([0.3, 1.7, -0.2]),), [0]),
    (rt.min_of, ((0.3, 1.7, -0.2),), [0]),
    (rt.min_of, (np.array([0.3, 1.7, -0.2]),), [0]),
    (rt.extreme_ct, (rn(), [0.3, 1.7, -0.2], 1.7), [0]),
    (rt.extreme_ct, (rn(), np.array([0.3, 1.7, -0.2]), 1.7), [0]),
    (rt.extreme_tangent, ([rn(), rn(), rn()], [0.3, 1.7, -0.2], 1.7), [0]),
    (rt.dict_set, (D, "a", rn(2), D["a"]), [0, 2]),
    (rt.dict_set, (D, "z", rn(), rt.MISSING), [0, 2]),
    (rt.dict_reset, ({"a": rn(2), "b": rn(3)}, "a", D["a"]), [0]),
    (rt.dict_reset, ({"a": rn(), "b": rn(3), "z": rn()}, "z", rt.MISSING), [0]),
    (rt.dict_remove, (D, "a", D["a"]), [0]),
    (rt.dict_remove, (D, "z", rt.MISSING), [0]),
    (rt.dict_restore, ({"b": rn(3)}, "a", D["a"]), [0]),
    (rt.dict_restore, (_dct(), "z", rt.MISSING), [0]),
    (rt.dict_get, (_dct(), "b", rn(3)), [0, 2]),
    (rt.dict_get, (_dct(), "z", rn(3)), [0, 2]),
    (rt.dict_get_ct, (rn(3), D, "b"), [0]),
    (rt.dict_get_ct, (rn(3), D, "z"), [0]),
    (rt.dict_default_ct, (rn(3), D, "b", rn(3)), [0]),
    (rt.dict_default_ct, (rn(3), D, "z", rn(3)), [0]),
    (rt.dict_update, (_dct(), {"b": rn(3), "c": rn()}), [0, 1]),
    (rt.dict_update_ct, ({"a": rn(), "b": rn(3), "c": rn()}, D, {"b": rn(3), "c": rn()}), [0]),
    (rt.dict_subset, ({"a": rn(), "b": rn(3), "c": rn()}, {"b": rn(3), "c": rn()}), [0]),
    (rt.dict_values, (_dct(),), [0]),
    (rt.dict_items, (_dct(),), [0]),
    (rt.dict_values_ct, ([rn(), rn(3)], D), [0]),
    (rt.dict_values_of, ({"b": rn(3), "a": rn()}, D), [0]),
    (rt.dict_items_ct, ([(None, rn()), (None, rn(3))], D), [0]),
    (rt.dict_items_of, ({"b": rn(3), "a": rn()}, D), [0]),
    (rt.make_record, (Rec, (rn(), rn(2))), [1]),
    (rt.make_record, (Pair, (rn(), rn())), [1]),
    (rt.record_fields, (Rec(rn(), rn(2)),), [0]),
    (rt.record_fields, (Pair(rn(), rn()),), [0]),
    (rt.record_like, (Rec(1.0, np.zeros(2)), (rn(), rn(2))), [1]),
    (rt.field_tangent, (Rec(rn(), rn(2)), "b"), [0]),
    (rt.field_tangent, (Pair(rn(), rn()), "a"), [0]),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{getattr(c[0], '__name__', c[0])}-{i}"
                                             for i, c in enumerate(CASES)])
def test_templates_against_finite_differences(case):
    fn, args, active = case
    check(fn, args, active)


def test_every_rule_of_the_module_is_exercised():
    tested = {c[0] for c in CASES}
    mine = {r.fn for r in all_rules() if not r.nondiff and
            next(t for t in r.vjps if t is not None).__module__ == "s2s.rules.containers"}
    assert mine - tested == set(), sorted(getattr(f, "__name__", f) for f in mine - tested)


def test_positions_keys_and_membership_are_not_differentiated():
    from s2s.frontend.desugar import contains, not_contains
    for fn in (rt.item_index, rt.insert_index, rt.old_item, rt.dict_keys, contains,
               not_contains, any, all):
        assert lookup(fn) is not None and lookup(fn).nondiff, fn


def test_positions_follow_python():
    l = [1.0, 2.0, 3.0]
    assert [rt.item_index(l, i) for i in (0, 2, -1, -3)] == [0, 2, 2, 0]
    with pytest.raises(IndexError):
        rt.item_index(l, 3)
    with pytest.raises(TypeError):
        rt.item_index(l, 1.0)
    for i in (-10, -1, 0, 2, 3, 10):
        expected = list(l)
        expected.insert(i, 9.0)
        assert rt.list_insert(l, rt.insert_index(l, i), 9.0) == expected
    assert rt.old_item({"a": 1.0}, "b") is rt.MISSING and rt.old_item({"a": 1.0}, "a") == 1.0


def test_writes_return_new_containers():
    l, d = [1.0, 2.0], {"a": 1.0}
    assert rt.list_append(l, 3.0) == [1.0, 2.0, 3.0] and l == [1.0, 2.0]
    assert rt.list_set(l, 0, 5.0, 1.0) == [5.0, 2.0] and l == [1.0, 2.0]
    assert rt.dict_set(d, "b", 2.0, rt.MISSING) == {"a": 1.0, "b": 2.0} and d == {"a": 1.0}
    assert rt.dict_remove(d, "a", 1.0) == {} and d == {"a": 1.0}


def test_sorted_follows_pythons_stable_order():
    items = [2.0, 1.0, 2.0, 0.5]
    for key, reverse in ((None, False), (None, True), (abs, False), (lambda v: -v, True)):
        order = rt.containers.sort_order(items, key, reverse)
        assert [items[i] for i in order] == sorted(items, key=key, reverse=reverse)
    ct = rt.sorted_ct([10.0, 20.0, 30.0, 40.0], items, None, True)
    assert ct == [10.0, 30.0, 20.0, 40.0]  # ties: the first 2.0 comes first


def test_the_first_of_tied_items_gets_the_derivative():
    ct = rt.extreme_ct(1.0, [2.0, 1.0, 2.0], 2.0)
    assert ct == [1.0, 0.0, 0.0]
    assert rt.extreme_tangent([5.0, 6.0, 7.0], np.array([2.0, 1.0, 2.0]), 2.0) == 5.0


def test_properties_of_records_are_not_differentiated():
    @dataclasses.dataclass
    class WithProperty:
        a: float

        @property
        def twice(self):
            return 2 * self.a

    with pytest.raises(TypeError, match="not a field"):
        rt.field_tangent(WithProperty(1.0), "twice")
    with pytest.raises(TypeError, match="not a field"):
        rt.getattr_vjp(1.0, WithProperty(1.0), "twice")
