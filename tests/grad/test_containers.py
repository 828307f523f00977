"""Lists, dicts and dataclasses in differentiated code (both modes, second order).

In-place changes of a list or dict the function made itself and shares with
nothing become values (``s2s/passes/containers.py``); anything that may be
shared is a clear error when differentiated values flow through it.  Dataclass
instances are pytrees.  Oracles: central finite differences and the jvp/vjp
dot-product identity (``container_checks``); the tape is checked in the
generated code.
"""
import dataclasses
import inspect
import re
import typing

import numpy as np
import pytest

import s2s
from s2s.tree_util import register_dataclass, tree_flatten, tree_unflatten

from .container_checks import check_all, check_grad, check_jvp


# --- lists ------------------------------------------------------------------------------------
def append_in_loop(x):
    out = []
    for i in range(4):
        out.append(np.sin(x * i))
    return np.sum(np.stack(out) ** 2)


def extend_and_iadd(x):
    l = [x]
    l.extend([x * 2, x * x])
    l += (np.cos(x),)
    return l[0] * l[1] + l[2] * l[3]


def pops(x):
    l = [x, 2 * x, x * x]
    a = l.pop()
    b = l.pop(0)
    return a * b + l[0] * len(l)


def inserts(x):
    l = [x, x * x]
    l.insert(1, np.sin(x))
    l.insert(-1, 3.0 * x)
    l.insert(100, x ** 3)
    return l[0] * l[1] + l[2] * l[3] + l[4]


def item_assignment(x):
    l = [x, x * x, 1.0]
    l[1] = l[1] * 3.0
    l[-1] = np.sin(x)
    l[0] += x
    return l[0] * l[1] + l[2]


def item_assignment_in_loop(xs):
    l = [0.0] * len(xs)
    for i in range(len(xs)):
        l[i] = xs[i] * xs[i]
    return sum(l)


def iterate_after_building(x):
    out = []
    for i in range(3):
        out.append(x ** i)
    s = 0.0
    for v in out:
        s = s + v * v
    for i, v in enumerate(out):
        s = s + i * v
    for a, b in zip(out, reversed(out)):
        s = s + a * b
    return s


def reads_while_appending(x):
    out = [x]
    for i in range(3):
        out.append(out[-1] * x + out[0])
    return out[-1]


def stack_of_pops(x):
    stack = [x, x * 2, x * 3]
    s = 0.0
    while stack:
        v = stack.pop()
        s = s * x + v
    return s


def list_of_lists(x):
    rows = []
    for i in range(3):
        row = []
        for j in range(2):
            row.append(x * i + j)
        rows.append(row)
    return np.sum(np.array(rows) ** 2)


def clear_copy_alias(x):
    a = [x, x * 2]
    b = a.copy()
    b.append(x * x)
    c = a  # another name for the same list
    c.append(np.sin(x))
    a.clear()
    a.append(x * 5)
    return sum(b) * c[0] + len(b)


def _append_twice(l, v):
    l.append(v * 2.0)
    l.append(v)


def through_a_helper(x):
    l = [x]
    _append_twice(l, x * x)
    return l[1] * l[2] + l[0]


def concatenation_and_repetition(x):
    l = [x] * 3 + [x * 2]
    t = (x, 2.0) + (x * x,)
    t += (np.sin(x),)
    return l[0] * l[3] + l[2] + t[0] * t[2] + t[3]


# --- dicts ------------------------------------------------------------------------------------
def dict_writes(x):
    d = {}
    d["a"] = x * 2
    d["b"] = np.sin(x)
    d["a"] = d["a"] * d["b"]
    return d["a"] + d["b"]


def dict_readers(x):
    d = {"a": x}
    s = d.get("a", 0.0) * d.get("b", x * 3) + d.get("c", 1.0)
    if "a" in d and "z" not in d:
        s = s + d["a"] ** 2
    return s


def dict_update_setdefault_pop(x):
    d = {"a": x, "b": 2.0}
    d.update({"b": x * x, "c": 3 * x})
    d.update(e=np.sin(x))
    v = d.setdefault("a", 5.0)
    w = d.setdefault("f", x * x)
    a = d.pop("a")
    c = d.pop("z", x * 5)
    return d["b"] * d["c"] + d["e"] * v * w + a * c + len(d)


