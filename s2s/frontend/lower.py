"""libcst -> IR: lowering a user function to three-address statements.

Contract: ``lower(fn)`` returns an ``ir.Function`` whose body uses only the
statements of ``s2s.ir.nodes``; every operation is a ``Call`` of a Python
callable on atoms; every free name is resolved against the function's
closure cells, globals and builtins:

* modules, callables and classes become ``Const`` (they are part of the
  program, fixed at specialisation);
* any other free value (a global array, a number, an object) becomes a
  *free variable*: an extra keyword-only parameter of the IR function whose
  value the API reads afresh at every call (so a reassigned global is never
  stale).

Desugared here: augmented assignment, tuple unpacking and swaps
(``assignments.py``), chained
comparisons and ``and``/``or`` (short-circuit, as ``If``), conditional
expressions, array attributes and methods (``desugar.py``), literals of
tuples/lists/dicts.  Anything else raises ``UnsupportedSyntaxError`` quoting
the line.
"""
from __future__ import annotations

import contextlib
import importlib
import inspect
import warnings
from typing import Dict, List

import libcst as cst
import numpy as np

from s2s_runtime import build

from ..errors import located, unsupported
from ..ir import nodes as ir
from ..ir.names import NameGen
from ..rules.templates import set_template_lowering
from .assignments import AssignmentLowering
from .scope import FreeVar, assigned_names
from .expressions import ExpressionLowering
from .nested import local_function
from .cst_fast import walk
from .source import find_function

_MISSING = object()


