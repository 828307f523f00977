"""The s2s intermediate representation.

A function is a tree of frozen dataclasses in three-address form:

* **Atoms** are the only operands: ``Var`` (a local name) and ``Const`` (a
  Python value fixed at specialisation time: a number, a string, a slice,
  a tuple of constants, a numpy array, a module-level callable...).
* **Expressions** (right-hand sides) are an atom or a ``Call`` of a Python
  callable on atoms.  Every operation is a call: ``a * b`` is
  ``Call(operator.mul, (a, b))``, ``x[i]`` is ``Call(operator.getitem, ...)``,
  building a tuple is ``Call(s2s_runtime.make_tuple, ...)``.  The callable
  is the key into the rule registry.
* **Statements** are ``Assign`` (one target), ``Unpack`` (several targets
  from one value), ``ExprStmt``, and structured control flow: ``If``,
  ``For``, ``While``, ``Break``, ``Continue``, ``Return``, ``Raise``,
  ``Try``, ``Assert``.  Blocks are tuples of statements.

Every statement carries a ``Loc``: the user's file, line, column and the
text of the source line, so diagnostics and generated comments can quote it.

Pass results live in fields of ``Function`` (e.g. ``kinds``), never in
string-keyed annotations.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Optional, Tuple, Union


@dataclass(frozen=True)
class Loc:
    """Where a statement came from in the user's source."""

    file: str
    line: int
    col: int
    text: str = ""  # the full source line, unstripped
    derived: bool = False  # True on statements a transform generated from this line

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


NO_LOC = Loc("<s2s>", 0, 0, "")


@dataclass(frozen=True)
class Var:
    """A local variable (every value in the IR has a name)."""

    name: str

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class Const:
    """A value fixed at specialisation time.

    Equality is identity of the wrapped value for unhashable values (arrays),
    value equality (with the type) otherwise.
    """

    value: Any

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Const):
            return NotImplemented
        a, b = self.value, other.value
        if a is b:
            return True
        if type(a) is not type(b):
            return False
        try:
            return bool(a == b)
        except Exception:
            return False

    def __hash__(self) -> int:
        try:
            return hash((type(self.value), self.value))
        except TypeError:
            return id(self.value)

    def __repr__(self) -> str:
        return f"Const({self.value!r})"


Atom = Union[Var, Const]


@dataclass(frozen=True)
class Call:
    """``fn(*args, **dict(kwargs))`` where ``fn`` is a Python callable."""

    fn: Callable
    args: Tuple[Atom, ...] = ()
    kwargs: Tuple[Tuple[str, Atom], ...] = ()

    def operands(self) -> Tuple[Atom, ...]:
        return self.args + tuple(v for _, v in self.kwargs) if self.kwargs else self.args


Expr = Union[Var, Const, Call]


@dataclass(frozen=True)
class Assign:
    target: Var
    value: Expr
    loc: Loc = NO_LOC


@dataclass(frozen=True)
class Unpack:
    """``a, b, c = value``: exactly ``len(targets)`` items from an iterable."""

    targets: Tuple[Var, ...]
    value: Atom
    loc: Loc = NO_LOC


@dataclass(frozen=True)
class ExprStmt:
    """An expression evaluated for its effect (e.g. a checked call)."""

    value: Expr
    loc: Loc = NO_LOC


@dataclass(frozen=True)
class If:
    test: Atom
    body: Tuple["Stmt", ...]
    orelse: Tuple["Stmt", ...] = ()
    loc: Loc = NO_LOC


@dataclass(frozen=True)
class For:
    """``for target in iter: body`` (``orelse`` runs when no ``break``)."""

    target: Var
    iter: Atom
    body: Tuple["Stmt", ...]
    orelse: Tuple["Stmt", ...] = ()
    loc: Loc = NO_LOC


@dataclass(frozen=True)
class While:
    """``while True`` with the test computed at the top of ``body``.

    ``test_body`` computes ``test``; the loop runs ``test_body`` then exits
    if ``test`` is false, else runs ``body``.
    """

    test_body: Tuple["Stmt", ...]
    test: Atom
    body: Tuple["Stmt", ...]
    orelse: Tuple["Stmt", ...] = ()
    loc: Loc = NO_LOC


@dataclass(frozen=True)
class Break:
    loc: Loc = NO_LOC


@dataclass(frozen=True)
class Continue:
    loc: Loc = NO_LOC


@dataclass(frozen=True)
class Return:
    value: Atom
    loc: Loc = NO_LOC


@dataclass(frozen=True)
class Raise:
    """``raise exc`` (``exc`` None re-raises the current exception)."""

    exc: Optional[Atom]
    loc: Loc = NO_LOC


@dataclass(frozen=True)
class Handler:
    """``except type as name: body`` (``type`` None catches everything)."""

    type: Optional[Atom]
    name: Optional[Var]
    body: Tuple["Stmt", ...]


@dataclass(frozen=True)
class Try:
    body: Tuple["Stmt", ...]
    handlers: Tuple[Handler, ...]
    orelse: Tuple["Stmt", ...] = ()
    finalbody: Tuple["Stmt", ...] = ()
    loc: Loc = NO_LOC


@dataclass(frozen=True)
class Assert:
    test: Atom
    msg: Optional[Atom] = None
    loc: Loc = NO_LOC


Stmt = Union[Assign, Unpack, ExprStmt, If, For, While, Break, Continue,
             Return, Raise, Try, Assert]


