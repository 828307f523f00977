"""Inlining calls to the user's own Python functions.

Contract: accepts an IR function; returns one in which every ``Call`` of a
Python function that has source and no derivative rule is replaced by the
callee's body (lowered by the frontend, made single-exit), with the
callee's parameters bound to the call's atoms (keywords and defaults
resolved by the callee's signature) and its locals renamed apart.  The
callee's free variables join the caller's.  Recursion and ``return`` inside
a callee's loops raise ``UnsupportedSyntaxError`` at the call site.
"""
from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Dict, List

from ..errors import unsupported
from ..ir import nodes as ir
from ..ir.names import NameGen
from ..rules import lookup
from .single_exit import single_exit


def is_user_function(fn) -> bool:
    return inspect.isfunction(fn) and lookup(fn) is None and not fn.__module__.startswith(
        ("s2s_runtime", "numpy"))


class Inliner:
    def __init__(self, fn: ir.Function, freevars: Dict, lower, stack=()):
        self.names = NameGen(ir.all_names(fn))
        self.temps = set(fn.temps)
        self.freevars = dict(freevars)
        self.lower = lower  # fn -> (ir.Function, freevars); cached by the caller
        self.stack = stack

    def block(self, stmts) -> List:
        out = []
        for s in stmts:
            if isinstance(s, (ir.Assign, ir.ExprStmt)) and isinstance(s.value, ir.Call) \
                    and is_user_function(s.value.fn):
                out += self.inline(s)
            else:
                out.append(_map_blocks(s, self.block))
        return out

    def inline(self, s) -> List:
        call = s.value
        callee = call.fn
        if callee in self.stack:
            raise unsupported(f"recursive call of {callee.__qualname__}", s.loc,
                              "recursion comes with the calls work")
        func, callee_free = self.lower(callee)
        inner = Inliner(func, callee_free, self.lower, self.stack + (callee,))
        func = inner(single_exit(func))
        free = {name: self._adopt_freevar(fv) for name, fv in inner.freevars.items()}
        try:
            bound = inspect.signature(callee).bind(*call.args, **dict(call.kwargs))
        except TypeError as exc:
            raise unsupported(f"call of {callee.__qualname__}: {exc}", s.loc) from None
        bound.apply_defaults()
        env: Dict[str, ir.Var] = dict(free)
        out = []
        for name, value in bound.arguments.items():
            if isinstance(value, ir.Var):
                env[name] = value
            else:  # a constant argument or default: bind it to the renamed parameter
                const = value if isinstance(value, ir.Const) else ir.Const(value)
                env[name] = ir.Var(self.names.fresh(name))
                out.append(ir.Assign(env[name], const, s.loc))
        body = list(func.body)
        ret = body.pop()
        if not isinstance(ret, ir.Return) or any(
                isinstance(x, ir.Return) for x in ir.walk(body)):
            raise unsupported(f"'return' inside a loop or try in {callee.__qualname__}", s.loc)
        for x in body:
            out.append(self._rename(x, env, func.temps))
        value = _subst(ret.value, env)
        if isinstance(s, ir.Assign):
            out.append(ir.Assign(s.target, value, s.loc))
        return out

    def _adopt_freevar(self, fv) -> ir.Var:
        for name, mine in self.freevars.items():
            if mine.slot == fv.slot:
                return ir.Var(name)
        name = self.names.fresh(fv.name)
        self.freevars[name] = fv
        return ir.Var(name)

    def _rename(self, s, env, callee_temps):
        def define(v):
            if v.name not in env:
                new = self.names.fresh(v.name) if v.name not in callee_temps else self.names.temp()
                if v.name in callee_temps:
                    self.temps.add(new)
                env[v.name] = ir.Var(new)
            return env[v.name]

        for x in [s, *ir.walk(ir.sub_blocks_flat(s))]:
            for v in ir.stmt_defs(x):
                define(v)
        from .ssa import _rename_all

        return _rename_all(s, {k: v.name for k, v in env.items()})

    def __call__(self, fn: ir.Function) -> ir.Function:
        body = self.block(fn.body)
        kw = tuple(ir.Param(ir.Var(n), None, kwonly=True) for n in self.freevars
                   if n not in {p.var.name for p in fn.params})
        return replace(fn, body=tuple(body), params=fn.params + kw,
                       temps=frozenset(self.temps))


def _subst(a, env):
    if isinstance(a, ir.Var) and a.name in env:
        return env[a.name]
    return a


def _map_blocks(s, f):
    if isinstance(s, ir.If):
        return replace(s, body=tuple(f(s.body)), orelse=tuple(f(s.orelse)))
    if isinstance(s, ir.For):
        return replace(s, body=tuple(f(s.body)), orelse=tuple(f(s.orelse)))
    if isinstance(s, ir.While):
        return replace(s, test_body=tuple(f(s.test_body)), body=tuple(f(s.body)),
                       orelse=tuple(f(s.orelse)))
    if isinstance(s, ir.Try):
        return replace(s, body=tuple(f(s.body)),
                       handlers=tuple(replace(h, body=tuple(f(h.body))) for h in s.handlers),
                       orelse=tuple(f(s.orelse)), finalbody=tuple(f(s.finalbody)))
    return s


def inline_calls(fn: ir.Function, freevars: Dict, lower):
    """``fn`` with user calls inlined, and its (possibly grown) free variables."""
    inl = Inliner(fn, freevars, lower)
    out = inl(fn)
    return out, inl.freevars