def dict_views_in_loops(x):
    d = {"a": x, "b": x * x}
    s = 0.0
    for k, v in d.items():
        s = s + v * len(k)
    for v in d.values():
        s = s + np.sin(v)
    for k in d.keys():
        s = s + d[k]
    for k in d:
        s = s * d[k]
    return s


def dict_built_in_loop(x):
    d = {}
    for i in range(3):
        d[str(i)] = x ** i
    for k in d:
        d[k] = d[k] * 2.0  # the keys stay the same
    return d["2"] * d["1"] + len(d)


def dict_argument_readers(p):
    s = p.get("w", 1.0) * p["b"] + sum(v * v for v in p.values())
    for k, v in p.items():
        s = s + v * len(k)
    return s


LIST_CASES = [append_in_loop, extend_and_iadd, pops, inserts, item_assignment,
              iterate_after_building, reads_while_appending, stack_of_pops, list_of_lists,
              clear_copy_alias, through_a_helper, concatenation_and_repetition,
              dict_writes, dict_readers, dict_update_setdefault_pop, dict_views_in_loops,
              dict_built_in_loop]


@pytest.mark.parametrize("f", LIST_CASES, ids=lambda f: f.__name__)
def test_lists_and_dicts_made_here(f):
    check_all(f, 0.7)
    assert s2s.value_and_grad(f)(0.7)[0] == pytest.approx(f(0.7))


def loops_over_a_list_argument(xs):
    s = 0.0
    for v in xs:
        s = s + v * v
    for i, v in enumerate(xs):
        s = s + i * np.sin(v)
    for a, b in zip(xs, reversed(xs)):
        s = s + a * b
    return s


def sorted_and_truth_values(xs):
    middle = sorted(xs)[1] * sorted(v * v for v in xs)[-1]
    return middle if any(v > 0 for v in xs) and not all(v > 1 for v in xs) else -middle


def sorted_keys(p):
    s = 0.0
    for k in sorted(p):
        s = s * 2.0 + np.sin(p[k])
    return s


@pytest.mark.parametrize("f, x", [
    (sorted_and_truth_values, [0.3, -0.9, 0.5]),
    (sorted_and_truth_values, np.array([0.3, -0.9, 0.5])),
    (sorted_keys, {"b": 0.3, "a": -0.7, "c": 1.1}),
    (item_assignment_in_loop, [0.3, 0.5, -0.2]),
    (dict_argument_readers, {"w": 0.7, "b": 0.3}),
    (loops_over_a_list_argument, [0.3, 0.5, -0.2]),
    (loops_over_a_list_argument, (0.3, 0.5)),
    (loops_over_a_list_argument, np.array([0.3, 0.5, -0.2])),
], ids=lambda v: getattr(v, "__name__", ""))
def test_containers_of_arguments(f, x):
    check_all(f, x)  # (forward mode indexes loops over list arguments: passes/argument_loops)


def test_a_list_returned_as_the_output():
    def f(x):
        out = []
        for i in range(3):
            out.append(x * i)
        out[0] = np.sin(x)
        return out
    out, pullback = s2s.vjp(f, 0.4)
    assert out == f(0.4)
    (g,) = pullback([1.0, 2.0, 3.0])
    assert g == pytest.approx(np.cos(0.4) + 2.0 * 1 + 3.0 * 2)
    _, t = s2s.jvp(f, (0.4,), (1.0,))
    assert t == pytest.approx([np.cos(0.4), 1.0, 2.0])


def test_append_in_a_loop_records_nothing_on_the_tape_for_the_list():
    src = _source(append_in_loop, 0.7)
    assert "rt.list_append(out" in src
    pushed = re.findall(r"tape = \((\w+), tape\)", src)
    assert pushed and not [n for n in pushed if n.startswith("out")], pushed


def test_the_original_list_is_left_alone():
    def f(x):
        a = [x, 2.0]
        b = list(a)
        b[0] = x * 3.0
        b.append(x)
        return a[0] * b[0] + len(a)
    check_all(f, 0.5)
    assert s2s.value_and_grad(f)(0.5) == pytest.approx((f(0.5), 2 * 3 * 0.5))


