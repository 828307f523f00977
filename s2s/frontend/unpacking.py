"""Argument unpacking in calls and starred items in tuple and list displays.

``f(a, *s, k=v, **d)``, ``x.reshape(*shape)``, ``(n, *shape)``, ``[*xs, y]``:
how many values ``s`` holds, and which keys ``d`` has, is known only where the
inliner sees what ``s`` and ``d`` were made from.  The frontend writes such a
call as ``build.apply_call(fn, layout, *operands)`` (``layout`` tags each
operand: ``"a"`` positional, ``"*"`` unpacked positionally, ``("k", name)`` a
keyword, ``"**"`` unpacked as keywords), with the receiver of a method call
as its first positional operand, and a starred display as an ``apply_call`` of
``build.make_tuple`` or ``build.make_list``.  ``passes/unpacking.py`` turns it
into a plain call once the lengths and keys are known.
"""
from __future__ import annotations

import libcst as cst

from s2s_runtime import build

from ..errors import unsupported
from ..ir import nodes as ir


class UnpackingLowering:
    """Mixed into the expression lowering (``expressions.ExpressionLowering``)."""

    def unpacking_call(self, node: cst.Call) -> ir.Call:
        layout, operands = [], []
        for a in node.args:
            operands.append(self.atom(a.value))
            if a.star:
                layout.append(a.star)
            elif a.keyword is not None:
                layout.append(("k", a.keyword.value))
            else:
                layout.append("a")
        fn, lead = self._unpacking_callee(node)
        layout = ("a",) * len(lead) + tuple(layout)
        return ir.Call(build.apply_call, (ir.Const(fn), ir.Const(layout)) + tuple(lead)
                       + tuple(operands))

    def _unpacking_callee(self, node):
        """``(fn, leading operands)``: what ``node`` calls (``call_target``)."""
        from .expressions import is_record_class

        fn, lead, _ = self.call_target(node)
        if not lead and (is_record_class(fn) or getattr(fn, "_s2s_static_factory", False)):
            raise unsupported(f"argument unpacking in a call of {fn.__qualname__}",
                              self.loc(node), "pass the arguments one by one")
        return fn, lead

    def starred_display(self, node, maker) -> ir.Call:
        """``(a, *s)`` or ``[*xs, y]``: an ``apply_call`` of ``maker``."""
        layout, operands = [], []
        for e in node.elements:
            operands.append(self.atom(e.value))
            layout.append("*" if isinstance(e, cst.StarredElement) else "a")
        return ir.Call(build.apply_call, (ir.Const(maker), ir.Const(tuple(layout)))
                       + tuple(operands))
