"""Pytree node kinds (``tree.py``'s node types): how each node type is taken apart,
put back together, shown and described, and the registry of node types.

A structure is ``None`` for a leaf, or the tuple ``(kind, aux, children)`` with
``kind`` a ``_NodeKind``, ``aux`` the node's auxiliary data and ``children`` a tuple
of structures (plain tuples give ``==`` and ``hash`` for free).  ``_kind_of(x)`` is
the kind of ``x`` (None: a leaf): the registered kind of exactly ``type(x)``
(tuple, list, dict, None, ``OrderedDict``, ``defaultdict``, classes given to
``register_pytree_node``), else the kind its class's shape gives (namedtuples,
dataclasses), else none.  ``_describe`` and ``_path_part`` word a node and a child's
place in it for the errors of ``PyTreeDef.flatten_up_to``.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable, Iterable


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
