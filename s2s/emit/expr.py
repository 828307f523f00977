"""IR atoms and calls -> Python expression text.

``ExprBuilder.call(c, folds)`` returns ``(text, precedence)``; operands
whose precedence is lower than their context needs are parenthesised, so
folded expressions mean exactly what the three-address statements meant.
Operators print infix, ``getitem`` as a subscript with slice syntax,
``make_tuple``/``make_list``/``make_dict`` as literals, ``getattr`` and
``call_method`` as attribute access and method calls; every other callable by
its public dotted name (``naming.py``) or, failing that, a name bound in the
function's namespace.

The text is written directly (the spacing is libcst's default layout: ``a + b``,
``f(a, b, k=v)``, ``(a,)``, ``x[a:b]``, ``{k: v}``); building libcst nodes and printing
them cost most of the time of emitting a long function.  Names, aliases and folded
temporaries are taken in the order the operands are printed, so the text is a pure
function of the IR.
"""
from __future__ import annotations

import inspect
import math
import operator
from typing import Dict

import numpy as np

from s2s_runtime import build
from s2s_runtime.fast_numpy import FAST_EQUIVALENTS

from ..frontend import desugar
from ..ir import nodes as ir

_INFIX = {
    operator.add: (" + ", 10), operator.sub: (" - ", 10),
    operator.mul: (" * ", 11), operator.truediv: (" / ", 11),
    operator.floordiv: (" // ", 11), operator.mod: (" % ", 11),
    operator.matmul: (" @ ", 11), operator.pow: (" ** ", 13),
    operator.and_: (" & ", 8), operator.or_: (" | ", 6), operator.xor: (" ^ ", 7),
    operator.lshift: (" << ", 9), operator.rshift: (" >> ", 9),
}
_COMPARE = {
    operator.lt: " < ", operator.le: " <= ", operator.gt: " > ",
    operator.ge: " >= ", operator.eq: " == ", operator.ne: " != ",
    operator.is_: " is ", operator.is_not: " is not ",
}
_PREFIX = {operator.neg: ("-", 12), operator.pos: ("+", 12),
           operator.invert: ("~", 12), operator.not_: ("not ", 4)}
#: augmented-assignment operator of each in-place operator
AUG = {operator.iadd: " += ", operator.isub: " -= ",
       operator.imul: " *= ", operator.itruediv: " /= ",
       operator.ifloordiv: " //= ", operator.imod: " %= ",
       operator.ipow: " **= ", operator.imatmul: " @= ",
       operator.iand: " &= ", operator.ior: " |= ",
       operator.ixor: " ^= ", operator.ilshift: " <<= ",
       operator.irshift: " >>= "}
ATOM = 16


def _tuple(items) -> str:
    """A parenthesised tuple display (``(a,)`` for one element)."""
    return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"


