"""Operands the adjoint reads only for their shape, made constants (Python mode).

Two run-time helpers of adjoint code read an operand only for its shape and
kind: ``zeros_like(x)`` makes zeros shaped like ``x`` and
``index_set_vjp_value(g, i, v)`` sums ``g[i]`` to ``v``'s shape.  When that
operand is certainly a real scalar (``scalars.real_scalars``) its value does
not matter: ``zeros_like(x)`` is ``0.0`` and ``index_set_vjp_value(g, i, 0.0)``
gives what ``v`` gave (Python's ``0.0`` is weak: it changes no dtype the way a
float64 would).  (``unbroadcast(g, x)`` of two real scalars is ``g`` already:
``templates.simplify``.)  The adjoint then no longer reads the name, and the
to-be-recorded analysis (``loops.finish_tape``) drops its pushes and pops: a
linear stencil's loop records no values.

``scalar_references(adjoint, scalars)``: the adjoint statements with those
operands replaced (the caller leaves parameters out of ``scalars``: they are
never recorded, and a gradient keeps their exact scalar type).  The jit does the same with exact types
(``backend/llvm/passes/lean_tapes.py``).
"""
from __future__ import annotations

from dataclasses import replace

import s2s_runtime as rt

from ..ir import nodes as ir

#: helper -> positions of its operands read only for their shape
SCALAR_REFERENCES = {rt.index_set_vjp_value: (2,)}


def scalar_references(adjoint, scalars):
    def rewrite(s):
        v = getattr(s, "value", None)
        if not isinstance(s, ir.Assign) or not isinstance(v, ir.Call) or v.kwargs:
            return s
        if v.fn is rt.zeros_like and len(v.args) == 1 and isinstance(v.args[0], ir.Var) \
                and v.args[0].name in scalars:
            return replace(s, value=ir.Const(0.0))
        positions = SCALAR_REFERENCES.get(v.fn, ())
        args = tuple(ir.Const(0.0) if k in positions and isinstance(a, ir.Var)
                     and a.name in scalars else a for k, a in enumerate(v.args))
        return s if args == v.args else replace(s, value=replace(v, args=args))

    return list(ir.map_stmts(adjoint, rewrite))
