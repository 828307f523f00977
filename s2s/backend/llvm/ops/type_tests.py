"""``isinstance(x, classinfo)`` under jit: a handler of ``calls.TABLE``.

A compiled variable holds values of one backend type, so whether it is an instance
of a class is known when compiling wherever every Python type its values can have
gives the same answer: the result is then a compile-time flag (``types.Static`` of a
bool), and an ``if`` on it compiles only the branch taken (``typing/infer.py``,
``lower/function.py``), as Python would run only that one.  This is how code that
dispatches on the kind of its operands (the run-time helpers' ``isinstance(x,
(tuple, list, dict))``, a user's ``isinstance(x, np.ndarray)``) compiles.

The Python types a backend type stands for: a number of dtype ``f8`` is a ``float``
or an ``np.float64`` (``i8``: ``int`` or ``np.int64``; ``b1``: ``bool`` or
``np.bool_``; ...), a weak one (a Python number's type, ``Scalar.python``) the Python
type, an array an ``np.ndarray`` or the ``None`` an array variable
starts as (``numbers.NoneTest``: then the test is made at run time, on its data
pointer, and both branches compile; an array parameter the body never assigns is an
``np.ndarray``), a tuple a ``tuple`` (a namedtuple its class), a list
display or a list that grows a ``list``, a dict a ``dict``, ``None`` ``NoneType``.
Where the candidates disagree (``isinstance(v, np.floating)`` of an ``f8`` that may be
a Python ``float``), the call is refused naming it, never answered by a guess.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from llvmlite import ir as ll
from s2s_runtime.records import is_record

from ....errors import UnsupportedSyntaxError
from ....ir import nodes as ir
from ..typing import types as T
from ..values import arrays as A
from .calls import register

#: the Python types a number of each dtype may be at run time
_SCALAR_TYPES = {"b1": (bool, np.bool_), "i8": (int, np.int64), "f4": (np.float32,),
                 "f8": (float, np.float64), "c16": (complex, np.complex128)}


def python_types(t):
    """The Python types a value of backend type ``t`` may have, or None if not known."""
    if isinstance(t, T.NoneType):
        return (type(None),)
    if isinstance(t, T.Static):  # a compile-time constant (a string, a flag, an int...)
        return (type(t.value),)
    if isinstance(t, T.Scalar):  # a weak number is a Python one (``Scalar.python``)
        kinds = _SCALAR_TYPES.get(t.dtype)
        return kinds[:1] if t.weak and kinds and len(kinds) == 2 else kinds
    if isinstance(t, T.Array):
        return (np.ndarray, type(None))
    if isinstance(t, T.NamedTuple):
        return (t.cls,)
    if isinstance(t, T.Dict):
        return (dict,)
    if isinstance(t, (T.ListLiteral, T.List)):
        return (list,)
    if isinstance(t, T.Tuple):
        return (tuple,)
    if isinstance(t, T.Range):
        return (range,)
    if isinstance(t, T.Slice):
        return (slice,)
    return None


def _classes(classinfo):
    """The classes of an ``isinstance`` classinfo (a class or nested tuples), or None."""
    if isinstance(classinfo, type):
        return (classinfo,)
    if type(classinfo) is tuple:
        out = ()
        for c in classinfo:
            inner = _classes(c)
            if inner is None:
                return None
            out += inner
        return out
    return None


def answer(t, classinfo):
    """``isinstance``'s answer for every value of type ``t``: True, False, or None where
    it depends on the value (or the classinfo is not a compile-time class)."""
    candidates, classes = python_types(t), _classes(classinfo)
    if candidates is None or classes is None:
        return None
    answers = {issubclass(p, classes) for p in candidates}
    return answers.pop() if len(answers) == 1 else None


def answer_of_array(classinfo):
    """``isinstance``'s answer for an array known not to be None (an array parameter the
    body never assigns: ``typing/infer.py``), or None for a classinfo not constant."""
    classes = _classes(classinfo)
    return None if classes is None else issubclass(np.ndarray, classes)


class IsInstance:
    """``isinstance(x, classinfo)`` with ``classinfo`` a constant class or tuple of them:
    a compile-time flag (see the module docstring); refused where it is not known."""
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 2 or len(atoms) != 2:
            return None
        classinfo = atoms[1].value if isinstance(atoms[1], ir.Const) else \
            types[1].value if isinstance(types[1], T.Static) else None
        if _classes(classinfo) is None:
            raise UnsupportedSyntaxError(
                "jit: isinstance with a classinfo that is not a constant class or tuple of "
                "classes", loc)
        known = answer(types[0], classinfo)
        if known is None and isinstance(types[0], T.Array):
            return T.BOOL  # an ndarray, or the None the variable starts as: at run time
        if known is None:
            shown = " or ".join(p.__name__ if p.__module__ == "builtins" else
                                f"np.{p.__name__}" for p in python_types(types[0]) or ())
            raise UnsupportedSyntaxError(
                f"jit: isinstance of a {types[0]} is not known when compiling"
                + (f" (the value may be a {shown})" if shown else ""), loc)
        return T.Static(known)

    def lower(self, L, fn, vals, kw, rtype):
        """(Only an array's test is lowered: a Static needs no code, ``calls.lower_call``.)
        An array variable still holding its initial None has a null data pointer."""
        classes = _classes(L.call_atoms[0][1].value if isinstance(L.call_atoms[0][1], ir.Const)
                           else vals[1][1].value)
        b = L.b
        null = A.holds_none(L, vals[0][0])
        flag = [ll.Constant(ll.IntType(1), int(issubclass(c, classes)))
                for c in (type(None), np.ndarray)]
        return b.select(null, *flag)


class IsRecord:
    """``rt.is_record(x)`` (a dataclass instance): a compile-time flag, True for a record
    compiled code holds by field (``T.NamedTuple`` of a dataclass), False for any other
    value."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1:
            return None
        t = types[0]
        cls = getattr(t, "cls", None) if isinstance(t, T.NamedTuple) else None
        return T.Static(cls is not None and dataclasses.is_dataclass(cls))


register(IsInstance(), isinstance)
register(IsRecord(), is_record)
