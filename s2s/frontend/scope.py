"""Scopes: which names a function assigns, and where free values come from."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst


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


class _Assigned(cst.CSTVisitor):
    """Collects the names a function body binds (its locals)."""

    def __init__(self, root):
        self.root = root
        self.names = set()

    def _target(self, t):
        if isinstance(t, cst.Name):
            self.names.add(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for e in t.elements:
                self._target(e.value)
        elif isinstance(t, cst.StarredElement):
            self._target(t.value)

    def visit_Assign(self, node):
        for t in node.targets:
            self._target(t.target)

    def visit_AnnAssign(self, node):
        self._target(node.target)

    def visit_AugAssign(self, node):
        self._target(node.target)

    def visit_For(self, node):
        self._target(node.target)

    def visit_NamedExpr(self, node):
        self._target(node.target)

    def visit_ExceptHandler(self, node):
        if node.name is not None:
            self._target(node.name.name)

    def visit_WithItem(self, node):
        if node.asname is not None:
            self._target(node.asname.name)

    def visit_FunctionDef(self, node):
        if node is not self.root:
            self.names.add(node.name.value)
            return False
        return True

    def visit_ClassDef(self, node):
        self.names.add(node.name.value)
        return False

    def visit_Lambda(self, node):
        return node is self.root

    def visit_ListComp(self, node):
        return False

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp


def assigned_names(node) -> set:
    """Names bound anywhere in ``node``'s own scope (not nested scopes)."""
    v = _Assigned(node)
    node.visit(v)
    return v.names


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