@dataclass(frozen=True)
class Param:
    """A parameter; ``default`` is a Const or None."""

    var: Var
    default: Optional[Const] = None
    kwonly: bool = False


@dataclass(frozen=True)
class Function:
    """A function in IR form.

    ``kinds`` maps variable names to their inferred ``Kind`` (filled by the
    kind-inference pass; empty before it).  ``source_name`` is the user's
    function name; ``loc`` where it was defined.
    """

    name: str
    params: Tuple[Param, ...]
    body: Tuple[Stmt, ...]
    loc: Loc = NO_LOC
    kinds: Tuple[Tuple[str, Any], ...] = ()
    docstring: Optional[str] = None
    temps: frozenset = frozenset()  # names of compiler temporaries (foldable)
    #: left as written by inlining until the specialisation's values are known
    #: (``passes/inline.needs_values``)
    needs_values: bool = False

    def with_body(self, body) -> "Function":
        return replace(self, body=tuple(body))

    def kind_map(self) -> dict:
        return dict(self.kinds)


#: the statements with nested blocks
COMPOUND = (If, For, While, Try)


def sub_blocks(stmt: Stmt):
    """The nested statement blocks of a compound statement, in source order."""
    if not isinstance(stmt, COMPOUND):
        return ()
    if isinstance(stmt, If):
        return (stmt.body, stmt.orelse)
    if isinstance(stmt, For):
        return (stmt.body, stmt.orelse)
    if isinstance(stmt, While):
        return (stmt.test_body, stmt.body, stmt.orelse)
    if isinstance(stmt, Try):
        return (stmt.body,) + tuple(h.body for h in stmt.handlers) + (stmt.orelse, stmt.finalbody)
    return ()


def with_blocks(stmt: Stmt, blocks) -> Stmt:
    """``stmt`` with its nested blocks replaced, in ``sub_blocks`` order."""
    blocks = [tuple(b) for b in blocks]
    if isinstance(stmt, (If, For)):
        return replace(stmt, body=blocks[0], orelse=blocks[1])
    if isinstance(stmt, While):
        return replace(stmt, test_body=blocks[0], body=blocks[1], orelse=blocks[2])
    if isinstance(stmt, Try):
        n = len(stmt.handlers)
        handlers = tuple(replace(h, body=b) for h, b in zip(stmt.handlers, blocks[1:1 + n]))
        return replace(stmt, body=blocks[0], handlers=handlers, orelse=blocks[1 + n],
                       finalbody=blocks[2 + n])
    return stmt


def map_stmts(body, fn) -> Tuple["Stmt", ...]:
    """``body`` with every statement, nested blocks included, replaced by ``fn(stmt)``
    (None drops it, a list splices its statements in); the nested blocks of what ``fn``
    returns are mapped in turn."""
    out = []
    for stmt in body:
        got = fn(stmt)
        for stmt in (got if isinstance(got, list) else () if got is None else (got,)):
            blocks = sub_blocks(stmt)
            if blocks:
                stmt = with_blocks(stmt, [map_stmts(b, fn) for b in blocks])
            out.append(stmt)
    return tuple(out)


def sub_blocks_flat(stmt: Stmt) -> Tuple["Stmt", ...]:
    """The statements of all nested blocks of ``stmt``, concatenated."""
    return tuple(s for block in sub_blocks(stmt) for s in block)


def stmt_uses(stmt: Stmt) -> Tuple[Atom, ...]:
    """Atoms read directly by a statement (not its nested blocks)."""
    if isinstance(stmt, (Assign, ExprStmt)):
        v = stmt.value
        return v.operands() if isinstance(v, Call) else (v,)
    if isinstance(stmt, Unpack):
        return (stmt.value,)
    if isinstance(stmt, If):
        return (stmt.test,)
    if isinstance(stmt, For):
        return (stmt.iter,)
    if isinstance(stmt, While):
        return (stmt.test,)
    if isinstance(stmt, Return):
        return (stmt.value,)
    if isinstance(stmt, Raise):
        return (stmt.exc,) if stmt.exc is not None else ()
    if isinstance(stmt, Assert):
        return (stmt.test,) + ((stmt.msg,) if stmt.msg is not None else ())
    if isinstance(stmt, Try):
        return tuple(h.type for h in stmt.handlers if h.type is not None)
    return ()


def stmt_defs(stmt: Stmt) -> Tuple[Var, ...]:
    """Variables written directly by a statement (not its nested blocks)."""
    if isinstance(stmt, Assign):
        return (stmt.target,)
    if isinstance(stmt, Unpack):
        return stmt.targets
    if isinstance(stmt, For):
        return (stmt.target,)
    if isinstance(stmt, Try):
        return tuple(h.name for h in stmt.handlers if h.name is not None)
    return ()


def walk(body):
    """Every statement in a block, depth first, in source order."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, COMPOUND):
            for block in sub_blocks(stmt):
                yield from walk(block)


def all_names(fn: Function) -> set:
    """Every variable name a function mentions (params, defs, uses)."""
    names = {p.var.name for p in fn.params}
    add = names.add
    for stmt in walk(fn.body):
        for v in stmt_defs(stmt):
            add(v.name)
        for a in stmt_uses(stmt):
            if isinstance(a, Var):
                add(a.name)
    return names


def use_counts(stmts) -> dict:
    """How often each variable is read in ``stmts`` (nested blocks included)."""
    counts: dict = {}
    for s in walk(stmts):
        for a in stmt_uses(s):
            if isinstance(a, Var):
                counts[a.name] = counts.get(a.name, 0) + 1
    return counts
