"""Lowering of expressions: libcst expression nodes -> IR atoms and calls.

``ExpressionLowering`` is mixed into the ``Lowerer`` (``lower.py``), which
provides ``emit``, ``temp``, ``atom``, ``loc``, ``locals``, ``cells``,
``globals``, ``names``, ``freevars`` and ``statics``.  Every sub-expression
becomes an atom (a constant, a variable, or a temporary assigned just
before); operators become ``operator`` calls, literals of tuples, lists and
dicts become ``s2s_runtime.build`` calls, ``and``/``or``, chained comparisons
and conditional expressions become ``If`` statements (short-circuit kept).
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import inspect
import operator

import libcst as cst
import numpy as np

import s2s_runtime as rt
from s2s_runtime import build
from s2s_runtime.fast_numpy import NUMPY_OF

from ..errors import NameResolutionError, S2SError, unsupported
from ..ir import nodes as ir
from ..rules.numpy_code.ufunc_methods import UFUNC_METHODS
from . import desugar
from .comprehensions import ComprehensionLowering
from .unpacking import UnpackingLowering
from .scope import FreeVar
from .shipped import filename_of


def _immutable_constant(value) -> bool:
    if value is None or type(value) in (bool, int, float, complex, str):
        return True
    return type(value) is tuple and all(map(_immutable_constant, value))


def is_static(value) -> bool:
    """Values that are part of the program text: modules, callables, classes."""
    return inspect.ismodule(value) or callable(value) or value is Ellipsis



class ExpressionLowering(ComprehensionLowering, UnpackingLowering):
    """The ``expr_*`` methods of the lowerer (see the module docstring)."""

    def value(self, node) -> ir.Expr:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise unsupported(_EXPR_NAMES.get(type(node).__name__, type(node).__name__),
                              self.loc(node))
        return method(node)

    def expr_Name(self, node):
        name = node.value
        scoped = self.comp_var(name) if self.comp_scopes else None
        if scoped is not None:
            return scoped
        if name in self.locals:
            return ir.Var(name)
        if name in ("True", "False", "None"):
            return ir.Const({"True": True, "False": False, "None": None}[name])
        return self.resolve_free(name, node)

    def resolve_free(self, name, node) -> ir.Atom:
        if name in getattr(self, "imported", ()):  # bound by an import in the function
            value = self.imported[name]
            return ir.Const(NUMPY_OF.get(id(value), value)) if is_static(value) else \
                self.freevar(name, FreeVar.constant(name, value))
        if name in self.cells:
            cell = self.cells[name]
            try:
                value = cell.cell_contents
            except ValueError:
                raise NameResolutionError(
                    f"free variable {name!r} is referenced before assignment", self.loc(node))
            if is_static(value):
                self.statics.append((cell, None, value))
                return ir.Const(value)
            return self.freevar(name, FreeVar.cell(name, cell))
        if name in self.globals:
            value = self.globals[name]
            if is_static(value):
                self.statics.append((self.globals, name, value))
                return ir.Const(NUMPY_OF.get(id(value), value))
            return self.freevar(name, FreeVar.global_(name, self.globals))
        if hasattr(builtins, name):
            return ir.Const(getattr(builtins, name))
        raise NameResolutionError(f"name {name!r} is not defined", self.loc(node))

    def freevar(self, name, fv) -> ir.Var:
        if name not in self.freevars:
            self.freevars[name] = fv
            self.names.reserve(name)
        return ir.Var(name)

    def expr_Integer(self, node):
        text = node.value.replace("_", "")
        return ir.Const(int(text, 0) if text.strip("0") else 0)

    def expr_Float(self, node):
        return ir.Const(float(node.value.replace("_", "")))

    def expr_Imaginary(self, node):
        return ir.Const(complex(node.value.replace("_", "")))

    def expr_SimpleString(self, node):
        return ir.Const(node.evaluated_value)

    def expr_ConcatenatedString(self, node):
        """Adjacent string literals: their value, or, where one is an f-string, one
        ``build.format_string`` of the joined templates."""
        if node.evaluated_value is not None:
            return ir.Const(node.evaluated_value)
        template, operands = self._template(node)
        return ir.Call(build.format_string, (ir.Const(template), *operands))

    def expr_FormattedString(self, node):
        """``f"a {x!r:>4} b"`` -> ``build.format_string("a {!r:>4} b", x)`` (a str: no
        derivative); a format spec with nested fields is refused."""
        template, operands = self._template(node)
        return ir.Call(build.format_string, (ir.Const(template), *operands))

    def _template(self, node):
        """``(template, operands)`` of a string literal, an f-string or adjacent ones, for
        ``template.format(*operands)``."""
        if isinstance(node, cst.ConcatenatedString):
            left, left_operands = self._template(node.left)
            right, right_operands = self._template(node.right)
            return left + right, [*left_operands, *right_operands]
        if isinstance(node, cst.SimpleString):
            return node.evaluated_value.replace("{", "{{").replace("}", "}}"), []
        template, operands = [], []
        quote = node.start.replace("f", "").replace("F", "")  # the prefix (r, b) and quote
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                # the source text, its escapes read as Python reads them (braces stay
                # doubled: no escape outside an f-string)
                template.append(ast.literal_eval(quote + part.value + node.end))
                continue
            field = "{"
            if part.conversion is not None:
                field += "!" + part.conversion
            if part.format_spec:
                if not all(isinstance(p, cst.FormattedStringText) for p in part.format_spec):
                    raise unsupported("an f-string format spec with nested fields",
                                      self.loc(part))
                field += ":" + "".join(p.value for p in part.format_spec)
            template.append(field + "}")
            operands.append(self.atom(part.expression))
        return "".join(template), operands

    def expr_Ellipsis(self, node):
        return ir.Const(Ellipsis)

    def expr_Attribute(self, node):
        base = self.value(node.value)
        attr = node.attr.value
        if isinstance(base, ir.Const) and is_static(base.value):
            owner = base.value
            try:
                value = getattr(owner, attr)
            except AttributeError:
                raise NameResolutionError(
                    f"{_describe(owner)} has no attribute {attr!r}", self.loc(node)) from None
            method = UFUNC_METHODS.get((owner, attr)) if isinstance(owner, np.ufunc) else None
            if method is not None:  # np.add.reduce: np.sum's plain form
                return ir.Const(method)
            if is_static(value) or _is_library(owner):
                if inspect.ismodule(owner) and not _is_library(owner):
                    self.statics.append((owner.__dict__, attr, value))
                # generated code's rt.sum, rt.split...: read back as the numpy functions
                return ir.Const(NUMPY_OF.get(id(value), value))
            # a number or array held by a user module or class: read at every call
            name = self.names.fresh(attr)
            for existing, fv in self.freevars.items():
                if fv.slot == ("attr", id(owner), attr):
                    return ir.Var(existing)
            return self.freevar(name, FreeVar.attribute(name, owner, attr))
        base = self._as_atom(base, node.value)
        if attr in desugar.ARRAY_ATTRIBUTES:
            return ir.Call(desugar.ARRAY_ATTRIBUTES[attr], (base,))
        return ir.Call(getattr, (base, ir.Const(attr)))

    def _as_atom(self, value, node) -> ir.Atom:
        if isinstance(value, ir.Call):
            t = self.temp()
            self.emit(ir.Assign(t, value, self.loc(node)))
            return t
        return value

    def expr_Call(self, node):
        if any(a.star for a in node.args):  # f(*args), f(**kwargs): unpacking.py
            return self.unpacking_call(node)
        reduced = self.builtin_reduction(node)
        if reduced is None:
            reduced = self.builtin_map(node)
        if reduced is None:
            reduced = self.functools_reduce(node)
        if reduced is not None:
            return reduced
        args, kwargs = self.call_args(node)
        fn, lead, method = self.call_target(node)
        if lead:
            if method in ("reshape", "transpose") and len(args) > 1:
                args = (self.pack(list(args), tuple, build.make_tuple, self.loc(node)),)
            if method == "clip":  # a.clip(lo), a.clip(max=hi): both bounds, positional
                clipped = desugar.clip_bounds(lead[0], args, dict(kwargs), method=True)
                if clipped is not None:
                    return clipped
            return ir.Call(fn, lead + args, kwargs)
        if is_record_class(fn):
            return self.record(fn, args, kwargs, node)
        called = desugar.call_form(fn, args, dict(kwargs))  # svd(a, compute_uv=False)
        if called is not None:
            return called
        if getattr(fn, "_s2s_static_factory", False):
            held = tuple(map(self.held_constant, args))
            held_kw = tuple((k, self.held_constant(v)) for k, v in kwargs)
            if all(isinstance(a, ir.Const) for a in held + tuple(v for _, v in held_kw)):
                return self.static_factory(fn, held, held_kw, node)
            return ir.Call(fn, held, held_kw)  # (a local function transformed)
        return ir.Call(fn, args, kwargs)

    def held_constant(self, atom) -> ir.Atom:
        """``atom``, or the value of the global or closure variable it reads where that is
        an immutable constant (a number, a string, ``None`` or a tuple of them:
        ``in_axes=AXES``, ``argnums=nums``), recorded as a static (rebinding the name
        makes the function read again)."""
        fv = self.freevars.get(atom.name) if isinstance(atom, ir.Var) else None
        if fv is None or fv.slot[0] not in ("global", "cell"):
            return atom
        try:
            value = fv.load()
        except (NameError, ValueError):
            return atom
        if not _immutable_constant(value):
            return atom
        self.statics.append((fv.holder, fv.name if fv.slot[0] == "global" else None, value))
        return ir.Const(value)

    def call_target(self, node):
        """``(fn, leading operands, method name or None)``: what ``node`` calls.  A method
        of a run-time value is ``build.call_method(base, name, ...)`` (or the numpy
        function of an array method, ``(base, ...)``); a value called (an object with
        ``__call__``, a function passed in) is ``build.call_method(f, "__call__", ...)``;
        a program constant (a function, class, module attribute) is itself, no leading
        operands."""
        func = node.func
        if isinstance(func, cst.Attribute):
            base = self.value(func.value)
            if not (isinstance(base, ir.Const) and is_static(base.value)):
                base = self._as_atom(base, func.value)
                method = func.attr.value
                if method in desugar.ARRAY_METHODS:
                    return desugar.ARRAY_METHODS[method], (base,), method
                return build.call_method, (base, ir.Const(method)), method
        target = self.value(func)
        if not isinstance(target, ir.Const):
            return build.call_method, (self._as_atom(target, func), ir.Const("__call__")), None
        reader = desugar.reads_names(target.value)
        if reader is not None:
            raise unsupported(f"{reader}() in code s2s transforms", self.loc(node),
                              f"{reader} reads variables by name while the code runs, which "
                              "s2s cannot see: use the variables themselves")
        return target.value, (), None

    def record(self, cls, args, kwargs, node) -> ir.Call:
        """``P(a, b=c)`` of a dataclass or namedtuple class: ``rt.make_record(P, (a, c))``,
        the values of its ``__init__`` parameters in order (defaults filled in)."""
        loc = self.loc(node)
        if getattr(cls, "__post_init__", None) is not None:
            raise unsupported(f"constructing the dataclass {cls.__qualname__}, which has "
                              "__post_init__, in differentiated code", loc,
                              "s2s cannot see what __post_init__ does with the fields")
        try:
            bound = inspect.signature(cls).bind(*args, **dict(kwargs))
        except TypeError as exc:
            raise S2SError(f"{cls.__qualname__}(...): {exc}", loc) from None
        bound.apply_defaults()
        fields = [v if isinstance(v, (ir.Var, ir.Const)) else ir.Const(v)
                  for v in bound.arguments.values()]
        return ir.Call(rt.make_record, (ir.Const(cls), self.pack(fields, tuple,
                                                                 build.make_tuple, loc)))

    def static_factory(self, factory, args, kwargs, node) -> ir.Const:
        """``grad(f, argnums=1)`` with constant arguments, made while lowering: the
        transform object is part of the program, like ``f`` itself."""
        try:
            return ir.Const(factory(*(a.value for a in args),
                                    **{k: v.value for k, v in kwargs}))
        except (TypeError, ValueError) as exc:  # e.g. argnums out of range: same type, located
            located = S2SError(f"{factory.__name__}(...): {exc}", self.loc(node))
            raise type(exc)(str(located)) from None

    def call_args(self, node):
        args, kwargs = [], []
        for a in node.args:
            if a.star:
                raise unsupported(f"'{a.star}' argument unpacking in a call", self.loc(a))
            v = self.atom(a.value)
            if a.keyword is not None:
                kwargs.append((a.keyword.value, v))
            elif kwargs:
                raise unsupported("positional argument after keyword", self.loc(a))
            else:
                args.append(v)
        return tuple(args), tuple(kwargs)

    def expr_Subscript(self, node):
        base = self.atom(node.value)
        return ir.Call(operator.getitem, (base, self.index(node.slice)))

    def index(self, elements) -> ir.Atom:
        parts = [self.index_part(e.slice) for e in elements]
        if len(parts) == 1 and isinstance(elements[0].comma, cst.MaybeSentinel):
            return parts[0]
        return self.pack(parts, tuple, build.make_tuple, self.loc(elements[0]))

    def index_part(self, s) -> ir.Atom:
        if isinstance(s, cst.Index):
            if s.star is not None:
                raise unsupported("starred index", self.loc(s))
            return self.atom(s.value)
        bounds = [ir.Const(None) if b is None else self.atom(b) for b in (s.lower, s.upper, s.step)]
        if all(isinstance(b, ir.Const) for b in bounds):
            return ir.Const(slice(*(b.value for b in bounds)))
        t = self.temp()
        self.emit(ir.Assign(t, ir.Call(slice, tuple(bounds)), self.loc(s)))
        return t

    def pack(self, parts, const_type, maker, loc):
        if const_type is tuple and all(isinstance(p, ir.Const) for p in parts):
            return ir.Const(tuple(p.value for p in parts))
        t = self.temp()
        self.emit(ir.Assign(t, ir.Call(maker, tuple(parts)), loc))
        return t

    def expr_Tuple(self, node):
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            return self.starred_display(node, build.make_tuple)
        parts = self._elements(node)
        if all(isinstance(p, ir.Const) for p in parts):
            return ir.Const(tuple(p.value for p in parts))
        return ir.Call(build.make_tuple, tuple(parts))

    def expr_List(self, node):
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            return self.starred_display(node, build.make_list)
        return ir.Call(build.make_list, tuple(self._elements(node)))

    def _elements(self, node):
        out = []
        for e in node.elements:
            if isinstance(e, cst.StarredElement):
                raise unsupported("starred element", self.loc(e))
            out.append(self.atom(e.value))
        return out

    def expr_Dict(self, node):
        items = []
        for e in node.elements:
            if isinstance(e, cst.StarredDictElement):
                raise unsupported("'**' in a dict literal", self.loc(e))
            items += [self.atom(e.key), self.atom(e.value)]
        return ir.Call(build.make_dict, tuple(items))

    def expr_BinaryOperation(self, node):
        op = desugar.BINARY_OPS[type(node.operator)]
        left, right = self.atom(node.left), self.atom(node.right)
        if op is operator.mod and isinstance(left, ir.Const) and isinstance(left.value, (str, bytes)):
            op = build.format_percent  # 'k%d' % i formats a string: no derivative
        return ir.Call(op, (left, right))

    def expr_UnaryOperation(self, node):
        op = desugar.UNARY_OPS[type(node.operator)]
        operand = self.atom(node.expression)
        if op is operator.neg and isinstance(operand, ir.Const) and _is_number(operand.value):
            return ir.Const(-operand.value)
        return ir.Call(op, (operand,))

    def expr_Comparison(self, node):
        left = self.atom(node.left)
        pieces = list(node.comparisons)
        first = self._compare(left, pieces[0])
        if len(pieces) == 1:
            return first
        # a < b < c  ->  r = a < b; if r: r = b < c  (b evaluated once)
        result = self.temp()
        loc = self.loc(node)
        self.emit(ir.Assign(result, first, loc))
        self._chain(result, pieces, 1, loc)
        return result

    def _chain(self, result, pieces, i, loc):
        if i == len(pieces):
            return
        self.blocks.append([])
        prev = self._last_comparator
        self.emit(ir.Assign(result, self._compare(prev, pieces[i]), loc))
        self._chain(result, pieces, i + 1, loc)
        body = tuple(self.blocks.pop())
        self.emit(ir.If(result, body, (), loc))

    def _compare(self, left, target):
        right = self.atom(target.comparator)
        self._last_comparator = right
        kind = type(target.operator)
        if kind in desugar.MEMBERSHIP_OPS:
            return ir.Call(desugar.MEMBERSHIP_OPS[kind], (right, left))
        return ir.Call(desugar.COMPARE_OPS[kind], (left, right))

    def expr_BooleanOperation(self, node):
        # a and b -> if a: r = b else: r = a      a or b -> if a: r = a else: r = b
        # (r assigned in each branch: where a is known when compiling, the jit types only
        # the branch taken, so r keeps one compile-time value)
        loc = self.loc(node)
        left = self.atom(node.left)
        result = self.temp()
        keep = (ir.Assign(result, left, loc),)
        self.blocks.append([])
        self.emit(ir.Assign(result, self.atom(node.right), loc))
        rhs = tuple(self.blocks.pop())
        if isinstance(node.operator, cst.And):
            self.emit(ir.If(left, rhs, keep, loc))
        else:
            self.emit(ir.If(left, keep, rhs, loc))
        return result

    def expr_NamedExpr(self, node):
        """``(name := value)``: ``name = value`` where the expression is evaluated (in the
        branch of an ``if``, ``and``/``or`` or conditional expression that evaluates it, in
        a ``while`` test each time), then ``name``.  Inside a comprehension, where it binds
        the enclosing function's name, it is refused by name."""
        loc = self.loc(node)
        if self.comp_scopes:
            raise unsupported("assignment expression ':=' inside a comprehension", loc)
        if not isinstance(node.target, cst.Name):
            raise unsupported("assignment expression ':=' to a target that is not a name", loc)
        target = ir.Var(node.target.value)
        self.emit(ir.Assign(target, self.value(node.value), loc))
        return target

    def expr_IfExp(self, node):
        loc = self.loc(node)
        test = self.atom(node.test)
        result = self.temp()
        self.blocks.append([])
        self.emit(ir.Assign(result, self.value(node.body), loc))
        body = tuple(self.blocks.pop())
        self.blocks.append([])
        self.emit(ir.Assign(result, self.value(node.orelse), loc))
        orelse = tuple(self.blocks.pop())
        self.emit(ir.If(test, body, orelse, loc))
        return result


def is_record_class(cls) -> bool:
    """A namedtuple class, or a dataclass whose ``__init__`` ``@dataclass`` generated
    (its instances are built with ``rt.make_record``; a hand-written ``__init__`` is
    inlined like any user class's)."""
    if not isinstance(cls, type):
        return False
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return True
    init = cls.__dict__.get("__init__") if dataclasses.is_dataclass(cls) else None
    code = getattr(init, "__code__", None)
    return code is not None and filename_of(code).startswith("<")


def _is_library(owner) -> bool:
    """numpy, math and the builtins: their constants (np.pi, math.inf) never change."""
    mod = owner.__name__ if inspect.ismodule(owner) else getattr(owner, "__module__", "")
    return (mod or "").split(".")[0] in ("numpy", "math", "builtins", "cmath")


def _is_number(v) -> bool:
    return isinstance(v, (int, float, complex)) and not isinstance(v, bool)


def _describe(v) -> str:
    return getattr(v, "__name__", type(v).__name__)


_EXPR_NAMES = {
    "Yield": "'yield'", "Await": "'await'", "Lambda": "lambda inside a differentiated function",
    "SetComp": "set comprehension",
    "Set": "set literal", "StarredElement": "starred expression",
}
