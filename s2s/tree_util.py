"""Pytree utilities (``s2s.tree_util``), with the names and behaviour of
``jax.tree_util``.

The implementation lives in the runtime package (``s2s_runtime.tree``) so
that generated code can use it without importing the compiler; this module
re-exports it.  See that module for the node types and the contracts.
"""

from s2s_runtime.tree import (
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

__all__ = [
    "PyTreeDef",
    "register_pytree_node",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
]