# --- what may be shared: clear errors ----------------------------------------------------------
def stored_then_changed(x):
    a = [x]
    b = [a]
    a.append(2 * x)
    return b[0][1]


def bound_on_some_paths(x):
    a = [x]
    b = a if x > 0 else [0.0]
    b.append(x * 2)
    return a[-1]


def changed_while_iterated(x):
    l = [x, 2 * x]
    s = 0.0
    for v in l:
        if len(l) < 4:
            l.append(v * 3)
        s = s + v
    return s


def item_of_a_dict_changed(x):
    d = {"l": []}
    d["l"].append(x)
    return d["l"][0]


def argument_changed(x, out):
    out.append(x * 2.0)
    return out[-1]


@pytest.mark.parametrize("f, args", [
    (stored_then_changed, (0.5,)), (bound_on_some_paths, (0.5,)), (changed_while_iterated, (0.5,)),
    (item_of_a_dict_changed, (0.5,)), (argument_changed, (0.5, [1.0])),
], ids=lambda v: getattr(v, "__name__", ""))
def test_changes_of_what_may_be_shared_are_clear_errors(f, args):
    expected = f(*[list(a) if isinstance(a, list) else a for a in args])  # Python runs it
    tangents = (1.0,) + tuple([0.0] * len(a) for a in args[1:])
    for transform in (lambda: s2s.grad(f)(*args), lambda: s2s.jvp(f, args, tangents)):
        with pytest.raises(s2s.UnsupportedSyntaxError, match="may be shared") as info:
            transform()
        assert f.__code__.co_filename in str(info.value)
    assert expected == f(*[list(a) if isinstance(a, list) else a for a in args])


def test_in_place_only_methods_are_clear_errors():
    def f(x):
        l = [2 * x, x]
        l.sort()
        return l[0]
    for transform in (lambda: s2s.grad(f)(0.5), lambda: s2s.jvp(f, (0.5,), (1.0,))):
        with pytest.raises(s2s.UnsupportedSyntaxError, match=r"\.sort\(\)"):
            transform()


def test_undifferentiated_changes_keep_python_semantics():
    def f(x, n):
        l = [1.0, 2.0]
        for v in l:  # changed while iterated: left in place, so the loop sees the new items
            if len(l) < n:
                l.append(v + 10.0)
        return x * len(l)
    assert s2s.grad(f)(0.5, 4) == 4.0


# --- dataclasses and namedtuples ---------------------------------------------------------------
@dataclasses.dataclass
class Params:
    a: float
    b: np.ndarray


@dataclasses.dataclass(frozen=True)
class Frozen:
    w: np.ndarray
    s: float = 1.0


@dataclasses.dataclass
class WithDefaults:
    x: float
    y: float = 2.0
    tags: list = dataclasses.field(default_factory=list)
    extra: float = dataclasses.field(default=0.5, init=False)


class Pair(typing.NamedTuple):
    u: float
    v: float = 3.0


@dataclasses.dataclass
class WithPostInit:
    a: float

    def __post_init__(self):
        self.a = self.a * 2


@dataclasses.dataclass
class WithProperty:
    a: float

    @property
    def squared(self):
        return self.a ** 2

    def scaled(self, k):
        return self.a * k


P0 = Params(0.7, np.array([0.3, -0.5]))


def reads_fields(p):
    return p.a * np.sum(p.b ** 2)


def builds_records(p):
    q = Frozen(p.b * 2.0, s=p.a)
    k = WithDefaults(p.a)
    n = Pair(p.a * 2)
    return np.sum(q.w) * q.s + k.x * k.y * k.extra + n.u * n.v + len(k.tags)


def records_in_a_list(p):
    ps = [Params(p.a * i, p.b) for i in range(3)]
    return sum(q.a * np.sum(q.b) for q in ps)


def calls_a_method(w):
    return w.scaled(3.0) * w.a


