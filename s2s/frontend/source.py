"""Finding the libcst node of a Python function from the function object.

The whole file a function was defined in is read through ``linecache`` (``registered.py``: so
generated code registered there is found too), parsed once with libcst and
cached; the function's node is then located by position:

* a ``def``: the ``FunctionDef`` whose decorator or ``def`` line is the code
  object's first line and whose name matches;
* a ``lambda``: the ``Lambda`` nodes starting on that line; when several
  share it, the one whose parameters match and whose body columns contain
  the code object's instruction positions (Python >= 3.11), falling back to
  comparing the bytecode of each candidate compiled on its own.
"""
from __future__ import annotations

import __future__
import ast
import dis
import hashlib
import inspect
import textwrap
from dataclasses import dataclass
from typing import Dict, List, Tuple, Union

import libcst as cst

from ..errors import SourceUnavailableError
from .cst_fast import Positions, parse_module, walk
from .registered import lines_of
from .shipped import filename_of


@dataclass
class ParsedSource:
    """A parsed file: its module, node positions (absolute lines) and lines."""

    filename: str
    lines: List[str]
    module: cst.Module
    positions: Positions  # node -> libcst CodeRange
    line_offset: int = 0  # added to libcst lines to get file lines
    col_offset: int = 0  # added to libcst columns (dedented snippets)

    def text_of(self, node):
        """The file's lines that ``node`` spans (whole lines; None if it has no position)."""
        pos = self.positions.get(node)
        if pos is None:
            return None
        return "".join(self.lines[pos.start.line + self.line_offset - 1:
                                  pos.end.line + self.line_offset])

    def loc_of(self, node):
        from ..ir.nodes import Loc

        pos = self.positions.get(node)
        if pos is None:
            return Loc(self.filename, 0, 0, "")
        line = pos.start.line + self.line_offset
        col = pos.start.column + (self.col_offset if pos.start.line >= 1 else 0)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return Loc(self.filename, line, col, text.rstrip("\n"))


_PARSE_CACHE: Dict[Tuple[str, str], ParsedSource] = {}


def _parse(filename: str, text: str, lines, line_offset=0, col_offset=0) -> ParsedSource:
    key = (filename, hashlib.sha1(text.encode()).hexdigest(), line_offset)
    hit = _PARSE_CACHE.get(key)
    if hit is not None:
        return hit
    module = parse_module(text)  # libcst's, without validating every node (cst_fast.py)
    positions = Positions(module)  # PositionProvider's ranges, made cheaper (cst_fast.py)
    parsed = ParsedSource(filename, lines, module, positions, line_offset, col_offset)
    _PARSE_CACHE[key] = parsed
    return parsed


def _nodes_of(parsed: ParsedSource, kind) -> list:
    """The nodes of type ``kind`` (``FunctionDef`` or ``Lambda``) in ``parsed``, kept on
    it.  For ``def``s only statements are walked: a ``def`` is a statement, never part of
    an expression (a ``lambda`` may be anywhere)."""
    key = f"_{kind.__name__}"
    found = parsed.__dict__.get(key)
    if found is None:
        found = []
        statements_only = kind is cst.FunctionDef

        def enter(node):
            if isinstance(node, kind):
                found.append(node)
            return not (statements_only and isinstance(node, cst.BaseExpression))

        walk(parsed.module, enter)
        parsed.__dict__[key] = found
    return found


_DEFINE_IN_A_FILE = ("s2s transforms Python source, so define the function in a file (not at "
                     "an interactive prompt or in a C extension)")


def _unavailable(fn, why: str, hint: str = _DEFINE_IN_A_FILE):
    name = getattr(fn, "__qualname__", repr(fn))
    return SourceUnavailableError(f"cannot find the source of {name}: {why}; {hint}")


