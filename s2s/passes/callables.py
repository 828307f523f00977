"""Calls of what the inliner knows a variable holds (mixed into ``Inliner``).

``call_known`` calls a known value (``local_callables.py``): a local function
is inlined reading the variables it captures where it is called; a bound
method with its object; a function or class held in a variable as if it were
named; an object through its ``__call__``.  A recursive call is inlined again
while its constant arguments change (``check_recursion``), so recursion whose
depth constant arguments fix is unrolled; otherwise, or past
``MAX_RECURSION`` levels, it is an ``UnsupportedSyntaxError``.

A transform of a local function (``vmap(lambda y: k(x, y))(ys)``, ``grad(g)(x)`` for a
nested ``def g`` reading the enclosing code's variables) is closure-converted: the
function's IR lifted to take the variables it captures as trailing parameters (an
``IRCallable``), the transform made of that (the maker's ``_s2s_closure_arguments(args,
kwargs, n_args, n_captured)`` gives its other arguments for the lifted function: ``vmap``
maps the new parameters on no axis; a maker without it is not given local functions), and
called with the captured variables appended, read where the call is (closures bind late),
as a site the enclosing transform expands and differentiates or batches through like any
other.  A transform called with a local function (``jvp(lambda y: f(y, d), (x,), (v,))``,
``vjp``, ``linearize``) is the call of what its ``_s2s_closure_site(lifted, n_captured)``
makes, on its other arguments and the captured variables (whose tangents are zero and
whose cotangents are dropped: they are not the transform's primals).
"""
from __future__ import annotations

import inspect
from dataclasses import replace
from typing import List

from s2s_runtime import build

from ..errors import unsupported
from ..frontend.scope import DefaultSlot
from ..ir import nodes as ir
from .local_callables import (NOTHING, BoundMethod, Closure, PartialOf, TransformOfClosure,
                              Value, VirtualObject, is_user_function, is_user_object,
                              known_of_value)

#: deepest unrolled recursion (Python's own limit is 1000 frames)
MAX_RECURSION = 64
#: most recursive calls unrolled in one transform (a tree recursion grows fast)
MAX_RECURSIVE_CALLS = 2000


def same_arguments(args, kwargs, n_args, n_captured):
    """A maker's ``_s2s_closure_arguments`` when its other arguments cover the lifted
    function as they are (``grad``'s ``argnums`` count from the first parameter)."""
    return args, kwargs


