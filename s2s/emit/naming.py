"""How generated code names a callable or a constant's type.

Generated code imports only ``numpy``, ``math`` and ``s2s_runtime``; a
callable is named by the shortest dotted path from one of those modules (or
the builtins) that gives back the very same object: ``np.sin``,
``np.linalg.solve``, ``math.exp``, ``rt.unbroadcast``, ``abs``.  Operators
are printed infix by the emitter and never reach this table.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

import s2s_runtime

#: (module alias, module object) roots searched for names, in preference order
ROOTS = (("np", np), ("math", math), ("rt", s2s_runtime))
_ROOT_OF = dict(ROOTS)
_SUBMODULES = ("linalg", "fft", "random")

_TABLE = None


def _build():
    table = {}

    def rank(obj, path):
        # prefer the object's own name (np.transpose over its alias np.permute_dims),
        # then the shortest path
        own = path[1].rsplit(".", 1)[-1] == getattr(obj, "__name__", None)
        return (not own, len(path[1]), path[1])

    def add(obj, path):
        key = id(obj)
        if key not in table or rank(obj, path) < rank(obj, table[key]):
            table[key] = path

    for name in dir(builtins):
        if not name.startswith("_"):
            add(getattr(builtins, name), ("", name))
    for alias, mod in ROOTS:
        for name in dir(mod):
            if name.startswith("_"):
                continue
            obj = getattr(mod, name, None)
            if callable(obj) or isinstance(obj, type):
                add(obj, (alias, name))
        for sub in _SUBMODULES:
            submod = getattr(mod, sub, None)
            if submod is None or not hasattr(submod, "__name__"):
                continue
            for name in dir(submod):
                if not name.startswith("_"):
                    obj = getattr(submod, name, None)
                    if callable(obj):
                        add(obj, (alias, sub + "." + name))
    for sub in ("build", "adjoint", "tree"):
        submod = getattr(s2s_runtime, sub, None)
        if submod is not None:
            for name in dir(submod):
                obj = getattr(submod, name)
                if callable(obj) and getattr(obj, "__module__", "") == submod.__name__:
                    add(obj, ("rt", sub + "." + name) if not hasattr(s2s_runtime, name)
                        or getattr(s2s_runtime, name) is not obj else ("rt", name))
    return table


#: id(fn) -> (fn, path) of callables found to have a path; a hit is used only while
#: the path still gives back that object (a module attribute may be rebound)
_FOUND: dict = {}


def callable_path(fn):
    """``(root_alias, dotted_name)`` for ``fn``, or None if it has no public name.

    ``root_alias`` is ``""`` for builtins.
    """
    hit = _FOUND.get(id(fn))
    if hit is not None and hit[0] is fn and _named(*hit[1]) is fn:
        return hit[1]
    path = _search(fn)
    if path is not None:
        _FOUND[id(fn)] = (fn, path)
    return path


def _named(alias, dotted):
    """The object ``dotted`` names under root ``alias`` ("" for builtins)."""
    return getattr(builtins, dotted, None) if alias == "" else _resolve(alias, dotted)


def _search(fn):
    name = getattr(fn, "__name__", None)
    if isinstance(name, str) and name.isidentifier():
        # the usual case, without scanning the modules: the object's own name
        if getattr(builtins, name, None) is fn:
            return ("", name)
        for alias, prefix in (("np", ""), ("math", ""), ("rt", ""), ("np", "linalg."),
                              ("np", "fft."), ("np", "random.")):
            if _resolve(alias, prefix + name) is fn:
                return (alias, prefix + name)
    global _TABLE
    if _TABLE is None:
        _TABLE = _build()
    hit = _TABLE.get(id(fn))
    if hit is not None and _named(*hit) is fn:  # not a dead object's reused id
        return hit
    return None


def _resolve(alias, dotted):
    obj = _ROOT_OF[alias]
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part, None)
        except Exception:  # e.g. numpy's removed aliases raise on access
            return None
    return obj
