"""IR -> libcst -> Python source.

Contract: ``emit_function(fn)`` accepts any ``ir.Function`` and returns an
``Emitted`` with the source text of one ``def``, the module aliases it uses
and the objects it refers to that have no public name.  Output is
deterministic (a pure function of the IR).

Readability:

* compiler temporaries (``fn.temps``) used once, later in the same block,
  with no intervening redefinition of their operands, are folded back into
  the expression that uses them, parenthesised by precedence;
* operators print infix, ``getitem`` prints as subscript with slice syntax,
  ``make_tuple``/``make_list``/``make_dict`` print as literals;
* a statement whose ``Loc`` is marked ``derived`` gets a comment
  ``# line N: <source>`` above the first statement of its group.
"""
from __future__ import annotations

import inspect
import math
import operator
from dataclasses import dataclass, field
from typing import Dict, List

import libcst as cst
import numpy as np

from s2s_runtime import build

from ..frontend import desugar
from ..ir import nodes as ir
from ..ir.names import NameGen
from .naming import callable_path

_INFIX = {
    operator.add: ("+", 10), operator.sub: ("-", 10), operator.mul: ("*", 11),
    operator.truediv: ("/", 11), operator.floordiv: ("//", 11), operator.mod: ("%", 11),
    operator.matmul: ("@", 11), operator.pow: ("**", 13), operator.and_: ("&", 8),
    operator.or_: ("|", 6), operator.xor: ("^", 7), operator.lshift: ("<<", 9),
    operator.rshift: (">>", 9),
    operator.lt: ("<", 5), operator.le: ("<=", 5), operator.gt: (">", 5),
    operator.ge: (">=", 5), operator.eq: ("==", 5), operator.ne: ("!=", 5),
    operator.is_: ("is", 5), operator.is_not: ("is not", 5),
}
_PREFIX = {operator.neg: ("-", 12), operator.pos: ("+", 12), operator.invert: ("~", 12),
           operator.not_: ("not ", 4)}
_ATOM = 16


@dataclass
class Emitted:
    """The source of one function and what it needs in its namespace."""

    source: str
    aliases: Dict[str, str]  # root ("np", "math", "rt") -> alias used in the text
    extern: Dict[str, object] = field(default_factory=dict)  # unnameable objects by name


