"""Strings formatted at run time inside ``s2s.jit``: f-strings, ``str.format`` and
``%``-formatting of numbers, shown as the message of an exception the compiled code raises or as a line it
prints.

Contract: ``build.format_string(template, *values)`` (what an f-string is) whose values
are numbers (float64/float32/int64/bool) or constants has the type ``types.Message``:
the template and, per value, its type or its constant; the compiled value is the struct
of the numbers.  ``ValueError(message)`` (any exception class called with one message)
has the type ``types.Raised``; ``raise`` of it stores the numbers in the error words
(``words``; more of them than those hold are handed to Python by a callback first,
``keep_words``) and the error site formats them in Python (``formatter``), so the message
reads as Python's would: each number rebuilt with its own type (``np.float64`` stays
one, so ``{x!r}`` shows what Python mode shows).  ``print`` of a message formats it the
same way (``printing.py``).  A message is not a value of anything else (concatenating
or comparing it is refused by name).
"""
from __future__ import annotations

import ctypes
import struct
import threading

import numpy as np
from llvmlite import binding
from llvmlite import ir as ll

from s2s_runtime import build

from ....errors import UnsupportedSyntaxError
from ..typing import types as T
from ..values import abi
from .calls import register

#: the number kinds a message carries
NUMBERS = ("f8", "f4", "i8", "b1")


def _part(atom, t):
    """The part of a message for one formatted value (None: not formattable here)."""
    if isinstance(t, T.Scalar) and t.dtype in NUMBERS:
        return t
    value = getattr(atom, "value", None) if not isinstance(t, T.Static) else t.value
    if isinstance(t, (T.Static, T.NoneType)) or hasattr(atom, "value"):
        try:
            hash(value)
        except TypeError:
            return None
        return T.Static(value)
    return None


class FormatString:
    """``build.format_string(template, *values)`` (an f-string) and
    ``build.call_method(template, "format", *values)`` (``"...".format(...)``): a
    ``types.Message``."""

    wants_atoms = True

    @staticmethod
    def first(fn, atoms):
        """The position of the first value formatted (None: not a format call)."""
        if fn is build.format_string:
            return 1
        return 2 if len(atoms) > 1 and getattr(atoms[1], "value", None) == "format" else None

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        template = getattr(atoms[0], "value", None) if atoms else None
        first = self.first(fn, atoms)
        if kw or not isinstance(template, str) or first is None:
            return None
        parts = tuple(_part(a, t) for a, t in zip(atoms[first:], types[first:]))
        if any(p is None for p in parts):
            return None
        return T.Message(template, parts)

    def lower(self, L, fn, vals, kw, rtype):
        out = ll.Constant(rtype.llvm(), None)
        k = 0
        for (v, t), part in zip(vals[self.first(fn, L.call_atoms[0]):], rtype.parts):
            if isinstance(part, T.Scalar):
                out = L.b.insert_value(out, v, k)
                k += 1
        return out


register(FormatString(), build.format_string, build.call_method)


class FormatPercent:
    """``build.format_percent(template, values)`` (``"n = %d" % n``, ``"%g, %g" % (x, y)``)
    of a string template and numbers: a ``types.Message``."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        template = getattr(atoms[0], "value", None) if atoms else None
        if kw or len(types) != 2 or not isinstance(template, str):
            return None
        t = types[1]
        items = t.items if T.plain_tuple(t) else (t,)
        if not all(isinstance(i, T.Scalar) and i.dtype in NUMBERS for i in items):
            return None
        return T.Message(template, tuple(items), percent=True)

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[1]
        if not T.plain_tuple(t):
            return L.b.insert_value(ll.Constant(rtype.llvm(), None), v, 0)
        return v  # a tuple of numbers is the message's struct


register(FormatPercent(), build.format_percent)


def words(L, value, message: T.Message):
    """The numbers of a message as i64 words (a float's bits, a bool as 0 or 1)."""
    out = []
    for k, t in enumerate(message.numbers()):
        v = L.b.extract_value(value, k)
        if t.dtype == "f8":
            out.append(L.b.bitcast(v, T.I64))
        elif t.dtype == "f4":
            out.append(L.b.bitcast(L.b.fpext(v, T.F64), T.I64))
        elif t.dtype == "b1":
            out.append(L.b.zext(v, T.I64))
        else:
            out.append(v)
    return out


def _number(t, word):
    """The Python value of one word: a float's or int's own type (``np.float64``, or
    ``float`` for a Python number), as Python mode would format it."""
    if t.dtype in ("f8", "f4"):
        x = struct.unpack("<d", struct.pack("<q", int(word)))[0]
        return x if t.weak else (np.float64(x) if t.dtype == "f8" else np.float32(x))
    if t.dtype == "b1":
        return bool(word) if t.weak else np.bool_(bool(word))
    return int(word) if t.weak else np.int64(word)


def text(message: T.Message, numbers) -> str:
    """The message formatted in Python, from its numbers' words."""
    it = iter(numbers)
    values = [p.value if isinstance(p, T.Static) else _number(p, next(it))
              for p in message.parts]
    if message.percent:
        return message.template % tuple(values)
    return message.template.format(*values)


def raise_message(L, cls, message: T.Message, value, loc):
    """Raise ``cls`` with the run-time ``message`` (its struct ``value``) at ``loc``: its
    numbers in the error words, or handed on first where there are more
    (``keep_words``)."""
    numbers = words(L, value, message)
    if len(numbers) > abi.MESSAGE_INTS:
        if "nvptx" in (L.b.module.triple or ""):
            raise UnsupportedSyntaxError(
                f"an error message formatting {len(numbers)} numbers in a GPU kernel "
                f"(s2s.cuda: at most {abi.MESSAGE_INTS})", loc)
        keep_words(L, numbers)
        L.raise_(cls, kept_formatter(message), loc=loc, user=True)
    else:
        L.raise_(cls, formatter(message), numbers, loc=loc, user=True)


def formatter(message: T.Message):
    """``words -> str`` for an error site (``FunctionLowering.raise_``)."""
    return lambda *numbers: text(message, numbers)


# -- messages with more numbers than the error words hold ---------------------------
#: the words of the last such message raised, per thread (read by its error site)
_KEPT = threading.local()
_KEEP_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64))


def _keep(count, buffer):
    _KEPT.words = [buffer[k] for k in range(count)]


_KEEP = _KEEP_TYPE(_keep)
KEEP_SYMBOL = "s2s.keep_message_words"
binding.add_symbol(KEEP_SYMBOL, ctypes.cast(_KEEP, ctypes.c_void_p).value)


def keep_words(L, numbers):
    """Hand ``numbers`` (i64 words) to Python before raising (a ``ctypes`` callback, which
    takes the GIL): for a message with more numbers than the error words hold."""
    buf = L.b.alloca(T.I64, size=max(len(numbers), 1))
    for k, w in enumerate(numbers):
        L.b.store(w, L.b.gep(buf, [ll.Constant(T.I64, k)]))
    module = L.b.module
    callee = module.globals.get(KEEP_SYMBOL) or ll.Function(
        module, ll.FunctionType(ll.VoidType(), [T.I64, T.I64.as_pointer()]), KEEP_SYMBOL)
    L.b.call(callee, [ll.Constant(T.I64, len(numbers)), buf])


def kept_formatter(message: T.Message):
    """The error site's ``() -> str`` of a message whose numbers ``keep_words`` handed on."""
    return lambda *_: text(message, getattr(_KEPT, "words", ()))