class ExprBuilder:
    """Builds expression text; ``namer`` names callables and module aliases."""

    def __init__(self, namer):
        self.namer = namer

    def atom(self, a, folds) -> tuple:
        if isinstance(a, ir.Var):
            if a.name in folds:
                return self.call(folds.pop(a.name), folds)
            return a.name, ATOM
        return self.const(a.value)

    @staticmethod
    def wrap(sub, min_prec) -> str:
        text, prec = sub
        return "(" + text + ")" if prec < min_prec else text

    def const(self, v) -> tuple:
        if v is None or v is True or v is False:
            return repr(v), ATOM
        if v is Ellipsis:
            return "...", ATOM
        if type(v) is int or type(v) is float:
            if type(v) is float and (math.isinf(v) or math.isnan(v)):
                text = self.namer.alias("math") + (".inf" if math.isinf(v) else ".nan")
                return ("-" + text, 12) if v < 0 else (text, ATOM)
            literal = repr(abs(v))
            return ("-" + literal, 12) if repr(v)[0] == "-" else (literal, ATOM)
        if type(v) is complex:
            text = repr(v)  # '1j' or '(1+2j)': parenthesised by repr
            return text, ATOM if not text.startswith("-") else 12
        if isinstance(v, (str, bytes)):
            return repr(v), ATOM
        if isinstance(v, slice):
            parts = [self.const(x)[0] for x in (v.start, v.stop, v.step)]
            return "slice(" + ", ".join(parts) + ")", 15
        if isinstance(v, tuple) and not hasattr(v, "_fields"):
            return _tuple([self.const(x)[0] for x in v]), ATOM
        if isinstance(v, list):
            return "[" + ", ".join([self.const(x)[0] for x in v]) + "]", ATOM
        if isinstance(v, dict):
            items = [self.const(k)[0] + ": " + self.const(x)[0] for k, x in v.items()]
            return "{" + ", ".join(items) + "}", ATOM
        np_ = self.namer.alias("np")
        if isinstance(v, np.ndarray):
            data = self.const(v.tolist())[0]
            return f"{np_}.array({data}, dtype={np_}.{v.dtype.name})", 15
        if isinstance(v, np.generic):
            return f"{np_}.{v.dtype.name}({self.const(v.item())[0]})", 15
        if isinstance(v, np.dtype):
            return f"{np_}.dtype({v.name!r})", 15
        return self.namer.name_of(v), ATOM

    # -- subscripts -----------------------------------------------------------
    def index(self, idx, folds):
        """The elements inside ``x[...]``."""
        if isinstance(idx, ir.Const) and isinstance(idx.value, tuple) and idx.value:
            return [self.index_part(ir.Const(p), folds) for p in idx.value], True
        if isinstance(idx, ir.Var) and idx.name in folds and folds[idx.name].fn is build.make_tuple:
            call = folds.pop(idx.name)
            return [self.index_part(p, folds) for p in call.args], True
        return [self.index_part(idx, folds)], False

    def index_part(self, p, folds) -> str:
        if isinstance(p, ir.Const) and isinstance(p.value, slice):
            bounds = [ir.Const(p.value.start), ir.Const(p.value.stop), ir.Const(p.value.step)]
            return self._slice(bounds, folds)
        if isinstance(p, ir.Var) and p.name in folds and folds[p.name].fn is slice:
            call = folds.pop(p.name)
            args = list(call.args) + [ir.Const(None)] * (3 - len(call.args))
            return self._slice(args, folds)
        return self.atom(p, folds)[0]

    def _slice(self, bounds, folds) -> str:
        lo, hi, st = (None if isinstance(b, ir.Const) and b.value is None
                      else self.atom(b, folds)[0] for b in bounds)
        return (lo or "") + ":" + (hi or "") + ("" if st is None else ":" + st)

    def subscript(self, base, idx, folds) -> str:
        elements, is_tuple = self.index(idx, folds)
        inside = elements[0] + "," if is_tuple and len(elements) == 1 else ", ".join(elements)
        return self.wrap(self.atom(base, folds), ATOM - 1) + "[" + inside + "]"

    # -- calls ----------------------------------------------------------------
    def call(self, c: ir.Call, folds) -> tuple:
        fn, args = c.fn, c.args
        if fn in _INFIX and len(args) == 2 and not c.kwargs:
            op, prec = _INFIX[fn]
            if prec == 13:  # ** is right-associative and binds tighter than a unary on its left
                left = self.wrap(self.atom(args[0], folds), 14)
                right = self.wrap(self.atom(args[1], folds), 12)
            else:
                left = self.wrap(self.atom(args[0], folds), prec)
                right = self.wrap(self.atom(args[1], folds), prec + 1)
            return left + op + right, prec
        if fn in _COMPARE and len(args) == 2 and not c.kwargs:
            return self._compare(args[0], _COMPARE[fn], args[1], folds), 5
        if fn is desugar.contains and len(args) == 2:
            return self._compare(args[1], " in ", args[0], folds), 5
        if fn is desugar.not_contains and len(args) == 2:
            return self._compare(args[1], " not in ", args[0], folds), 5
        if fn in _PREFIX and len(args) == 1:
            op, prec = _PREFIX[fn]
            return op + self.wrap(self.atom(args[0], folds), prec), prec
        if fn is operator.getitem and len(args) == 2:
            return self.subscript(args[0], args[1], folds), 15
        if fn is build.make_tuple:
            return _tuple([self.atom(a, folds)[0] for a in args]) if args else "()", ATOM
        if fn is build.make_list:
            return "[" + ", ".join([self.atom(a, folds)[0] for a in args]) + "]", ATOM
        if fn is build.make_dict:
            items = [self.atom(a, folds)[0] for a in args]
            return "{" + ", ".join([k + ": " + v for k, v in zip(items[::2], items[1::2])]) \
                + "}", ATOM
        if fn is getattr and len(args) == 2 and isinstance(args[1], ir.Const) \
                and isinstance(args[1].value, str) and args[1].value.isidentifier():
            base = self.wrap(self.atom(args[0], folds), 15)
            return base + "." + args[1].value, 15
        if fn is build.call_method and len(args) >= 2 and isinstance(args[1], ir.Const):
            base = self.wrap(self.atom(args[0], folds), 15)
            head = base if args[1].value == "__call__" else base + "." + args[1].value
            return head + "(" + self._args(args[2:], c.kwargs, folds) + ")", 15
        # numpy reductions and np.split are called through s2s_runtime's equivalents,
        # which skip numpy's Python dispatch (runtime/fast_numpy.py: the same results)
        head = self.namer.name_of(_FAST_BY_ID.get(id(fn), fn))
        return head + "(" + self._args(_drop_default_tail(fn, args), c.kwargs, folds) + ")", 15

    def _compare(self, left, op, right, folds) -> str:
        left = self.wrap(self.atom(left, folds), 6)
        return left + op + self.wrap(self.atom(right, folds), 6)

    def _args(self, args, kwargs, folds) -> str:
        out = [self.atom(a, folds)[0] for a in args]
        return ", ".join(out + [k + "=" + self.atom(v, folds)[0] for k, v in kwargs])

    def expr(self, value, folds) -> str:
        if isinstance(value, ir.Call):
            return self.call(value, folds)[0]
        return self.atom(value, folds)[0]