class Lowerer(ExpressionLowering, AssignmentLowering):
    """Lowers one function (a ``def`` or a ``lambda``) to IR."""

    def __init__(self, fn, parsed, node):
        self.fn = fn
        code = fn.__code__
        cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
        self._setup(parsed, node, getattr(fn, "__globals__", {}), cells, [])

    def _setup(self, parsed, node, globals_, cells, statics, reserved=(), imported=()) -> None:
        self.parsed = parsed
        self.node = node
        self.globals = globals_
        self.cells = cells
        self.params = self._param_names()
        text = parsed.text_of(node)
        self.locals = set(self.params) | assigned_names(node, text is None or ":=" in text)
        self.names = NameGen(self.locals | set(reserved))
        self.freevars: Dict[str, FreeVar] = {}
        #: free names resolved as part of the program (functions, classes, modules):
        #: (holder, name, value) — re-checked at every call so rebinding is never stale
        self.statics = statics
        #: names an ``import`` in the function binds: name -> the module or object (what
        #: Python binds, imported when lowering; never a local variable)
        self.imported: Dict[str, object] = dict(imported)
        self.blocks: List[list] = []

    def function_name(self) -> str:
        return self.fn.__name__ if self.fn.__name__ != "<lambda>" else "lambda_"

    def visible(self) -> set:
        """The local names a nested function of this one can read (see ``nested.py``)."""
        return set(self.locals)

    def visible_comps(self) -> dict:
        """The comprehension variables a nested function here can read: user name ->
        variable (``nested.py``)."""
        out = {}
        for scope in getattr(self, "comp_scopes", ()):
            out.update(scope)
        return out

    def name_ref(self, name) -> ir.Var:
        """A read of ``name``, one of ``visible()`` (or a comprehension's variable)."""
        return ir.Var(name)

    # -- entry -------------------------------------------------------------
    def lower(self) -> ir.Function:
        params = self._params()
        body, doc = self._body()
        params += tuple(ir.Param(ir.Var(n), None, kwonly=True) for n in self.freevars)
        return ir.Function(
            name=self.function_name(),
            params=params, body=tuple(body), loc=self.loc(self.node), docstring=doc,
            temps=frozenset(self.names.temps))

    def _param_names(self):
        """Every parameter name in order, ``*args`` and ``**kwargs`` included."""
        p = self.node.params
        names = [x.name.value for x in (*p.posonly_params, *p.params)]
        if isinstance(p.star_arg, cst.Param):
            names.append(p.star_arg.name.value)
        names += [x.name.value for x in p.kwonly_params]
        if p.star_kwarg is not None:
            names.append(p.star_kwarg.name.value)
        return names

    def _params(self):
        defaults, kwonly = {}, set()
        sig = inspect.signature(self.fn)
        for name, par in sig.parameters.items():
            if par.default is not inspect.Parameter.empty:
                defaults[name] = ir.Const(par.default)
            if par.kind in (par.KEYWORD_ONLY, par.VAR_KEYWORD):
                kwonly.add(name)
        return tuple(ir.Param(ir.Var(n), defaults.get(n), n in kwonly) for n in self.params)

    def _body(self):
        self.blocks.append([])
        doc = None
        if isinstance(self.node, cst.Lambda):
            value = self.atom(self.node.body)
            self.emit(ir.Return(value, self.loc(self.node.body)))
        else:
            stmts = list(self.node.body.body)
            if stmts and _is_docstring(stmts[0]):
                doc = stmts[0].body[0].value.evaluated_value
                stmts = stmts[1:]
            for s in stmts:
                self.stmt(s)
        return self.blocks.pop(), doc

    # -- helpers -----------------------------------------------------------
    def loc(self, node) -> ir.Loc:
        return self.parsed.loc_of(node)

    def emit(self, stmt) -> None:
        self.blocks[-1].append(stmt)

    def block(self, nodes) -> tuple:
        self.blocks.append([])
        for n in nodes:
            self.stmt(n)
        return tuple(self.blocks.pop())

    def temp(self) -> ir.Var:
        return ir.Var(self.names.temp())

    def atom(self, node) -> ir.Atom:
        """Lower an expression to an atom (assigning a temporary if needed)."""
        value = self.value(node)
        if isinstance(value, ir.Call):
            t = self.temp()
            self.emit(ir.Assign(t, value, self.loc(node)))
            return t
        return value

    # -- statements --------------------------------------------------------
    def stmt(self, node) -> None:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self.small_stmt(small)
            return
        if isinstance(node, cst.BaseSmallStatement):  # a body on the header's line
            self.small_stmt(node)
            return
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise unsupported(_STMT_NAMES.get(type(node).__name__, type(node).__name__),
                              self.loc(node))
        method(node)

    def small_stmt(self, node) -> None:
        loc = self.loc(node)
        if isinstance(node, cst.Assign):
            if len(node.targets) == 1:
                self.assign_to(node.targets[0].target, node.value, loc)
            else:
                src = self.atom(node.value)
                for t in node.targets:
                    self.assign_atom(t.target, src, loc)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.assign_to(node.target, node.value, loc)
        elif isinstance(node, cst.AugAssign):
            self.aug_assign(node, loc)
        elif isinstance(node, cst.Return):
            value = ir.Const(None) if node.value is None else self.atom(node.value)
            self.emit(ir.Return(value, loc))
        elif isinstance(node, cst.Expr):
            if isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString)):
                return  # a stray string literal (e.g. a comment-string)
            self.emit(ir.ExprStmt(self.value(node.value), loc))
        elif isinstance(node, cst.Pass):
            pass
        elif isinstance(node, cst.Break):
            self.emit(ir.Break(loc))
        elif isinstance(node, cst.Continue):
            self.emit(ir.Continue(loc))
        elif isinstance(node, cst.Raise):
            exc = None if node.exc is None else self.atom(node.exc)
            if node.cause is not None:  # raise X from Y: X with __cause__ Y
                if exc is None:
                    raise unsupported("'raise from' without an exception", loc)
                cause = self.atom(node.cause.item)  # (cst.From)
                t = self.temp()
                self.emit(ir.Assign(t, ir.Call(build.with_cause, (exc, cause)), loc))
                exc = t
            self.emit(ir.Raise(exc, loc))
        elif isinstance(node, cst.Assert):
            test = self.atom(node.test)
            msg = None if node.msg is None else self.atom(node.msg)
            self.emit(ir.Assert(test, msg, loc))
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            self.local_import(node, loc)
        elif isinstance(node, cst.Del):
            self.delete(node.target, node, loc)
        else:
            raise unsupported(_STMT_NAMES.get(type(node).__name__, type(node).__name__), loc)

    def delete(self, target, node, loc) -> None:
        """``del d[k]`` / ``del lst[i]``: ``d.pop(k)`` / ``lst.pop(i)`` (the same change and
        the same ``KeyError``/``IndexError``); ``del name``: nothing, where no later line
        and no later iteration of a loop around it reads the name (``_read_after``: the
        name is unbound only for code that would raise reading it); other forms are
        refused by name."""
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.delete(element.value, node, loc)
            return
        if isinstance(target, cst.Subscript) and len(target.slice) == 1 and \
                isinstance(target.slice[0].slice, cst.Index):
            base = self.atom(target.value)
            key = self.atom(target.slice[0].slice.value)
            self.emit(ir.ExprStmt(ir.Call(build.call_method, (base, ir.Const("pop"), key)),
                                  loc))
            return
        if isinstance(target, cst.Name) and not self._read_after(target.value, node):
            return
        raise unsupported("'del' statement" + (
            f" of {target.value!r}, which a later line or loop iteration may read"
            if isinstance(target, cst.Name) else " of an attribute or a slice"), loc)

    def _read_after(self, name, node) -> bool:
        """Whether ``name`` may be read after ``node`` deletes it: it appears on a later
        line, or in a loop around ``node`` other than first assigned there (``for ...:
        t = ...; ...; del t`` reads each iteration's own ``t``)."""
        positions = self.parsed.positions
        span = positions[node]
        first, last = (span.start.line, span.start.column), (span.end.line, span.end.column)
        loops, names, assigned = [], [], set()

        def at(n):
            return positions[n].start.line, positions[n].start.column

        def enter(n):
            if isinstance(n, (cst.For, cst.While)):
                inside = []
                walk(n, lambda m: inside.append(True) if m is node else None)
                if inside:
                    loops.append(positions[n])
            if isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Name) and \
                    n.target.value == name:
                assigned.add(at(n.target))
            if isinstance(n, cst.Name) and n.value == name and n in positions:
                if not first <= at(n) <= last:
                    names.append(at(n))

        walk(self.node, enter)
        if any(p > last for p in names):
            return True
        for loop in loops:
            begin, stop = (loop.start.line, loop.start.column), (loop.end.line, loop.end.column)
            inside = sorted(p for p in names if begin <= p <= stop)
            if inside and inside[0] not in assigned:
                return True
        return False

    def local_import(self, node, loc) -> None:
        """``import m``, ``import m.sub as s``, ``from m import f as g`` in the function: the
        names bound to what Python binds (imported now: a module runs once, and importing
        it again gives the same object), read as program constants, as a module-level
        import's would be.  A relative import, a name the function also assigns and a
        name imported as different objects (in two branches) are refused by name."""
        package = getattr(self.fn, "__module__", None) if self.fn is not None else None
        if isinstance(node, cst.ImportFrom) and (node.relative or isinstance(node.names,
                                                                            cst.ImportStar)):
            raise unsupported("'from . import' or 'import *' inside a differentiated "
                              "function (import the names at module level)", loc)
        for alias in node.names:
            dotted = _dotted(alias.name)
            bound = alias.asname.name.value if alias.asname is not None else None
            try:
                if isinstance(node, cst.Import):
                    module = importlib.import_module(dotted)
                    name = bound or dotted.split(".")[0]
                    value = module if bound else importlib.import_module(name)
                else:
                    source = _dotted(node.module)
                    module = importlib.import_module(source)
                    name = bound or dotted
                    value = getattr(module, dotted, None)
                    if value is None:
                        value = importlib.import_module(f"{source}.{dotted}")
            except ImportError as exc:
                raise ImportError(located(f"{exc} (an import in {package or 'the function'})",
                                          loc)) from None
            if name in self.locals:
                raise unsupported(f"'import' of {name!r}, a name the function also assigns",
                                  loc)
            if self.imported.get(name, value) is not value:
                raise unsupported(f"'import' binding {name!r} to different objects (on "
                                  "different paths): import each under its own name", loc)
            self.imported[name] = value

    def stmt_If(self, node) -> None:
        test = self.atom(node.test)
        body = self.block(node.body.body)
        orelse = ()
        if node.orelse is not None:
            if isinstance(node.orelse, cst.If):
                orelse = self.block([node.orelse])
            else:
                orelse = self.block(node.orelse.body.body)
        self.emit(ir.If(test, body, orelse, self.loc(node)))

    def stmt_For(self, node) -> None:
        loc = self.loc(node)
        if node.asynchronous is not None:
            raise unsupported("'async for'", loc)
        it = self.atom(node.iter)
        self.blocks.append([])
        if isinstance(node.target, cst.Name):
            target = ir.Var(node.target.value)
        else:
            target = self.temp()
            self.assign_atom(node.target, target, loc)
        for s in node.body.body:
            self.stmt(s)
        body = tuple(self.blocks.pop())
        orelse = self.block(node.orelse.body.body) if node.orelse is not None else ()
        self.emit(ir.For(target, it, body, orelse, loc))

    def stmt_While(self, node) -> None:
        self.blocks.append([])
        test = self.atom(node.test)
        test_body = tuple(self.blocks.pop())
        body = self.block(node.body.body)
        orelse = self.block(node.orelse.body.body) if node.orelse is not None else ()
        self.emit(ir.While(test_body, test, body, orelse, self.loc(node)))

    def stmt_Try(self, node) -> None:
        body = self.block(node.body.body)
        handlers = []
        for h in node.handlers:
            typ = None if h.type is None else self.atom(h.type)
            name = None
            if h.name is not None:
                name = ir.Var(h.name.name.value)
            handlers.append(ir.Handler(typ, name, self.block(h.body.body)))
        orelse = self.block(node.orelse.body.body) if node.orelse is not None else ()
        final = self.block(node.finalbody.body.body) if node.finalbody is not None else ()
        self.emit(ir.Try(body, tuple(handlers), orelse, final, self.loc(node)))

    def stmt_With(self, node) -> None:
        """``with cm: body`` for the context managers that do not change values
        (``NEUTRAL_CONTEXTS``): the body, as if the ``with`` line were not there (numpy's
        floating-point warnings that ``np.errstate`` would silence are not silenced);
        ``with contextlib.nullcontext(v) as name`` binds ``name = v``.  Any other
        context manager is refused by name."""
        loc = self.loc(node)
        if node.asynchronous is not None:
            raise unsupported("'async with'", loc)
        for item in node.items:
            cm = item.item
            fn = self.value(cm.func) if isinstance(cm, cst.Call) else None
            fn = fn.value if isinstance(fn, ir.Const) else None
            what = cst.Module([]).code_for_node(cm.func if isinstance(cm, cst.Call) else cm)
            if fn not in NEUTRAL_CONTEXTS:
                raise unsupported(f"'with' statement on {what}", self.loc(cm),
                                  "s2s reads 'with' only for context managers that do not "
                                  "change values: " + ", ".join(NEUTRAL_CONTEXTS.values()))
            self._check_context(fn, cm, item)
            if item.asname is not None:
                value = self.atom(cm.args[0].value) if cm.args else ir.Const(None)
                self.assign_atom(item.asname.name, value, loc)
        for s in node.body.body:
            self.stmt(s)

    def _check_context(self, fn, cm, item) -> None:
        """Refuse the arguments of a neutral context manager that would change what the
        body does (``np.errstate(all='raise')``, ``catch_warnings(record=True)``)."""
        loc = self.loc(cm)
        for arg in cm.args:
            kw = arg.keyword.value if arg.keyword is not None else None
            value = self.value(arg.value)
            const = value.value if isinstance(value, ir.Const) else _NOT_CONST
            if fn is np.errstate and const not in ("ignore", "warn", "print", "log", None):
                raise unsupported(f"'with np.errstate({kw}={const!r})'" if const is not
                                  _NOT_CONST else "'with np.errstate(...)' of a value known "
                                  "only at run time", loc,
                                  "only 'ignore', 'warn', 'print' and 'log', which do not "
                                  "change values; 'raise' and 'call' would")
            if fn is warnings.catch_warnings and kw == "record" and const is not False:
                raise unsupported("'with warnings.catch_warnings(record=True)'", loc,
                                  "the recorded warnings are a value s2s does not make")
        if item.asname is not None and fn is not contextlib.nullcontext:
            raise unsupported(f"'with ... as' on {getattr(fn, '__qualname__', fn)}",
                              self.loc(item.asname), "only contextlib.nullcontext(v) as name")

    def stmt_FunctionDef(self, node) -> None:
        """A nested ``def``: binds its name to a local function (``nested.py``)."""
        loc = self.loc(node)
        if node.asynchronous is not None:
            raise unsupported("nested 'async def'", loc)
        if node.decorators:
            raise unsupported("a decorator on a nested function", self.loc(node.decorators[0]),
                              "s2s inlines nested functions where they are called; define "
                              "the decorated function at module level")
        self.emit(ir.Assign(ir.Var(node.name.value), local_function(self, node, node.name.value),
                            loc))

    def stmt_Nonlocal(self, node) -> None:
        raise unsupported("'nonlocal' statement", self.loc(node),
                          "a nested function may read the enclosing function's variables but "
                          "not assign them; return the new value instead")

    # -- expressions -------------------------------------------------------
    def expr_Lambda(self, node):
        return local_function(self, node, "lambda_")


