"""IR -> Python source.

Contract: ``emit_function(fn)`` accepts any ``ir.Function`` and returns an
``Emitted`` with the source text of one ``def``, the module aliases it uses
and the objects it refers to that have no public name.  Statements are built as
``_Stmt`` records (a line, its comments, the blocks under it; expressions as text
by ``expr.ExprBuilder``) and printed with four spaces per level, in libcst's
default layout.  Output is deterministic (a pure function of the IR), and the time
it takes is linear in the function's length.

Readability:

* compiler temporaries (``fn.temps``) used once, later in the same block,
  are folded back into the expression that uses them (small expressions
  only, never reordering evaluation, never moving primal work into adjoint
  code), parenthesised by precedence;
* a statement whose ``Loc`` is marked ``derived`` gets a comment
  ``# line N: <source>`` above the first statement of its group.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field, replace
from typing import Dict, List

import s2s_runtime as rt

from ..frontend import desugar
from ..ir import nodes as ir
from ..ir.names import NameGen
from .expr import AUG, ExprBuilder, call_depth
from .naming import callable_path


class _Stmt:
    """One printed statement: ``line`` (a simple statement, or a compound statement's
    header), comment lines above it, a comment at its end, and for a compound statement
    its block and the clauses after it (``(header, block)``: ``elif``, ``else``...)."""

    __slots__ = ("line", "leading", "trailing", "body", "clauses")

    def __init__(self, line: str, body=None, clauses=()):
        self.line = line
        self.leading: List[str] = []
        self.trailing = None
        self.body = body
        self.clauses = list(clauses)

    def render(self, indent: str, out: List[str]) -> None:
        for comment in self.leading:
            out.append(indent + comment)
        out.append(indent + self.line + ("" if self.trailing is None else "  " + self.trailing))
        if self.body is not None:
            _render(self.body, indent + "    ", out)
            for header, block in self.clauses:
                out.append(indent + header)
                _render(block, indent + "    ", out)


def _render(stmts, indent: str, out: List[str]) -> None:
    for s in stmts:
        s.render(indent, out)


@dataclass
class Emitted:
    """The source of one function and what it needs in its namespace."""

    source: str
    aliases: Dict[str, str]  # root ("np", "math", "rt") -> alias used in the text
    extern: Dict[str, object] = field(default_factory=dict)  # unnameable objects by name



class Emitter:
    def __init__(self, fn: ir.Function, fold=True, comments=True, locations=False):
        self.fn = fn
        self.fold = fold
        self.comments = comments
        self.locations = locations
        self.names = NameGen(ir.all_names(fn))
        self.aliases: Dict[str, str] = {}
        self.extern: Dict[str, object] = {}
        self.x = ExprBuilder(self)
        self.uses = ir.use_counts(fn.body)
        self.loc_table: List[tuple] = []

    # -- names (ExprBuilder's namer) ------------------------------------------------
    def alias(self, root: str) -> str:
        if root not in self.aliases:
            self.aliases[root] = self.names.fresh(root)
        return self.aliases[root]

    def name_of(self, obj) -> str:
        path = callable_path(obj)
        if path is not None:
            root, name = path
            return name if root == "" else f"{self.alias(root)}.{name}"
        for k, v in self.extern.items():
            if v is obj:
                return k
        base = "_" + "".join(ch if ch.isalnum() else "_" for ch in getattr(obj, "__qualname__", "obj"))
        name = self.names.fresh(base)
        self.extern[name] = obj
        return name

    # -- the function --------------------------------------------------------------
    def emit(self) -> Emitted:
        fn = self.fn
        params, kwonly = [], []
        for p in fn.params:
            text = p.var.name if p.default is None \
                else p.var.name + "=" + self.x.const(p.default.value)[0]
            (kwonly if p.kwonly else params).append(text)
        if kwonly:
            params += ["*"] + kwonly
        body = self.block(fn.body)
        if fn.docstring:
            body.insert(0, _Stmt(repr(fn.docstring)))
        out: List[str] = []
        _Stmt(f"def {fn.name}({', '.join(params)}):", body or _pass()).render("", out)
        out.append("")
        return Emitted("\n".join(out), dict(self.aliases), dict(self.extern))

    def block(self, stmts) -> List[_Stmt]:
        out: List[_Stmt] = []
        folds: Dict[str, ir.Call] = {}
        last_line = None
        stmts = self._merge_rebinds(list(stmts))
        plan = self._fold_plan(stmts) if self.fold else set()
        for i, s in enumerate(stmts):
            if i in plan:
                folds[s.target.name] = s.value
                continue
            loc = getattr(s, "loc", None)
            nodes = self.stmt(s, folds)
            if self.locations == "table" and loc is not None and loc.line:
                self.loc_table.append((loc, s))  # ``line_locations``: an index, not a position
                nodes[0].trailing = f"# @{len(self.loc_table) - 1}"
            elif self.locations and loc is not None and loc.line:
                nodes[0].trailing = f"# {loc.line}:{loc.col + 1}"
            if self.comments and loc is not None and getattr(loc, "derived", False) and loc.line:
                # one comment per run of derived code from the same source line, even when
                # primal statements sit between (forward mode interleaves them)
                if loc.line != last_line:
                    nodes[0].leading.append(f"# line {loc.line}: {loc.text.strip()}")
                last_line = loc.line
            out += nodes
        return out

    def _merge_rebinds(self, stmts):
        """``t = index_set(y, i, v); y = t`` (``t`` read once) -> ``y = index_set(y, i, v)``,
        printed ``y[i] = v``."""
        out = []
        for s in stmts:
            prev = out[-1] if out else None
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) \
                    and isinstance(prev, ir.Assign) and prev.target == s.value \
                    and isinstance(prev.value, ir.Call) and prev.value.fn is rt.index_set \
                    and prev.value.args[0] == s.target and self.uses.get(s.value.name) == 1:
                out[-1] = replace(prev, target=s.target)
                continue
            out.append(s)
        return out

    # -- folding --------------------------------------------------------------------
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
        if call_depth(call, folds) > 1:
            return False
        return len(self.x.call(call, _reachable(call, folds))[0]) <= 40

    def _use_index(self, stmts, i):
        """Index of the statement of this block that reads temporary ``stmts[i]``, if foldable."""
        s = stmts[i]
        if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
                and s.target.name in self.fn.temps and self.uses.get(s.target.name) == 1) \
                or s.value.fn is rt.index_set:  # printed as a statement: y[i] = v
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
            if not isinstance(later, ir.COMPOUND):
                if any(v.name in operands for v in ir.stmt_defs(later)):
                    return None
                continue
            if isinstance(later, ir.While) and later.test == s.target:
                return None
            inner = list(ir.walk(ir.sub_blocks_flat(later)))
            defs = {v.name for st in [later, *inner] for v in ir.stmt_defs(st)}
            if defs & operands or any(s.target in ir.stmt_uses(x) for x in inner):
                return None
        return None

    def _fold_all(self, stmts):
        """Folds for a block made only of single-use temporaries, else None."""
        folds = {}
        for s in stmts:
            if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
                    and s.target.name in self.fn.temps and self.uses.get(s.target.name) == 1) \
                    or s.value.fn is rt.index_set:
                return None
            folds[s.target.name] = s.value
        return folds

    # -- statements -----------------------------------------------------------------
    def stmt(self, s, folds) -> List[_Stmt]:
        x = self.x
        if isinstance(s, ir.Assign):
            v = s.value
            if isinstance(v, ir.Call) and v.fn in desugar.PLAIN_OF_INPLACE and len(v.args) == 2:
                # t = operator.iadd(a, v)  ->  t = a; t += v   (same object semantics)
                out = [] if v.args[0] == s.target else [
                    _Stmt(s.target.name + " = " + x.atom(v.args[0], folds)[0])]
                return out + [_Stmt(s.target.name + AUG[v.fn] + x.atom(v.args[1], folds)[0])]
            if isinstance(v, ir.Call) and v.fn is rt.index_set and len(v.args) == 3 \
                    and isinstance(v.args[0], ir.Var) and v.args[1] != ir.Const(Ellipsis):
                # t = rt.index_set(y, i, v)  ->  y[i] = v; t = y   (the write is in place)
                target = x.subscript(v.args[0], v.args[1], folds)
                write = _Stmt(target + " = " + x.atom(v.args[2], folds)[0])
                rebind = [] if v.args[0] == s.target or not self.uses.get(s.target.name) else [
                    _Stmt(s.target.name + " = " + v.args[0].name)]
                return [write] + rebind
            return [_Stmt(s.target.name + " = " + x.expr(v, folds))]
        if isinstance(s, ir.Unpack):
            names = [t.name for t in s.targets]
            targets = names[0] + "," if len(names) == 1 else ", ".join(names)
            return [_Stmt(targets + " = " + x.atom(s.value, folds)[0])]
        if isinstance(s, ir.ExprStmt):
            v = s.value
            if isinstance(v, ir.Call) and v.fn is operator.setitem and len(v.args) == 3:
                target = x.subscript(v.args[0], v.args[1], folds)
                return [_Stmt(target + " = " + x.atom(v.args[2], folds)[0])]
            if isinstance(v, ir.Call) and v.fn is setattr and len(v.args) == 3:
                target = x.wrap(x.atom(v.args[0], folds), 15) + "." + v.args[1].value
                return [_Stmt(target + " = " + x.atom(v.args[2], folds)[0])]
            return [_Stmt(x.expr(v, folds))]
        if isinstance(s, ir.Return):
            return [_Stmt("return " + x.atom(s.value, folds)[0])]
        if isinstance(s, ir.If):
            return [self._if(s, folds)]
        if isinstance(s, ir.For):
            head = f"for {s.target.name} in {x.atom(s.iter, folds)[0]}:"
            body = self.block(s.body) or _pass()
            return [_Stmt(head, body, [("else:", self.block(s.orelse))] if s.orelse else ())]
        if isinstance(s, ir.While):
            return [self._while(s)]
        if isinstance(s, ir.Break):
            return [_Stmt("break")]
        if isinstance(s, ir.Continue):
            return [_Stmt("continue")]
        if isinstance(s, ir.Raise):
            return [_Stmt("raise" if s.exc is None else "raise " + x.atom(s.exc, folds)[0])]
        if isinstance(s, ir.Assert):
            test = x.atom(s.test, folds)[0]
            return [_Stmt("assert " + test if s.msg is None
                          else "assert " + test + ", " + x.atom(s.msg, folds)[0])]
        if isinstance(s, ir.Try):
            handlers = []
            for h in s.handlers:
                head = "except" if h.type is None else "except " + x.atom(h.type, {})[0]
                if h.name is not None:
                    head += " as " + h.name.name
                handlers.append((head + ":", self.block(h.body) or _pass()))
            body = self.block(s.body) or _pass()
            if s.orelse:
                handlers.append(("else:", self.block(s.orelse)))
            if s.finalbody:
                handlers.append(("finally:", self.block(s.finalbody)))
            return [_Stmt("try:", body, handlers)]
        raise TypeError(f"cannot emit {type(s).__name__}")

    def _if(self, s: ir.If, folds, keyword="if") -> _Stmt:
        clauses = []
        if s.orelse:
            if len(s.orelse) == 1 and isinstance(s.orelse[0], ir.If):
                elif_ = self._if(s.orelse[0], {}, "elif")  # its clauses follow this one's
                clauses = [(elif_.line, elif_.body)] + elif_.clauses
            else:
                clauses = [("else:", self.block(s.orelse))]
        head = f"{keyword} {self.x.atom(s.test, folds)[0]}:"
        return _Stmt(head, self.block(s.body) or _pass(), clauses)

    def _while(self, s: ir.While) -> _Stmt:
        folds = self._fold_all(s.test_body) if self.fold else None
        if folds is not None and not s.orelse:
            head = f"while {self.x.atom(s.test, folds)[0]}:"
            return _Stmt(head, self.block(s.body) or _pass())
        # while True: <test_body>; if not test: <orelse>; break; <body>
        exit_ = _Stmt("if not " + self.x.wrap(self.x.atom(s.test, {}), 5) + ":",
                      self.block(s.orelse) + [_Stmt("break")])
        body = self.block(s.test_body) + [exit_] + self.block(s.body)
        return _Stmt("while True:", body)


def _reachable(call: ir.Call, folds) -> dict:
    """The folds ``call``'s text reads (its folded operands, theirs, ...): a copy the
    builder may pop from, the size of the expression and not of the block."""
    out, todo = {}, [call]
    while todo:
        for a in todo.pop().operands():
            if isinstance(a, ir.Var) and a.name in folds and a.name not in out:
                out[a.name] = folds[a.name]
                todo.append(folds[a.name])
    return out


def _pass():
    return [_Stmt("pass")]


def line_locations(fn: ir.Function) -> Dict[int, tuple]:
    """Line number in ``emit_function(fn)``'s text -> ``(the user's Loc, the IR
    statement)`` of the statement written there (continuation lines and headers
    without a statement of their own map to the statement above).  The text is emitted again with an index comment on each
    statement: comments at a line's end leave the lines where they were."""
    em = Emitter(fn, True, True, "table")
    text = em.emit().source
    out: Dict[int, ir.Loc] = {}
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        head, sep, tail = line.rpartition("# @")
        if sep and tail.isdigit() and int(tail) < len(em.loc_table):
            current = em.loc_table[int(tail)]
        if current is not None:
            out[number] = current
    return out


def emit_function(fn: ir.Function, fold=True, comments=True, locations=False) -> Emitted:
    """Python source for ``fn`` (see the module docstring).

    ``fold=False`` keeps every three-address statement; ``locations=True``
    appends ``# line:col`` of the user's source to each statement.
    """
    return Emitter(fn, fold, comments, locations).emit()

