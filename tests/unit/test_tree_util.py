"""Tests for the pytree implementation (``s2s.tree_util`` / ``s2s_runtime.tree``).

Expected values are written out by hand (leaf orders, reprs, counts as JAX
defines them), not derived from the implementation under test.
"""

import collections
import copy
import subprocess
import sys

import numpy as np
import pytest

import s2s_runtime
from s2s_runtime import tree as rt_tree
from s2s.tree_util import (PyTreeDef, register_pytree_node, tree_flatten, tree_leaves, tree_map,
                           tree_structure, tree_unflatten)

Point = collections.namedtuple("Point", ["x", "y"])
Other = collections.namedtuple("Other", ["x", "y"])


class Box:
    """A registered node: two children and a hashable label as aux data."""

    def __init__(self, a, b, label="box"):
        self.a, self.b, self.label = a, b, label

    def __eq__(self, other):
        return (type(other) is Box and (self.a, self.b, self.label)
                == (other.a, other.b, other.label))

    def __repr__(self):
        return f"Box({self.a!r}, {self.b!r}, {self.label!r})"


register_pytree_node(Box, lambda box: ((box.a, box.b), box.label),
                     lambda label, children: Box(*children, label=label))


class Opaque:
    """An unregistered class: a leaf."""


def test_public_module_reexports_runtime():
    assert tree_map is rt_tree.tree_map
    assert PyTreeDef is s2s_runtime.PyTreeDef
    assert register_pytree_node is s2s_runtime.register_pytree_node


def test_runtime_does_not_import_s2s():
    code = "import sys, s2s_runtime; print(sorted(m for m in sys.modules if m.split('.')[0] == 's2s'))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# ---------------------------------------------------------------- flatten


NESTED = {
    "b": [1.0, (2.0, None), Point(3.0, np.float64(4.0))],
    "a": collections.OrderedDict([("z", 5), ("y", 6)]),
    "c": Box(7.0, {"q": 8.0}),
}


def test_flatten_leaf_order_nested():
    leaves, _ = tree_flatten(NESTED)
    # dict keys sorted ('a' < 'b' < 'c'); OrderedDict in insertion order.
    assert leaves == [5, 6, 1.0, 2.0, 3.0, 4.0, 7.0, 8.0]


@pytest.mark.parametrize("tree", [
    NESTED,
    [],
    (),
    {},
    None,
    3.5,
    [None, [None, ()]],
    (1,),
    Point(x=[1, 2], y={"k": (3,)}),
    collections.defaultdict(list, {"b": 1, "a": [2, 3]}),
])
def test_round_trip(tree):
    leaves, treedef = tree_flatten(tree)
    rebuilt = tree_unflatten(treedef, leaves)
    assert rebuilt == tree
    assert type(rebuilt) is type(tree)
    assert tree_structure(rebuilt) == treedef


def test_round_trip_preserves_container_types():
    tree = [Point(1, 2), (3,), collections.OrderedDict(b=4, a=5), Box(6, 7)]
    rebuilt = tree_unflatten(*reversed(tree_flatten(tree)))
    assert [type(t) for t in rebuilt] == [Point, tuple, collections.OrderedDict, Box]
    assert list(rebuilt[2]) == ["b", "a"]


def test_defaultdict_keeps_factory():
    tree = collections.defaultdict(list, {"b": 1.0})
    leaves, treedef = tree_flatten(tree)
    rebuilt = treedef.unflatten([2.0])
    assert rebuilt.default_factory is list and rebuilt["b"] == 2.0
    assert treedef != tree_structure(collections.defaultdict(dict, {"b": 1.0}))
    assert treedef != tree_structure({"b": 1.0})


def test_dict_key_order_is_sorted_not_insertion():
    l1, d1 = tree_flatten({"b": 1, "a": 2})
    l2, d2 = tree_flatten({"a": 2, "b": 1})
    assert l1 == l2 == [2, 1]
    assert d1 == d2
    assert list(d1.unflatten([10, 20])) == ["a", "b"]