def _dotted(node) -> str:
    """``a.b.c`` of a ``Name`` or ``Attribute`` chain (an import's module path)."""
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return node.value


def _is_docstring(stmt) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


#: context managers a differentiated ``with`` may use: they do not change values
NEUTRAL_CONTEXTS = {np.errstate: "np.errstate", warnings.catch_warnings: "warnings.catch_warnings",
                    contextlib.nullcontext: "contextlib.nullcontext"}
_NOT_CONST = object()

_STMT_NAMES = {
    "Global": "'global' statement", "Nonlocal": "'nonlocal' statement",
    "FunctionDef": "nested function definition", "ClassDef": "class definition",
    "Match": "'match' statement", "TryStar": "'except*'",
}
def lower(fn) -> "tuple[ir.Function, Dict[str, FreeVar]]":
    """Lower a Python function (def or lambda) to IR plus its free variables."""
    return lower_with_statics(fn)[:2]


def lower_with_statics(fn):
    """``(ir_function, freevars, statics)``; see ``Lowerer.statics``."""
    parsed, node = find_function(fn)
    if isinstance(node, cst.FunctionDef) and node.asynchronous is not None:
        raise unsupported("'async def'", parsed.loc_of(node))
    lowerer = Lowerer(fn, parsed, node)
    func = lowerer.lower()
    return func, dict(lowerer.freevars), tuple(lowerer.statics)


def statics_unchanged(statics) -> bool:
    """True while every statically resolved free name still holds the same object."""
    for holder, name, value in statics:
        if name is None:
            try:
                if holder.cell_contents is not value:
                    return False
            except ValueError:
                return False
        elif holder.get(name, _MISSING) is not value:
            return False
    return True


set_template_lowering(lower)  # rule templates are read like user code