class _Text:
    """Renders IR atoms and calls to Python expression strings with precedence."""

    def __init__(self, emitter):
        self.e = emitter

    def atom(self, a, folds) -> tuple:
        if isinstance(a, ir.Var):
            if a.name in folds:
                return self.call(folds.pop(a.name), folds)
            return a.name, _ATOM
        return self.const(a.value)

    def wrap(self, sub, min_prec) -> str:
        text, prec = sub
        return f"({text})" if prec < min_prec else text

    def const(self, v) -> tuple:
        if v is None or v is True or v is False or v is Ellipsis:
            return {None: "None", True: "True", False: "False"}.get(v, "...") if v is not Ellipsis else "...", _ATOM
        if isinstance(v, bool):
            return repr(v), _ATOM
        if isinstance(v, (int, float)) and not isinstance(v, bool) and type(v) in (int, float):
            if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
                name = "inf" if math.isinf(v) else "nan"
                text = f"{self.e.alias('math')}.{name}"
                return (f"-{text}", 12) if v < 0 else (text, _ATOM)
            text = repr(v)
            return (text, 12) if text.startswith("-") else (text, _ATOM)
        if type(v) is complex:
            return (repr(v), _ATOM) if not repr(v).startswith("-") else (f"({v!r})", _ATOM)
        if isinstance(v, str) or isinstance(v, bytes):
            return repr(v), _ATOM
        if isinstance(v, slice):
            return f"slice({self.const(v.start)[0]}, {self.const(v.stop)[0]}, {self.const(v.step)[0]})", _ATOM
        if isinstance(v, tuple) and not hasattr(v, "_fields"):
            items = [self.const(x)[0] for x in v]
            return ("(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"), _ATOM
        if isinstance(v, list):
            return "[" + ", ".join(self.const(x)[0] for x in v) + "]", _ATOM
        if isinstance(v, dict):
            return "{" + ", ".join(f"{self.const(k)[0]}: {self.const(x)[0]}" for k, x in v.items()) + "}", _ATOM
        if isinstance(v, np.ndarray):
            return f"{self.e.alias('np')}.array({v.tolist()!r}, dtype={self.e.alias('np')}.{v.dtype.name})", _ATOM
        if isinstance(v, np.generic):
            return f"{self.e.alias('np')}.{v.dtype.name}({v.item()!r})", _ATOM
        if isinstance(v, np.dtype):
            return f"{self.e.alias('np')}.dtype({v.name!r})", _ATOM
        return self.e.name_of(v), _ATOM

    def index(self, idx, folds) -> str:
        """The text inside ``x[...]``."""
        if isinstance(idx, ir.Const):
            if isinstance(idx.value, tuple):
                if not idx.value:
                    return "()"
                parts = [self.index_part(ir.Const(p), folds) for p in idx.value]
                return ", ".join(parts) + ("," if len(parts) == 1 else "")
            return self.index_part(idx, folds)
        if isinstance(idx, ir.Var) and idx.name in folds and folds[idx.name].fn is build.make_tuple:
            call = folds.pop(idx.name)
            parts = [self.index_part(p, folds) for p in call.args]
            return ", ".join(parts) + ("," if len(parts) == 1 else "")
        return self.index_part(idx, folds)

    def index_part(self, p, folds) -> str:
        if isinstance(p, ir.Const) and isinstance(p.value, slice):
            return self._slice([ir.Const(p.value.start), ir.Const(p.value.stop), ir.Const(p.value.step)], folds)
        if isinstance(p, ir.Var) and p.name in folds and folds[p.name].fn is slice:
            call = folds.pop(p.name)
            args = list(call.args) + [ir.Const(None)] * (3 - len(call.args))
            return self._slice(args, folds)
        return self.atom(p, folds)[0]

    def _slice(self, bounds, folds) -> str:
        lo, hi, st = ("" if isinstance(b, ir.Const) and b.value is None else self.atom(b, folds)[0]
                      for b in bounds)
        return f"{lo}:{hi}" + (f":{st}" if st else "")

    def call(self, c: ir.Call, folds) -> tuple:
        fn, args = c.fn, c.args
        if fn in _INFIX and len(args) == 2 and not c.kwargs:
            sym, prec = _INFIX[fn]
            if prec == 13:  # ** is right-associative and binds tighter than unary on its left
                left = self.wrap(self.atom(args[0], folds), 14)
                right = self.wrap(self.atom(args[1], folds), 12)
            elif prec == 5:
                left = self.wrap(self.atom(args[0], folds), 6)
                right = self.wrap(self.atom(args[1], folds), 6)
            else:
                left = self.wrap(self.atom(args[0], folds), prec)
                right = self.wrap(self.atom(args[1], folds), prec + 1)
            return f"{left} {sym} {right}", prec
        if fn in _PREFIX and len(args) == 1:
            sym, prec = _PREFIX[fn]
            return f"{sym}{self.wrap(self.atom(args[0], folds), prec)}", prec
        if fn is desugar.contains and len(args) == 2:
            return f"{self.wrap(self.atom(args[1], folds), 6)} in {self.wrap(self.atom(args[0], folds), 6)}", 5
        if fn is desugar.not_contains and len(args) == 2:
            return f"{self.wrap(self.atom(args[1], folds), 6)} not in {self.wrap(self.atom(args[0], folds), 6)}", 5
        if fn is operator.getitem and len(args) == 2:
            base = self.wrap(self.atom(args[0], folds), _ATOM - 1)
            return f"{base}[{self.index(args[1], folds)}]", 15
        if fn is build.make_tuple:
            items = [self.atom(a, folds)[0] for a in args]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")", _ATOM
        if fn is build.make_list:
            return "[" + ", ".join(self.atom(a, folds)[0] for a in args) + "]", _ATOM
        if fn is build.make_dict:
            parts = [self.atom(a, folds)[0] for a in args]
            return "{" + ", ".join(f"{k}: {v}" for k, v in zip(parts[::2], parts[1::2])) + "}", _ATOM
        if fn is getattr and len(args) == 2 and isinstance(args[1], ir.Const) \
                and isinstance(args[1].value, str) and args[1].value.isidentifier():
            return f"{self.wrap(self.atom(args[0], folds), 15)}.{args[1].value}", 15
        if fn is build.call_method and len(args) >= 2 and isinstance(args[1], ir.Const):
            base = self.wrap(self.atom(args[0], folds), 15)
            rest = [self.atom(a, folds)[0] for a in args[2:]]
            rest += [f"{k}={self.atom(v, folds)[0]}" for k, v in c.kwargs]
            name = "" if args[1].value == "__call__" else "." + args[1].value
            return f"{base}{name}({', '.join(rest)})", 15
        head = self.e.name_of(fn)
        args = _drop_default_tail(fn, args)
        texts = [self.atom(a, folds)[0] for a in args]
        texts += [f"{k}={self.atom(v, folds)[0]}" for k, v in c.kwargs]
        return f"{head}({', '.join(texts)})", 15

    def expr(self, value, folds) -> str:
        if isinstance(value, ir.Call):
            return self.call(value, folds)[0]
        return self.atom(value, folds)[0]


