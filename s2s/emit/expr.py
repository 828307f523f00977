"""IR atoms and calls -> libcst expression nodes.

``ExprBuilder.call(c, folds)`` returns ``(node, precedence)``; operands
whose precedence is lower than their context needs are parenthesised, so
folded expressions mean exactly what the three-address statements meant.
Operators print infix, ``getitem`` as a subscript with slice syntax,
``make_tuple``/``make_list``/``make_dict`` as literals, ``getattr`` and
``call_method`` as attribute access and method calls; every other callable by
its public dotted name (``naming.py``) or, failing that, a name bound in the
function's namespace.
"""
from __future__ import annotations

import inspect
import math
import operator
from typing import Dict

import libcst as cst
import numpy as np

from s2s_runtime import build
from s2s_runtime.fast_numpy import FAST_EQUIVALENTS

from ..frontend import desugar
from ..ir import nodes as ir

_INFIX = {
    operator.add: (cst.Add, 10), operator.sub: (cst.Subtract, 10),
    operator.mul: (cst.Multiply, 11), operator.truediv: (cst.Divide, 11),
    operator.floordiv: (cst.FloorDivide, 11), operator.mod: (cst.Modulo, 11),
    operator.matmul: (cst.MatrixMultiply, 11), operator.pow: (cst.Power, 13),
    operator.and_: (cst.BitAnd, 8), operator.or_: (cst.BitOr, 6), operator.xor: (cst.BitXor, 7),
    operator.lshift: (cst.LeftShift, 9), operator.rshift: (cst.RightShift, 9),
}
_COMPARE = {
    operator.lt: cst.LessThan, operator.le: cst.LessThanEqual, operator.gt: cst.GreaterThan,
    operator.ge: cst.GreaterThanEqual, operator.eq: cst.Equal, operator.ne: cst.NotEqual,
    operator.is_: cst.Is, operator.is_not: cst.IsNot,
}
_PREFIX = {operator.neg: (cst.Minus, 12), operator.pos: (cst.Plus, 12),
           operator.invert: (cst.BitInvert, 12), operator.not_: (cst.Not, 4)}
#: augmented-assignment node of each in-place operator
AUG = {operator.iadd: cst.AddAssign, operator.isub: cst.SubtractAssign,
       operator.imul: cst.MultiplyAssign, operator.itruediv: cst.DivideAssign,
       operator.ifloordiv: cst.FloorDivideAssign, operator.imod: cst.ModuloAssign,
       operator.ipow: cst.PowerAssign, operator.imatmul: cst.MatrixMultiplyAssign,
       operator.iand: cst.BitAndAssign, operator.ior: cst.BitOrAssign,
       operator.ixor: cst.BitXorAssign, operator.ilshift: cst.LeftShiftAssign,
       operator.irshift: cst.RightShiftAssign}
ATOM = 16
_NO_SPACE = cst.SimpleWhitespace("")


def dotted(text: str) -> cst.BaseExpression:
    """``a.b.c`` as a Name/Attribute chain."""
    parts = text.split(".")
    node: cst.BaseExpression = cst.Name(parts[0])
    for p in parts[1:]:
        node = cst.Attribute(node, cst.Name(p))
    return node


def paren(node):
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def kwarg(name: str, value) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name),
                   equal=cst.AssignEqual(whitespace_before=_NO_SPACE, whitespace_after=_NO_SPACE))


