"""Records: dataclass and namedtuple instances as values with derivatives.

``P(a, b)`` for a dataclass or namedtuple class ``P`` inside differentiated
code becomes ``rt.make_record(P, (a, b))``: the class called with its
``__init__`` parameters in order.  Cotangents and tangents of a record are
records of the same class holding the cotangents (tangents) of its fields;
they are built without calling ``__init__`` (``record_like``), like
``s2s.tree_util`` unflattens a dataclass.

Plain Python; this package never imports ``s2s``.
"""
from __future__ import annotations

import dataclasses
import inspect

from .tree import register_pytree_node

_INIT_NAMES: dict = {}


def is_record(x) -> bool:
    """A dataclass instance (a namedtuple is a tuple: see ``tree``)."""
    return dataclasses.is_dataclass(x) and not isinstance(x, type)


def init_names(cls) -> tuple:
    """The names of ``cls``'s ``__init__`` (or namedtuple) parameters, in order."""
    names = _INIT_NAMES.get(cls)
    if names is None:
        names = _INIT_NAMES[cls] = tuple(inspect.signature(cls).parameters)
    return names


def field_names(cls) -> tuple:
    """The data fields of a dataclass or namedtuple class, in order."""
    if hasattr(cls, "_fields"):
        return tuple(cls._fields)
    return tuple(f.name for f in dataclasses.fields(cls))


def make_record(cls, fields):
    """``cls(**{name: value})`` for ``cls``'s parameter names and ``fields`` in order."""
    return cls(**dict(zip(init_names(cls), fields)))


def new_record(cls, values: dict):
    """An instance of ``cls`` with these field values, built without ``__init__``
    (frozen and slotted dataclasses included); a namedtuple by its constructor."""
    if hasattr(cls, "_fields"):
        return cls(**values)
    obj = object.__new__(cls)
    for name in field_names(cls):
        object.__setattr__(obj, name, values[name])
    return obj


def record_fields(g):
    """The ``__init__`` parameters' entries of the record ``g`` (a cotangent of
    ``make_record(cls, fields)``), as a tuple parallel to ``fields``."""
    return tuple(getattr(g, n) for n in init_names(type(g)))


def record_like(like, fields):
    """A record of ``like``'s class whose ``__init__`` fields are ``fields`` and whose
    other fields are zeros like ``like``'s: the tangent of ``make_record``."""
    from .adjoint import zeros_like

    cls = type(like)
    values = dict(zip(init_names(cls), fields))
    for name in field_names(cls):
        if name not in values:
            values[name] = zeros_like(getattr(like, name))
    return new_record(cls, values)


def record_map(f, a, *rest):
    """The record of ``a``'s class with field ``n`` equal to ``f(a.n, r.n, ...)``."""
    cls = type(a)
    return new_record(cls, {n: f(getattr(a, n), *(getattr(r, n) for r in rest))
                            for n in field_names(cls)})


def with_field(obj, name, value):
    """A copy of the record ``obj`` with field ``name`` set to ``value``."""
    cls = type(obj)
    values = {n: getattr(obj, n) for n in field_names(cls)}
    values[name] = value
    return new_record(cls, values)


def field_tangent(t, name):
    """``t.name`` for the tangent ``t`` of a record (the tangent of ``obj.name``).

    Only a field has a tangent there: a property or method would run its code
    on the tangent, which is not its derivative, so it raises instead.  Other
    objects (not namedtuples or dataclasses) are read as they are.
    """
    cls = type(t)
    if hasattr(cls, "_fields") or dataclasses.is_dataclass(cls):
        if name not in field_names(cls):
            raise TypeError(f"s2s: cannot differentiate attribute {name!r} of a "
                            f"{cls.__name__} object (it is not a field; a property or "
                            "method of an argument is not differentiated)")
    return getattr(t, name)


def register_dataclass(nodetype: type, data_fields=None, meta_fields=None) -> type:
    """Make instances of the dataclass ``nodetype`` pytree nodes whose children are
    the ``data_fields`` and whose ``meta_fields`` are auxiliary data (part of the
    structure, not leaves), as ``jax.tree_util.register_dataclass``.

    Without ``data_fields`` every field is a child (what an unregistered dataclass
    gets anyway).  Unflattening sets the fields without calling ``__init__``.
    Returns ``nodetype``, so it can decorate the class.
    """
    if not dataclasses.is_dataclass(nodetype) or not isinstance(nodetype, type):
        raise TypeError(f"register_dataclass expects a dataclass, got {nodetype!r}")
    names = [f.name for f in dataclasses.fields(nodetype)]
    meta = tuple(meta_fields or ())
    data = tuple(data_fields) if data_fields is not None else \
        tuple(n for n in names if n not in meta)
    if sorted(data + meta) != sorted(names):
        raise ValueError(f"data_fields and meta_fields of {nodetype.__qualname__} must "
                         f"name each of its fields {names} once")

    def flatten(x):
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def unflatten(aux, children):
        obj = object.__new__(nodetype)
        for name, value in zip(data + meta, tuple(children) + tuple(aux)):
            object.__setattr__(obj, name, value)
        return obj

    register_pytree_node(nodetype, flatten, unflatten)
    return nodetype
