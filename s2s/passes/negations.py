"""Negations folded into the products that feed them.

Reverse mode writes each primitive's adjoint on its own, so sigmoid's
``1 / (1 + exp(-x))`` gives ``t = -g * y / d; u = t * e; x_bar = -u``: two
negations a person would cancel, each a pass over an array.

Contract: ``fold_negations(fn)`` rewrites ``y = -x`` where ``x`` is a
compiler temporary assigned once and read once (by this negation) whose value
is a product ``a * b`` or a quotient ``a / b``: the sign moves into an operand
(``a``, or ``b`` of a product) that can take it --

* a number literal ``c`` (it becomes ``-c``),
* a temporary read once that is itself ``-z`` (it becomes ``z``), or
* a temporary read once that is such a product or quotient (recursively),

and ``y = -x`` becomes ``y = x``.  Nothing else changes.  Exact in IEEE
arithmetic: negation flips the sign bit, and ``-(a * b) == (-a) * b``,
``-(a / b) == (-a) / b``.  The value of ``y`` is still a freshly computed
product (never an alias of ``z``), and no statement moves; the ``t = -z``
whose sign was taken is dropped.
"""
from __future__ import annotations

import operator
from collections import Counter
from dataclasses import replace
from typing import Dict, Optional

import numpy as np

from ..ir import nodes as ir

_NEG = (operator.neg, np.negative)
_PRODUCT = (operator.mul, np.multiply)
_QUOTIENT = (operator.truediv, np.divide)


def fold_negations(fn: ir.Function) -> ir.Function:
    defs = Counter(v.name for s in ir.walk(fn.body) for v in ir.stmt_defs(s))
    uses = ir.use_counts(fn.body)
    values: Dict[str, ir.Call] = {}  # single-use temporary -> the call assigned to it
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and not s.value.kwargs \
                and s.target.name in fn.temps and defs[s.target.name] == 1 \
                and uses.get(s.target.name) == 1:
            values[s.target.name] = s.value
    new_values: Dict[str, ir.Call] = {}  # temporaries whose value now carries the sign
    dropped = set()  # temporaries ``t = -z`` whose one reader now reads ``z``

    def negated(atom) -> Optional[ir.Atom]:
        """An atom for ``-atom`` made by rewriting its definition, or None."""
        if isinstance(atom, ir.Const):
            return ir.Const(-atom.value) if type(atom.value) in (int, float) else None
        call = values.get(atom.name) if isinstance(atom, ir.Var) else None
        if call is None or atom.name in new_values:
            return None
        if call.fn in _NEG and len(call.args) == 1:
            dropped.add(atom.name)
            return call.args[0]
        return atom if _negate_product(atom.name, call) else None

    def _negate_product(name, call) -> bool:
        if call.fn not in _PRODUCT + _QUOTIENT or len(call.args) != 2:
            return False
        positions = (0, 1) if call.fn in _PRODUCT else (0,)
        for i in positions:
            new = negated(call.args[i])
            if new is not None:
                args = list(call.args)
                args[i] = new
                new_values[name] = replace(call, args=tuple(args))
                return True
        return False

    folded = set()  # negations y = -x whose sign went into x
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and s.value.fn in _NEG \
                and not s.value.kwargs and len(s.value.args) == 1:
            if s.target.name in dropped:  # already taken by a chain folded before
                continue
            x = s.value.args[0]
            call = values.get(x.name) if isinstance(x, ir.Var) else None
            if call is not None and x.name not in new_values and _negate_product(x.name, call):
                folded.add(id(s))
                values.pop(s.target.name, None)  # no longer a negation another chain may take
    if not folded:
        return fn

    def rewrite(s):
        if isinstance(s, ir.Assign) and s.target.name in dropped:
            return None
        if id(s) in folded:
            return replace(s, value=s.value.args[0])
        if isinstance(s, ir.Assign) and s.target.name in new_values:
            return replace(s, value=new_values[s.target.name])
        return s

    return replace(fn, body=ir.map_stmts(fn.body, rewrite))
