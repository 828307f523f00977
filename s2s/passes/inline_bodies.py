"""Inlining one callee's body at one call (a mixin of ``inline.Inliner``).

Contract: ``inline(s, callee)`` binds the arguments of the call ``s`` (an
``ir.Assign`` or ``ir.ExprStmt`` of an ``ir.Call``) to the parameters of the Python
function ``callee`` by its signature (keywords, defaults, ``*args`` as a tuple,
``**kwargs`` as a dict) and returns the statements of its body, made single-exit,
its locals renamed apart and its result assigned to the call's target;
``inline_ir`` does the same for an IR function without Python source (bound by the
IR's own signature).  An argument that is a variable the callee neither reassigns
nor captures is read where it is (no copy); other arguments get a fresh variable.
The callee's free variables join the caller's (one per global slot).  A
``return`` that is not the body's last statement (inside a loop or ``try``)
raises ``UnsupportedSyntaxError`` at the call.

The host class provides ``names``, ``temps``, ``freevars``, ``lower``, ``active``,
``stmt``, ``block`` and ``check_recursion`` (``inline.Inliner``).
"""
from __future__ import annotations

import inspect
from typing import Dict, List

from s2s_runtime import build

from ..errors import unsupported
from ..frontend.scope import make_closure
from ..ir import nodes as ir
from .callables import callee_name
from .single_exit import single_exit
from .ssa import rename_all

_P = inspect.Parameter


class InlineBodies:
    """Binding a call's arguments and splicing the callee's renamed body."""

    def inline(self, s, callee, sig=None, func=None, env=None) -> List:
        call = s.value
        sig = sig or inspect.signature(callee)
        try:
            bound = sig.bind(*call.args, **dict(call.kwargs))
        except TypeError as exc:
            raise unsupported(f"call of {callee_name(callee)}: {exc}", s.loc) from None
        bound.apply_defaults()
        key = self.check_recursion(s, callee, bound.arguments)
        func, callee_free = func or self.lower(callee)
        return self.inline_body(s, callee, func, callee_free, bound.arguments, sig, env, key)

    def inline_ir(self, s, callee, func: ir.Function, callee_free: Dict) -> List:
        """Inline ``func``, the IR of ``callee`` (a generated function, a transform
        specialised for this call, a ``vjp`` closure): its keyword-only parameters
        named in ``callee_free`` read those free variables, the others bind the call's
        arguments by the IR's own signature."""
        call = s.value
        sig = ir_signature(func, exclude=callee_free)
        try:
            bound = sig.bind(*call.args, **dict(call.kwargs))
        except TypeError as exc:
            raise unsupported(f"call of {callee_name(callee)}: {exc}", s.loc) from None
        bound.apply_defaults()
        return self.inline_body(s, callee, func, callee_free, bound.arguments, sig)

    def inline_body(self, s, callee, func, callee_free, arguments, sig, env=None,
                    key=()) -> List:
        func = single_exit(func)
        env = dict(env or {})
        env.update((name, self._adopt_freevar(fv).name) for name, fv in callee_free.items())
        body = list(func.body)
        ret = body.pop()
        if isinstance(ret, ir.Raise):  # a callee that always raises: its call never returns
            body.append(ret)
            ret = ir.Return(ir.Const(None), ret.loc)
        if any(isinstance(x, ir.Return) for x in ir.walk(body)):
            raise unsupported(f"'return' inside a loop or try in {callee_name(callee)}", s.loc)
        assigned = {v.name for x in ir.walk(body) for v in ir.stmt_defs(x)}
        captured = _captured(body)
        out = []
        for name, value in arguments.items():
            kind = sig.parameters[name].kind if name in sig.parameters else None
            if kind is _P.VAR_POSITIONAL:
                value = ir.Call(build.make_tuple, tuple(map(_atom, value)))
            elif kind is _P.VAR_KEYWORD:
                value = ir.Call(build.make_dict, tuple(
                    a for k, v in value.items() for a in (ir.Const(k), _atom(v))))
            else:
                value = _atom(value)
            if isinstance(value, ir.Var) and name not in assigned and name not in captured:
                env[name] = value.name  # read where it is: no copy
            else:  # a constant, a packed *args, or a parameter the callee reassigns
                env[name] = self.names.fresh(name)
                out += self.stmt(ir.Assign(ir.Var(env[name]), value, s.loc))
        for x in ir.walk(body):
            for v in ir.stmt_defs(x):
                if v.name not in env:
                    if v.name in func.temps:
                        env[v.name] = self.names.temp()
                        self.temps.add(env[v.name])
                    else:
                        env[v.name] = self.names.fresh(v.name)
        body = [rename_all(x, env) for x in body]
        self.active.append((callee, key))
        try:
            out += self.block(body)
        finally:
            self.active.pop()
        value = rename_all(ret, env).value
        if isinstance(s, ir.Assign):
            out += self.stmt(ir.Assign(s.target, value, s.loc))
        return out

    def _adopt_freevar(self, fv) -> ir.Var:
        for name, mine in self.freevars.items():
            if mine.slot == fv.slot:
                return ir.Var(name)
        name = self.names.fresh(fv.name)
        self.freevars[name] = fv
        return ir.Var(name)


def _atom(v):
    return v if isinstance(v, (ir.Var, ir.Const)) else ir.Const(v)


def _captured(body) -> set:
    """The variables local functions defined in ``body`` capture."""
    out = set()
    for x in ir.walk(body):
        v = getattr(x, "value", None)
        if isinstance(v, ir.Call) and v.fn is make_closure:
            out.update(a.name for a in v.args[1:] if isinstance(a, ir.Var))
    return out


def ir_signature(func: ir.Function, exclude=()) -> inspect.Signature:
    """The Python signature of an IR function (parameters named in ``exclude`` left out)."""
    params = []
    for p in func.params:
        if p.var.name in exclude:
            continue
        kind = _P.KEYWORD_ONLY if p.kwonly else _P.POSITIONAL_OR_KEYWORD
        default = _P.empty if p.default is None else p.default
        params.append(_P(p.var.name, kind, default=default))
    return inspect.Signature(params)
