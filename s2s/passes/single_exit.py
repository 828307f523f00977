"""Single exit: ``return`` only as the last statement of the function.

Contract: accepts any IR function; returns one whose body ends with the only
``Return`` at top level, provided every ``return`` sits in straight-line
code or ``if`` branches.  A ``return`` inside a loop or ``try`` is left in
place (later passes reject it where they cannot handle it).

Method: when an ``if`` contains a return, the statements after it move
into the branches that can fall through, so every path ends in a return;
each tail ``return v`` then becomes ``result = v`` and one ``return result``
closes the function.  Falling off the end returns ``None``.
"""
from __future__ import annotations

from dataclasses import replace

from ..ir import nodes as ir
from ..ir.names import NameGen


def _has_return(stmts) -> bool:
    for s in stmts:
        if isinstance(s, ir.Return):
            return True
        if isinstance(s, ir.If) and (_has_return(s.body) or _has_return(s.orelse)):
            return True
    return False


def _ends_with_return(stmts) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ir.Return):
        return True
    if isinstance(last, ir.If):
        return _ends_with_return(last.body) and _ends_with_return(last.orelse)
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
        else:
            out.append(s)
    return out


def single_exit(fn: ir.Function) -> ir.Function:
    body = list(fn.body)
    if not _ends_with_return(body):
        body.append(ir.Return(ir.Const(None), fn.loc))  # falling off the end
    body = _hoist(body)
    if not any(isinstance(s, ir.If) and (_has_return(s.body) or _has_return(s.orelse))
               for s in body):
        return fn.with_body(body)
    names = NameGen(ir.all_names(fn))
    result = ir.Var(names.fresh("result"))
    body = _tails_to_assign(body, result)
    body.append(ir.Return(result, body[-1].loc if body else fn.loc))
    return fn.with_body(body)
