"""Helpers shared by forward and reverse mode."""
from __future__ import annotations

import operator

from s2s_runtime import build

from ..errors import NoRuleError, unsupported
from ..ir import nodes as ir
from ..rules import lookup
from ..rules.registry import no_mode


def tuple_displays(body) -> dict:
    """``{name: items}`` for each name assigned once a tuple display (``t =
    make_tuple(a, b)``), or a copy of such a name: what ``a, b = t`` unpacks item by item,
    so a target carries a derivative only where its item does."""
    defs, displays, copies = {}, {}, {}
    for x in ir.walk(body):
        for v in ir.stmt_defs(x):
            defs[v.name] = defs.get(v.name, 0) + 1
    for x in ir.walk(body):
        if not isinstance(x, ir.Assign) or defs[x.target.name] != 1:
            continue
        if isinstance(x.value, ir.Call) and x.value.fn is build.make_tuple and \
                not x.value.kwargs:
            displays[x.target.name] = x.value.args
        elif isinstance(x.value, ir.Var):
            copies[x.target.name] = x.value.name
    for name, source in copies.items():  # t2 = t7 of a display: t7's items
        seen = {name}
        while source in copies and source not in seen:
            seen.add(source)
            source = copies[source]
        if source in displays:
            displays[name] = displays[source]
    return displays


def display_items(displays, value, n):
    """The ``n`` items of the display ``value`` names (``tuple_displays``), else None."""
    items = displays.get(value.name) if isinstance(value, ir.Var) else None
    return items if items is not None and len(items) == n else None


#: loops over these are loops over positions where what they iterate over is known to be
#: a sequence (``passes/loop_ranges.py``); they have no rule of their own
_POSITIONAL = (zip, enumerate, reversed)


def no_rule_message(fn) -> str:
    """Why a call of ``fn`` (no derivative rule, no source s2s reads) is refused."""
    if fn in _POSITIONAL:
        return (f"cannot differentiate {fn.__name__}(...) over a value s2s does not see as "
                "a sequence (a list, tuple or array made in the function, or an argument): "
                "loop over range(len(...)) and index it instead")
    if fn in (iter, map, filter):
        return (f"cannot differentiate through an iterator object ({fn.__name__}(...)): loop "
                "over the sequence itself, or build a list")
    why = no_mode(fn, "vjp") or no_mode(fn, "jvp")
    if why:
        return f"no derivative of {describe(fn)}: {why}"
    return f"no derivative rule for {describe(fn)}, and no Python source to differentiate through"


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
        if rule is not None and rule.zero_params():
            return any(is_in(a, active) for a in nonzero_operands(rule, v))
        return any(is_in(a, active) for a in v.operands())
    return False


def nonzero_operands(rule, v: ir.Call):
    """The operands of ``v`` bound to parameters whose derivative is not identically zero."""
    try:
        bound = rule.signature.bind(None, None, *v.args, **dict(v.kwargs))
    except TypeError:
        return v.operands()
    zero = rule.zero_params()
    out = []
    for name, value in bound.arguments.items():
        if name in zero:
            continue
        out += list(value) if isinstance(value, tuple) else [value]
    return [a for a in out if isinstance(a, (ir.Var, ir.Const))]


def describe(fn) -> str:
    """``module.qualname`` of a callable, for error messages."""
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{mod}.{name}" if mod and mod != "builtins" else name



#: calls the transforms handle themselves (containers, in-place writes and operators)
_STRUCTURAL = {build.make_tuple, build.make_list, build.make_dict, operator.setitem, setattr,
               operator.iadd, operator.isub, operator.imul, operator.itruediv,
               operator.ifloordiv, operator.imod, operator.ipow, operator.imatmul,
               operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift}


#: in-place methods of lists and dicts (``passes/containers.py`` makes them values where it can)
CONTAINER_CHANGES = {"append", "extend", "insert", "pop", "clear", "update", "setdefault"}
#: in-place methods of lists and dicts that are never made values
IN_PLACE_ONLY = {"remove", "sort", "reverse", "popitem"}
SHARED_HINT = ("s2s differentiates append, extend, insert, pop, clear, update, setdefault and "
               "item assignment on a list or dict the function made itself and shares with "
               "nothing (not an argument, not stored in another container or object, not bound "
               "to different ones on different paths, not changed while a loop runs over it); "
               "build a new one instead, e.g. out = list(out) + [v]")


def check_no_opaque_mutation(s, active) -> None:
    """Reject calls s2s cannot see into on a value that is being differentiated.

    A function with neither a rule nor source raises ``NoRuleError`` even
    when its result is unused (it may have changed its argument).

    numpy's array methods are desugared to numpy functions by the frontend;
    any other method (``x.sort()``, ``x.fill(0)``, ``lst.append(v)``) may
    change ``x`` in place, which neither mode can see: an error, never a
    silently wrong derivative.
    """
    v = getattr(s, "value", None)
    if not isinstance(v, ir.Call) or not any(is_in(a, active) for a in v.operands()):
        return
    if lookup(v.fn) is None and v.fn not in _STRUCTURAL and v.fn is not build.call_method \
            and getattr(type(v.fn), "_s2s_custom", None) is None:  # custom rules: custom_rules.py
        # even when its result is not needed: a C function may change its argument
        raise NoRuleError(no_rule_message(v.fn), s.loc)
    if v.fn is build.call_method and v.args:
        name = v.args[1].value if isinstance(v.args[1], ir.Const) else "?"
        if name in CONTAINER_CHANGES:  # left in place by passes/containers.py
            raise unsupported(f"method .{name}() changing a list or dict that may be shared",
                              s.loc, SHARED_HINT)
        if name in IN_PLACE_ONLY:
            raise unsupported(f"method .{name}() of a list or dict in differentiated code",
                              s.loc, "it changes it in place; write a new one, e.g. "
                              "sorted(l), l[::-1], or a comprehension")
        if not is_in(v.args[0], active):
            if name == "__call__":  # the transforms name the call they cannot see into
                return
            # lst.append(x): x would be hidden in lst, its derivative lost
            obj = v.args[0].name if isinstance(v.args[0], ir.Var) else "a value"
            raise unsupported(f"method {obj}.{name}() given a differentiated value", s.loc,
                              "s2s cannot see what the method does with it: a method of an "
                              "object without Python source (a C library called through "
                              "ctypes, an extension type) has no derivative; give the "
                              "computation a rule with s2s.custom_jvp or s2s.custom_vjp")
        what = "calling a differentiated value" if name == "__call__" else \
            f"method .{name}() of a differentiated value"
        raise unsupported(what, s.loc, "it may change the value in place; s2s differentiates "
                          "numpy's array methods and the functions and classes it can read")
