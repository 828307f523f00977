"""Helpers shared by forward and reverse mode."""
from __future__ import annotations

from ..ir import nodes as ir
from ..rules import lookup


def is_in(a, names) -> bool:
    """``a`` is a variable whose name is in ``names``."""
    return isinstance(a, ir.Var) and a.name in names


def expr_active(v, active) -> bool:
    """Whether expression ``v`` depends on a variable in ``active``.

    A call of a primitive marked non-differentiable is never active.
    """
    if isinstance(v, ir.Var):
        return v.name in active
    if isinstance(v, ir.Call):
        rule = lookup(v.fn)
        if rule is not None and rule.nondiff:
            return False
        return any(is_in(a, active) for a in v.operands())
    return False


def describe(fn) -> str:
    """``module.qualname`` of a callable, for error messages."""
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{mod}.{name}" if mod and mod != "builtins" else name

