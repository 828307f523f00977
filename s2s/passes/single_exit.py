"""Single exit: ``return`` only as the last statement of the function.

Contract: accepts any IR function; returns an equivalent one whose body ends
with its only ``Return``, at top level.  A ``return`` inside ``finally`` is
an ``UnsupportedSyntaxError`` (it would swallow a pending exception).

Method, in two steps:

1. **Returns hoisting cannot reach become a flag.**  A ``return v`` inside a
   loop, or inside a ``try`` that has a ``finally`` or that some path falls
   through, becomes ``result = v; returned = True`` and then leaves:

   * directly in a loop body (also inside an ``if`` or a ``try`` there): it
     ``break``s; after a nested loop that may have returned, ``if returned:
     break`` leaves the loop around it;
   * elsewhere (a ``try`` block, a loop's ``else``): the rest of the block
     runs under ``if not returned`` (or moves into the one branch of an ``if``
     that does not return);
   * at the function's own level, after the loop or ``try``: ``if not
     returned: <the rest of the function>`` with ``return result`` in the
     other branch, which step 2 treats like any returning ``if``.

   ``returned = False`` precedes each such loop or ``try``.  So a return in a
   loop is a ``break`` in forward mode, and a flag the tape records in
   reverse mode (``passes/loop_jumps.py`` turns the ``break`` into a flag).

2. **Hoisting.**  When an ``if`` (or a ``try`` without ``finally`` every path
   of which returns or raises) contains a return, the statements after it move
   into the branches that can fall through, so every path ends in a return;
   each tail ``return v`` then becomes ``result = v`` and one ``return
   result`` closes the function.  Falling off the end returns ``None``.
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import List

from ..errors import unsupported
from ..ir import nodes as ir
from ..ir.names import NameGen

_LOOPS = (ir.For, ir.While)


def _blocks(s):
    """The blocks of an ``if`` or ``try`` (a ``finally`` block is never one of them:
    step 1 takes a try with a ``finally``)."""
    if isinstance(s, ir.If):
        return [s.body, s.orelse]
    if isinstance(s, ir.Try) and not s.finalbody:
        return [s.body, s.orelse] + [h.body for h in s.handlers]
    return []


def _has_return(stmts) -> bool:
    return any(isinstance(s, ir.Return) or any(map(_has_return, _blocks(s))) for s in stmts)


def _any_return(stmts) -> bool:
    """A ``return`` anywhere in ``stmts``, loops included."""
    return any(isinstance(s, ir.Return) for s in ir.walk(stmts))


def _ends_with_return(stmts) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ir.Return):
        return True
    if isinstance(last, ir.If):
        return _ends_with_return(last.body) and _ends_with_return(last.orelse)
    if isinstance(last, ir.Try) and not last.finalbody:
        # every path returns (or raises): the try body with its else, and each handler
        normal = list(last.body) + list(last.orelse)
        return _ends_with_return(normal) and all(_ends_with_return(h.body)
                                                 for h in last.handlers)
    return isinstance(last, ir.Raise)


def _hoistable_try(s) -> bool:
    """A ``try`` step 2 takes as it is: no ``finally``, and every path returns."""
    return isinstance(s, ir.Try) and not s.finalbody and _ends_with_return([s])


class _Flags:
    """Step 1 (see the module docstring)."""

    def __init__(self, names: NameGen, temps: set, result: ir.Var):
        self.names, self.temps, self.result = names, temps, result
        self.returned = None

    def flag(self) -> ir.Var:
        if self.returned is None:
            self.returned = ir.Var(self.names.fresh("returned"))
        return self.returned

    def not_returned(self, loc) -> tuple:
        """``(t = not returned, t)``."""
        t = ir.Var(self.names.temp())
        self.temps.add(t.name)
        return ir.Assign(t, ir.Call(operator.not_, (self.flag(),)), loc), t

    def set_result(self, ret: ir.Return) -> List:
        loc = replace(ret.loc, derived=True)
        return [ir.Assign(self.result, ret.value, ret.loc),
                ir.Assign(self.flag(), ir.Const(True), loc)]

    # -- the function's own level (and its ifs) -----------------------------------------
    def top(self, stmts) -> List:
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, ir.If):
                out.append(replace(s, body=tuple(self.top(s.body)),
                                   orelse=tuple(self.top(s.orelse))))
                continue
            if isinstance(s, ir.Try) and _hoistable_try(s):
                out.append(_map_try(s, self.top))
                continue
            if not (isinstance(s, _LOOPS + (ir.Try,)) and _any_return([s])):
                out.append(s)
                if isinstance(s, ir.Return):
                    return out  # what follows a return never runs
                continue
            loc = replace(s.loc, derived=True)
            out.append(ir.Assign(self.flag(), ir.Const(False), loc))
            out.append(self.compound(s, in_loop=False))
            check, go = self.not_returned(loc)
            rest = self.top(stmts[i + 1:])
            out += [check, ir.If(go, tuple(rest), (ir.Return(self.result, loc),), loc)]
            return out
        return out

    # -- inside a loop or try ----------------------------------------------------------
    def compound(self, s, in_loop: bool):
        """A loop or ``try`` containing returns, with each return setting the flag."""
        if isinstance(s, ir.Try):
            for x in ir.walk(s.finalbody):
                if isinstance(x, ir.Return):
                    raise unsupported("'return' inside 'finally'", x.loc,
                                      "it would discard an exception; return after the try")
            return _map_try(s, lambda b: self.block(b, in_loop))
        body = tuple(self.block(s.body, True))
        orelse = tuple(self.block(s.orelse, False))  # runs once, after the loop
        return replace(s, body=body, orelse=orelse)

    def block(self, stmts, in_loop: bool) -> List:
        """``stmts`` of a loop body (``in_loop``: a return breaks) or of a ``try`` or a
        loop's ``else`` (a return skips the rest, under the flag)."""
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, ir.Return):
                out += self.set_result(s)
                if in_loop:
                    out.append(ir.Break(replace(s.loc, derived=True)))
                return out
            if not _any_return([s]):
                out.append(s)
                continue
            rest = list(stmts[i + 1:])
            loc = replace(s.loc, derived=True)
            if isinstance(s, ir.If):
                if in_loop or not rest:
                    out.append(replace(s, body=tuple(self.block(s.body, in_loop)),
                                       orelse=tuple(self.block(s.orelse, in_loop))))
                    continue  # a break leaves the loop: the rest needs no guard
                ends = [_ends_with_return(b) for b in (s.body, s.orelse)]
                plain = [not _any_return(b) for b in (s.body, s.orelse)]
                if all(e or p for e, p in zip(ends, plain)):
                    # the rest moves into the branch that does not return (if any)
                    body, orelse = (list(b) if e else list(b) + rest
                                    for b, e in zip((s.body, s.orelse), ends))
                    out.append(replace(s, body=tuple(self.block(body, False)),
                                       orelse=tuple(self.block(orelse, False))))
                    return out
                out.append(replace(s, body=tuple(self.block(s.body, False)),
                                   orelse=tuple(self.block(s.orelse, False))))
            else:  # a nested loop or try
                out.append(self.compound(s, in_loop))
                if in_loop and not isinstance(s, ir.Try):
                    out.append(ir.If(self.flag(), (ir.Break(loc),), (), loc))
                    continue
                if in_loop:
                    continue  # its returns broke out of this loop already
            if rest:
                check, go = self.not_returned(loc)
                out += [check, ir.If(go, tuple(self.block(rest, False)), (), loc)]
            return out
        return out