def test_dict_with_incomparable_keys_is_deterministic():
    tree = {1: "one", "a": "A"}
    leaves, treedef = tree_flatten(tree)
    assert sorted(leaves) == ["A", "one"]
    assert tree_unflatten(treedef, leaves) == tree
    assert tree_leaves({"a": "A", 1: "one"}) == leaves


def test_ordered_dict_order_is_part_of_structure():
    d1 = tree_structure(collections.OrderedDict([("a", 1), ("b", 2)]))
    d2 = tree_structure(collections.OrderedDict([("b", 2), ("a", 1)]))
    assert d1 != d2
    assert tree_leaves(collections.OrderedDict([("b", 2), ("a", 1)])) == [2, 1]
    assert d1 != tree_structure({"a": 1, "b": 2})


def test_none_is_a_node_without_children():
    assert tree_leaves(None) == []
    assert tree_leaves([None, 1, None]) == [1]
    treedef = tree_structure(None)
    assert treedef.num_leaves == 0 and treedef.num_nodes == 1
    assert treedef.unflatten([]) is None
    assert tree_structure([None]) != tree_structure([1])


def test_leaf_types():
    leaves_in = [1.0, 2, 3j, True, np.ones(3), np.float32(1), "s", Opaque(),
                 np.array(2.0)]
    leaves, treedef = tree_flatten(leaves_in)
    assert len(leaves) == len(leaves_in)
    assert all(a is b for a, b in zip(leaves, leaves_in))
    assert treedef.num_leaves == 9


def test_subclasses_of_dict_and_list_are_leaves():
    class MyDict(dict):
        pass

    class MyList(list):
        pass

    md, ml = MyDict(a=1), MyList([1, 2])
    assert tree_leaves([md, ml]) == [md, ml]


def test_namedtuple_structure_includes_class():
    assert tree_leaves(Point(1, 2)) == [1, 2]
    assert tree_structure(Point(1, 2)) != tree_structure(Other(1, 2))
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))
    assert tree_structure(Point(1, 2)) == tree_structure(Point("a", 0))
    assert tree_structure(Point(1, 2)) != tree_structure(Point(1, [2]))


def test_tuple_and_list_differ():
    assert tree_structure((1, 2)) != tree_structure([1, 2])


def test_registered_node():
    tree = Box(1.0, [2.0, 3.0], label="L")
    leaves, treedef = tree_flatten(tree)
    assert leaves == [1.0, 2.0, 3.0]
    assert treedef.unflatten([4, 5, 6]) == Box(4, [5, 6], label="L")
    # aux data is part of the structure
    assert treedef != tree_structure(Box(1.0, [2.0, 3.0], label="M"))


def test_register_twice_or_builtin_raises():
    with pytest.raises(ValueError, match="already"):
        register_pytree_node(Box, lambda b: ((), None), lambda a, c: Box(0, 0))
    with pytest.raises(ValueError, match="already"):
        register_pytree_node(dict, lambda b: ((), None), lambda a, c: {})
    with pytest.raises(ValueError, match="already"):
        register_pytree_node(Point, lambda b: ((), None), lambda a, c: None)


def test_registered_children_iterable_is_consumed_once():
    class Gen:
        def __init__(self, xs):
            self.xs = list(xs)

    register_pytree_node(Gen, lambda g: (iter(g.xs), None),
                         lambda aux, ch: Gen(ch))
    leaves, treedef = tree_flatten(Gen([1, 2, 3]))
    assert leaves == [1, 2, 3]
    assert treedef.unflatten([4, 5, 6]).xs == [4, 5, 6]


def test_is_leaf():
    tree = {"a": (1, 2), "b": [3, (4, 5)]}
    leaves = tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3, (4, 5)]
    leaves, treedef = tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert treedef.num_leaves == 3
    assert treedef.unflatten(["A", "B", "C"]) == {"a": "A", "b": ["B", "C"]}
    # is_leaf on None makes None a leaf
    assert tree_leaves([None], is_leaf=lambda x: x is None) == [None]
    # is_leaf on the root
    assert tree_leaves(tree, is_leaf=lambda x: True) == [tree]


