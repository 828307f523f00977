"""``out=`` arguments, and ``np.add.at``/``np.subtract.at``, as writes.

Contract: ``out_as_writes(fn)`` returns ``fn`` with every call that passes a
variable as ``out=`` (``np.add(a, b, out=m)``, as a statement or an
assignment ``t = ...``) split into the call without ``out`` and a whole-array
write ``m[...] = result`` (then ``t = m``): what numpy does, in a form both
modes differentiate (forward mode writes the tangent the same way, reverse
mode treats it like any index write).  ``out=None`` is dropped.  Other
``out`` values (tuples of arrays) are left as they are.

Contract: ``scatter_adds_as_writes(fn)`` returns ``fn`` with every call
``np.add.at(a, index, v)`` (a statement, or an assignment of its None) (``np.subtract.at``: ``-v``) made ``t = rt.add_at(a, v, a,
index)`` (``v`` broadcast to the places first, ``index_writes.scattered_values``) and
the whole-array write ``a[...] = t``: ``a`` plus ``v`` scattered at the
places ``index`` names, repeated places accumulating (numpy's semantics), in a form
both modes differentiate (``add_at`` is linear in ``a`` and ``v``) and ``vmap``
batches.  Differentiated and batched code only (``core/pipeline.py``,
``core/vmap.py``): compiled and plain code keep numpy's in-place call.
"""
from __future__ import annotations

import operator
from dataclasses import replace

import numpy as np

import s2s_runtime as rt
from s2s_runtime import index_writes

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


def _scatter_add(s):
    """``(a, index, v, negate)`` of a statement ``np.add.at(a, index, v)`` (or
    ``np.subtract.at``), else None."""
    v = getattr(s, "value", None)
    if not (isinstance(s, (ir.ExprStmt, ir.Assign)) and isinstance(v, ir.Call)
            and not v.kwargs and len(v.args) == 3 and getattr(v.fn, "__name__", None) == "at"):
        return None
    ufunc = getattr(v.fn, "__self__", None)
    if ufunc is not np.add and ufunc is not np.subtract:
        return None
    return v.args[0], v.args[1], v.args[2], ufunc is np.subtract


def scatter_adds_as_writes(fn: ir.Function) -> ir.Function:
    if not any(_scatter_add(s) is not None for s in ir.walk(fn.body)):
        return fn
    names = NameGen(ir.all_names(fn))
    temps = set(fn.temps)

    def block(stmts):
        out = []
        for s in stmts:
            found = _scatter_add(s)
            if found is None:
                blocks = ir.sub_blocks(s)
                out.append(ir.with_blocks(s, [block(b) for b in blocks]) if blocks else s)
                continue
            a, index, v, negate = found
            if negate:
                neg = ir.Var(names.fresh("t"))
                temps.add(neg.name)
                out.append(ir.Assign(neg, ir.Call(operator.neg, (v,)), s.loc))
                v = neg
            spread = ir.Var(names.fresh("t"))  # v at every place (v may broadcast)
            temps.add(spread.name)
            out.append(ir.Assign(spread, ir.Call(index_writes.scattered_values, (v, a, index)),
                                 s.loc))
            result = ir.Var(names.fresh("t"))
            temps.add(result.name)
            out.append(ir.Assign(result, ir.Call(rt.add_at, (a, spread, a, index)), s.loc))
            out.append(ir.ExprStmt(ir.Call(operator.setitem, (a, ir.Const(Ellipsis), result)),
                                   s.loc))
            if isinstance(s, ir.Assign):  # its value, numpy's: None
                out.append(ir.Assign(s.target, ir.Const(None), s.loc))
        return tuple(out)

    return replace(fn, body=block(fn.body), temps=frozenset(temps))
