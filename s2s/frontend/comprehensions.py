"""Lowering of comprehensions and generator expressions into loops.

``ComprehensionLowering`` is mixed into the expression lowering.  A
comprehension becomes a loop that builds its result as a value:

* ``[e for v in xs if c]`` (and a generator expression, which is evaluated
  into a list) -> ``listcomp = []; for v in xs: if c:
  listcomp = rt.list_append(listcomp, e)``; nested ``for`` clauses nest loops;
* ``{k: v for ...}`` -> ``dictcomp = rt.dict_set(dictcomp, k, v, old)``;
* ``sum(e for v in xs)`` (or of a list comprehension), with or without a
  start -> ``total = start; for v in ...: total = total + e`` (no list);
* ``map(f, xs, ...)`` -> the list ``[f(x, ...) for x, ... in zip(xs, ...)]`` and
  ``filter(f, xs)`` -> ``[x for x in xs if f(x)]`` (``filter(None, xs)``: ``if x``), so
  a lambda or local function passed to them is called, and inlined, in the loop (the
  list stands for Python's iterator: what reads it once reads the same items);
* ``functools.reduce(f, xs, initial)`` -> ``acc = initial; for x in xs: acc = f(acc,
  x)``; without ``initial`` the first item starts (a flag the loop tests) and an empty
  ``xs`` raises Python's ``TypeError``;
* ``max(...)``/``min(...)`` of one iterable (``key=`` allowed) ->
  ``rt.max_of``/``rt.min_of`` (of the comprehension's list), of three or more
  values (or two with ``key=``) -> of their tuple.

The comprehension's variables live in a scope of their own (fresh names, so
they never leak into or clash with the function's); the first iterable is
evaluated outside it, as in Python.  The loops are ordinary ``for`` loops:
``passes/containers.py`` and ``passes/loop_ranges.py`` make loops over lists,
tuples, arrays and arguments indexable for both modes.
"""
from __future__ import annotations

import builtins
import functools
import operator
import sys

import libcst as cst

import s2s_runtime as rt
from s2s_runtime import build

from ..errors import unsupported
from ..ir import nodes as ir

#: the keywords ``functools.reduce`` takes (``initial=`` from Python 3.14)
_REDUCE_KEYWORDS = {"initial"} if sys.version_info >= (3, 14) else set()