# ---------------------------------------------------------------- treedef


def test_num_leaves_and_num_nodes():
    treedef = tree_structure({"a": 1, "b": (2, 3)})
    assert treedef.num_leaves == 3
    assert treedef.num_nodes == 5  # dict, leaf, tuple, leaf, leaf (as JAX)
    assert tree_structure(1.0).num_nodes == 1
    assert tree_structure([None, []]).num_nodes == 3


def test_treedef_equality_and_hash():
    d1 = tree_structure({"a": [1, 2], "b": Point(3, None)})
    d2 = tree_structure({"b": Point("x", None), "a": [np.ones(2), "y"]})
    d3 = tree_structure({"a": [1, 2, 3], "b": Point(3, None)})
    assert d1 == d2 and hash(d1) == hash(d2)
    assert d1 != d3
    assert len({d1, d2, d3}) == 2
    assert d1 != "PyTreeDef"
    assert tree_structure(1) == tree_structure("leaf")


def test_treedef_is_immutable():
    treedef = tree_structure([1, 2])
    with pytest.raises(AttributeError):
        treedef.num_leaves = 3
    with pytest.raises(AttributeError):
        treedef._node = None
    assert treedef.num_leaves == 2


def test_treedef_copy_equal():
    treedef = tree_structure({"a": [1, (2,)]})
    assert copy.copy(treedef) == treedef
    assert copy.deepcopy([treedef])[0] == treedef


@pytest.mark.parametrize("tree, text", [
    ({"a": 1, "b": (2, 3)}, "PyTreeDef({'a': *, 'b': (*, *)})"),
    (1.0, "PyTreeDef(*)"),
    (None, "PyTreeDef(None)"),
    ((1,), "PyTreeDef((*,))"),
    ([1, None, []], "PyTreeDef([*, None, []])"),
    (Point(1, (2,)), "PyTreeDef(Point(x=*, y=(*,)))"),
    (collections.OrderedDict([("b", 1), ("a", 2)]), "PyTreeDef(OrderedDict({'b': *, 'a': *}))"),
    (Box(1, 2, "L"), "PyTreeDef(CustomNode(Box['L'], [*, *]))"),
])
def test_repr(tree, text):
    assert repr(tree_structure(tree)) == text


def test_unflatten_wrong_leaf_count():
    treedef = tree_structure([1, 2])
    with pytest.raises(ValueError, match="2 leaves, got 3"):
        treedef.unflatten([1, 2, 3])
    with pytest.raises(ValueError, match="2 leaves, got 1"):
        tree_unflatten(treedef, [1])


def test_unflatten_accepts_any_iterable():
    treedef = tree_structure({"a": 0, "b": [0]})
    assert treedef.unflatten(iter([1, 2])) == {"a": 1, "b": [2]}
    assert treedef.unflatten(x for x in (3, 4)) == {"a": 3, "b": [4]}


# ---------------------------------------------------------------- flatten_up_to


def test_flatten_up_to_same_structure():
    treedef = tree_structure({"a": 1, "b": (2, 3)})
    assert treedef.flatten_up_to({"b": (20, 30), "a": 10}) == [10, 20, 30]


def test_flatten_up_to_returns_subtrees_under_leaves():
    treedef = tree_structure({"a": 1, "b": (2, 3)})
    out = treedef.flatten_up_to({"a": [1, 2], "b": ({"x": 1}, None)})
    assert out == [[1, 2], {"x": 1}, None]