class Emitter:
    def __init__(self, fn: ir.Function, fold=True, comments=True, locations=False):
        self.fn = fn
        self.fold = fold
        self.comments = comments
        self.locations = locations
        self.names = NameGen(ir.all_names(fn))
        self.aliases: Dict[str, str] = {}
        self.extern: Dict[str, object] = {}
        self.text = _Text(self)
        self.uses = _use_counts(fn)

    def alias(self, root: str) -> str:
        if root not in self.aliases:
            self.aliases[root] = self.names.fresh(root)
        return self.aliases[root]

    def name_of(self, obj) -> str:
        path = callable_path(obj)
        if path is not None:
            root, name = path
            return name if root == "" else f"{self.alias(root)}.{name}"
        base = "_" + "".join(ch if ch.isalnum() else "_" for ch in getattr(obj, "__qualname__", "obj"))
        for k, v in self.extern.items():
            if v is obj:
                return k
        name = self.names.fresh(base)
        self.extern[name] = obj
        return name

    # -- statements ----------------------------------------------------------
    def emit(self) -> Emitted:
        fn = self.fn
        params = []
        kwonly = []
        for p in fn.params:
            text = p.var.name
            if p.default is not None:
                text += "=" + self.text.const(p.default.value)[0]
            (kwonly if getattr(p, "kwonly", False) else params).append(text)
        sig = ", ".join(params + (["*"] + kwonly if kwonly else []))
        lines = [f"def {fn.name}({sig}):"]
        if fn.docstring:
            lines.append("    " + repr(fn.docstring))
        body = self.block(fn.body, 1)
        lines += body or ["    pass"]
        src = "\n".join(lines) + "\n"
        cst.parse_module(src)  # the emitted text must be valid Python
        return Emitted(src, dict(self.aliases), dict(self.extern))

    def block(self, stmts, depth) -> List[str]:
        out: List[str] = []
        folds: Dict[str, ir.Call] = {}
        pad = "    " * depth
        last_line = None
        stmts = list(stmts)
        plan = self._fold_plan(stmts) if self.fold else set()
        for i, s in enumerate(stmts):
            if i in plan:
                folds[s.target.name] = s.value
                continue
            loc = getattr(s, "loc", None)
            if self.comments and loc is not None and getattr(loc, "derived", False) and loc.line:
                if loc.line != last_line:
                    out.append(f"{pad}# line {loc.line}: {loc.text.strip()}")
                last_line = loc.line
            else:
                last_line = None
            lines = self.stmt(s, depth, folds)
            if self.locations and loc is not None and loc.line:
                lines[0] += f"  # {loc.line}:{loc.col + 1}"
            out += lines
        return out

    def _fold_plan(self, stmts) -> set:
        """Indices of statements to fold into their single later use.

        Folding must not reorder evaluation: a temporary defined at ``i`` and
        used at ``j`` folds only if every statement between them folds too,
        into a use no later than ``j``.
        """
        uses, folds = {}, {}
        for i, s in enumerate(stmts):
            j = self._use_index(stmts, i)
            if j is not None and self._short(s.value, folds):
                uses[i] = j
                folds[s.target.name] = s.value
        changed = True
        while changed:
            changed = False
            for i, j in list(uses.items()):
                if any(k not in uses or uses[k] > j for k in range(i + 1, j)):
                    del uses[i]
                    changed = True
        return set(uses)

    def _short(self, call, folds) -> bool:
        """Fold only small expressions: one function call at most, about 40 characters."""
        if _call_depth(call, folds) > 1:
            return False
        return len(self.text.call(call, dict(folds))[0]) <= 40

    def _use_index(self, stmts, i):
        """Index of the statement of this block that reads temporary ``stmts[i]``, if foldable."""
        s = stmts[i]
        if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
                and s.target.name in self.fn.temps and self.uses.get(s.target.name) == 1):
            return None
        operands = {a.name for a in s.value.operands() if isinstance(a, ir.Var)}
        derived = getattr(s.loc, "derived", False)
        for j in range(i + 1, len(stmts)):
            later = stmts[j]
            if s.target in ir.stmt_uses(later):
                # never fold primal work into adjoint code (or back)
                same_side = isinstance(later, ir.Return) or getattr(
                    getattr(later, "loc", None), "derived", False) == derived
                return j if same_side else None
            if isinstance(later, ir.While) and later.test == s.target:
                return None
            defs = {v.name for st in [later, *ir.walk(ir.sub_blocks_flat(later))] for v in ir.stmt_defs(st)}
            if defs & operands or any(s.target in ir.stmt_uses(x) for x in ir.walk(ir.sub_blocks_flat(later))):
                return None
        return None

    def _fold_all(self, stmts):
        """Folds for a block made only of single-use temporaries, else None."""
        folds = {}
        for s in stmts:
            if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
                    and s.target.name in self.fn.temps and self.uses.get(s.target.name) == 1):
                return None
            folds[s.target.name] = s.value
        return folds

    def stmt(self, s, depth, folds) -> List[str]:
        pad = "    " * depth
        t = self.text
        if isinstance(s, ir.Assign):
            v = s.value
            if isinstance(v, ir.Call) and v.fn in desugar.PLAIN_OF_INPLACE and len(v.args) == 2:
                # x = operator.iadd(y, v)  ->  x = y; x += v   (same object semantics)
                sym = _INFIX[desugar.PLAIN_OF_INPLACE[v.fn]][0]
                lines = [] if v.args[0] == s.target else \
                    [f"{pad}{s.target.name} = {t.atom(v.args[0], folds)[0]}"]
                return lines + [f"{pad}{s.target.name} {sym}= {t.atom(v.args[1], folds)[0]}"]
            return [f"{pad}{s.target.name} = {t.expr(s.value, folds)}"]
        if isinstance(s, ir.Unpack):
            targets = ", ".join(v.name for v in s.targets) + ("," if len(s.targets) == 1 else "")
            return [f"{pad}{targets} = {t.atom(s.value, folds)[0]}"]
        if isinstance(s, ir.ExprStmt):
            v = s.value
            if isinstance(v, ir.Call) and v.fn is operator.setitem and len(v.args) == 3:
                base = t.wrap(t.atom(v.args[0], folds), 15)
                idx = t.index(v.args[1], folds)
                return [f"{pad}{base}[{idx}] = {t.atom(v.args[2], folds)[0]}"]
            if isinstance(v, ir.Call) and v.fn is setattr and len(v.args) == 3:
                return [f"{pad}{t.atom(v.args[0], folds)[0]}.{v.args[1].value} = {t.atom(v.args[2], folds)[0]}"]
            return [f"{pad}{t.expr(v, folds)}"]
        if isinstance(s, ir.Return):
            return [f"{pad}return {t.atom(s.value, folds)[0]}"]
        if isinstance(s, ir.If):
            out = [f"{pad}if {t.atom(s.test, folds)[0]}:"]
            out += self.block(s.body, depth + 1) or [pad + "    pass"]
            if s.orelse:
                if len(s.orelse) == 1 and isinstance(s.orelse[0], ir.If):
                    inner = self.stmt(s.orelse[0], depth, {})
                    out += [f"{pad}el{inner[0].lstrip()}"] + inner[1:]
                else:
                    out += [f"{pad}else:"] + self.block(s.orelse, depth + 1)
            return out
        if isinstance(s, ir.For):
            out = [f"{pad}for {s.target.name} in {t.atom(s.iter, folds)[0]}:"]
            out += self.block(s.body, depth + 1) or [pad + "    pass"]
            if s.orelse:
                out += [f"{pad}else:"] + self.block(s.orelse, depth + 1)
            return out
        if isinstance(s, ir.While):
            return self._while(s, depth)
        if isinstance(s, ir.Break):
            return [f"{pad}break"]
        if isinstance(s, ir.Continue):
            return [f"{pad}continue"]
        if isinstance(s, ir.Raise):
            return [f"{pad}raise" + ("" if s.exc is None else " " + t.atom(s.exc, folds)[0])]
        if isinstance(s, ir.Assert):
            msg = "" if s.msg is None else ", " + t.atom(s.msg, folds)[0]
            return [f"{pad}assert {t.atom(s.test, folds)[0]}{msg}"]
        if isinstance(s, ir.Try):
            out = [f"{pad}try:"] + (self.block(s.body, depth + 1) or [pad + "    pass"])
            for h in s.handlers:
                head = "except"
                if h.type is not None:
                    head += " " + t.atom(h.type, {})[0]
                    if h.name is not None:
                        head += " as " + h.name.name
                out += [f"{pad}{head}:"] + (self.block(h.body, depth + 1) or [pad + "    pass"])
            if s.orelse:
                out += [f"{pad}else:"] + self.block(s.orelse, depth + 1)
            if s.finalbody:
                out += [f"{pad}finally:"] + self.block(s.finalbody, depth + 1)
            return out
        raise TypeError(f"cannot emit {type(s).__name__}")

    def _while(self, s, depth) -> List[str]:
        pad = "    " * depth
        inner = "    " * (depth + 1)
        folds = self._fold_all(s.test_body) if self.fold else None
        if folds is not None and not s.orelse:
            out = [f"{pad}while {self.text.atom(s.test, folds)[0]}:"]
            return out + (self.block(s.body, depth + 1) or [inner + "pass"])
        test_lines = self.block(s.test_body, depth + 1)
        # while True: <test_body>; if not test: <orelse>; break; <body>
        out = [f"{pad}while True:"] + test_lines
        out.append(f"{inner}if not {self.text.wrap(self.text.atom(s.test, {}), 5)}:")
        out += self.block(s.orelse, depth + 2)
        out.append(f"{inner}    break")
        return out + self.block(s.body, depth + 1)


