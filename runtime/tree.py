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

# What a node kind is, the built-in kinds and the registry (``register_pytree_node``):
# ``tree_nodes.py``.  ``_registry`` stays importable from here (``adjoint.py`` reads it).
from .tree_nodes import (_DICT, _LIST, _TUPLE, _auto_kind, _describe, _kind_of,
                         _path_part, _registry, _sorted_keys, register_pytree_node)


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
