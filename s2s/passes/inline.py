"""Inlining the user's own functions, methods, local functions and small classes.

Contract: accepts an IR function (from the frontend) and its free
variables; returns an equivalent IR function in which

* every call of a Python function that has source and no derivative rule
  is replaced by the callee's body (lowered by the frontend, made
  single-exit), its parameters bound to the call's atoms (keywords,
  defaults, ``*args`` as a tuple and ``**kwargs`` as a dict, by the callee's
  signature; constants bound to a renamed parameter) and its locals renamed
  apart;
* a ``lambda`` or nested ``def`` bound to a name is inlined where it is
  called, reading the enclosing variables it captures there (late binding,
  as in Python); so is a function passed as an argument to an inlined
  function, or bound to a variable;
* an instance of a user class created inside the function becomes a
  *virtual object*: ``__init__`` is inlined, each ``self.a = v`` binds the
  attribute to a fresh variable (``obj_a = v``), ``obj.a`` reads it, and
  methods (``obj.m(...)``, ``obj(...)`` via ``__call__``, ``@property``,
  ``@staticmethod``, ``@classmethod``) are inlined with ``self`` bound to the
  object;
* an object the code does not create (a global, or, when ``values`` gives
  the specialisation's arguments, an argument) has its methods, ``__call__``
  and properties inlined the same way, its other attributes read at run
  time (constants to the derivative);
* a recursive call is unrolled while its depth is fixed by constant
  arguments (``rec(x, 3)``), up to ``MAX_RECURSION`` levels;
* the callees' free variables join the caller's (one per global slot).

Objects and local functions never exist at run time, so they must not
escape: returning one, putting it in a container or passing it to a
function s2s does not inline raises ``UnsupportedSyntaxError``, as does any
recursion whose depth is not known at transform time, setting an attribute
of an object the code did not create, and reading a name that may hold
such a value bound in a branch or loop.

What a variable holds, and where that is known: ``local_callables.py``;
attributes and methods of objects: ``objects.py``; calls of local
functions, functions held in variables and recursion: ``callables.py``; a callee's
body bound to a call's arguments: ``inline_bodies.py``.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
from dataclasses import replace
from typing import Dict, List

import s2s_runtime as rt
from s2s_runtime import build
from s2s_runtime.tree import tree_leaves, tree_map

from ..errors import unsupported
from ..frontend.desugar import ATTRIBUTE_OF, METHOD_OF
from ..frontend.expressions import is_record_class
from ..frontend.scope import make_closure
from ..ir import nodes as ir
from ..ir.names import NameGen
from .callables import MAX_RECURSION, CallableCalls, with_call
from .inline_bodies import InlineBodies, ir_signature
from .local_callables import (NOTHING, Bindings, Constant, Items, Pack, TreeOf, Value,
                              VirtualObject, fold, is_user_class, is_user_function,
                              is_user_object, known_of_const, known_of_value, useful)
from .objects import ObjectCalls
from .partials import is_partial, partial_ir
from .unpacking import UnpackingCalls

__all__ = ["inline_calls", "is_user_function", "is_user_class", "needs_values", "MAX_RECURSION",
           "ir_signature"]

#: longest list of functions or objects a loop over it is unrolled for
MAX_UNROLL = 256


class Inliner(ObjectCalls, CallableCalls, InlineBodies, UnpackingCalls):
    """One inlining of one function (see the module docstring); ``__call__`` runs it."""

    def __init__(self, fn: ir.Function, freevars: Dict, lower, site_values=None, values=None,
                 statics=None):
        self.names = NameGen(ir.all_names(fn))
        self.temps = set(fn.temps)
        self.freevars = dict(freevars)
        self.lower = lower  # fn -> (ir.Function, freevars); cached by the caller
        self.active = []  # (callee, constant arguments) being inlined (recursion check)
        self.recursive_calls = 0
        self.known = Bindings()
        self.loops = []  # the block path of each loop being processed
        self.attribute_vars = set()  # the variables holding virtual objects' attributes
        #: statement -> (ir, freevars) of a transform call, once argument kinds are known
        self.site_values = site_values
        #: parameter and free-variable values of the specialisation (None: not specialised)
        self.values = values
        #: (holder, name, value) of attributes of program objects the inlined code relies on
        self.statics = statics if statics is not None else []

    # -- blocks ----------------------------------------------------------------
    def block(self, stmts) -> List:
        out = []
        for s in stmts:
            out += self.stmt(s)
        return out

    def nested_block(self, stmts, binding=None) -> List:
        """``stmts`` in a block of their own; ``binding`` (a variable and what it holds)
        known at its start."""
        with self.known.nested():
            if binding is not None:
                self.known.bind(binding[0].name, binding[1])
            return self.block(stmts)

    def stmt(self, s) -> List:
        if isinstance(s, ir.Unpack) and isinstance(self.known_of(s.value), Pack):
            return self.unpack_pack(s, self.known_of(s.value))
        appended = _appended(s)
        if appended is not None:
            grown = self.append_to_pack(s, *appended)
            if grown is not None:
                return grown
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) \
                and s.value.fn in (build.make_tuple, build.make_list) and not s.value.kwargs:
            packed = self.pack(s)
            if packed is not None:
                return packed
        if isinstance(s, (ir.Assign, ir.ExprStmt)) and isinstance(s.value, ir.Call):
            handled = self.call(s)
            if handled is not None:
                return handled
        return self.plain(s)

    def plain(self, s) -> List:
        """``s`` kept (its nested blocks processed); what it assigns is now known or not."""
        if isinstance(s, ir.If):
            test = self.constant(s.test)
            if test is not NOTHING:  # the branch taken is known: only it is kept
                return self.block(s.body if test else s.orelse)
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var):
            alias = self.known.get(s.value.name)
            if alias is not None and not alias.runtime:  # another name for it: no code
                self.known.bind(s.target.name, alias)
                return []
        if isinstance(s, ir.For) and isinstance(self.known_of(s.iter), Pack) and \
                not s.orelse and not _jumps(s.body):  # for layer in [Layer(w), Layer(v)]
            out = []
            for item in self.known_of(s.iter).items:
                out += self.pack_item(s.target, item, s.loc) + self.block(s.body)
            return out
        self.check_uses(s)
        if isinstance(s, ir.For):
            items = self.known_items(s.iter)
            if items is not None and not s.orelse and not _jumps(s.body):
                return self.unroll(s, items)
            if _appends_made_objects(s.body) and not s.orelse and not _jumps(s.body):
                n = self.known_length(s.iter)
                if n is not None and n <= MAX_UNROLL:
                    return self.unroll(s, [NOTHING] * n)
                if self.values is None:  # the length is known once specialised
                    raise _NeedsValues()
        loop = isinstance(s, (ir.For, ir.While))
        grown = self.lengths_after(s) if isinstance(s, ir.For) else []
        if loop or isinstance(s, ir.Try):
            for x in ir.walk([s]):  # a later iteration (or a handler) sees these reassigned
                for v in ir.stmt_defs(x):
                    self.known.forget(v.name)
                self.forget_resized(x)  # ... or grown by xs.append(...)
        if loop:  # methods inlined in the loop may set attributes: their constants go
            for name in self.attribute_vars:
                if isinstance(self.known.get(name), Constant):
                    self.known.forget(name)
        known = None
        if isinstance(s, ir.Assign):
            s, known = self.assigned_value(s)
        for v in ir.stmt_defs(s):
            self.known.bind(v.name)
        if known is not None:
            self.known.bind(s.target.name, known)
            if not known.runtime:
                return []  # an alias of an object or local function: nothing to run
        if loop:
            self.loops.append(self.known.path)
        try:
            item = self.loop_item(s) if isinstance(s, ir.For) else None
            if item is not None:  # for p in [(a, b), (c, d)]: p holds two items
                out = [replace(s, body=tuple(self.nested_block(s.body, (s.target, item))),
                               orelse=tuple(self.nested_block(s.orelse)))]
            else:
                out = [map_blocks(s, self.nested_block)]
        finally:
            if loop:
                self.loops.pop()
        for name, count in grown:
            self.known.bind(name, Items(count, list_display=True))
        return out

    def lengths_after(self, s: ir.For):
        """``[(name, length)]`` of the lists a loop over a sequence of known length grows
        by one item per trip (``out = []; for p in params: out.append(f(p))``, a
        comprehension): a list displayed in this block, appended to once at the top of
        the body and given no other value there."""
        n = self.known_length(s.iter)
        if n is None or s.orelse or _jumps(s.body):
            return []
        defs: Dict[str, int] = {}
        appends: Dict[str, int] = {}  # (anywhere in the body, nested blocks too)
        for x in ir.walk(s.body):
            for v in ir.stmt_defs(x):
                defs[v.name] = defs.get(v.name, 0) + 1
            appended = _appended(x)
            if appended is not None:
                appends[appended[0].name] = appends.get(appended[0].name, 0) + 1
        out = []
        for x in s.body:
            appended = _appended(x)
            if appended is None:
                continue
            name = appended[0].name
            if appends[name] != 1 or defs.get(name, 0) != (1 if isinstance(x, ir.Assign) else 0) \
                    or (isinstance(x, ir.Assign) and x.target.name != name):
                continue
            known = self.known_of(appended[0])
            bound = self.known.table.get(name)
            if isinstance(known, Items) and known.list_display and bound is not None \
                    and bound[0] == self.known.path:
                out.append((name, known.count + n))
        return out

    def pack(self, s):
        """``t = (a, obj)`` or ``t = [a, obj]`` where an item has no run-time existence:
        ``t`` becomes a ``Pack`` (run-time items copied to fresh variables; a loop over it
        is one copy of the body per item); None when every item is a run-time value."""
        knowns = [self.known.get(a.name) if isinstance(a, ir.Var) else None
                  for a in s.value.args]
        if not any(k is not None and not k.runtime for k in knowns):
            return None
        out, items = [], []
        for a, k in zip(s.value.args, knowns):
            if k is not None and not k.runtime:
                items.append(k)
                continue
            v = ir.Var(self.names.temp())
            self.temps.add(v.name)
            out += self.plain(ir.Assign(v, a, s.loc))
            items.append(v)
        self.known.forget(s.target.name)
        self.known.bind(s.target.name, Pack(tuple(items)))
        return out

    def pack_call(self, s, fn, pack: Pack, args, kwargs):
        """``t = pack[k]``, ``pack[a:b]``, ``len(pack)``, ``list(pack)``/``tuple(pack)`` (and
        ``rt.sequence(pack)``, what a loop runs over),
        ``enumerate(pack[, start])`` of a ``Pack``: an item, a ``Pack`` of items or
        pairs, a constant (None: not one of these)."""
        if fn is operator.getitem and len(args) == 2:
            index = self.constant(args[1])
            if isinstance(args[1], ir.Const) and isinstance(args[1].value, slice):
                index = args[1].value
            if isinstance(index, int) and -len(pack.items) <= index < len(pack.items):
                return self.pack_item(s.target, pack.items[index], s.loc)
            if isinstance(index, slice):
                self.known.forget(s.target.name)
                self.known.bind(s.target.name, Pack(pack.items[index]))
                return []
        if fn is len and len(args) == 1 and not kwargs:
            return self.plain(ir.Assign(s.target, ir.Const(len(pack.items)), s.loc))
        if fn in (list, tuple, rt.sequence) and len(args) == 1 and not kwargs:  # the same items
            self.known.forget(s.target.name)
            self.known.bind(s.target.name, Pack(pack.items))
            return []
        keywords = dict(kwargs)
        if fn is enumerate and len(args) + len(keywords) <= 2 and set(keywords) <= {"start"}:
            start = self.constant(args[1] if len(args) == 2 else keywords.get("start",
                                                                              ir.Const(0)))
            if type(start) is not int:
                return None
            out, pairs = [], []
            for k, item in enumerate(pack.items):
                counter = ir.Var(self.names.temp())
                self.temps.add(counter.name)
                out += self.plain(ir.Assign(counter, ir.Const(start + k), s.loc))
                pairs.append(Pack((counter, item)))
            self.known.forget(s.target.name)
            self.known.bind(s.target.name, Pack(tuple(pairs)))
            return out
        return None

    def pack_item(self, target: ir.Var, item, loc) -> List:
        """``target = <item of a Pack>``."""
        if isinstance(item, ir.Var):
            return self.plain(ir.Assign(target, item, loc))
        self.known.forget(target.name)
        self.known.bind(target.name, item)
        return []

    def unpack_pack(self, s: ir.Unpack, pack: Pack) -> List:
        if len(s.targets) != len(pack.items):
            raise unsupported(f"unpacking {len(pack.items)} values into "
                              f"{len(s.targets)} names", s.loc)
        out = []
        for t, item in zip(s.targets, pack.items):
            out += self.pack_item(t, item, s.loc)
        return out

    def known_items(self, a):
        """The items of a list or tuple of functions or objects ``a`` is known to hold."""
        known = self.known_of(a)
        if isinstance(known, Value) and type(known.value) in (list, tuple) \
                and len(known.value) <= MAX_UNROLL and useful(known.value):
            return known.value
        return None

    def unroll(self, s: ir.For, items) -> List:
        """``for f in (np.sin, np.cos)``, ``for layer in self.layers``: one copy of the
        body per item, each seeing which function or object it calls (an item
        ``NOTHING``: a run-time value read by position)."""
        out = []
        for i, item in enumerate(items):
            if isinstance(s.iter, ir.Const):
                out += self.stmt(ir.Assign(s.target, ir.Const(item), s.loc))
            else:
                read = ir.Call(operator.getitem, (s.iter, ir.Const(i)))
                out += self.plain(ir.Assign(s.target, read, s.loc))
                known = None if item is NOTHING else known_of_value(item)
                if known is not None:
                    self.known.bind(s.target.name, known)
            out += self.block(s.body)
        return out

    def tree_shape_of(self, tree):
        """The structure (``_tree_shape``) of what ``tree`` is known to be, else None (in a
        function not yet specialised: ``_NeedsValues``, it may be an argument's)."""
        known = self.known_of(tree)
        value = known.value if isinstance(known, (Value, Items, TreeOf)) else None
        shape = _tree_shape(value) if value is not None else None
        if shape is None and self.values is None:
            raise _NeedsValues()
        return shape, value

    def tree_child(self, atom, node, key, loc, out) -> ir.Var:
        """A new variable holding the child ``key`` of ``atom``, a tree node of kind
        ``node[0]`` (a field of a record, else an item); its statements go to ``out``."""
        t = ir.Var(self.names.temp())
        self.temps.add(t.name)
        read = ir.Call(getattr if node[0] == "record" else operator.getitem,
                       (atom, ir.Const(key)))
        out.extend(self.stmt(ir.Assign(t, read, loc)))
        return t

    def tree_leaves_call(self, s: ir.Assign, tree):
        """``t = tree_leaves(tree)`` of a tree of known structure: the list display of
        its leaves, read in the pytree order."""
        shape, _ = self.tree_shape_of(tree)
        if shape is None:
            raise _unknown_tree("tree_leaves", s.loc)
        out = []

        def leaves(node, atom):
            if node[0] == "leaf":
                return [atom]
            if node[0] == "none":
                return []
            return [leaf for key, child in node[-1]
                    for leaf in leaves(child, self.tree_child(atom, node, key, s.loc, out))]

        items = leaves(shape, tree)
        out.extend(self.stmt(ir.Assign(s.target, ir.Call(build.make_list, tuple(items)),
                                       s.loc)))
        return out

    def tree_map_call(self, s: ir.Assign, f, trees):
        """``t = tree_map(f, tree, *rest)`` where ``tree``'s structure is known (a
        specialisation's argument, or another name for one): one call of ``f`` per leaf on
        the leaves at that place in each tree, the results rebuilt in that structure
        (a dict, tuple, list, dataclass or namedtuple); None where it is not known."""
        shape, value = self.tree_shape_of(trees[0])
        if shape is None:
            raise _unknown_tree("tree_map", s.loc)
        out = []

        def build_(node, atoms):
            kind = node[0]
            if kind == "leaf":
                r = ir.Var(self.names.temp())
                self.temps.add(r.name)
                call = ir.Call(build.call_method, (f, ir.Const("__call__")) + tuple(atoms))
                out.extend(self.stmt(ir.Assign(r, call, s.loc)))
                return r
            if kind == "none":
                return ir.Const(None)
            parts = [build_(child, [self.tree_child(a, node, key, s.loc, out) for a in atoms])
                     for key, child in node[-1]]
            t = ir.Var(self.names.temp())
            self.temps.add(t.name)
            if kind == "dict":
                value = ir.Call(build.make_dict, tuple(x for (key, _), p in zip(node[-1], parts)
                                                       for x in (ir.Const(key), p)))
            elif kind == "record":
                fields = ir.Var(self.names.temp())
                self.temps.add(fields.name)
                out.extend(self.stmt(ir.Assign(fields, ir.Call(build.make_tuple, tuple(parts)),
                                               s.loc)))
                value = ir.Call(rt.make_record, (ir.Const(node[1]), fields))
            else:
                value = ir.Call(build.make_tuple if kind == "tuple" else build.make_list,
                                tuple(parts))
            out.extend(self.stmt(ir.Assign(t, value, s.loc)))
            return t

        result = build_(shape, list(trees))
        out.extend(self.stmt(ir.Assign(s.target, result, s.loc)))
        # the result has the tree's structure
        self.known.bind(s.target.name, known_of_value(value) if type(value) in (
            tuple, list, dict) else TreeOf(value))
        return out

    def known_length(self, a):
        """The length of the list or tuple ``a`` is known to have (a specialisation's
        value, a display), else None."""
        known = self.known_of(a)
        if isinstance(known, Pack):
            return len(known.items)
        if isinstance(known, (Value, Constant)) and type(known.value) in (list, tuple):
            return len(known.value)
        if isinstance(known, Items) and known.keys is None:
            return known.count
        return None

    def append_to_pack(self, s, base, item):
        """``l2 = list_append(l, obj)`` or ``l.append(obj)`` of an object or local function
        (no run-time existence) onto a list displayed in the code (``[]``, or a ``Pack``
        already): ``l``, ``l2`` and every other name of that list hold the ``Pack`` one
        item longer (a comprehension or loop building a list of layers, unrolled over its
        known length); None otherwise."""
        known_item = self.known_of(item)
        if known_item is None or known_item.runtime:
            return None
        known_base = self.known_of(base)
        if known_base is None:
            return None
        made = min((path for path, k in self.known.table.values() if k is known_base), key=len)
        if self.known.path != made:  # in a loop or branch (or a function inlined in one)
            return None  # that the list's block runs: maybe not once, not one item
        if isinstance(known_base, Pack):
            items = known_base.items
        elif isinstance(known_base, Items) and known_base.list_display and \
                known_base.count == 0:
            items = ()
        else:
            return None
        grown = Pack(items + (known_item,))
        self.known.rebind_all(known_base, grown)
        if isinstance(s, ir.Assign):
            self.known.forget(s.target.name)
            self.known.bind(s.target.name, grown)
        return []

    def assigned_value(self, s: ir.Assign):
        """``(s, known)``: ``s`` with a constant folded, and what its target then holds."""
        v = s.value
        if isinstance(v, ir.Var):
            return s, self.known.get(v.name)
        if isinstance(v, ir.Const):
            return s, known_of_const(v.value)
        if isinstance(v, ir.Call):
            values = [self.constant(a) for a in v.operands()]
            if not v.kwargs and NOTHING not in values:
                out = fold(v.fn, values)
                if out is not NOTHING:
                    return replace(s, value=ir.Const(out)), Constant(out)
            if v.fn in (build.make_tuple, build.make_list):  # what *s unpacks
                return s, Items(len(v.args), item=self.common_item(v.args),
                                list_display=v.fn is build.make_list)
            items = self.items_of(v)
            if items is not None:
                return s, items
            if v.fn is build.make_dict and all(isinstance(k, ir.Const) for k in v.args[::2]):
                return s, Items(keys=tuple(k.value for k in v.args[::2]))
        return s, None

    def constant(self, a):
        """The constant scalar ``a`` is known to be, or ``NOTHING``."""
        if isinstance(a, ir.Const):
            k = known_of_const(a.value)
        else:
            k = self.known.get(a.name)
        return k.value if isinstance(k, Constant) else NOTHING

    def known_of(self, a):
        if isinstance(a, ir.Const):
            return known_of_const(a.value)
        return self.known.get(a.name)

    def check_uses(self, s) -> None:
        """No value without a run-time existence may be used by ``s`` as it is."""
        for a in ir.stmt_uses(s):
            if not isinstance(a, ir.Var):
                continue
            k = self.known.get(a.name)
            if k is not None and not k.runtime:
                raise unsupported(f"this use of {k.describe()}", s.loc,
                                  "s2s inlines it where it is called or its attributes are "
                                  "read; it cannot be returned, stored or passed to code s2s "
                                  "does not inline")
            k = self.known.ambiguous(a.name)
            if k is not None:
                raise unsupported(f"'{a.name}' here may be {k.describe()}", s.loc,
                                  "it was bound in a branch or loop, or rebound there; s2s "
                                  "must know which function or object a name holds")

    # -- calls --------------------------------------------------------------------
    def call(self, s):
        c: ir.Call = s.value
        fn, args = c.fn, c.args
        if fn is make_closure:
            return self.bind_closure(s)
        if fn is tree_map and len(args) >= 2 and not c.kwargs and isinstance(s, ir.Assign):
            mapped = self.tree_map_call(s, args[0], args[1:])
            if mapped is not None:
                return mapped
        if fn is tree_leaves and len(args) == 1 and not c.kwargs and isinstance(s, ir.Assign):
            leaves = self.tree_leaves_call(s, args[0])
            if leaves is not None:
                return leaves
        if fn is build.apply_call:
            return self.unpacking_call(s)
        self.forget_resized(s)
        recv = self.known_of(args[0]) if args else None
        if fn is build.call_method and isinstance(args[1], ir.Const):
            name = args[1].value
            if name == "__call__" and recv is not None:
                return self.call_known(s, recv, args[0], args[2:], c.kwargs)
            if _objectlike(recv):
                return self.method(s, recv, args[0], name, args[2:], c.kwargs)
            return None
        if _objectlike(recv):
            if fn is getattr and isinstance(args[1], ir.Const):
                return self.get_attribute(s, recv, args[0], args[1].value)
            if fn is setattr and isinstance(args[1], ir.Const):
                return self.set_attribute(s, recv, args[0], args[1].value, args[2])
            if fn in ATTRIBUTE_OF:
                return self.get_attribute(s, recv, args[0], ATTRIBUTE_OF[fn])
            if fn in METHOD_OF:
                return self.method(s, recv, args[0], METHOD_OF[fn], args[1:], c.kwargs)
        if isinstance(recv, Pack) and isinstance(s, ir.Assign):
            handled = self.pack_call(s, fn, recv, args, c.kwargs)
            if handled is not None:
                return handled
        if fn is operator.getitem and isinstance(recv, Value) and isinstance(s, ir.Assign):
            index = self.constant(args[1])
            if index is not NOTHING:
                return self.item(s, recv, index)
        return self.call_static(s, fn, args, c.kwargs)

    def call_static(self, s, fn, args, kwargs):
        """A call of the Python callable ``fn`` (None: leave it as it is)."""
        lifted = self.transform_of_closure(s, fn, args, kwargs)
        if lifted is None:
            lifted = self.transform_call_of_closure(s, fn, args, kwargs)
        if lifted is not None:
            return lifted
        if is_user_class(fn) and isinstance(s, ir.Assign):
            obj = VirtualObject(fn, self.known.path)
            self.known.forget(s.target.name)
            self.known.bind(s.target.name, obj)
            init = ir.Call(fn.__init__, (s.target,) + tuple(args), kwargs)
            return self.inline(ir.ExprStmt(init, s.loc), fn.__init__)
        if is_user_function(fn):
            return self.inline(with_call(s, fn, args, kwargs), fn)
        if inspect.ismethod(fn) and is_user_function(fn.__func__):
            out, receiver = self.const_atom(fn.__self__, s.loc)
            return out + self.inline(with_call(s, fn.__func__, (receiver,) + tuple(args),
                                                kwargs), fn.__func__)
        if fn is functools.partial:  # made in the code: bound to the call it stands for
            made = self.bind_partial(s, args, kwargs)
            if made is not None:
                return made
        if is_partial(fn):  # the call it stands for (passes/partials.py)
            self.check_uses(s)
            return self.inline_ir(with_call(s, fn, args, kwargs), fn, *partial_ir(fn))
        if is_user_object(fn):  # a program object called: its __call__
            out, receiver = self.const_atom(fn, s.loc)
            return out + self.method(s, Value(fn), receiver, "__call__", args, kwargs)
        hook = None if isinstance(fn, type) else getattr(fn, "__s2s_ir__", None)
        if hook is None:  # not a transformed function (core/protocol.py)
            return None
        fixed = hook()
        if fixed is not None:  # its IR, the same for every call (vjp closures, ...)
            self.check_uses(s)
            return self.inline_ir(with_call(s, fn, args, kwargs), fn, *fixed)
        self.check_uses(s)  # its IR depends on the arguments' kinds: a site
        return self.site(with_call(s, fn, args, kwargs), fn)

    def site(self, s, fn) -> List:
        """A call of a transform (``grad(f)(x)``, ``jvp(f, p, t)``): its IR depends on the
        kinds of the arguments, so it is expanded when the enclosing transform is
        specialised (``passes/sites.py``); until then it stays a call with a target."""
        if self.site_values is None:
            if isinstance(s, ir.ExprStmt):
                t = ir.Var(self.names.temp())
                self.temps.add(t.name)
                s = ir.Assign(t, s.value, s.loc)
            return self.plain(s)
        expansion = self.site_values(s)
        if expansion is None:  # expanded in a later round (passes/sites.py)
            return self.plain(s)
        if isinstance(expansion, list):  # statements that stand for it
            return expansion
        return self.inline_ir(s, fn, *expansion)

    def __call__(self, fn: ir.Function) -> ir.Function:
        if self.values:
            for name, v in self.values.items():
                k = known_of_value(v)
                if k is not None:
                    self.known.bind(name, k)
        freevars = dict(self.freevars)
        try:
            body = self.block(fn.body)
        except _NeedsValues:  # read whole once the specialisation's values are known
            self.freevars = freevars
            return replace(fn, needs_values=True)
        kw = tuple(ir.Param(ir.Var(n), None, kwonly=True) for n in self.freevars
                   if n not in {p.var.name for p in fn.params})
        return replace(fn, body=tuple(body), params=fn.params + kw, needs_values=False,
                       temps=frozenset(self.temps))


def _unknown_tree(what, loc):
    return unsupported(
        f"{what} of a value whose tree structure is not known when transforming", loc,
        "s2s reads tree_map and tree_leaves as one call per leaf where the structure is an "
        "argument's (dicts, lists, tuples, dataclasses, namedtuples) or what tree_map made "
        "of one")


def _tree_shape(v, depth=0):
    """The structure of the pytree ``v`` as nested nodes: ``("leaf",)``, ``("none",)``,
    ``("tuple" | "list" | "dict", [(key, node)])`` (dicts by sorted key, as the pytree
    order) or ``("record", cls, [(field, node)])`` (a dataclass or namedtuple); None for
    a node of another kind (a registered class)."""
    from s2s_runtime.tree import tree_structure
    if depth > 32:
        return None
    t = type(v)
    if v is None:
        return ("none",)
    if t in (tuple, list):
        children = [(k, _tree_shape(x, depth + 1)) for k, x in enumerate(v)]
        return None if any(c is None for _, c in children) else (t.__name__, children)
    if t is dict:
        try:
            keys = sorted(v)
        except TypeError:
            return None
        children = [(k, _tree_shape(v[k], depth + 1)) for k in keys]
        return None if any(c is None for _, c in children) else ("dict", children)
    if is_record_class(t):
        if not hasattr(t, "_fields") and not all(f.init for f in dataclasses.fields(t)):
            return None  # (make_record passes the __init__ parameters)
        names = t._fields if hasattr(t, "_fields") else [f.name for f in dataclasses.fields(t)]
        children = [(n, _tree_shape(getattr(v, n), depth + 1)) for n in names]
        return None if any(c is None for _, c in children) else ("record", t, children)
    if tree_structure(v).num_leaves == 1 and tree_structure(v).num_nodes == 1:
        return ("leaf",)
    return None


class _NeedsValues(Exception):
    """Raised by the inlining of a function not yet specialised that meets a loop it can
    read only once the lengths of the values it runs over are known (a list of objects
    built in a loop over an argument): the function is then inlined with the values."""


def _appended(s):
    """``(list, item)`` of ``l2 = rt.list_append(l, item)`` or ``l.append(item)``, else None."""
    v = getattr(s, "value", None)
    if not isinstance(v, ir.Call) or v.kwargs:
        return None
    if isinstance(s, ir.Assign) and v.fn is rt.list_append and len(v.args) == 2:
        return v.args[0], v.args[1]
    if isinstance(s, ir.ExprStmt) and v.fn is build.call_method and len(v.args) == 3 \
            and v.args[1] == ir.Const("append") and isinstance(v.args[0], ir.Var):
        return v.args[0], v.args[2]
    return None


def _appends_made_objects(body) -> bool:
    """Whether a loop body appends to a list what a call of a class makes (``layers =
    [Linear(w, b) for w, b in params]``, ``self.layers.append(Linear(w, b))``):
    unrolled over a known length, the list is a ``Pack`` of the objects."""
    made = {s.target.name for s in ir.walk(body) if isinstance(s, ir.Assign)
            and isinstance(s.value, ir.Call) and is_user_class(s.value.fn)}
    return any(isinstance(item, ir.Var) and item.name in made
               for _, item in filter(None, map(_appended, ir.walk(body))))


def _jumps(body) -> bool:
    """A ``break`` or ``continue`` of the loop whose body is ``body``."""
    for s in body:
        if isinstance(s, (ir.Break, ir.Continue)):
            return True
        if not isinstance(s, (ir.For, ir.While)) and any(map(_jumps, ir.sub_blocks(s))):
            return True
    return False


def _objectlike(known) -> bool:
    return isinstance(known, VirtualObject) or (isinstance(known, Value)
                                                and is_user_object(known.value))


def map_blocks(s, f):
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


def needs_values(func: ir.Function) -> bool:
    """Whether ``func`` calls a value (``f(x)``, ``m.forward(x)``), sets an attribute of
    one, or unpacks one (``f(*args)``) that the inliner may see through once the
    specialisation's arguments are known (``inline_calls(..., values=...)``), or was left
    whole for that (``Function.needs_values``: a list of objects built in a loop over an
    argument, whose length the specialisation knows)."""
    for s in ir.walk(func.body):
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call) and v.fn in (build.call_method, setattr) \
                and v.args and isinstance(v.args[0], ir.Var):
            return True
        if isinstance(v, ir.Call) and v.fn is build.apply_call:  # f(*args) of an argument
            return True
    return func.needs_values


def inline_calls(fn: ir.Function, freevars: Dict, lower, site_values=None, values=None,
                 statics=None):
    """``fn`` with user calls and objects inlined, and its (possibly grown) free variables.

    ``site_values(stmt) -> (ir, freevars)`` expands calls of transforms; without it
    they are left in place (see ``Inliner.site``).  ``values`` maps parameters and
    free variables to the specialisation's values: functions and objects among them
    are seen through.  ``statics`` (a list) receives the attributes of program
    objects the result relies on."""
    inl = Inliner(fn, freevars, lower, site_values, values, statics)
    out = inl(fn)
    return out, inl.freevars
