"""Cheaper stand-ins for three slow libcst services the front end needs on every function.

* ``parse_module(text)``: ``libcst.parse_module`` without validating each node as the
  parser builds it (``CSTNode.__post_init__``, a fifth of the parse; libcst's own PERF
  note there says as much): the parser builds only valid nodes.  Nodes made by other
  threads while a parse runs are not validated either, which changes nothing for valid
  nodes.
* ``positions(module)``: the same ranges as ``libcst.metadata.PositionProvider``
  (syntactic start and end, 1-based lines, 0-based columns), computed by one plain
  code generation pass that records token indices per node; line and column are worked
  out from the tokens once, and a ``CodeRange`` is made only for a node that is asked
  for.  PositionProvider updates a line/column pair per token and builds two
  ``CodePosition``s and a ``CodeRange`` per node, several times the cost.
* ``walk(node, enter)``: a pre-order traversal of the nodes under ``node`` (``node``
  first) that reads the dataclass fields directly; ``enter(n)`` returns False to skip
  ``n``'s children.  libcst's ``visit`` rebuilds every node it passes (its visitors
  may replace children), which costs a node construction and validation per node.
  Whitespace, parentheses, commas and other punctuation are not visited.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Dict, Iterator, Optional

import libcst as cst
from libcst._nodes.internal import CodegenState  # not exported; PositionProvider subclasses it too
from libcst.metadata import CodePosition, CodeRange

_NEWLINE = re.compile(r"\r\n?|\n")


def _unchecked(node) -> None:
    """``CSTNode.__post_init__`` while parsing: no validation."""


def parse_module(text: str) -> cst.Module:
    """``libcst.parse_module(text)``, its nodes not validated one by one (see above)."""
    checked = cst.CSTNode.__post_init__
    cst.CSTNode.__post_init__ = _unchecked
    try:
        return cst.parse_module(text)
    finally:
        cst.CSTNode.__post_init__ = checked


class _State(CodegenState):
    """Code generation that records, per node, the token indices where it starts and ends
    (the syntactic ones where the node reports them, as PositionProvider does)."""

    def __init__(self, module: cst.Module):
        super().__init__(default_indent=module.default_indent,
                         default_newline=module.default_newline)
        self.ranges: Dict[cst.CSTNode, tuple] = {}
        self._stack = []

    def before_codegen(self, node) -> None:
        self._stack.append(len(self.tokens))

    def after_codegen(self, node) -> None:
        start = self._stack.pop()
        if node not in self.ranges:
            self.ranges[node] = (start, len(self.tokens))

    @contextmanager
    def record_syntactic_position(self, node, *, start_node=None, end_node=None) -> Iterator[None]:
        start = len(self.tokens)
        try:
            yield
        finally:
            end = len(self.tokens)
            if start_node is not None:
                start = self.ranges[start_node][0]
            if end_node is not None:
                end = self.ranges[end_node][1]
            self.ranges[node] = (start, end)


class Positions:
    """``node -> CodeRange`` for the nodes of one module (a read-only mapping)."""

    def __init__(self, module: cst.Module):
        state = _State(module)
        module._codegen(state)
        self._ranges = state.ranges
        lines, cols = [], []
        line, col = 1, 0
        for tok in state.tokens:  # the position before each token
            lines.append(line)
            cols.append(col)
            parts = _NEWLINE.split(tok)
            if len(parts) == 1:
                col += len(tok)
            else:
                line += len(parts) - 1
                col = len(parts[-1])
        lines.append(line)
        cols.append(col)
        self._lines, self._cols = lines, cols
        self._made: Dict[cst.CSTNode, CodeRange] = {}

    def _range(self, node) -> Optional[CodeRange]:
        hit = self._made.get(node)
        if hit is None:
            span = self._ranges.get(node)
            if span is None:
                return None
            s, e = span
            hit = CodeRange(CodePosition(self._lines[s], self._cols[s]),
                            CodePosition(self._lines[e], self._cols[e]))
            self._made[node] = hit
        return hit

    def get(self, node, default=None):
        r = self._range(node)
        return default if r is None else r

    def __getitem__(self, node) -> CodeRange:
        r = self._range(node)
        if r is None:
            raise KeyError(node)
        return r

    def __contains__(self, node) -> bool:
        return node in self._ranges


#: field names that hold only whitespace or punctuation, never names or statements
_SKIP = ("whitespace", "lpar", "rpar", "comma", "equal", "colon", "semicolon", "leading_lines",
         "lines_after_decorators", "header", "footer", "dot", "star", "newline", "indent",
         "lbracket", "rbracket", "lbrace", "rbrace", "trailing")
#: fields that the names above would match but that hold nodes (``*args``, ``**kw``)
_KEEP = ("star_arg", "star_kwarg")
_FIELDS: Dict[type, tuple] = {}


def _fields(cls) -> tuple:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f for f in getattr(cls, "__dataclass_fields__", ())
                      if f in _KEEP or not any(f.startswith(s) or f.endswith(s)
                                               for s in _SKIP))
        _FIELDS[cls] = names
    return names


def walk(node: cst.CSTNode, enter) -> None:
    """Call ``enter`` on ``node`` and, pre-order, on every node below it (children of a
    node for which ``enter`` returns False are skipped)."""
    stack = [node]
    pop, push = stack.pop, stack.append
    base = cst.CSTNode
    while stack:
        n = pop()
        if enter(n) is False:
            continue
        kids = []
        for f in _fields(type(n)):
            v = getattr(n, f)
            if isinstance(v, base):
                kids.append(v)
            elif isinstance(v, (tuple, list)):
                kids.extend(x for x in v if isinstance(x, base))
        for k in reversed(kids):
            push(k)
