"""``print(...)`` inside ``s2s.jit``: printed when the compiled code runs (as Numba does).

Contract: a call ``print(*values, sep=' ', end='\\n')`` whose values are numbers
(float64/float32/int64/bool), compile-time strings (constants, ``None``), strings
formatted from numbers (f-strings: ``messages.py``) or tuples of these (a shape: each item
shown by its repr, as Python's tuples show them) compiles to a
call of one process-wide Python callback (``ctypes``, which takes the GIL; linked as
the symbol ``s2s.print_values``) with the
call's layout key and the numbers packed in 64-bit words; the callback rebuilds
the values (a float prints as Python prints it) and calls ``print``, so the output
interleaves with the Python program's.  Arrays, lists and ``file=``/``flush=`` are
refused by name.  The result is ``None``.
"""
from __future__ import annotations

import builtins
import ctypes
import hashlib
import struct
import sys

import numpy as np

from llvmlite import binding
from llvmlite import ir as ll

from ....errors import UnsupportedSyntaxError
from ..typing import types as T
from . import messages
from .calls import register

#: layout key -> (parts, sep, end); a part is ("text", str) or ("f8"|"f4"|"i8"|"b1", None).
#: The key is a hash of the layout, the same in every process (object code cached on disk
#: finds its layout again: compiling the module, which the cache key needs, registers it)
_LAYOUTS = {}
_CALLBACK_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64))


def _show(layout, words):
    parts, sep, end = _LAYOUTS[layout]
    values, k = [], 0
    for kind, text in parts:
        if kind == "text":
            values.append(text)
            continue
        if kind == "message":  # text: the types.Message; its numbers, words k...
            n = len(text.numbers())
            values.append(messages.text(text, [words[k + j] for j in range(n)]))
            k += n
            continue
        if kind == "tuple":  # text: the items' layout (_item_layout)
            value, k = _rebuilt(text, words, k)
            values.append(value)
            continue
        values.append(_number(kind, words[k]))
        k += 1
    builtins.print(*values, sep=sep, end=end, file=sys.stdout)


def _number(kind, w):
    if kind in ("f8", "f4"):
        return struct.unpack("<d", struct.pack("<q", w))[0]
    return bool(w) if kind == "b1" else int(w)


#: a strong scalar type's numpy class (a tuple shows its items' reprs: ``np.float64(1.5)``)
_NUMPY_SCALARS = {"f8": np.float64, "f4": np.float32, "i8": np.int64, "b1": np.bool_}


def _rebuilt(layout, words, k):
    """``(value, next word)``: the tuple ``layout`` describes (``("tuple", items)``; an
    item ``("number", kind, weak)`` or ``("text", value)``) from ``words[k:]``."""
    kind = layout[0]
    if kind == "text":
        return layout[1], k
    if kind == "number":
        value = _number(layout[1], words[k])
        return (value if layout[2] else _NUMPY_SCALARS[layout[1]](value)), k + 1
    items = []
    for item in layout[1]:
        value, k = _rebuilt(item, words, k)
        items.append(value)
    return tuple(items), k


def _item_layout(t):
    """The layout of a printed tuple's item (None: not printed here)."""
    if _static_text(t) or t == T.NONE:
        return ("text", getattr(t, "value", None))
    if isinstance(t, T.Scalar) and t.dtype in _SCALARS:
        return ("number", t.dtype, bool(getattr(t, "weak", False)))
    if type(t) is T.Tuple:
        items = [_item_layout(i) for i in t.items]
        return None if any(i is None for i in items) else ("tuple", tuple(items))
    return None


def _words_of(L, v, t, words):
    """Append the numbers of the value ``v`` of type ``t`` to ``words`` (tuples item by
    item), as the callback reads them."""
    if type(t) is T.Tuple:
        for j, item in enumerate(t.items):
            _words_of(L, L.b.extract_value(v, j), item, words)
        return
    if not isinstance(t, T.Scalar):
        return
    if t.dtype in ("f8", "f4"):
        d = v if t.dtype == "f8" else L.b.fpext(v, T.F64)
        words.append(L.b.bitcast(d, T.I64))
    elif t.dtype == "b1":
        words.append(L.b.zext(v, T.I64))
    else:
        words.append(v)


_CALLBACK = _CALLBACK_TYPE(_show)
CALLBACK_SYMBOL = "s2s.print_values"
binding.add_symbol(CALLBACK_SYMBOL, ctypes.cast(_CALLBACK, ctypes.c_void_p).value)
_SCALARS = ("f8", "f4", "i8", "b1")


def _static_text(t):
    return isinstance(t, T.Static) and (t.value is None or isinstance(t.value, str))


class Print:
    def type(self, fn, types, kw, loc):
        if set(kw) - {"sep", "end"} or not all(_static_text(t) for t in kw.values()):
            return None
        for t in types:
            if not (_static_text(t) or t == T.NONE or isinstance(t, T.Message) or
                    isinstance(t, T.Scalar) and t.dtype in _SCALARS or
                    type(t) is T.Tuple and _item_layout(t) is not None):
                return None
        return T.NONE

    def lower(self, L, fn, vals, kw, rtype):
        if "nvptx" in (L.b.module.triple or ""):
            raise UnsupportedSyntaxError("print in a GPU kernel (s2s.cuda): it prints only in "
                                         "CPU code compiled by s2s.jit", L.loc)
        atoms, kw_atoms = L.call_atoms
        parts, words = [], []
        for atom, (v, t) in zip(atoms, vals):
            if isinstance(t, (T.Static, T.NoneType)):
                parts.append(("text", str(getattr(atom, "value", None))))
                continue
            if isinstance(t, T.Message):
                parts.append(("message", t))
                words.extend(messages.words(L, v, t))
                continue
            parts.append(("tuple", _item_layout(t)) if type(t) is T.Tuple else (t.dtype, None))
            _words_of(L, v, t, words)
        sep = getattr(kw_atoms.get("sep"), "value", None)
        end = getattr(kw_atoms.get("end"), "value", None)
        entry = (tuple(parts), " " if sep is None else sep, "\n" if end is None else end)
        layout = int(hashlib.sha1(repr(entry).encode()).hexdigest()[:15], 16)
        _LAYOUTS[layout] = entry
        buf = L.b.alloca(T.I64, size=max(len(words), 1))
        for k, w in enumerate(words):
            L.b.store(w, L.b.gep(buf, [ll.Constant(T.I64, k)]))
        module = L.b.module
        callee = module.globals.get(CALLBACK_SYMBOL) or ll.Function(
            module, ll.FunctionType(ll.VoidType(), [T.I64, T.I64.as_pointer()]), CALLBACK_SYMBOL)
        L.b.call(callee, [ll.Constant(T.I64, layout), buf])
        return ll.Constant(T.NONE.llvm(), None)


register(Print(), builtins.print)