class ExprBuilder:
    """Builds expression nodes; ``namer`` names callables and module aliases."""

    def __init__(self, namer):
        self.namer = namer

    def atom(self, a, folds) -> tuple:
        if isinstance(a, ir.Var):
            if a.name in folds:
                return self.call(folds.pop(a.name), folds)
            return cst.Name(a.name), ATOM
        return self.const(a.value)

    @staticmethod
    def wrap(sub, min_prec):
        node, prec = sub
        return paren(node) if prec < min_prec else node

    def const(self, v) -> tuple:
        if v is None or v is True or v is False:
            return cst.Name(repr(v)), ATOM
        if v is Ellipsis:
            return cst.Ellipsis(), ATOM
        if type(v) is int or type(v) is float:
            if type(v) is float and (math.isinf(v) or math.isnan(v)):
                node = cst.Attribute(cst.Name(self.namer.alias("math")),
                                     cst.Name("inf" if math.isinf(v) else "nan"))
                return (cst.UnaryOperation(cst.Minus(), node), 12) if v < 0 else (node, ATOM)
            literal = (cst.Integer if type(v) is int else cst.Float)(repr(abs(v)))
            return (cst.UnaryOperation(cst.Minus(), literal), 12) if repr(v)[0] == "-" \
                else (literal, ATOM)
        if type(v) is complex:
            node = cst.parse_expression(repr(v))  # '1j' or '(1+2j)': parenthesised by repr
            return node, ATOM if not repr(v).startswith("-") else 12
        if isinstance(v, (str, bytes)):
            return cst.SimpleString(repr(v)), ATOM
        if isinstance(v, slice):
            args = [cst.Arg(self.const(x)[0]) for x in (v.start, v.stop, v.step)]
            return cst.Call(cst.Name("slice"), args), 15
        if isinstance(v, tuple) and not hasattr(v, "_fields"):
            return cst.Tuple([cst.Element(self.const(x)[0]) for x in v]), ATOM
        if isinstance(v, list):
            return cst.List([cst.Element(self.const(x)[0]) for x in v]), ATOM
        if isinstance(v, dict):
            return cst.Dict([cst.DictElement(self.const(k)[0], self.const(x)[0])
                             for k, x in v.items()]), ATOM
        np_ = self.namer.alias("np")
        if isinstance(v, np.ndarray):
            node = cst.Call(cst.Attribute(cst.Name(np_), cst.Name("array")),
                            [cst.Arg(self.const(v.tolist())[0]),
                             kwarg("dtype", dotted(f"{np_}.{v.dtype.name}"))])
            return node, 15
        if isinstance(v, np.generic):
            return cst.Call(dotted(f"{np_}.{v.dtype.name}"), [cst.Arg(self.const(v.item())[0])]), 15
        if isinstance(v, np.dtype):
            return cst.Call(dotted(f"{np_}.dtype"), [cst.Arg(cst.SimpleString(repr(v.name)))]), 15
        return dotted(self.namer.name_of(v)), ATOM

    # -- subscripts -----------------------------------------------------------
    def index(self, idx, folds):
        """The elements inside ``x[...]``."""
        if isinstance(idx, ir.Const) and isinstance(idx.value, tuple) and idx.value:
            return [self.index_part(ir.Const(p), folds) for p in idx.value], True
        if isinstance(idx, ir.Var) and idx.name in folds and folds[idx.name].fn is build.make_tuple:
            call = folds.pop(idx.name)
            return [self.index_part(p, folds) for p in call.args], True
        return [self.index_part(idx, folds)], False

    def index_part(self, p, folds) -> cst.SubscriptElement:
        if isinstance(p, ir.Const) and isinstance(p.value, slice):
            bounds = [ir.Const(p.value.start), ir.Const(p.value.stop), ir.Const(p.value.step)]
            return cst.SubscriptElement(self._slice(bounds, folds))
        if isinstance(p, ir.Var) and p.name in folds and folds[p.name].fn is slice:
            call = folds.pop(p.name)
            args = list(call.args) + [ir.Const(None)] * (3 - len(call.args))
            return cst.SubscriptElement(self._slice(args, folds))
        return cst.SubscriptElement(cst.Index(self.atom(p, folds)[0]))

    def _slice(self, bounds, folds) -> cst.Slice:
        lo, hi, st = (None if isinstance(b, ir.Const) and b.value is None
                      else self.atom(b, folds)[0] for b in bounds)
        return cst.Slice(lower=lo, upper=hi, step=st,
                         second_colon=cst.Colon() if st is not None else cst.MaybeSentinel.DEFAULT)

    def subscript(self, base, idx, folds) -> cst.Subscript:
        elements, is_tuple = self.index(idx, folds)
        if is_tuple and len(elements) == 1:  # x[a,]: keep the trailing comma
            elements = [elements[0].with_changes(comma=cst.Comma())]
        return cst.Subscript(self.wrap(self.atom(base, folds), ATOM - 1), elements)

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
            return cst.BinaryOperation(left, op(), right), prec
        if fn in _COMPARE and len(args) == 2 and not c.kwargs:
            return self._compare(args[0], _COMPARE[fn](), args[1], folds), 5
        if fn is desugar.contains and len(args) == 2:
            return self._compare(args[1], cst.In(), args[0], folds), 5
        if fn is desugar.not_contains and len(args) == 2:
            return self._compare(args[1], cst.NotIn(), args[0], folds), 5
        if fn in _PREFIX and len(args) == 1:
            op, prec = _PREFIX[fn]
            return cst.UnaryOperation(op(), self.wrap(self.atom(args[0], folds), prec)), prec
        if fn is operator.getitem and len(args) == 2:
            return self.subscript(args[0], args[1], folds), 15
        if fn is build.make_tuple:
            return cst.Tuple([cst.Element(self.atom(a, folds)[0]) for a in args]), ATOM
        if fn is build.make_list:
            return cst.List([cst.Element(self.atom(a, folds)[0]) for a in args]), ATOM
        if fn is build.make_dict:
            items = [self.atom(a, folds)[0] for a in args]
            return cst.Dict([cst.DictElement(k, v) for k, v in zip(items[::2], items[1::2])]), ATOM
        if fn is getattr and len(args) == 2 and isinstance(args[1], ir.Const) \
                and isinstance(args[1].value, str) and args[1].value.isidentifier():
            base = self.wrap(self.atom(args[0], folds), 15)
            return cst.Attribute(base, cst.Name(args[1].value)), 15
        if fn is build.call_method and len(args) >= 2 and isinstance(args[1], ir.Const):
            base = self.wrap(self.atom(args[0], folds), 15)
            head = base if args[1].value == "__call__" else cst.Attribute(base, cst.Name(args[1].value))
            return cst.Call(head, self._args(args[2:], c.kwargs, folds)), 15
        # numpy reductions and np.split are called through s2s_runtime's equivalents,
        # which skip numpy's Python dispatch (runtime/fast_numpy.py: the same results)
        head = dotted(self.namer.name_of(_FAST_BY_ID.get(id(fn), fn)))
        return cst.Call(head, self._args(_drop_default_tail(fn, args), c.kwargs, folds)), 15

    def _compare(self, left, op, right, folds):
        return cst.Comparison(self.wrap(self.atom(left, folds), 6),
                              [cst.ComparisonTarget(op, self.wrap(self.atom(right, folds), 6))])

    def _args(self, args, kwargs, folds):
        out = [cst.Arg(self.atom(a, folds)[0]) for a in args]
        return out + [kwarg(k, self.atom(v, folds)[0]) for k, v in kwargs]

    def expr(self, value, folds):
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
