"""Lambdas and nested ``def``s inside a function being lowered.

Contract: ``local_function(outer, node, name)`` lowers the ``lambda`` or
``def`` ``node`` found in the function ``outer`` is lowering and returns the
expression that binds it, ``make_closure(LocalFunction, *captured,
*defaults)`` (``scope.py``):

* names the local function reads from an enclosing function (``outer`` or
  one around it) are *captured*: they stay ``Var``s named as in the
  enclosing function and are passed to ``make_closure``, so the inliner reads
  them where the local function is called (late binding, as in Python);
* its other free names resolve like ``outer``'s (closure cells, globals,
  builtins), and its free variables become keyword-only parameters of its IR;
* parameter defaults are evaluated where the ``def``/``lambda`` runs, a
  variable copied then, as Python does.

Assigning a captured name inside the local function makes it a local of its
own (Python's rule); ``nonlocal`` is an ``UnsupportedSyntaxError``.
"""
from __future__ import annotations

import functools
import inspect

import libcst as cst

from ..ir import nodes as ir
from .scope import DefaultSlot, LocalFunction, make_closure


def local_function(outer, node, name: str) -> ir.Call:
    loc = outer.loc(node)
    sig = _signature(outer, node, name, loc)
    defaults = sig.defaults
    nested = _nested_lowerer()(outer, node, name)
    func = nested.lower()
    captured = tuple(nested.captured)
    local = LocalFunction(name, func, dict(nested.freevars), captured, sig.signature, loc)
    operands = tuple(outer.name_ref(c) for c in captured) + tuple(defaults)
    return ir.Call(make_closure, (ir.Const(local),) + operands)


@functools.lru_cache(maxsize=None)
def _nested_lowerer():
    """The ``Lowerer`` of a local function (made on first use: ``lower.py`` imports us)."""
    from .lower import Lowerer

    return type("NestedLowerer", (_Nested, Lowerer), {})


class _Signature:
    def __init__(self, signature, defaults):
        self.signature, self.defaults = signature, defaults


def _signature(outer, node, name, loc) -> _Signature:
    """The local function's signature, its defaults evaluated now in ``outer``."""
    P = inspect.Parameter
    p = node.params
    defaults = []
    params = []

    def add(param, kind):
        default = P.empty
        if getattr(param, "default", None) is not None:
            atom = outer.atom(param.default)
            if isinstance(atom, ir.Var) and atom.name not in outer.names.temps:
                copy = ir.Var(outer.names.fresh(f"{name}_{param.name.value}"))
                outer.emit(ir.Assign(copy, atom, loc))  # later assignments do not change it
                atom = copy
            defaults.append(atom)
            default = DefaultSlot(len(defaults) - 1)
        params.append(P(param.name.value, kind, default=default))

    for x in p.posonly_params:
        add(x, P.POSITIONAL_ONLY)
    for x in p.params:
        add(x, P.POSITIONAL_OR_KEYWORD)
    if isinstance(p.star_arg, cst.Param):
        add(p.star_arg, P.VAR_POSITIONAL)
    for x in p.kwonly_params:
        add(x, P.KEYWORD_ONLY)
    if p.star_kwarg is not None:
        add(p.star_kwarg, P.VAR_KEYWORD)
    return _Signature(inspect.Signature(params), defaults)


class _Nested:
    """Mixed into the ``Lowerer`` for a local function (see the module docstring)."""

    def __init__(self, outer, node, name):
        self.fn = None
        self.outer = outer
        self.local_name = name
        enclosing = outer.visible()
        #: enclosing comprehension variables: user name -> their variable there
        self.enclosing_comps = outer.visible_comps()
        self._setup(outer.parsed, node, outer.globals, outer.cells, outer.statics,
                    reserved=enclosing | set(self.enclosing_comps.values()),
                    imported=outer.imported)
        #: names of enclosing functions this one can read (its own locals shadow them)
        self.enclosing = enclosing - self.locals
        self.captured = []

    def function_name(self) -> str:
        return self.local_name

    def visible(self) -> set:
        return self.locals | self.enclosing

    def visible_comps(self) -> dict:
        comps = {k: v for k, v in self.enclosing_comps.items() if k not in self.locals}
        return {**comps, **_own_comps(self)}

    def name_ref(self, name) -> ir.Var:
        if name in self.locals or name in _own_comps(self).values():
            return ir.Var(name)
        return self.capture(name)

    def capture(self, name) -> ir.Var:
        if name not in self.captured:
            self.captured.append(name)
        return ir.Var(name)

    def expr_Name(self, node):
        name = node.value
        if self.comp_var(name) is None and name not in self.locals:
            if name in self.enclosing_comps:  # a comprehension variable around the lambda
                return self.capture(self.enclosing_comps[name])
            if name in self.enclosing:
                return self.capture(name)
        return super().expr_Name(node)

    def comp_var(self, name):
        find = getattr(super(), "comp_var", None)
        return find(name) if find is not None and getattr(self, "comp_scopes", ()) else None

    def _params(self):
        P = inspect.Parameter
        sig = _param_kinds(self.node)
        return tuple(ir.Param(ir.Var(n), None, kind in (P.KEYWORD_ONLY, P.VAR_KEYWORD))
                     for n, kind in sig)


def _own_comps(lowerer) -> dict:
    """The comprehension variables in scope where ``lowerer`` is: user name -> variable."""
    out = {}
    for scope in getattr(lowerer, "comp_scopes", ()):
        out.update(scope)
    return out


def _param_kinds(node):
    P = inspect.Parameter
    p = node.params
    out = [(x.name.value, P.POSITIONAL_ONLY) for x in p.posonly_params]
    out += [(x.name.value, P.POSITIONAL_OR_KEYWORD) for x in p.params]
    if isinstance(p.star_arg, cst.Param):
        out.append((p.star_arg.name.value, P.VAR_POSITIONAL))
    out += [(x.name.value, P.KEYWORD_ONLY) for x in p.kwonly_params]
    if p.star_kwarg is not None:
        out.append((p.star_kwarg.name.value, P.VAR_KEYWORD))
    return out