@pytest.mark.parametrize("f, x", [
    (reads_fields, P0), (builds_records, P0), (records_in_a_list, P0),
    (calls_a_method, WithProperty(0.6)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_dataclass_arguments(f, x):
    check_all(f, x)
    g = s2s.grad(f)(x)
    assert type(g) is type(x)


def test_grad_of_a_dataclass_is_that_dataclass():
    g = s2s.grad(reads_fields)(Params(2.0, np.array([3.0])))
    assert isinstance(g, Params)
    assert g.a == pytest.approx(9.0) and g.b == pytest.approx([12.0])


def test_records_made_inside_are_outputs():
    def f(x):
        return Params(x * 2, np.array([x, x * x]))
    out, pullback = s2s.vjp(f, 0.5)
    assert isinstance(out, Params) and out.a == 1.0
    (g,) = pullback(Params(1.0, np.array([1.0, 1.0])))
    assert g == pytest.approx(2.0 + 1.0 + 2 * 0.5)
    _, t = s2s.jvp(f, (0.5,), (1.0,))
    assert isinstance(t, Params) and t.a == 2.0 and t.b == pytest.approx([1.0, 1.0])

    def g2(x):
        return Pair(x, x * x)
    out, pullback = s2s.vjp(g2, 0.5)
    assert out == Pair(0.5, 0.25) and pullback(Pair(1.0, 2.0)) == (pytest.approx(3.0),)


def test_grad_of_a_record_output_is_a_clear_error():
    with pytest.raises(TypeError, match="scalar-output"):
        s2s.grad(lambda x: Params(x, np.zeros(1)))(0.5)


def test_records_nested_in_containers():
    d = {"p": P0, "q": [Frozen(np.array([1.0, 2.0]))]}

    def f(d):
        return d["p"].a * d["q"][0].w[1] + np.sum(d["p"].b * d["q"][0].w)
    g = s2s.grad(f)(d)
    assert isinstance(g["p"], Params) and isinstance(g["q"][0], Frozen)
    assert g["p"].a == pytest.approx(2.0) and g["q"][0].w == pytest.approx([0.3, 0.7 - 0.5])
    check_jvp(f, d)


def test_register_dataclass_keeps_meta_fields_out_of_the_leaves():
    @dataclasses.dataclass
    class Layer:
        w: np.ndarray
        name: str
    register_dataclass(Layer, data_fields=["w"], meta_fields=["name"])
    leaves, tree = tree_flatten(Layer(np.ones(2), "dense"))
    assert len(leaves) == 1 and tree_unflatten(tree, [np.zeros(2)]).name == "dense"

    def f(layer):
        return np.sum(layer.w ** 2)
    g = s2s.grad(f)(Layer(np.array([1.0, 2.0]), "dense"))
    assert g.name == "dense" and g.w == pytest.approx([2.0, 4.0])


def test_dataclass_pytree_structure():
    leaves, tree = tree_flatten(WithDefaults(1.0, 2.0, [3.0]))
    assert leaves == [1.0, 2.0, 3.0, 0.5]
    back = tree_unflatten(tree, [4.0, 5.0, 6.0, 7.0])
    assert (back.x, back.y, back.tags, back.extra) == (4.0, 5.0, [6.0], 7.0)
    assert "WithDefaults" in repr(tree)
    frozen = tree_unflatten(tree_flatten(Frozen(np.ones(1)))[1], [np.zeros(1), 2.0])
    assert isinstance(frozen, Frozen) and frozen.s == 2.0


def test_what_records_do_not_take_is_a_clear_error():
    with pytest.raises(s2s.UnsupportedSyntaxError, match="__post_init__"):
        s2s.grad(lambda x: WithPostInit(x).a)(0.5)
    with pytest.raises(TypeError, match="not a field"):
        s2s.grad(lambda w: w.squared)(WithProperty(0.5))
    with pytest.raises(TypeError, match="not a field"):
        s2s.jvp(lambda w: w.squared, (WithProperty(0.5),), (WithProperty(1.0),))


def _source(f, *args):
    g = s2s.grad(f)
    g(*args)
    gens = [v[0] for v in g.cache.values() if isinstance(v, tuple)]
    return inspect.getsource(gens[0])
