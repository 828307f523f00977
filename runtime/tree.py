"""Pytrees: nested containers of leaves, compatible with ``jax.tree_util``.

A *pytree* is a value built from container *nodes* whose contents are
further pytrees; anything that is not a node is a *leaf*.  Node types:

- ``tuple``, ``list``: children in order;
- ``dict``: children in **sorted key order** (as in JAX), so two dicts with
  the same keys have the same structure whatever their insertion order;
  unflattening builds a dict in sorted key order;
- ``collections.OrderedDict``: children in insertion order (the order is
  part of the structure);
- ``collections.defaultdict``: like ``dict``; the ``default_factory`` is
  part of the structure;
- namedtuples (any ``tuple`` subclass with ``_fields``): children in field
  order; the class is part of the structure;
- dataclass instances (any class made by ``@dataclasses.dataclass``, not
  registered otherwise): children are the values of all its fields in
  declaration order; the class is part of the structure; unflattening sets
  the fields without calling ``__init__`` (so ``__post_init__`` never sees
  cotangents), frozen and slotted dataclasses included;
- ``None``: a node with no children (so it contributes no leaves);
- any class registered with :func:`register_pytree_node`.

Everything else (floats, ints, complex, bools, numpy arrays and scalars,
arbitrary objects, and subclasses of ``dict``/``list``) is a leaf.  Node
types are dispatched on the *exact* ``type(x)`` through a dict, so
flattening a small tree costs a few microseconds.

A :class:`PyTreeDef` describes the structure of a tree with its leaves taken
out.  It is immutable, comparable with ``==`` and hashable (as long as every
registered node's auxiliary data is hashable), so it can key caches.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable, Iterable

__all__ = [
    "PyTreeDef",
    "register_pytree_node",
    "tree_flatten",
    "tree_unflatten",
    "tree_leaves",
    "tree_structure",
    "tree_map",
]

# Internal representation of a structure: ``None`` stands for a leaf; a node
# is the tuple ``(kind, aux, children)`` with ``kind`` a ``_NodeKind``,
# ``aux`` the node's auxiliary data and ``children`` a tuple of structures.
# Plain tuples give ``==`` and ``hash`` for free.


class _NodeKind:
    """How to take one node type apart and put it back together.

    ``flatten(x) -> (children, aux)``; ``unflatten(aux, children) -> x``
    with ``children`` a tuple; ``show(aux, child_strings) -> str`` renders
    the node for ``PyTreeDef.__repr__``.  Kinds compare by identity.
    """

    __slots__ = ("name", "flatten", "unflatten", "show")

    def __init__(self, name, flatten, unflatten, show):
        self.name = name
        self.flatten = flatten
        self.unflatten = unflatten
        self.show = show

    def __repr__(self):
        return f"<pytree node kind {self.name}>"


def _flatten_dict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _sorted_keys(d) -> tuple:
    """Keys of ``d`` sorted; keys of mixed, incomparable types are sorted by
    (type name, repr) so that the order is still deterministic."""
    try:
        return tuple(sorted(d))
    except TypeError:
        return tuple(sorted(d, key=lambda k: (type(k).__qualname__, repr(k))))


def _show_mapping(keys, parts):
    return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(keys, parts)) + "}"


def _show_tuple(aux, parts):
    return "(" + parts[0] + ",)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"


_TUPLE = _NodeKind("tuple", lambda x: (x, None), lambda aux, ch: tuple(ch), _show_tuple)
_LIST = _NodeKind(
    "list", lambda x: (x, None), lambda aux, ch: list(ch),
    lambda aux, parts: "[" + ", ".join(parts) + "]",
)
_DICT = _NodeKind(
    "dict", _flatten_dict, lambda keys, ch: dict(zip(keys, ch)), _show_mapping
)
_NONE = _NodeKind("None", lambda x: ((), None), lambda aux, ch: None, lambda aux, parts: "None")
_ORDERED_DICT = _NodeKind(
    "OrderedDict",
    lambda d: (list(d.values()), tuple(d)),
    lambda keys, ch: collections.OrderedDict(zip(keys, ch)),
    lambda keys, parts: "OrderedDict(" + _show_mapping(keys, parts) + ")",
)
def _flatten_defaultdict(d):
    children, keys = _flatten_dict(d)
    return children, (d.default_factory, keys)


_DEFAULT_DICT = _NodeKind(
    "defaultdict",
    _flatten_defaultdict,
    lambda aux, ch: collections.defaultdict(aux[0], zip(aux[1], ch)),
    lambda aux, parts: f"defaultdict({aux[0]!r}, " + _show_mapping(aux[1], parts) + ")",
)
# Namedtuples are recognised structurally (not registered one by one); the
# class is the auxiliary data.
_NAMEDTUPLE = _NodeKind(
    "namedtuple",
    lambda x: (x, type(x)),
    lambda cls, ch: cls(*ch),
    lambda cls, parts: cls.__name__ + "("
    + ", ".join(f"{f}={p}" for f, p in zip(cls._fields, parts)) + ")",
)


def _flatten_dataclass(x):
    cls = type(x)
    return [getattr(x, n) for n in _dataclass_fields(cls)], cls


def _unflatten_dataclass(cls, children):
    obj = object.__new__(cls)
    for name, value in zip(_dataclass_fields(cls), children):
        object.__setattr__(obj, name, value)
    return obj


_DATACLASS_FIELDS: dict = {}


def _dataclass_fields(cls) -> tuple:
    names = _DATACLASS_FIELDS.get(cls)
    if names is None:
        names = _DATACLASS_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


# Dataclasses, like namedtuples, are recognised structurally; the class is the aux data.
_DATACLASS = _NodeKind(
    "dataclass",
    _flatten_dataclass,
    _unflatten_dataclass,
    lambda cls, parts: cls.__name__ + "("
    + ", ".join(f"{f}={p}" for f, p in zip(_dataclass_fields(cls), parts)) + ")",
)

_registry: dict[type, _NodeKind] = {
    tuple: _TUPLE,
    list: _LIST,
    dict: _DICT,
    type(None): _NONE,
    collections.OrderedDict: _ORDERED_DICT,
    collections.defaultdict: _DEFAULT_DICT,
}


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]],
    unflatten_func: Callable[[Any, tuple], Any],
) -> None:
    """Make instances of exactly ``nodetype`` pytree nodes.

    ``flatten_func(obj) -> (children, aux_data)``: ``children`` is an
    iterable of subtrees, ``aux_data`` whatever else is needed to rebuild the
    object; it takes part in structure equality and should be hashable.
    ``unflatten_func(aux_data, children) -> obj`` receives ``children`` as a
    tuple.  Subclasses are not covered.  Raises ``ValueError`` if
    ``nodetype`` is already a node type.
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"register_pytree_node expects a class, got {nodetype!r}")
    if nodetype in _registry or _is_namedtuple_type(nodetype):
        raise ValueError(f"{nodetype.__qualname__} is already a pytree node type")
    _AUTO.pop(nodetype, None)

    def flatten(x):
        children, aux = flatten_func(x)
        return tuple(children), aux

    def show(aux, parts):
        return f"CustomNode({nodetype.__qualname__}[{aux!r}], [" + ", ".join(parts) + "])"

    _registry[nodetype] = _NodeKind(nodetype.__qualname__, flatten, unflatten_func, show)