def find_function(fn) -> Tuple[ParsedSource, Union[cst.FunctionDef, cst.Lambda]]:
    """The parsed file and the libcst node of ``fn``'s definition."""
    code = getattr(fn, "__code__", None)
    if code is None:
        raise _unavailable(fn, "it is not a Python function")
    filename = filename_of(code)  # a function that travelled by value: s2s/frontend/shipped.py
    lines = lines_of(filename, getattr(fn, "__globals__", None))
    if not lines:
        if filename == "<dynamic-code>":
            raise _unavailable(fn, "it was pickled by value (cloudpickle, as Dask does), "
                                   "which drops its file name; transform it where it is "
                                   "defined and send the transformed function (s2s.grad(f), "
                                   "s2s.jit(...)), which takes its source along")
        raise _unavailable(fn, f"no source for {filename!r}")
    text = "".join(lines)
    parsed = _parse_enclosing(filename, text, lines, code.co_firstlineno)
    if parsed is not None:
        node = _locate(parsed, code)
        if node is not None:
            check_live(fn, code, filename, text, lines)
            return parsed, node
    # Fallback: the function's own block, dedented.
    try:
        block, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise _unavailable(fn, str(exc)) from None
    raw = "".join(block)
    dedented = textwrap.dedent(raw)
    indent = len(block[0]) - len(block[0].lstrip()) if block else 0
    try:
        parsed = _parse(filename, dedented, lines, start - 1, indent)
    except Exception as exc:
        raise _unavailable(fn, f"libcst cannot parse it ({exc})") from None
    node = _locate(parsed, code)
    if node is None:
        raise _unavailable(fn, f"its definition is not at line {code.co_firstlineno} of "
                               f"{filename}, where it was when it was defined",
                           "the file was probably edited since: reload the module "
                           "(importlib.reload) or run the definition again")
    check_live(fn, code, filename, text, lines)
    return parsed, node


# --- the source read is the live function's ------------------------------------------
#: (file name, text hash) -> the code objects compiled from that text, by (name, first line)
_COMPILED: Dict[Tuple[str, str], Dict[Tuple[str, int], list]] = {}
_LIVE: Dict[Tuple[object, str], bool] = {}


def check_live(fn, code, filename: str, text: str, lines) -> None:
    """Raise ``SourceUnavailableError`` when the text s2s read for ``fn`` is not the
    text ``fn`` was compiled from (its file was edited since the function was defined).

    The whole text is compiled again under the same file name (the whole of it: how a
    call is compiled depends on the module's imports); some code object in it with the
    function's name and first line must have the function's bytecode, names and
    constants (nested code objects compared the same way).  Text that is not a file on
    disk (generated code in ``linecache``, ``<string>``) and text this Python cannot
    compile are not checked."""
    if filename.startswith("<") and filename.endswith(">"):
        return
    digest = hashlib.sha1(text.encode()).hexdigest()
    if (code, digest) in _LIVE:
        return
    flags = code.co_flags & _FUTURE_FLAGS
    table = _COMPILED.get((filename, digest, flags))
    if table is None:
        try:
            compiled = compile(text, filename, "exec", flags=flags, dont_inherit=True)
        except (SyntaxError, ValueError):
            return
        table = {}
        for c in _code_objects(compiled):
            table.setdefault((c.co_name, c.co_firstlineno), []).append(c)
        _COMPILED[(filename, digest, flags)] = table
    cands = table.get((code.co_name, code.co_firstlineno), ())
    same = _same_code if _plainly_compiled(fn) else _same_outline
    if not any(same(c, code) for c in cands):
        line = lines[code.co_firstlineno - 1].strip() if code.co_firstlineno <= len(lines) else ""
        name = getattr(fn, "__qualname__", code.co_name)
        raise SourceUnavailableError(
            f"the source of {name} in {filename} has changed since the function was "
            f"defined: the text now at line {code.co_firstlineno} ({line!r}) is not the code "
            "that runs; s2s transforms the live function's source: reload the module "
            "(importlib.reload) or run the definition again")
    _LIVE[(code, digest)] = True


#: the compiler flags of ``from __future__`` imports, which a code object keeps in co_flags
_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


def _plainly_compiled(fn) -> bool:
    """``fn``'s module was compiled from its text as it is (imported by importlib's own
    loaders), not through an import hook that may rewrite it (pytest's assertion
    rewriting, notebook AST transformers)."""
    from importlib.machinery import SourceFileLoader, SourcelessFileLoader

    loader = (getattr(fn, "__globals__", None) or {}).get("__loader__")
    return type(loader) in (SourceFileLoader, SourcelessFileLoader)


def _last_line(code) -> int:
    return max((ln for _, _, ln in code.co_lines() if ln is not None), default=code.co_firstlineno)


def _same_outline(a, b) -> bool:
    """The weaker test for text a hook may have rewritten: the same parameters and the
    same first and last line."""
    n = a.co_argcount + a.co_kwonlyargcount
    return (a.co_argcount, a.co_kwonlyargcount, a.co_varnames[:n], _last_line(a)) == \
        (b.co_argcount, b.co_kwonlyargcount, b.co_varnames[:n], _last_line(b))