_SIGNATURES: Dict[int, object] = {}


def _drop_default_tail(fn, args):
    """Trailing constant arguments equal to an s2s_runtime helper's defaults, dropped."""
    if not (getattr(fn, "__module__", "") or "").startswith("s2s_runtime"):
        return args
    sig = _SIGNATURES.get(id(fn))
    if sig is None:
        sig = _SIGNATURES[id(fn)] = list(inspect.signature(fn).parameters.values())
    args = list(args)
    while args and len(args) <= len(sig):
        a, p = args[-1], sig[len(args) - 1]
        if not (isinstance(a, ir.Const) and p.default is not inspect.Parameter.empty
                and type(a.value) is type(p.default) and a.value == p.default):
            break
        args.pop()
    return tuple(args)


def _call_depth(call: ir.Call, folds) -> int:
    """Nesting depth of function calls (infix operators and subscripts count 0)."""
    own = 0 if (call.fn in _INFIX or call.fn in _PREFIX or call.fn is operator.getitem
                or call.fn in (build.make_tuple, build.make_list, build.make_dict)) else 1
    inner = max((_call_depth(folds[a.name], folds) for a in call.operands()
                 if isinstance(a, ir.Var) and a.name in folds), default=0)
    return own + inner


def _use_counts(fn: ir.Function) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for s in ir.walk(fn.body):
        for a in ir.stmt_uses(s):
            if isinstance(a, ir.Var):
                counts[a.name] = counts.get(a.name, 0) + 1
    return counts


def emit_function(fn: ir.Function, fold=True, comments=True, locations=False) -> Emitted:
    """Python source for ``fn`` (see the module docstring).

    ``fold=False`` keeps every three-address statement; ``locations=True``
    appends ``# line:col`` of the user's source to each statement.
    """
    return Emitter(fn, fold, comments, locations).emit()