def _is_namedtuple_type(t: type) -> bool:
    return issubclass(t, tuple) and hasattr(t, "_fields")


#: node kinds recognised by their class's shape (namedtuples, dataclasses), per type
_AUTO: dict = {}


def _auto_kind(t: type) -> _NodeKind | None:
    """``_NAMEDTUPLE``, ``_DATACLASS`` or None (a leaf) for an unregistered type."""
    try:
        return _AUTO[t]
    except KeyError:
        pass
    if issubclass(t, tuple) and hasattr(t, "_fields"):
        kind = _NAMEDTUPLE
    elif dataclasses.is_dataclass(t):
        kind = _DATACLASS
    else:
        kind = None
    _AUTO[t] = kind
    return kind


def _kind_of(x) -> _NodeKind | None:
    """The node kind of ``x``, or None if ``x`` is a leaf."""
    t = type(x)
    kind = _registry.get(t)
    if kind is None:
        return _auto_kind(t)
    return kind


def _flatten(x, leaves: list, is_leaf):
    """Append the leaves of ``x`` to ``leaves``; return its structure."""
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return None
    t = type(x)
    # Fast paths for the common containers.
    if t is tuple or t is list:
        return (_TUPLE if t is tuple else _LIST, None,
                tuple([_flatten(c, leaves, is_leaf) for c in x]))
    if t is dict:
        keys = _sorted_keys(x)
        return (_DICT, keys, tuple([_flatten(x[k], leaves, is_leaf) for k in keys]))
    kind = _registry.get(t)
    if kind is None:
        kind = _auto_kind(t)
        if kind is None:
            leaves.append(x)
            return None
    children, aux = kind.flatten(x)
    return (kind, aux, tuple([_flatten(c, leaves, is_leaf) for c in children]))


def _unflatten(node, it):
    if node is None:
        return next(it)
    kind, aux, children = node
    return kind.unflatten(aux, tuple([_unflatten(c, it) for c in children]))


def _count_nodes(node) -> int:
    if node is None:
        return 1
    return 1 + sum(_count_nodes(c) for c in node[2])


def _show(node) -> str:
    if node is None:
        return "*"
    kind, aux, children = node
    return kind.show(aux, [_show(c) for c in children])


