"""Pytree utilities (``s2s.tree_util``), with the names and behaviour of
``jax.tree_util``.

The implementation lives in the runtime package (``s2s_runtime.tree``) so
that generated code can use it without importing the compiler; this module
re-exports it.  See that module for the node types and the contracts.

Beyond JAX: dataclass instances are pytree nodes without registration (every
field a child, the class part of the structure), as namedtuples are; so
``s2s.grad(f)(P(2.0, 3.0))`` for a ``@dataclass`` ``P`` returns a ``P`` of
gradients.  ``register_dataclass(P, data_fields, meta_fields)`` (JAX's)
makes some fields auxiliary data instead.
"""

from s2s_runtime.records import register_dataclass
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
    "register_dataclass",
    "register_pytree_node",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
]