_SIGNATURES: Dict[int, object] = {}

#: id of a numpy function -> the s2s_runtime equivalent generated code calls
_FAST_BY_ID = {id(numpy_fn): fast for numpy_fn, fast in FAST_EQUIVALENTS.items()}


def _drop_default_tail(fn, args):
    """Trailing constant arguments equal to an s2s_runtime helper's defaults, dropped."""
    if not (getattr(fn, "__module__", "") or "").startswith("s2s_runtime"):
        return args
    sig = _SIGNATURES.get(id(fn))
    if sig is None:
        try:
            sig = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):  # a class of s2s_runtime (an exception) has none
            sig = []
        _SIGNATURES[id(fn)] = sig
    args = list(args)
    while args and len(args) <= len(sig):
        a, p = args[-1], sig[len(args) - 1]
        if not (isinstance(a, ir.Const) and p.default is not inspect.Parameter.empty
                and type(a.value) is type(p.default) and a.value == p.default):
            break
        args.pop()
    return tuple(args)


def call_depth(call: ir.Call, folds) -> int:
    """Nesting depth of function calls (operators, subscripts and literals count 0)."""
    own = 0 if (call.fn in _INFIX or call.fn in _PREFIX or call.fn in _COMPARE
                or call.fn is operator.getitem
                or call.fn in (build.make_tuple, build.make_list, build.make_dict)) else 1
    inner = max((call_depth(folds[a.name], folds) for a in call.operands()
                 if isinstance(a, ir.Var) and a.name in folds), default=0)
    return own + inner
