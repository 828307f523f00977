"""Single exit: ``return`` only as the last statement of the function.

Contract: accepts any IR function; returns one whose body ends with the only
``Return`` at top level, provided every ``return`` sits in straight-line
code, ``if`` branches, or a ``try`` (no ``finally``) every path through
which returns or raises.  Any other ``return`` (in a loop, or in a ``try``
that may fall through) is left in place: later passes reject it.

Method: when an ``if`` contains a return, the statements after it move
into the branches that can fall through, so every path ends in a return;
each tail ``return v`` then becomes ``result = v`` and one ``return result``
closes the function.  Falling off the end returns ``None``.
"""
from __future__ import annotations

from dataclasses import replace

from ..ir import nodes as ir
from ..ir.names import NameGen


def _blocks(s):
    """The blocks of an ``if`` or ``try`` (a ``finally`` block is never one of them:
    a try with a return in its ``finally`` is left alone)."""
    if isinstance(s, ir.If):
        return [s.body, s.orelse]
    if isinstance(s, ir.Try) and not s.finalbody:
        return [s.body, s.orelse] + [h.body for h in s.handlers]
    return []


def _has_return(stmts) -> bool:
    return any(isinstance(s, ir.Return) or any(map(_has_return, _blocks(s))) for s in stmts)


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
            out.append(replace(s, body=tuple(_hoist(s.body)), orelse=tuple(_hoist(s.orelse)),
                               handlers=tuple(replace(h, body=tuple(_hoist(h.body)))
                                              for h in s.handlers)))
            return out
        out.append(s)
    return out


def _tails_to_assign(stmts, result):
    out = []
    for s in stmts:
        if isinstance(s, ir.Return):
            out.append(ir.Assign(result, s.value, s.loc))
        elif isinstance(s, ir.If):
            out.append(replace(s, body=tuple(_tails_to_assign(s.body, result)),
                               orelse=tuple(_tails_to_assign(s.orelse, result))))
        elif isinstance(s, ir.Try) and _blocks(s):
            out.append(replace(s, body=tuple(_tails_to_assign(s.body, result)),
                               orelse=tuple(_tails_to_assign(s.orelse, result)),
                               handlers=tuple(replace(h, body=tuple(_tails_to_assign(h.body,
                                                                                      result)))
                                              for h in s.handlers)))
        else:
            out.append(s)
    return out


def single_exit(fn: ir.Function) -> ir.Function:
    body = list(fn.body)
    if not _ends_with_return(body):
        body.append(ir.Return(ir.Const(None), fn.loc))  # falling off the end
    body = _hoist(body)
    if not any(any(map(_has_return, _blocks(s))) for s in body):
        return fn.with_body(body)
    names = NameGen(ir.all_names(fn))
    result = ir.Var(names.fresh("result"))
    body = _tails_to_assign(body, result)
    body.append(ir.Return(result, body[-1].loc if body else fn.loc))
    return fn.with_body(body)
