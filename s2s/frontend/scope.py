"""Scopes: which names a function assigns, and where free values come from."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from .cst_fast import walk


@dataclass(frozen=True)
class FreeVar:
    """A free name whose value is read at every call (a global or a closure cell).

    ``load()`` returns the current value.  Two FreeVars are the same when they
    read the same slot (same globals dict and name, or the same cell).
    """

    name: str
    holder: Any = field(compare=False, hash=False, repr=False)
    slot: tuple = ()

    @staticmethod
    def global_(name, globals_dict) -> "FreeVar":
        return FreeVar(name, globals_dict, ("global", id(globals_dict), name))

    @staticmethod
    def cell(name, cell) -> "FreeVar":
        return FreeVar(name, cell, ("cell", id(cell)))

    @staticmethod
    def attribute(name, obj, attr) -> "FreeVar":
        """``obj.attr`` of a module or class: read afresh at every call."""
        return FreeVar(name, obj, ("attr", id(obj), attr))

    @staticmethod
    def constant(name, value) -> "FreeVar":
        """A value fixed when the IR was made (e.g. the residuals a ``vjp`` closure holds)."""
        holder = [value]
        return FreeVar(name, holder, ("value", id(holder)))

    def load(self):
        if self.slot[0] == "value":
            return self.holder[0]
        if self.slot[0] == "cell":
            return self.holder.cell_contents
        if self.slot[0] == "attr":
            return getattr(self.holder, self.slot[2])
        try:
            return self.holder[self.name]
        except KeyError:
            raise NameError(f"name {self.name!r} is not defined") from None


def _bind_target(t, names) -> None:
    if isinstance(t, cst.Name):
        names.add(t.value)
    elif isinstance(t, (cst.Tuple, cst.List)):
        for e in t.elements:
            _bind_target(e.value, names)
    elif isinstance(t, cst.StarredElement):
        _bind_target(t.value, names)


def _bind_assign(n, node, names):
    for t in n.targets:
        _bind_target(t.target, names)


def _bind_own_target(n, node, names):
    _bind_target(n.target, names)


def _bind_handler(n, node, names):
    if n.name is not None:
        _bind_target(n.name.name, names)


def _bind_with(n, node, names):
    if n.asname is not None:
        _bind_target(n.asname.name, names)


def _bind_scope(n, node, names):
    if n is node:
        return True
    names.add(n.name.value)
    return False


def _skip_unless_root(n, node, names):
    return n is node


def _skip(n, node, names):
    return False


_BINDERS = {cst.Assign: _bind_assign, cst.AnnAssign: _bind_own_target,
            cst.AugAssign: _bind_own_target, cst.For: _bind_own_target,
            cst.NamedExpr: _bind_own_target, cst.ExceptHandler: _bind_handler,
            cst.WithItem: _bind_with, cst.FunctionDef: _bind_scope, cst.ClassDef: _bind_scope,
            cst.Lambda: _skip_unless_root, cst.ListComp: _skip, cst.SetComp: _skip,
            cst.DictComp: _skip, cst.GeneratorExp: _skip}


def assigned_names(node, walrus: bool = True) -> set:
    """Names bound anywhere in ``node``'s own scope (not nested scopes: a nested ``def``
    or ``class`` binds only its name; lambdas and comprehensions bind nothing here).

    ``walrus=False`` says ``node`` holds no ``:=`` (its text has none): the only binding
    inside an expression, so expressions are not walked (most of a function's nodes)."""
    names = set()
    binders = _BINDERS
    expression = cst.BaseExpression

    def enter(n):
        bind = binders.get(type(n))
        if bind is None:
            return walrus or n is node or not isinstance(n, expression)
        return bind(n, node, names)

    walk(node, enter)
    return names


class DefaultSlot:
    """The default of a parameter of a local function: the ``index``-th default operand
    of its ``make_closure`` call (evaluated where the ``def``/``lambda`` ran)."""

    def __init__(self, index: int):
        self.index = index

    def __repr__(self) -> str:
        return f"<default {self.index}>"


@dataclass(frozen=True, eq=False)
class LocalFunction:
    """A ``lambda`` or nested ``def`` inside a function being lowered.

    ``func`` is its IR.  A name it reads from an enclosing function appears in
    ``func`` as a ``Var`` of that name and is listed in ``captured``; the
    ``make_closure`` call that binds the local function passes those variables
    (then the defaults), so renaming the enclosing code renames them too.
    Closures bind late, as in Python: the inliner reads each captured variable
    where the local function is *called*.  ``signature`` binds a call's
    arguments; its defaults are ``DefaultSlot``s.
    """

    name: str
    func: Any
    freevars: Any
    captured: tuple
    signature: Any
    loc: Any = None


def make_closure(local: LocalFunction, *operands):
    """Marker in lowered IR: ``g = make_closure(local, *captured, *defaults)``.

    The inliner (``passes/inline.py``) removes it and inlines ``local`` where
    ``g`` is called; it is never called at run time."""
    raise RuntimeError(f"the local function {local.name} exists only inside s2s")
