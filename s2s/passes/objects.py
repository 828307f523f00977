"""Attributes and methods of objects the inliner knows (mixed into ``Inliner``).

Two kinds of object (``local_callables.py``):

* a ``VirtualObject``, created in the differentiated code: its attributes
  are variables of the inlined code; reading one it does not have is an
  error (unless the class has it);
* a ``Value`` object, one the code did not create (a global, or an argument
  of a specialisation): its instance attributes are read at run time with
  ``getattr`` (constants to the derivative); setting one is an error, since
  a later read would not see the new value as differentiated.

For both, class-level lookups follow Python's: a ``@property`` is inlined, a
method called is inlined with ``self`` bound to the object (``__call__`` for
``obj(...)``), a ``@staticmethod`` without it, a ``@classmethod`` with the
class; a method taken without calling it (``f = obj.method``) becomes a
``BoundMethod``.  The class attributes used are recorded as statics, so
rebinding one later makes s2s transform the code again.
"""
from __future__ import annotations

import inspect
from dataclasses import replace
from typing import List

from s2s_runtime import build

from ..errors import unsupported
from ..ir import nodes as ir
from .local_callables import (BoundMethod, Constant, Value, VirtualObject, known_of_value,
                              useful)

_MISSING = object()


class ObjectCalls:
    """The object part of the ``Inliner`` (see the module docstring)."""

    # -- attributes -------------------------------------------------------------
    def get_attribute(self, s, obj, atom, name) -> List:
        if isinstance(obj, VirtualObject):
            if name in obj.attrs:
                if not isinstance(s, ir.Assign):
                    return []
                return self.stmt(ir.Assign(s.target, obj.attrs[name], s.loc))
            cls = obj.cls
        else:
            cls = type(obj.value)
            inst = _instance_dict(obj.value)
            if name in inst:  # read at run time; seen through if it is a function or object
                out = self.plain(s)
                if isinstance(s, ir.Assign):
                    self.note_instance(obj, inst, name)
                    known = known_of_value(inst[name])
                    if known is not None:
                        self.known.bind(s.target.name, known)
                return out
        static = self.class_attribute(cls, name)
        if isinstance(static, property) and static.fget is not None:
            return self.inline(_call(s, static.fget, (atom,)), static.fget)
        if not isinstance(s, ir.Assign):
            return []
        if isinstance(static, staticmethod):
            return self.stmt(ir.Assign(s.target, ir.Const(static.__func__), s.loc))
        if isinstance(static, classmethod):
            return self.bind_method(s, static.__func__, ir.Const(cls))
        if inspect.isfunction(static):
            return self.bind_method(s, static, atom)
        if isinstance(obj, Value):  # a class attribute, or a missing one: as Python reads it
            out = self.plain(s)
            known = known_of_value(getattr(obj.value, name, None))
            if known is not None:
                self.known.bind(s.target.name, known)
            return out
        if static is not _MISSING:
            return self.stmt(ir.Assign(s.target, ir.Const(getattr(cls, name)), s.loc))
        raise unsupported(f"attribute {name!r} of a {cls.__name__} object", s.loc,
                          "it is not set in __init__ before this read")

    def bind_method(self, s, func, receiver) -> List:
        self.known.forget(s.target.name)
        self.known.bind(s.target.name, BoundMethod(func, receiver))
        return []

    def set_attribute(self, s, obj, atom, name, value) -> List:
        if isinstance(obj, Value):
            raise unsupported(f"setting attribute {name!r} of a {type(obj.value).__name__} "
                              "object the differentiated code did not create", s.loc,
                              "s2s reads the attributes of objects passed in as constants; "
                              "return the new value, or create the object in the function")
        var = obj.attrs.get(name)
        if var is None:  # one variable per attribute: a write in a loop or branch is an
            var = obj.attrs[name] = ir.Var(self.names.fresh(f"{atom.name}_{name}"))
            self.attribute_vars.add(var.name)
        self.check_loop_rebinding(s, obj, name, var, value)
        return self.stmt(ir.Assign(var, value, s.loc))  # assignment to it, as SSA sees it

    def check_loop_rebinding(self, s, obj, name, var, value) -> None:
        """An attribute holding a function or object the code before a loop relied on
        may not change inside the loop (an earlier iteration was inlined for the old)."""
        hit = self.known.table.get(var.name)
        if hit is None or hit[1] is None or isinstance(hit[1], Constant):
            return
        path, old = hit
        if not any(loop[:len(path)] == path for loop in self.loops):
            return
        if self.known_of(value) is not old:
            raise unsupported(f"rebinding attribute {name!r} of a {obj.cls.__name__} object "
                              "inside a loop", s.loc, "it holds a function or object that "
                              "code before in the loop was inlined for")

    # -- methods ------------------------------------------------------------------
    def method(self, s, obj, atom, name, args, kwargs) -> List:
        if isinstance(obj, VirtualObject):
            cls = obj.cls
            held = obj.attrs.get(name)
            if held is not None:  # an attribute holding a function or object: call it
                known = self.known_of(held)
                if known is not None:
                    return self.call_known(s, known, held, args, kwargs)
                return self.plain(_call(s, build.call_method, (held, ir.Const("__call__"))
                                        + tuple(args), kwargs))
        else:
            cls = type(obj.value)
            inst = _instance_dict(obj.value)
            if name in inst:
                known = known_of_value(inst[name])
                if known is None:
                    return None  # left to run time
                self.note_instance(obj, inst, name)
                t = ir.Var(self.names.temp())
                self.temps.add(t.name)
                out = self.plain(ir.Assign(t, ir.Call(getattr, (atom, ir.Const(name))), s.loc))
                self.known.bind(t.name, known)
                return out + self.call_known(s, known, t, args, kwargs)
        static = self.class_attribute(cls, name)
        if isinstance(static, staticmethod):
            fn, call_args = static.__func__, tuple(args)
        elif isinstance(static, classmethod):
            fn, call_args = static.__func__, (ir.Const(cls),) + tuple(args)
        elif inspect.isfunction(static):
            fn, call_args = static, (atom,) + tuple(args)
        elif isinstance(obj, Value):
            return None  # e.g. a builtin base class's method: left to run time
        else:
            what = "__call__" if name == "__call__" else f".{name}()"
            raise unsupported(f"method {what} of a {cls.__name__} object", s.loc,
                              "only plain methods, staticmethods, classmethods and "
                              "properties are supported")
        return self.inline(_call(s, fn, call_args, kwargs), fn)

    # -- lookups --------------------------------------------------------------------
    def class_attribute(self, cls, name):
        """``name`` looked up on ``cls`` without calling descriptors; recorded as a static."""
        for klass in inspect.getmro(cls):
            d = klass.__dict__
            if name in d:
                self.statics.append((d, name, d[name]))
                return d[name]
        return _MISSING

    def note_instance(self, obj, inst, name) -> None:
        """The inlined code relies on ``obj.name`` being this function or object: a
        program object's attribute is re-checked at every call (an argument's is in
        its kind)."""
        if self.values is None and useful(inst[name]):
            self.statics.append((inst, name, inst[name]))


def _instance_dict(v) -> dict:
    d = getattr(v, "__dict__", None)
    return d if isinstance(d, dict) else {}


def _call(s, fn, args, kwargs=()):
    return replace(s, value=ir.Call(fn, tuple(args), tuple(kwargs)))