@pytest.mark.parametrize("tree, where", [
    ({"a": 1}, "the root"),                       # missing key
    ({"a": 1, "b": (2, 3), "c": 4}, "the root"),  # extra key
    ({"a": 1, "b": [2, 3]}, r"\['b'\]"),          # list for tuple
    ({"a": 1, "b": (2,)}, r"\['b'\]"),            # wrong arity
    ({"a": 1, "b": 5.0}, r"\['b'\]"),             # leaf for node
    ([1, (2, 3)], "the root"),
])
def test_flatten_up_to_mismatch(tree, where):
    treedef = tree_structure({"a": 1, "b": (2, 3)})
    with pytest.raises(ValueError, match="mismatch at " + where) as info:
        treedef.flatten_up_to(tree)
    message = str(info.value)
    assert "PyTreeDef({'a': *, 'b': (*, *)})" in message
    assert repr(tree_structure(tree)) in message


def test_flatten_up_to_deep_path():
    treedef = tree_structure({"p": [Point(1, {"k": 2})]})
    with pytest.raises(ValueError, match=r"mismatch at \['p'\]\[0\]\.y: expected a dict with keys \['k'\]"):
        treedef.flatten_up_to({"p": [Point(1, {"j": 2})]})


def test_flatten_up_to_namedtuple_class_and_none():
    treedef = tree_structure([Point(1, 2), None])
    with pytest.raises(ValueError, match="namedtuple Point"):
        treedef.flatten_up_to([Other(1, 2), None])
    with pytest.raises(ValueError, match=r"at \[1\]: expected a None"):
        treedef.flatten_up_to([Point(1, 2), 0.0])
    assert treedef.flatten_up_to([Point(1, 2), None]) == [1, 2]


def test_flatten_up_to_registered_aux_mismatch():
    treedef = tree_structure(Box(1, 2, "L"))
    with pytest.raises(ValueError, match="mismatch"):
        treedef.flatten_up_to(Box(1, 2, "M"))
    assert treedef.flatten_up_to(Box([1], 2, "L")) == [[1], 2]


# ---------------------------------------------------------------- tree_map


def test_tree_map_single():
    tree = {"b": [1.0, 2.0], "a": Point(3.0, None)}
    out = tree_map(lambda x: 10 * x, tree)
    assert out == {"a": Point(30.0, None), "b": [10.0, 20.0]}


def test_tree_map_several_trees():
    a = {"w": 1.0, "b": (2.0, 3.0)}
    b = {"b": (20.0, 30.0), "w": 10.0}
    c = {"w": 100.0, "b": (200.0, 300.0)}
    out = tree_map(lambda x, y, z: x + y + z, a, b, c)
    assert out == {"w": 111.0, "b": (222.0, 333.0)}


def test_tree_map_numpy_leaves():
    params = {"w": np.array([1.0, 2.0]), "b": 0.5}
    grads = {"w": np.array([0.1, 0.2]), "b": 1.0}
    out = tree_map(lambda p, g: p - 0.1 * g, params, grads)
    np.testing.assert_allclose(out["w"], [0.99, 1.98])
    assert out["b"] == pytest.approx(0.4)


def test_tree_map_rest_may_have_more_structure_under_leaves():
    out = tree_map(lambda x, y: (x, y), [1, 2], [(3, 4), {"k": 5}])
    assert out == [(1, (3, 4)), (2, {"k": 5})]


def test_tree_map_mismatch_names_both_structures():
    with pytest.raises(ValueError) as info:
        tree_map(lambda x, y: x + y, {"a": 1, "b": 2}, {"a": 1, "c": 2})
    message = str(info.value)
    assert "PyTreeDef({'a': *, 'b': *})" in message
    assert "PyTreeDef({'a': *, 'c': *})" in message


def test_tree_map_none_and_is_leaf():
    assert tree_map(lambda x: x + 1, [None, 1]) == [None, 2]
    out = tree_map(lambda x: x is None, [None, 1], is_leaf=lambda x: x is None)
    assert out == [True, False]
    out = tree_map(len, {"a": (1, 2), "b": [(3,)]}, is_leaf=lambda x: isinstance(x, tuple))
    assert out == {"a": 2, "b": [1]}


def test_tree_map_leaf_root():
    assert tree_map(lambda x, y: x * y, 3.0, 4.0) == 12.0