class ComprehensionLowering:
    """Mixin of the expression lowering (see the module docstring)."""

    #: scopes of the comprehensions being lowered: user name -> IR variable name
    comp_scopes: tuple = ()

    def comp_var(self, name):
        """The IR variable of a comprehension variable ``name``, or None."""
        for scope in reversed(self.comp_scopes):
            if name in scope:
                return ir.Var(scope[name])
        return None

    def expr_ListComp(self, node):
        return self.collect(node, "list")

    expr_GeneratorExp = expr_ListComp

    def expr_DictComp(self, node):
        return self.collect(node, "dict")

    def collect(self, node, kind) -> ir.Var:
        loc = self.loc(node)
        acc = self._fresh_local(f"{kind}comp")
        self.emit(ir.Assign(acc, ir.Call(build.make_list if kind == "list" else build.make_dict,
                                         ()), loc))
        # the iterable right before its loop (so a zip/enumerate there is the loop's own)
        first = self.comp_iterable(node.for_in.iter)

        def item():
            if kind == "list":
                e = self.atom(node.elt)
                self.emit(ir.Assign(acc, ir.Call(rt.list_append, (acc, e)), loc))
                return
            k, v = self.atom(node.key), self.atom(node.value)
            old = self.temp()
            self.emit(ir.Assign(old, ir.Call(rt.old_item, (acc, k)), loc))
            self.emit(ir.Assign(acc, ir.Call(rt.dict_set, (acc, k, v, old)), loc))

        self.comp_loops(node.for_in, first, item, loc)
        return acc

    # -- sum / max / min of one iterable --------------------------------------------------
    def builtin_reduction(self, node):
        """``sum``/``max``/``min`` calls lowered specially, or None (an ordinary call)."""
        func = node.func
        if not isinstance(func, cst.Name) or func.value not in ("sum", "max", "min") \
                or any(a.star for a in node.args):
            return None
        fn = self.value(func)
        if not (isinstance(fn, ir.Const) and fn.value is getattr(builtins, func.value)):
            return None
        positional = [a for a in node.args if a.keyword is None]
        keywords = {a.keyword.value: a for a in node.args if a.keyword is not None}
        comp = positional[0].value if positional and isinstance(
            positional[0].value, (cst.GeneratorExp, cst.ListComp)) else None
        loc = self.loc(node)
        if fn.value is sum:
            if comp is None or len(positional) > 2 or set(keywords) - {"start"} or (
                    len(positional) == 2 and keywords):
                return None
            return self.accumulate(comp, positional[1:] or list(keywords.values()), loc)
        if set(keywords) - {"key"} or not positional or (len(positional) == 2 and not keywords):
            return None  # default=: the builtin itself; max(a, b): its own rule
        if len(positional) == 1:
            items = self.atom(positional[0].value)
        else:
            items = self.pack([self.atom(a.value) for a in positional], tuple,
                              build.make_tuple, loc)
        kw = tuple((k, self.atom(a.value)) for k, a in keywords.items())
        return ir.Call(rt.max_of if fn.value is max else rt.min_of, (items,), kw)

    # -- map / filter ---------------------------------------------------------------------
    def builtin_map(self, node):
        """``map(f, xs, ...)``/``filter(f, xs)`` as the list of a loop, or None (an
        ordinary call: another function named so, keywords, ``*`` arguments)."""
        func = node.func
        if not isinstance(func, cst.Name) or func.value not in ("map", "filter") \
                or any(a.star or a.keyword is not None for a in node.args):
            return None
        fn = self.value(func)
        builtin = getattr(builtins, func.value)
        if not (isinstance(fn, ir.Const) and fn.value is builtin) or len(node.args) < 2 \
                or builtin is filter and len(node.args) != 2:
            return None
        loc = self.loc(node)
        callee = self.value(node.args[0].value)
        if not isinstance(callee, ir.Const):
            callee = self._as_atom(callee, node.args[0].value)
        iterables = [self.atom(a.value) for a in node.args[1:]]
        acc = self._fresh_local(func.value)
        self.emit(ir.Assign(acc, ir.Call(build.make_list, ()), loc))
        if len(iterables) == 1:
            it = iterables[0]
        else:
            it = self.temp()
            self.emit(ir.Assign(it, ir.Call(zip, tuple(iterables)), loc))
        self.blocks.append([])
        item = self.temp()
        items = (item,)
        if len(iterables) > 1:
            items = tuple(self.temp() for _ in iterables)
            self.emit(ir.Unpack(items, item, loc))
        if builtin is map:
            value = self.temp()
            self.emit(ir.Assign(value, self._call_value(callee, items), loc))
            self.emit(ir.Assign(acc, ir.Call(rt.list_append, (acc, value)), loc))
        else:
            test = item
            if not (isinstance(callee, ir.Const) and callee.value is None):
                test = self.temp()
                self.emit(ir.Assign(test, self._call_value(callee, items), loc))
            self.emit(ir.If(test, (ir.Assign(acc, ir.Call(rt.list_append, (acc, item)), loc),),
                            (), loc))
        body = tuple(self.blocks.pop())
        self.emit(ir.For(item, it, body, (), loc))
        return acc

    # -- functools.reduce -------------------------------------------------------------------
    def functools_reduce(self, node):
        """``functools.reduce(f, xs[, initial])`` as the loop ``acc = f(acc, x)`` over
        ``xs``, or None (another function named ``reduce``, ``*`` arguments)."""
        func = node.func
        name = func.value if isinstance(func, cst.Name) else \
            func.attr.value if isinstance(func, cst.Attribute) else None
        if name != "reduce" or any(a.star for a in node.args):
            return None
        fn = self.value(func)
        if not (isinstance(fn, ir.Const) and fn.value is functools.reduce):
            return None
        loc = self.loc(node)
        positional = [a.value for a in node.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if set(keywords) - _REDUCE_KEYWORDS or len(positional) + len(keywords) not in (2, 3) \
                or len(positional) < 2:
            raise unsupported("this call of functools.reduce (it takes a function, an "
                              "iterable and an optional initial value)", loc)
        callee = self.value(positional[0])
        if not isinstance(callee, ir.Const):
            callee = self._as_atom(callee, positional[0])
        it = self.atom(positional[1])
        initial = positional[2] if len(positional) == 3 else keywords.get("initial")
        acc = self._fresh_local("reduced")
        item = self.temp()
        if initial is not None:  # acc = initial; for x in xs: acc = f(acc, x)
            self.emit(ir.Assign(acc, self.atom(initial), loc))
            self.blocks.append([])
            value = self.temp()
            self.emit(ir.Assign(value, self._call_value(callee, (acc, item)), loc))
            self.emit(ir.Assign(acc, value, loc))
            self.emit(ir.For(item, it, tuple(self.blocks.pop()), (), loc))
            return acc
        # no initial value: the first item starts; an empty iterable is Python's TypeError
        started = self._fresh_local("started")
        self.emit(ir.Assign(acc, ir.Const(None), loc))
        self.emit(ir.Assign(started, ir.Const(False), loc))
        self.blocks.append([])
        value = self.temp()
        self.emit(ir.Assign(value, self._call_value(callee, (acc, item)), loc))
        combined = tuple(self.blocks.pop()) + (ir.Assign(acc, value, loc),)
        first = (ir.Assign(acc, item, loc), ir.Assign(started, ir.Const(True), loc))
        is_first = self.temp()  # (the first item's branch first: typing sees acc's type)
        self.emit(ir.For(item, it, (
            ir.Assign(is_first, ir.Call(operator.not_, (started,)), loc),
            ir.If(is_first, first, combined, loc)), (), loc))
        empty = self.temp()
        self.emit(ir.Assign(empty, ir.Call(operator.not_, (started,)), loc))
        error = self.temp()
        raising = (ir.Assign(error, ir.Call(TypeError, (ir.Const(
            "reduce() of empty iterable with no initial value"),)), loc), ir.Raise(error, loc))
        self.emit(ir.If(empty, raising, (), loc))
        return acc

    @staticmethod
    def _call_value(callee, args) -> ir.Call:
        """The call of ``callee`` (a program constant, or a value: a lambda, a local
        function, an object with ``__call__``) with ``args``."""
        if isinstance(callee, ir.Const):
            return ir.Call(callee.value, tuple(args))
        return ir.Call(build.call_method, (callee, ir.Const("__call__")) + tuple(args))

    def accumulate(self, comp, start_args, loc) -> ir.Var:
        start = self.atom(start_args[0].value) if start_args else ir.Const(0)
        total = self._fresh_local("total")
        self.emit(ir.Assign(total, start, loc))
        first = self.comp_iterable(comp.for_in.iter)

        def item():
            e = self.atom(comp.elt)
            self.emit(ir.Assign(total, ir.Call(operator.add, (total, e)), loc))

        self.comp_loops(comp.for_in, first, item, loc)
        return total

    # -- the loops -------------------------------------------------------------------------
    def comp_loops(self, comp_for, first, item, loc) -> None:
        self.comp_scopes = self.comp_scopes + ({},)
        try:
            self._comp_for(comp_for, first, item, loc)
        finally:
            self.comp_scopes = self.comp_scopes[:-1]

    def _comp_for(self, comp_for, it, item, loc) -> None:
        if comp_for.asynchronous is not None:
            raise unsupported("'async for' in a comprehension", loc)
        self.blocks.append([])
        target = self._bind_comp_target(comp_for.target, loc)

        def inner():
            if comp_for.inner_for_in is not None:
                nxt = comp_for.inner_for_in
                self._comp_for(nxt, self.comp_iterable(nxt.iter), item, loc)
            else:
                item()

        self._comp_ifs(list(comp_for.ifs), inner, loc)
        body = tuple(self.blocks.pop())
        self.emit(ir.For(target, it, body, (), loc))

    def _comp_ifs(self, ifs, inner, loc) -> None:
        if not ifs:
            inner()
            return
        test = self.atom(ifs[0].test)
        self.blocks.append([])
        self._comp_ifs(ifs[1:], inner, loc)
        body = tuple(self.blocks.pop())
        self.emit(ir.If(test, body, (), loc))

    def _bind_comp_target(self, target, loc) -> ir.Var:
        """The loop variable of a ``for`` clause (names bound in the comprehension's scope;
        a tuple target is unpacked at the top of the loop body)."""
        if isinstance(target, cst.Name):
            return self._comp_name(target.value)
        if not isinstance(target, (cst.Tuple, cst.List)):
            raise unsupported(f"comprehension target {type(target).__name__}", loc)
        var = self.temp()
        self._unpack_comp(target, var, loc)
        return var

    def _unpack_comp(self, target, src, loc) -> None:
        parts, nested = [], []
        for e in target.elements:
            if isinstance(e, cst.StarredElement):
                raise unsupported("starred target in a comprehension", loc)
            if isinstance(e.value, cst.Name):
                parts.append(self._comp_name(e.value.value))
            elif isinstance(e.value, (cst.Tuple, cst.List)):
                t = self.temp()
                parts.append(t)
                nested.append((e.value, t))
            else:
                raise unsupported(f"comprehension target {type(e.value).__name__}", loc)
        self.emit(ir.Unpack(tuple(parts), src, loc))
        for e, t in nested:
            self._unpack_comp(e, t, loc)

    def _comp_name(self, name) -> ir.Var:
        scope = self.comp_scopes[-1]
        if name not in scope:
            scope[name] = self._fresh_local(name).name
        return ir.Var(scope[name])

    def _fresh_local(self, base) -> ir.Var:
        """A fresh variable; never the bare name of a global, closure variable or builtin
        (the function may also read it, as a free variable of that name)."""
        shadowing = base in self.globals or base in self.cells or hasattr(builtins, base)
        return ir.Var(self.names.fresh(f"{base}_" if shadowing else base))

    def comp_iterable(self, node) -> ir.Atom:
        """What a ``for`` clause iterates (evaluated where Python evaluates it)."""
        return self.atom(node)
