"""Inlining the user's own functions, methods and small classes.

Contract: accepts an IR function (from the frontend) and its free
variables; returns an equivalent IR function in which

* every call of a Python function that has source and no derivative rule
  is replaced by the callee's body (lowered by the frontend, made
  single-exit), its parameters bound to the call's atoms (keywords and
  defaults resolved by the callee's signature; constants bound to a renamed
  parameter) and its locals renamed apart;
* an instance of a user class created inside the function becomes a
  *virtual object*: ``__init__`` is inlined, each ``self.a = v`` binds the
  attribute to a fresh variable (``obj_a = v``), ``obj.a`` reads it, and
  methods (``obj.m(...)``, ``obj(...)`` via ``__call__``, ``@property``,
  ``@staticmethod``) are inlined with ``self`` bound to the object.  The
  object never exists at run time, so it must not escape: using it any
  other way (returning it, passing it to a function s2s does not inline,
  putting it in a container) raises ``UnsupportedSyntaxError``;
* the callees' free variables join the caller's (one per global slot).

Recursion and a ``return`` inside a callee's loop or ``try`` raise
``UnsupportedSyntaxError`` at the call site.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from typing import Dict, List

from s2s_runtime import build

from ..errors import unsupported
from ..frontend.desugar import ATTRIBUTE_OF, METHOD_OF
from ..ir import nodes as ir
from ..ir.names import NameGen
from ..rules import lookup
from .single_exit import single_exit
from .ssa import _rename_all


_NOT_USER = ("s2s_runtime", "numpy")


def _is_s2s(module: str) -> bool:
    return module == "s2s" or module.startswith("s2s.")


def is_user_function(fn) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return (inspect.isfunction(fn) and lookup(fn) is None
            and not module.startswith(_NOT_USER) and not _is_s2s(module))


def is_user_class(cls) -> bool:
    module = getattr(cls, "__module__", None) or ""
    return (inspect.isclass(cls) and lookup(cls) is None and module != "builtins"
            and not module.startswith(_NOT_USER) and not _is_s2s(module)
            and inspect.isfunction(getattr(cls, "__init__", None)))


@dataclass
class VirtualObject:
    cls: type
    depth: int = 0  # nesting depth of the block that created it
    attrs: Dict[str, ir.Atom] = field(default_factory=dict)


class Inliner:
    def __init__(self, fn: ir.Function, freevars: Dict, lower, site_values=None):
        self.names = NameGen(ir.all_names(fn))
        self.temps = set(fn.temps)
        self.freevars = dict(freevars)
        self.lower = lower  # fn -> (ir.Function, freevars); cached by the caller
        self.active = []  # callees being inlined (recursion check)
        self.objects: Dict[str, VirtualObject] = {}
        self.depth = 0  # nesting depth of the block being processed (if/loop bodies)
        #: statement -> (ir, freevars) of a transform call, once argument kinds are known
        self.site_values = site_values

    # -- blocks ----------------------------------------------------------------
    def block(self, stmts) -> List:
        out = []
        for s in stmts:
            out += self.stmt(s)
        return out

    def stmt(self, s) -> List:
        if isinstance(s, (ir.Assign, ir.ExprStmt)) and isinstance(s.value, ir.Call):
            handled = self.call(s)
            if handled is not None:
                return handled
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) \
                and s.value.name in self.objects:
            self.objects[s.target.name] = self.objects[s.value.name]  # an alias
            return []
        self.check_no_escape(s)
        return [_map_blocks(s, self.nested_block)]

    def nested_block(self, stmts) -> List:
        self.depth += 1
        try:
            return self.block(stmts)
        finally:
            self.depth -= 1

    def check_no_escape(self, s) -> None:
        for a in ir.stmt_uses(s):
            if isinstance(a, ir.Var) and a.name in self.objects:
                cls = self.objects[a.name].cls.__name__
                raise unsupported(f"this use of a {cls} object created in the differentiated "
                                  "code", s.loc, "s2s inlines such objects; they may only be "
                                  "read (attributes, methods) in place")

    # -- calls --------------------------------------------------------------------
    def call(self, s):
        c: ir.Call = s.value
        fn, args = c.fn, c.args
        obj = self.object_of(args[0]) if args else None
        if fn is getattr and obj is not None and isinstance(args[1], ir.Const):
            return self.get_attribute(s, obj, args[0], args[1].value)
        if fn is setattr and obj is not None and isinstance(args[1], ir.Const):
            name = args[1].value
            if self.depth != obj.depth:
                raise unsupported(f"setting attribute {name!r} of a {obj.cls.__name__} object "
                                  "inside a branch or loop", s.loc)
            var = ir.Var(self.names.fresh(f"{args[0].name}_{name}"))
            self.temps.add(var.name)  # a compiler-made name: copies of it may vanish
            obj.attrs[name] = var
            return [ir.Assign(var, args[2], s.loc)]
        if fn is build.call_method and obj is not None:
            return self.method(s, obj, args[0], args[1].value, args[2:], c.kwargs)
        if obj is not None and (fn in METHOD_OF or fn in ATTRIBUTE_OF):
            name = METHOD_OF.get(fn) or ATTRIBUTE_OF[fn]
            if fn in ATTRIBUTE_OF:
                return self.get_attribute(s, obj, args[0], name)
            return self.method(s, obj, args[0], name, args[1:], c.kwargs)
        if is_user_class(fn) and isinstance(s, ir.Assign):
            self.check_no_escape(s)
            self.objects[s.target.name] = VirtualObject(fn, self.depth)
            init = ir.Call(fn.__init__, (s.target,) + args, c.kwargs)
            return self.inline(ir.ExprStmt(init, s.loc), fn.__init__)
        if is_user_function(fn):
            self.check_no_escape(s)
            return self.inline(s, fn)
        fixed = getattr(fn, "_s2s_ir", None)
        if fixed is not None:  # a callable that carries its IR (vjp closures, ...)
            self.check_no_escape(s)
            return self.inline_ir(s, fn, *fixed())
        if getattr(fn, "_s2s_site", None) is not None:
            self.check_no_escape(s)
            return self.site(s, fn)
        return None

    def site(self, s, fn) -> List:
        """A call of a transform (``grad(f)(x)``, ``jvp(f, p, t)``): its IR depends on the
        kinds of the arguments, so it is expanded when the enclosing transform is
        specialised (``passes/sites.py``); until then it stays a call with a target."""
        if self.site_values is None:
            if isinstance(s, ir.ExprStmt):
                t = ir.Var(self.names.temp())
                self.temps.add(t.name)
                s = ir.Assign(t, s.value, s.loc)
            return [s]
        expansion = self.site_values(s)
        if isinstance(expansion, list):  # statements that stand for it
            return expansion
        return self.inline_ir(s, fn, *expansion)

    def object_of(self, a):
        return self.objects.get(a.name) if isinstance(a, ir.Var) else None

    def get_attribute(self, s, obj, var, name) -> List:
        if name in obj.attrs:
            value = obj.attrs[name]
            return [ir.Assign(s.target, value, s.loc)] if isinstance(s, ir.Assign) else []
        static = inspect.getattr_static(obj.cls, name, None)
        if isinstance(static, property) and static.fget is not None:
            return self.inline(replace(s, value=ir.Call(static.fget, (var,))), static.fget)
        if static is not None and not callable(static) and isinstance(s, ir.Assign):
            return [ir.Assign(s.target, ir.Const(getattr(obj.cls, name)), s.loc)]
        raise unsupported(f"attribute {name!r} of a {obj.cls.__name__} object", s.loc,
                          "it is not set in __init__ before this read")

    def method(self, s, obj, var, name, args, kwargs) -> List:
        static = inspect.getattr_static(obj.cls, name, None)
        if isinstance(static, staticmethod):
            fn, call_args = static.__func__, args
        elif inspect.isfunction(static):
            fn, call_args = static, (var,) + tuple(args)
        else:
            what = "__call__" if name == "__call__" else f".{name}()"
            raise unsupported(f"method {what} of a {obj.cls.__name__} object", s.loc,
                              "only plain methods, staticmethods and properties are supported")
        return self.inline(replace(s, value=ir.Call(fn, tuple(call_args), kwargs)), fn)

    def inline(self, s, callee) -> List:
        call = s.value
        if callee in self.active:
            raise unsupported(f"recursive call of {callee.__qualname__}", s.loc,
                              "recursion comes with the calls work")
        func, callee_free = self.lower(callee)
        try:
            bound = inspect.signature(callee).bind(*call.args, **dict(call.kwargs))
        except TypeError as exc:
            raise unsupported(f"call of {callee.__qualname__}: {exc}", s.loc) from None
        bound.apply_defaults()
        return self.inline_body(s, callee, func, callee_free, bound.arguments)

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
            raise unsupported(f"call of {_callee_name(callee)}: {exc}", s.loc) from None
        bound.apply_defaults()
        return self.inline_body(s, callee, func, callee_free, bound.arguments)

    def inline_body(self, s, callee, func, callee_free, arguments) -> List:
        func = single_exit(func)
        env: Dict[str, str] = {name: self._adopt_freevar(fv).name
                               for name, fv in callee_free.items()}
        out = []
        assigned = {v.name for x in ir.walk(func.body) for v in ir.stmt_defs(x)}
        for name, value in arguments.items():
            if isinstance(value, ir.Var) and name not in assigned:
                env[name] = value.name
            else:  # a constant, or a parameter the callee reassigns: bind a fresh copy
                atom = value if isinstance(value, (ir.Var, ir.Const)) else ir.Const(value)
                env[name] = self.names.fresh(name)
                out.append(ir.Assign(ir.Var(env[name]), atom, s.loc))
        body = list(func.body)
        ret = body.pop()
        if any(isinstance(x, ir.Return) for x in ir.walk(body)):
            raise unsupported(f"'return' inside a loop or try in {_callee_name(callee)}", s.loc)
        for x in ir.walk(body):
            for v in ir.stmt_defs(x):
                if v.name not in env:
                    if v.name in func.temps:
                        env[v.name] = self.names.temp()
                        self.temps.add(env[v.name])
                    else:
                        env[v.name] = self.names.fresh(v.name)
        body = [_rename_all(x, env) for x in body]
        self.active.append(callee)
        try:
            out += self.block(body)
        finally:
            self.active.pop()
        value = _rename_all(ret, env).value
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

    def __call__(self, fn: ir.Function) -> ir.Function:
        body = self.block(fn.body)
        kw = tuple(ir.Param(ir.Var(n), None, kwonly=True) for n in self.freevars
                   if n not in {p.var.name for p in fn.params})
        return replace(fn, body=tuple(body), params=fn.params + kw,
                       temps=frozenset(self.temps))


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


def ir_signature(func: ir.Function, exclude=()) -> inspect.Signature:
    """The Python signature of an IR function (parameters named in ``exclude`` left out)."""
    params = []
    for p in func.params:
        if p.var.name in exclude:
            continue
        kind = inspect.Parameter.KEYWORD_ONLY if p.kwonly else \
            inspect.Parameter.POSITIONAL_OR_KEYWORD
        default = inspect.Parameter.empty if p.default is None else p.default
        params.append(inspect.Parameter(p.var.name, kind, default=default))
    return inspect.Signature(params)


def _callee_name(callee) -> str:
    return getattr(callee, "__qualname__", None) or getattr(callee, "__name__", repr(callee))


def inline_calls(fn: ir.Function, freevars: Dict, lower, site_values=None):
    """``fn`` with user calls and objects inlined, and its (possibly grown) free variables.

    ``site_values(stmt) -> (ir, freevars)`` expands calls of transforms; without it
    they are left in place (see ``Inliner.site``)."""
    inl = Inliner(fn, freevars, lower, site_values)
    out = inl(fn)
    return out, inl.freevars
