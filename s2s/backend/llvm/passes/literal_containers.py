"""Containers built by a literal, resolved before typing (jit only).

Compiled code holds a tuple as a struct of its items (one type each), so a loop over
a tuple and an index read from a variable have no compiled form.  Where the IR
itself shows the container -- a name assigned exactly once from a literal
(``build.make_tuple``/``make_list``/``make_dict``), or ``rt.batch_rows`` of one
(batched code iterating an example's container: the container itself) -- both are
resolved statically (through copies, and constant items that are such containers
themselves).  Contract: ``containers_resolved(func)`` returns ``func`` where

* ``k = rt.batch_index(c, K)`` of such a container ``c`` and a constant ``K`` (batched
  code's index of one example's item: ``K`` itself for a container) is read as ``K``
  by the calls that use ``k`` (``c[k]`` becomes ``c[K]``);
* ``for v in t`` over such a tuple or list ``t`` of at most ``MAX_UNROLL`` items (a list
  display is never grown under its name: an append assigns the name again), whose body
  has no ``break``/``continue`` of its own and no ``else``, is one copy of the body
  per item, copy ``j`` reading ``v_j = t[j]`` (``v`` itself assigned the last item
  after the copies, as Python leaves it);
* such a tuple or list given to a numpy ufunc (``np.sin([a, b])``, ``np.divide(q, 100)``
  with ``q = [25, 75]``) is ``np.asarray`` of it, taken right before the call, as numpy
  reads an ``array_like`` operand;

and is otherwise the same function (the same values computed in the same order).
"""
from __future__ import annotations

import operator
from collections import Counter
from dataclasses import replace

import numpy as np
import s2s_runtime as rt
from s2s_runtime import build

from ....ir import nodes as ir
from ....passes.ssa import rename_all

#: longest literal tuple a loop over it is unrolled for
MAX_UNROLL = 16

_MAKERS = (build.make_tuple, build.make_list, build.make_dict)


def _literals(func, defs):
    """``({name: (maker, items)}, {name: constant index})``: the names assigned once from
    a literal, a copy of one, ``rt.batch_rows`` of one or a constant item of one that is
    itself such a name; and the ``rt.batch_index`` names of those (in program order)."""
    out, indices = {}, {}

    def literal(a):
        return out.get(a.name) if isinstance(a, ir.Var) else None

    def index(a):
        return indices.get(a.name, a) if isinstance(a, ir.Var) else a

    for s in ir.walk(func.body):
        if not isinstance(s, ir.Assign) or defs[s.target.name] != 1:
            continue
        v, name = s.value, s.target.name
        if isinstance(v, ir.Var) and literal(v) is not None:
            out[name] = out[v.name]
        if not isinstance(v, ir.Call) or v.kwargs:
            continue
        if v.fn in _MAKERS:
            out[name] = (v.fn, v.args)
        elif v.fn is rt.batch_rows and len(v.args) == 1 and literal(v.args[0]) is not None:
            out[name] = literal(v.args[0])
        elif v.fn is rt.batch_index and len(v.args) == 2 and literal(v.args[0]) is not None \
                and isinstance(index(v.args[1]), ir.Const):
            indices[name] = index(v.args[1])
        elif v.fn is operator.getitem and len(v.args) == 2 and literal(v.args[0]) is not None:
            maker, items = literal(v.args[0])
            k = getattr(index(v.args[1]), "value", None)
            if maker is build.make_tuple and type(k) is int and -len(items) <= k < len(items) \
                    and literal(items[k]) is not None:
                out[name] = literal(items[k])
    return out, indices


def _own_jumps(body) -> bool:
    """Whether ``body`` has a ``break``/``continue`` of its own (not of a nested loop)."""
    for s in body:
        if isinstance(s, (ir.Break, ir.Continue)):
            return True
        if isinstance(s, (ir.For, ir.While)):
            continue
        if any(_own_jumps(b) for b in ir.sub_blocks(s)):
            return True
    return False


def containers_resolved(func: ir.Function) -> ir.Function:
    defs = Counter(v.name for s in ir.walk(func.body) for v in ir.stmt_defs(s))
    literals, indices = _literals(func, defs)
    if not literals:
        return func
    taken = set(defs) | {p.var.name for p in func.params}
    changed = [False]

    def fresh(base):
        k = 0
        while f"{base}_u{k}" in taken:
            k += 1
        taken.add(f"{base}_u{k}")
        return f"{base}_u{k}"

    def r(a):
        return indices.get(a.name, a) if isinstance(a, ir.Var) else a

    def as_arrays(s):
        """``s``, a call of a ufunc, with its display operands read as arrays (``[]``
        when none is), and the statements making those arrays."""
        made, args = [], []
        for a in s.value.args:
            hit = literals.get(a.name) if isinstance(a, ir.Var) else None
            if hit is not None and hit[0] in (build.make_tuple, build.make_list):
                array = ir.Var(fresh(a.name))
                made.append(ir.Assign(array, ir.Call(np.asarray, (a,)), s.loc))
                a = array
            args.append(a)
        return made + [replace(s, value=replace(s.value, args=tuple(args)))] if made else []

    def stmt(s):
        if isinstance(s, (ir.Assign, ir.ExprStmt)) and isinstance(s.value, ir.Call):
            v = s.value
            if isinstance(v.fn, np.ufunc):
                made = as_arrays(s)
                if made:
                    changed[0] = True
                    return made
            new = replace(v, args=tuple(r(a) for a in v.args),
                          kwargs=tuple((k, r(x)) for k, x in v.kwargs))
            if new != v:
                changed[0] = True
                return replace(s, value=new)
            return s
        if isinstance(s, ir.For) and isinstance(s.iter, ir.Var) and not s.orelse:
            hit = literals.get(s.iter.name)
            if hit is None or hit[0] not in (build.make_tuple, build.make_list) or \
                    len(hit[1]) > MAX_UNROLL or _own_jumps(s.body):
                return s
            changed[0] = True
            out = []
            last = None
            for j in range(len(hit[1])):
                last = ir.Var(fresh(s.target.name))
                out.append(ir.Assign(last, ir.Call(operator.getitem, (s.iter, ir.Const(j))),
                                     s.loc))
                env = {s.target.name: last.name}
                out.extend(rename_all(x, env) for x in s.body)
            if last is not None:
                out.append(ir.Assign(s.target, last, s.loc))
            return out
        return s

    def block(stmts):
        out = []
        for s in stmts:
            got = stmt(s)
            if isinstance(got, list):
                out += block(got)
                continue
            blocks = ir.sub_blocks(got)
            if blocks:
                got = ir.with_blocks(got, [tuple(block(b)) for b in blocks])
            out.append(got)
        return out

    body = block(func.body)
    return func.with_body(body) if changed[0] else func