class _Mismatch(Exception):
    """Raised inside ``flatten_up_to``; collects the path while unwinding."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what
        self.path: list[str] = []


def _path_part(kind: _NodeKind, aux, i: int) -> str:
    if kind is _DICT or kind is _ORDERED_DICT:
        return f"[{aux[i]!r}]"
    if kind is _DEFAULT_DICT:
        return f"[{aux[1][i]!r}]"
    if kind is _NAMEDTUPLE:
        return f".{aux._fields[i]}"
    if kind is _DATACLASS:
        return f".{_dataclass_fields(aux)[i]}"
    return f"[{i}]"


def _describe(kind: _NodeKind, aux, n: int) -> str:
    if kind is _DICT or kind is _ORDERED_DICT:
        return f"{kind.name} with keys {list(aux)!r}"
    if kind is _DEFAULT_DICT:
        return f"defaultdict with keys {list(aux[1])!r}"
    if kind is _NAMEDTUPLE:
        return f"namedtuple {aux.__qualname__}"
    if kind is _DATACLASS:
        return f"dataclass {aux.__qualname__}"
    if kind is _NONE:
        return "None"
    return f"{kind.name} of {n} children" + ("" if kind in (_TUPLE, _LIST) else f" (aux {aux!r})")


def _flatten_up_to(node, x, out: list) -> None:
    if node is None:
        out.append(x)
        return
    kind, aux, children = node
    x_kind = _kind_of(x)
    if x_kind is None:
        raise _Mismatch(f"expected a {_describe(kind, aux, len(children))}, "
                        f"got a leaf of type {type(x).__qualname__}")
    x_children, x_aux = x_kind.flatten(x)
    if x_kind is not kind or x_aux != aux or len(x_children) != len(children):
        raise _Mismatch(f"expected a {_describe(kind, aux, len(children))}, "
                        f"got a {_describe(x_kind, x_aux, len(x_children))}")
    for i, (c, xc) in enumerate(zip(children, x_children)):
        try:
            _flatten_up_to(c, xc, out)
        except _Mismatch as e:
            e.path.append(_path_part(kind, aux, i))
            raise


class PyTreeDef:
    """The structure of a pytree: its nodes, without the leaves.

    Immutable; ``==`` compares structures (node types, dict keys, namedtuple
    classes, auxiliary data of registered nodes); hashable when all
    auxiliary data is.  Obtain one from :func:`tree_flatten` or
    :func:`tree_structure`.
    """

    __slots__ = ("_node", "_num_leaves", "_num_nodes", "_hash")

    def __init__(self, node, num_leaves: int):
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_num_leaves", num_leaves)
        object.__setattr__(self, "_num_nodes", None)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name, value):
        raise AttributeError("PyTreeDef is immutable")

    def __delattr__(self, name):
        raise AttributeError("PyTreeDef is immutable")

    @property
    def num_leaves(self) -> int:
        """Number of leaves."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Number of nodes, leaves included (as in JAX)."""
        if self._num_nodes is None:
            object.__setattr__(self, "_num_nodes", _count_nodes(self._node))
        return self._num_nodes

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build the tree of this structure with ``leaves`` in order.

        Raises ``ValueError`` if the number of leaves is not ``num_leaves``.
        """
        leaves = list(leaves)
        if len(leaves) != self._num_leaves:
            raise ValueError(
                f"{self!r} has {self._num_leaves} leaves, got {len(leaves)} to unflatten"
            )
        return _unflatten(self._node, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list:
        """The subtrees of ``tree`` at the leaf positions of this structure.

        ``tree`` must have every node of this structure (same node types,
        dict keys, namedtuple classes and auxiliary data); under a leaf
        position it may hold any subtree, which is returned whole.  Raises
        ``ValueError`` naming the first mismatching position and both
        structures otherwise.
        """
        out: list = []
        try:
            _flatten_up_to(self._node, tree, out)
        except _Mismatch as e:
            where = "".join(reversed(e.path)) or "the root"
            raise ValueError(
                f"pytree structure mismatch at {where}: {e.what}; "
                f"expected structure {self!r}, got {tree_structure(tree)!r}"
            ) from None
        return out

    def __eq__(self, other):
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self is other or self._node == other._node

    def __hash__(self):
        if self._hash is None:
            object.__setattr__(self, "_hash", hash(self._node))
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({_show(self._node)})"

    def __copy__(self):
        return self  # immutable

    def __deepcopy__(self, memo):
        return self


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """Return ``(leaves, treedef)``: the leaves of ``tree`` left to right and
    its structure.  ``is_leaf(subtree) -> bool``, if given, is asked about
    every subtree before it is taken apart; a true answer makes it a leaf."""
    leaves: list = []
    node = _flatten(tree, leaves, is_leaf)
    return leaves, PyTreeDef(node, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Inverse of :func:`tree_flatten`: ``treedef.unflatten(leaves)``."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree``, left to right."""
    leaves: list = []
    _flatten(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure (:class:`PyTreeDef`) of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leafwise: a tree of ``tree``'s structure whose leaf ``i``
    is ``f(leaf_i of tree, subtree_i of each of rest)``.

    Each tree in ``rest`` must contain ``tree``'s structure; where ``tree``
    has a leaf it may have a whole subtree, which ``f`` receives as is (as
    in JAX).  Raises ``ValueError`` naming both structures otherwise.
    ``is_leaf`` applies to ``tree`` only.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])
