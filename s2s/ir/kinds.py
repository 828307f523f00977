"""Kinds: what specialisation keys on (structure, leaf type, dtype, ndim).

``kind_of(value)`` is hashable and cheap (a type dispatch per leaf); two
values with the same kind get the same generated code.
"""
from __future__ import annotations

import numpy as np

from s2s_runtime.tree import tree_flatten

_SCALARS = {float: "float", int: "int", bool: "bool", complex: "complex"}


def leaf_kind(x):
    t = type(x)
    k = _SCALARS.get(t)
    if k is not None:
        return k
    if t is np.ndarray:
        return ("array", x.dtype.str, x.ndim)
    if isinstance(x, np.generic):
        return ("scalar", x.dtype.str)
    if x is None:
        return "none"
    return ("object", t)


def kind_of(x):
    k = _SCALARS.get(type(x))
    if k is not None:
        return k
    if type(x) is np.ndarray:
        return ("array", x.dtype.str, x.ndim)
    leaves, tree = tree_flatten(x)
    if len(leaves) == 1 and leaves[0] is x:
        return leaf_kind(x)
    return (tree, tuple(leaf_kind(v) for v in leaves))


def is_inexact_leaf(x) -> bool:
    """A float or complex number or array (a differentiable leaf)."""
    if isinstance(x, (float, complex)) and not isinstance(x, bool):
        return True
    if isinstance(x, (np.ndarray, np.generic)):
        return np.issubdtype(x.dtype, np.inexact)
    return False


def is_complex_leaf(x) -> bool:
    return isinstance(x, complex) or (
        isinstance(x, (np.ndarray, np.generic)) and np.issubdtype(x.dtype, np.complexfloating))


def is_real_scalar(x) -> bool:
    """A Python float or int, or a real numpy scalar (shape (), real dtype)."""
    return type(x) in (float, int) or (isinstance(x, np.generic)
                                and (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)))