def _code_objects(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            yield from _code_objects(c)


def _same_code(a, b) -> bool:
    """Same bytecode, names, local and free variables and constants (recursively)."""
    if (a.co_code, a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars) != \
            (b.co_code, b.co_names, b.co_varnames, b.co_freevars, b.co_cellvars):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if hasattr(x, "co_code") and hasattr(y, "co_code"):
            if not _same_code(x, y):
                return False
        elif type(x) is not type(y) or (x != y and x == x) or repr(x) != repr(y):
            return False
    return True


_AST_CACHE: Dict[Tuple[str, str], list] = {}


def _top_level_spans(filename: str, text: str):
    """(first line, last line) of each top-level statement, decorators included.

    Found with the fast ``ast`` parser; libcst then parses only the statement
    that holds the function, not the whole file.
    """
    key = (filename, hashlib.sha1(text.encode()).hexdigest())
    spans = _AST_CACHE.get(key)
    if spans is None:
        tree = ast.parse(text)
        spans = []
        for stmt in tree.body:
            start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
            spans.append((start, stmt.end_lineno))
        _AST_CACHE[key] = spans
    return spans


def _parse_enclosing(filename, text, lines, line):
    """The parsed top-level statement(s) of the file that contain ``line``."""
    try:
        spans = [sp for sp in _top_level_spans(filename, text) if sp[0] <= line <= sp[1]]
        if not spans:
            return None
        start, end = min(s for s, _ in spans), max(e for _, e in spans)
        return _parse(filename, "".join(lines[start - 1:end]), lines, start - 1)
    except Exception:  # not parseable by this Python's ast or by libcst: whole file
        try:
            return _parse(filename, text, lines)
        except Exception:
            return None


def _start_line(parsed: ParsedSource, node) -> int:
    return parsed.positions[node].start.line + parsed.line_offset


def _locate(parsed: ParsedSource, code):
    first = code.co_firstlineno
    if code.co_name != "<lambda>":
        for node in _nodes_of(parsed, cst.FunctionDef):
            if node.name.value != code.co_name:
                continue
            lines = {_start_line(parsed, node), _start_line(parsed, node.name)}
            lines.update(_start_line(parsed, d) for d in node.decorators)
            if first in lines:
                return node
        return None
    cands = [n for n in _nodes_of(parsed, cst.Lambda) if _start_line(parsed, n) == first]
    if len(cands) <= 1:
        return cands[0] if cands else None
    nparams = code.co_argcount + code.co_kwonlyargcount
    want = code.co_varnames[:nparams]
    cands = [n for n in cands if _lambda_param_names(n) == want] or cands
    if len(cands) == 1:
        return cands[0]
    by_pos = _match_by_positions(parsed, cands, code)
    if by_pos is not None:
        return by_pos
    found = _match_by_bytecode(parsed, cands, code)
    if found is None:
        raise SourceUnavailableError(
            f"cannot tell apart the {len(cands)} lambdas on line {first} of "
            f"{code.co_filename}; put them on separate lines", None)
    return found


def _lambda_param_names(node: cst.Lambda):
    p = node.params
    return tuple(x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params))


def _match_by_positions(parsed, cands, code):
    if not hasattr(code, "co_positions"):
        return None
    # the instructions' source positions, but not the zero-width ones at column 0 that
    # RESUME and RETURN_VALUE carry (outside the lambda)
    spans = [(p.lineno, p.col_offset) for p in (i.positions for i in dis.get_instructions(code))
             if p is not None and p.lineno is not None and p.col_offset is not None
             and (p.col_offset, p.end_col_offset) != (0, 0)]
    if not spans:
        return None
    hits = []
    for node in cands:
        rng = parsed.positions[node]
        s = (rng.start.line + parsed.line_offset, rng.start.column)
        e = (rng.end.line + parsed.line_offset, rng.end.column)
        if all(s <= (l, c) <= e for (l, c) in spans):
            hits.append(node)
    return hits[0] if len(hits) == 1 else None


def _match_by_bytecode(parsed, cands, code):
    """The one candidate whose compiled code reads the same names and constants in the
    same operations; None if not exactly one does (never a guess)."""
    def shape(c):
        return ([i.opname for i in dis.get_instructions(c)], c.co_names, c.co_consts,
                c.co_varnames)

    want = shape(code)
    hits = []
    for node in cands:
        src = parsed.module.code_for_node(node)
        try:
            compiled = compile("(" + src + ")", "<s2s>", "eval")
        except SyntaxError:
            continue
        if any(hasattr(c, "co_code") and shape(c) == want for c in compiled.co_consts):
            hits.append(node)
    return hits[0] if len(hits) == 1 else None
