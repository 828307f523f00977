"""Kinds: what specialisation keys on (structure, leaf type, dtype, ndim).

``kind_of(value)`` is hashable and cheap (a type dispatch per leaf); two
values with the same kind get the same generated code.
"""
from __future__ import annotations

import types

import numpy as np

from s2s_runtime.tree import tree_flatten

_SCALARS = {float: "float", int: "int", bool: "bool", complex: "complex"}
#: dtype -> dtype.str (which numpy builds anew at every access)
_DTYPE_STR: dict = {}


def _dtype_code(dtype) -> str:
    code = _DTYPE_STR.get(dtype)
    if code is None:
        code = _DTYPE_STR[dtype] = dtype.str
    return code


def leaf_kind(x):
    t = type(x)
    k = _SCALARS.get(t)
    if k is not None:
        return k
    if t is np.ndarray:
        return ("array", _dtype_code(x.dtype), x.ndim)
    if isinstance(x, np.generic):
        return ("scalar", _dtype_code(x.dtype))
    if x is None:
        return "none"
    return opaque_kind(x)


class _Same:
    """Compares (and hashes) by identity: a function in a kind."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, _Same) and other.value is self.value

    def __hash__(self):
        return id(self.value)

    def __repr__(self):
        return f"<{getattr(self.value, '__qualname__', type(self.value).__name__)}>"


_ROUTINES = (types.FunctionType, types.BuiltinFunctionType, np.ufunc, type, types.ModuleType)


def opaque_kind(x, depth=0):
    """The kind of a value that is neither a number nor an array.

    s2s inlines the functions and the methods of objects that differentiated
    code calls (``passes/inline.py``), so they are part of the code generated:
    a function or class is keyed by identity, a bound method by its function
    and its object's kind, an object of a user class by its class and the
    kinds of its instance attributes that are functions or such objects (its
    other attributes are read at run time).
    """
    t = type(x)
    if isinstance(x, _ROUTINES):
        return ("static", _Same(x))
    if t is types.MethodType:
        return ("method", _Same(x.__func__), opaque_kind(x.__self__, depth + 1))
    attrs = getattr(x, "__dict__", None)
    if depth > 3 or type(attrs) is not dict or \
            (t.__module__ or "").split(".")[0] in ("builtins", "numpy"):
        return ("object", t)
    inner = tuple((k, kind) for k, kind in ((k, _attribute_kind(v, depth + 1))
                                            for k, v in attrs.items()) if kind is not None)
    return ("object", t, inner) if inner else ("object", t)


def _attribute_kind(v, depth):
    """The kind of an attribute the inliner may see through (None: read at run time):
    a function, an object, or a list or tuple of them (``for layer in self.layers``)."""
    if isinstance(v, _ROUTINES) or type(v) is types.MethodType \
            or type(getattr(v, "__dict__", None)) is dict:
        return opaque_kind(v, depth)
    if type(v) in (list, tuple) and len(v) <= 256 and depth <= 3:
        kinds = tuple(_attribute_kind(x, depth + 1) for x in v)
        if any(k is not None for k in kinds):
            return (type(v).__name__, kinds)
    return None


def kind_of(x):
    t = type(x)
    k = _SCALARS.get(t)
    if k is not None:
        return k
    if t is np.ndarray:
        return ("array", _dtype_code(x.dtype), x.ndim)
    if x is None:
        return "none"
    if t is dict:  # the common container (a params dict), without the pytree machinery
        return ("dict", tuple([(key, kind_of(v)) for key, v in x.items()]))
    if t is tuple and len(x) == 2 and type(x[1]) is tuple:
        chain = _chain_kind(x)
        if chain is not None:
            return chain
    leaves, tree = tree_flatten(x)
    if len(leaves) == 1 and leaves[0] is x:
        return leaf_kind(x)
    return (tree, tuple(leaf_kind(v) for v in leaves))


#: chains of pairs at least this long get a flat kind (``_chain_kind``)
LONG_CHAIN = 64


def _chain_kind(x):
    """``("chain", kinds of the heads)`` of ``(h0, (h1, (..., ())))``, a chain of at least
    ``LONG_CHAIN`` pairs (a tape of reverse-mode code, ``ad/loops.py``), else None.

    A long chain's pytree structure nests as deep as it is long, deeper than Python's
    recursion limit for a loop of a few hundred recorded iterations: flattening it,
    hashing or comparing its nested structure would raise ``RecursionError``.  The flat
    kind holds the same information (the chain's length and the kind of each head)."""
    heads = []
    node = x
    while type(node) is tuple and len(node) == 2:
        heads.append(node[0])
        node = node[1]
    if type(node) is not tuple or node or len(heads) < LONG_CHAIN:
        return None
    return ("chain", tuple([kind_of(h) for h in heads]))


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
