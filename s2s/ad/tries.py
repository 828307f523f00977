"""Reverse mode through ``try``/``except`` (and ``raise``).

An exception may stop the ``try`` body anywhere, so the adjoint must undo
exactly the assignments that ran.  The primal records how far it got:

* each assignment ``v = f(...)`` of the body becomes ``t = f(...); v = t;
  step = j`` (only the call can raise; the copy and the step marker cannot),
  and ``step = 0`` before the ``try``;
* each handler starts with ``caught = i`` (``caught = -1`` before the
  ``try``), so the adjoint knows which handler, or the ``else`` block, ran;
* after the ``try``, ``done_j = step >= j`` and ``caught_i = caught == i``.

The adjoint undoes the handler (or ``else`` block) that ran, then the body
with the adjoint of assignment ``j`` under ``if done_j:``.  Values an
assignment in the ``try`` overwrites are pushed on the tape as in loops
(``ad/loops.py``); values assigned once need nothing.

Not yet: loops, ``return``, nested ``try`` and ``finally`` inside a ``try``
that carries derivatives, and a ``try`` inside a loop (clear errors).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, replace
from typing import List

from ..errors import unsupported
from ..ir import nodes as ir


@dataclass
class _TryRecord:
    """What the adjoint of one ``try`` needs (see the module docstring)."""

    guarded_body: list  # the body with assignment j wrapped in ``if done_j:``
    else_test: ir.Var
    handler_tests: list


class TryAdjoints:
    """Mixin of ``Reverse``: ``try`` statements in reverse mode."""

    def prepare_try(self, s: ir.Try, in_loop) -> List:
        """The statements that replace ``s`` (see the module docstring)."""
        if in_loop or s.finalbody or not s.handlers:
            return [s]  # an error later if derivatives flow through it
        loc = replace(s.loc, derived=True)
        step = ir.Var(self.names.fresh("try_step"))
        caught = ir.Var(self.names.fresh("caught"))
        guards: List[ir.Assign] = []

        def body_block(stmts):
            real, synthetic = [], []
            for x in stmts:
                if isinstance(x, ir.If):
                    r, g = body_block(x.body)
                    r2, g2 = body_block(x.orelse)
                    real.append(replace(x, body=tuple(r), orelse=tuple(r2)))
                    synthetic.append(replace(x, body=tuple(g), orelse=tuple(g2)))
                elif isinstance(x, (ir.Assign, ir.Unpack)):
                    j = len(guards) + 1
                    done = ir.Var(self.names.fresh(f"done_{j}"))
                    guards.append(ir.Assign(done, ir.Call(operator.ge, (step, ir.Const(j))),
                                            loc))
                    group = self._atomic(x)
                    marker = ir.Assign(step, ir.Const(j), x.loc)
                    real += group + [marker]
                    synthetic.append(ir.If(done, tuple(group), (), x.loc))
                else:
                    real.append(x)
                    synthetic.append(x)
            return real, synthetic

        body, guarded = body_block(s.body)
        else_test = ir.Var(self.names.fresh("no_exception"))
        tests, handlers = [], []
        for i, h in enumerate(s.handlers):
            t = ir.Var(self.names.fresh(f"caught_{i}"))
            tests.append(t)
            start = ir.Assign(caught, ir.Const(i), h.body[0].loc if h.body else s.loc)
            handlers.append(replace(h, body=(start,) + tuple(self._prepare_block(h.body, True))))
        new = replace(s, body=tuple(body), handlers=tuple(handlers),
                      orelse=tuple(self._prepare_block(s.orelse, True)))
        self.try_records[id(new)] = _TryRecord(guarded, else_test, tests)
        after = guards + [ir.Assign(else_test, ir.Call(operator.eq, (caught, ir.Const(-1))), loc)]
        after += [ir.Assign(t, ir.Call(operator.eq, (caught, ir.Const(i))), loc)
                  for i, t in enumerate(tests)]
        pre = [ir.Assign(step, ir.Const(0), loc), ir.Assign(caught, ir.Const(-1), loc)]
        return pre + [new] + after

    def _atomic(self, x) -> List:
        """``v = f(...)`` as ``t = f(...); v = t``: after the call nothing can raise."""
        if isinstance(x, ir.Assign):
            if not isinstance(x.value, ir.Call):
                return [x]
            t = self.temp()
            return [ir.Assign(t, x.value, x.loc), replace(x, value=t)]
        temps = tuple(self.temp() for _ in x.targets)
        return [replace(x, targets=temps)] + [ir.Assign(v, t, x.loc)
                                              for v, t in zip(x.targets, temps)]

    def check_try(self, s: ir.Try, active) -> None:
        inner = list(ir.walk(ir.sub_blocks_flat(s)))
        if not ({v.name for x in [s, *inner] for v in ir.stmt_defs(x)} & active):
            return
        if id(s) not in self.try_records:
            what = "'finally'" if s.finalbody else "a 'try' inside a loop"
            raise unsupported(f"{what} with differentiated values", s.loc,
                              "not yet in reverse mode")
        for x in inner:
            kind = {ir.For: "a loop", ir.While: "a loop", ir.Try: "a nested 'try'",
                    ir.Return: "'return'", ir.Break: "'break'", ir.Continue: "'continue'"}.get(
                type(x))
            if kind is not None:
                raise unsupported(f"{kind} inside a 'try' over differentiated values",
                                  getattr(x, "loc", s.loc), "not yet in reverse mode")

    def adjoint_try(self, s: ir.Try, have, out: List, loc) -> None:
        record = self.try_records.get(id(s))
        blocks = [list(s.body), list(s.orelse)] + [list(h.body) for h in s.handlers]
        defs = {v.name for b in blocks for x in ir.walk(b) for v in ir.stmt_defs(x)}
        if record is None or not defs & self.relevant:
            return
        self.tries_with_adjoint.add(id(s))
        self.loop_stack.append(self.relevant & defs)  # consumed at each assignment
        self.scope_kinds.append("try")
        branches = [(record.else_test, s.orelse)] + [
            (t, h.body) for t, h in zip(record.handler_tests, s.handlers)]
        for test, block in branches:
            if block:
                self.adjoint_if(ir.If(test, tuple(block), (), s.loc), have, out, loc)
        out += self.adjoint_block(record.guarded_body, have)
        self.scope_kinds.pop()
        self.loop_stack.pop()

    def instrument_try(self, s: ir.Try, read) -> ir.Try:
        if id(s) not in self.tries_with_adjoint:
            return s
        return replace(s, body=tuple(self._instrument(s.body, read, "try")),
                       orelse=tuple(self._instrument(s.orelse, read, "try")),
                       handlers=tuple(replace(h, body=tuple(self._instrument(h.body, read,
                                                                             "try")))
                                      for h in s.handlers))