def _map_try(s: ir.Try, f):
    return replace(s, body=tuple(f(s.body)), orelse=tuple(f(s.orelse)),
                   handlers=tuple(replace(h, body=tuple(f(h.body))) for h in s.handlers))


def _hoist(stmts):
    """Move code after a returning ``if`` into its falling-through branches."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, ir.Return):
            out.append(s)
            return out  # unreachable code after return is dropped
        if isinstance(s, ir.If) and (_has_return(s.body) or _has_return(s.orelse)):
            rest = list(stmts[i + 1:])
            body = list(s.body) if _ends_with_return(s.body) else list(s.body) + rest
            orelse = list(s.orelse) if _ends_with_return(s.orelse) else list(s.orelse) + rest
            out.append(replace(s, body=tuple(_hoist(body)), orelse=tuple(_hoist(orelse))))
            return out
        if isinstance(s, ir.Try) and _ends_with_return([s]):
            # every path through the try returns: what follows it is unreachable
            out.append(_map_try(s, _hoist))
            return out
        out.append(s)
    return out


def _tails_to_assign(stmts, result):
    out = []
    for s in stmts:
        if isinstance(s, ir.Return):
            if s.value != result:  # ``return result`` (step 1) is already assigned
                out.append(ir.Assign(result, s.value, s.loc))
        elif isinstance(s, ir.If):
            out.append(replace(s, body=tuple(_tails_to_assign(s.body, result)),
                               orelse=tuple(_tails_to_assign(s.orelse, result))))
        elif isinstance(s, ir.Try) and _blocks(s):
            out.append(_map_try(s, lambda b: _tails_to_assign(b, result)))
        else:
            out.append(s)
    return out


def single_exit(fn: ir.Function) -> ir.Function:
    body = list(fn.body)
    names = NameGen(ir.all_names(fn))
    result = ir.Var(names.fresh("result"))
    temps = set(fn.temps)
    if any(_any_return([s]) for s in ir.walk(body) if isinstance(s, _LOOPS + (ir.Try,))):
        body = _Flags(names, temps, result).top(body)
        fn = replace(fn, temps=frozenset(temps))
    if not _ends_with_return(body):
        body.append(ir.Return(ir.Const(None), fn.loc))  # falling off the end
    body = _hoist(body)
    if not any(any(map(_has_return, _blocks(s))) for s in body):
        return fn.with_body(body)
    body = _tails_to_assign(body, result)
    body.append(ir.Return(result, body[-1].loc if body else fn.loc))
    return fn.with_body(body)