class CallableCalls:
    """The calls of known values (see the module docstring)."""

    def transform_of_closure(self, s, fn, args, kwargs):
        """``t = maker(closure, *constants)``: ``t`` known as the transform of the closure
        (no statement); None when this is not such a call."""
        if getattr(fn, "_s2s_closure_arguments", None) is None or not args or \
                not isinstance(s, ir.Assign):
            return None
        closure = self.known_of(args[0])
        if not isinstance(closure, Closure):
            return None
        rest = [self.constant(a) for a in args[1:]]
        kw = {k: self.constant(a) for k, a in kwargs}
        if NOTHING in rest or NOTHING in kw.values():
            return None
        self.known.forget(s.target.name)
        self.known.bind(s.target.name, TransformOfClosure(fn, closure, tuple(rest), kw))
        return []

    def call_transform_of_closure(self, s, known: TransformOfClosure, args, kwargs) -> List:
        n_params = len(known.closure.local.signature.parameters)
        if kwargs or len(args) != n_params:
            raise unsupported(f"this call of {known.describe()}", s.loc,
                              "inside transformed code, a transform of a local function is "
                              "called with one positional argument per parameter (no "
                              "defaults, keywords or *args)")
        lifted, captures = self.lifted_closure(s, known.closure, known.describe())
        margs, mkwargs = known.maker._s2s_closure_arguments(known.args, known.kwargs,
                                                            len(args), len(captures))
        return self.call_made(s, known.maker(lifted, *margs, **mkwargs),
                              tuple(args) + captures, ())

    def transform_call_of_closure(self, s, fn, args, kwargs):
        """``jvp(closure, primals, tangents)``, ``vjp(closure, *primals)``,
        ``linearize(closure, *primals)``: the call of ``fn._s2s_closure_site(lifted,
        n_captured)`` on the other arguments and the captured variables; None when
        this is not such a call."""
        if getattr(fn, "_s2s_closure_site", None) is None or not args:
            return None
        closure = self.known_of(args[0])
        if isinstance(closure, TransformOfClosure):  # jvp(grad(closure), ...)
            label = f"{getattr(fn, '__name__', 'a transform')} of {closure.describe()}"
            lifted, captures = self.lifted_closure(s, closure.closure, label)
            n_params = len(closure.closure.local.signature.parameters)
            margs, mkwargs = closure.maker._s2s_closure_arguments(
                closure.args, closure.kwargs, n_params, len(captures))
            made = closure.maker(lifted, *margs, **mkwargs)
            return self.call_made(s, fn._s2s_closure_site(made, len(captures)),
                                  tuple(args[1:]) + captures, kwargs)
        if not isinstance(closure, Closure):
            return None
        label = f"{getattr(fn, '__name__', 'a transform')} of {closure.describe()}"
        lifted, captures = self.lifted_closure(s, closure, label)
        return self.call_made(s, fn._s2s_closure_site(lifted, len(captures)),
                              tuple(args[1:]) + captures, kwargs)

    def lifted_closure(self, s, closure: Closure, label):
        """``(IRCallable, captures)``: the local function of ``closure`` taking the
        variables it captures as trailing parameters, and those variables as read here
        (closures bind late)."""
        from .sites import IRCallable
        local = closure.local
        if any(p.kind is not p.POSITIONAL_OR_KEYWORD or p.default is not p.empty
               for p in local.signature.parameters.values()):
            raise unsupported(f"{label} inside transformed code", s.loc,
                              "the local function takes positional parameters without "
                              "defaults (no keywords or *args)")
        captured = [c for c in local.captured if c in closure.env]
        func = replace(local.func, params=tuple(p for p in local.func.params if not p.kwonly)
                       + tuple(ir.Param(ir.Var(c)) for c in captured)
                       + tuple(p for p in local.func.params if p.kwonly))
        return (IRCallable(func, dict(local.freevars), self.lower),
                tuple(ir.Var(closure.env[c]) for c in captured))

    def call_made(self, s, made, operands, kwargs) -> List:
        """``s``'s call made a call of the program object ``made`` on ``operands``."""
        out, var = self.const_atom(made, s.loc)
        call = with_call(s, build.call_method, (var, ir.Const("__call__")) + operands, kwargs)
        return out + self.call_known(call, Value(made), var, operands, kwargs)

    def call_known(self, s, known, atom, args, kwargs) -> List:
        """``atom(*args, **kwargs)`` where ``atom`` is known to hold ``known``."""
        if isinstance(known, PartialOf):  # the call it stands for
            args = tuple(known.args) + tuple(args)
            kwargs = tuple({**dict(known.kwargs), **dict(kwargs)}.items())
            call = with_call(s, build.call_method, (known.atom, ir.Const("__call__")) + args,
                             kwargs)
            return self.call_known(call, known.callee, known.atom, args, kwargs)
        if isinstance(known, Closure):
            return self.inline_closure(s, known, args, kwargs)
        if isinstance(known, TransformOfClosure):
            return self.call_transform_of_closure(s, known, args, kwargs)
        if isinstance(known, BoundMethod):
            return self.inline(with_call(s, known.func, (known.receiver,) + tuple(args),
                                          kwargs), known.func)
        if isinstance(known, VirtualObject) or (isinstance(known, Value)
                                                and is_user_object(known.value)):
            out = self.method(s, known, atom, "__call__", args, kwargs)
            # None: a __call__ s2s cannot see into (a C function, ctypes): left as it is,
            # to run (or be refused by name where it is differentiated)
            return out if out is not None else self.plain(s)
        if isinstance(known, Value):
            v = known.value
            if inspect.ismethod(v) and is_user_function(v.__func__):
                out, receiver = self.method_self(atom, v, s.loc)
                return out + self.inline(with_call(s, v.__func__, (receiver,) + tuple(args),
                                                    kwargs), v.__func__)
            if callable(v):
                s = with_call(s, v, args, kwargs)
                handled = self.call_static(s, v, args, kwargs)
                return handled if handled is not None else self.plain(s)
        return self.plain(s)  # not callable: Python raises at run time

    def item(self, s, container: Value, index) -> List:
        """``t = container[index]`` with a constant index: ``t`` is known if the item is."""
        try:
            v = container.value[index]
        except Exception:
            return self.plain(s)
        out = self.plain(s)
        k = known_of_value(v)
        if k is not None:
            self.known.bind(s.target.name, k)
        return out

    def const_atom(self, value, loc):
        """``(stmts, var)``: a fresh variable holding the program object ``value``."""
        var = ir.Var(self.names.fresh(_short_name(value)))
        out = self.plain(ir.Assign(var, ir.Const(value), loc))
        self.known.bind(var.name, Value(value))
        return out, var

    def method_self(self, atom, method, loc):
        """``(stmts, var)``: the object the bound method ``method`` held in ``atom`` is
        bound to, read at run time."""
        if isinstance(atom, ir.Const):
            return self.const_atom(method.__self__, loc)
        var = ir.Var(self.names.temp())
        self.temps.add(var.name)
        out = self.plain(ir.Assign(var, ir.Call(getattr, (atom, ir.Const("__self__"))), loc))
        self.known.bind(var.name, Value(method.__self__))
        return out, var

    def bind_partial(self, s, args, kwargs):
        """``g = functools.partial(f, *args, **kwargs)`` of a callable ``f`` the code
        knows: ``g`` is bound to the call it stands for (``PartialOf``), its arguments
        copied now (a partial holds the values of when it was made); None where ``f`` is
        not known (left as a run-time value)."""
        callee = self.known_of(args[0]) if args else None
        if callee is None or not isinstance(s, ir.Assign) or \
                isinstance(callee, Value) and not callable(callee.value):
            return None
        out, held = [], []
        for a in tuple(args[1:]) + tuple(a for _, a in kwargs):
            if isinstance(a, ir.Var):
                var = ir.Var(self.names.temp())
                self.temps.add(var.name)
                out += self.plain(ir.Assign(var, a, s.loc))
                k = self.known.get(a.name)
                if k is not None:
                    self.known.bind(var.name, k)
                a = var
            held.append(a)
        n = len(args) - 1
        self.known.forget(s.target.name)
        self.known.bind(s.target.name, PartialOf(callee, args[0], tuple(held[:n]),
                                                 dict(zip([k for k, _ in kwargs], held[n:]))))
        return out

    def bind_closure(self, s) -> List:
        c = s.value
        local = c.args[0].value
        n = len(local.captured)
        env = {name: a.name for name, a in zip(local.captured, c.args[1:1 + n])}
        closure = Closure(local, env, tuple(c.args[1 + n:]))
        if isinstance(s, ir.Assign):
            self.known.forget(s.target.name)
            self.known.bind(s.target.name, closure)
        return []

    def inline_closure(self, s, closure: Closure, args, kwargs) -> List:
        local = closure.local
        sig = local.signature.replace(parameters=[
            p.replace(default=closure.defaults[p.default.index])
            if isinstance(p.default, DefaultSlot) else p
            for p in local.signature.parameters.values()])
        call = with_call(s, local, args, kwargs)
        return self.inline(call, local, sig=sig, func=(local.func, local.freevars),
                           env=dict(closure.env))

    def check_recursion(self, s, callee, arguments) -> tuple:
        """The constant arguments of this call of ``callee``; an error if it recurses
        without them changing, or too deep."""
        key = tuple((name, v) for name, v in
                    ((name, self.constant(a) if isinstance(a, (ir.Var, ir.Const)) else NOTHING)
                     for name, a in arguments.items()) if v is not NOTHING)
        frames = [k for c, k in self.active if c is callee]
        if not frames:
            return key
        name = callee_name(callee)
        hint = ("s2s unrolls recursion whose depth constant arguments fix (e.g. an int "
                "written at the call site); write the recursion as a loop otherwise")
        if not key or key in frames:
            raise unsupported(f"recursive call of {name} whose depth is not known when s2s "
                              "transforms the code", s.loc, hint)
        if len(frames) >= MAX_RECURSION:
            raise unsupported(f"recursion of {name} deeper than {MAX_RECURSION} levels",
                              s.loc, hint)
        self.recursive_calls += 1
        if self.recursive_calls > MAX_RECURSIVE_CALLS:
            raise unsupported(f"more than {MAX_RECURSIVE_CALLS} recursive calls of {name} "
                              "to unroll", s.loc, hint)
        return key


def with_call(s, fn, args, kwargs):
    return replace(s, value=ir.Call(fn, tuple(args), tuple(kwargs)))


def _short_name(value) -> str:
    name = getattr(type(value), "__name__", "obj").lower()
    return "".join(ch for ch in name if ch.isalnum() or ch == "_") or "obj"


def callee_name(callee) -> str:
    name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None)
    if name is None and hasattr(callee, "captured"):  # a LocalFunction
        name = "the lambda" if callee.name == "lambda_" else callee.name
    return name or repr(callee)
