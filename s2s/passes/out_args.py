"""``out=`` arguments as writes.

Contract: ``out_as_writes(fn)`` returns ``fn`` with every call that passes a
variable as ``out=`` (``np.add(a, b, out=m)``, as a statement or an
assignment ``t = ...``) split into the call without ``out`` and a whole-array
write ``m[...] = result`` (then ``t = m``): what numpy does, in a form both
modes differentiate (forward mode writes the tangent the same way, reverse
mode treats it like any index write).  ``out=None`` is dropped.  Other
``out`` values (tuples of arrays) are left as they are.
"""
from __future__ import annotations

import operator
from dataclasses import replace

from ..ir import nodes as ir
from ..ir.names import NameGen


def out_as_writes(fn: ir.Function) -> ir.Function:
    if not any(_out_of(s) is not None for s in ir.walk(fn.body)):
        return fn
    names = NameGen(ir.all_names(fn))
    temps = set(fn.temps)
    body = _block(fn.body, names, temps)
    return replace(fn, body=body, temps=frozenset(temps))


def _out_of(s):
    v = getattr(s, "value", None)
    if isinstance(s, (ir.Assign, ir.ExprStmt)) and isinstance(v, ir.Call):
        out = dict(v.kwargs).get("out")
        if isinstance(out, ir.Var) or (isinstance(out, ir.Const) and out.value is None):
            return out
    return None


def _block(stmts, names, temps):
    out = []
    for s in stmts:
        o = _out_of(s)
        if o is None:
            blocks = ir.sub_blocks(s)
            if blocks:
                s = ir.with_blocks(s, [_block(b, names, temps) for b in blocks])
            out.append(s)
            continue
        call = replace(s.value, kwargs=tuple((k, a) for k, a in s.value.kwargs if k != "out"))
        if isinstance(o, ir.Const):  # out=None: numpy makes a new array anyway
            out.append(replace(s, value=call))
            continue
        result = ir.Var(names.fresh("t"))
        temps.add(result.name)
        out.append(ir.Assign(result, call, s.loc))
        out.append(ir.ExprStmt(ir.Call(operator.setitem, (o, ir.Const(Ellipsis), result)), s.loc))
        if isinstance(s, ir.Assign):
            out.append(ir.Assign(s.target, o, s.loc))
    return tuple(out)


