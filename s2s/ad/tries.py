"""Reverse mode through ``try``/``except``/``else``/``finally`` (and ``raise``).

An exception may stop the ``try`` body anywhere, so the adjoint must undo
exactly the assignments that ran.  The primal records how far it got:

* each assignment ``v = f(...)`` of the body becomes ``t = f(...); v = t;
  try_step = j`` (only the call can raise; the copy and the step marker
  cannot), with ``try_step = 0`` before the ``try``; assignments that cannot
  raise (of a name, a constant, a new tuple) join the marker of the one
  before them;
* each handler starts with ``caught = i`` (``caught = -1`` before the
  ``try``), so the adjoint knows which handler, or the ``else`` block, ran;
* after the ``try``: ``steps_done = try_step`` and ``handler = caught``.

The adjoint undoes the ``finally`` block, then the handler that ran (``if
handler == i:``) or the ``else`` block (``if handler == -1:``), then the body
with the adjoint of assignment ``j`` under ``if steps_done >= j:`` (an ``if``
of the body goes with the group that computed its test).  Values an
assignment in the ``try`` overwrites are pushed on the tape as in loops
(``ad/loops.py``); values assigned once need nothing.  A ``try`` without
handlers runs its body to the end on every path that does not raise out of
the function, so it needs no record.

Inside a loop every assignment of the ``try`` may overwrite a value the
adjoint needs, so each one is pushed, after its call: ``r = f(...); t = r;
v = t`` (a push before the call would be left unmatched by an exception).
``steps_done`` and ``handler`` are pushed after they are assigned and popped
where the adjoint meets them, which leaves this iteration's values for the
adjoint of the ``try`` that follows.  ``break``, ``continue`` and ``return``
in the ``try`` are flags by then (``passes/loop_jumps.py``,
``passes/single_exit.py``).

A loop of the body could stop part way through an iteration, so its body is
wrapped: ``error = None; for ...: try: <body> except BaseException as exc:
error = exc; break`` (the break a flag), then ``if error is not None: raise
error`` (a ``while`` loop's test moves into the wrapped body).  The inner
``try`` records its iteration's path like any ``try`` in a loop, the loop
always runs to its end, and one marker covers it.  A nested ``try`` no
exception leaves (one that catches everything with handlers that cannot
raise, as gradient code of such a loop has) is one step too.

Not yet: a nested ``try`` that may raise, in the body of a ``try`` that
carries derivatives (a clear error).  The other blocks of a ``try`` take
anything: an exception there leaves the function.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, replace
from typing import List, Optional

from s2s_runtime import build

from ..errors import unsupported
from ..ir import nodes as ir


@dataclass
class _TryRecord:
    """What the adjoint of one ``try`` needs (see the module docstring)."""

    guarded_body: list  # the body with assignment j under ``if done_j:``
    guards: dict  # done_j name -> j
    steps: Optional[ir.Var]  # steps_done (None: a try without handlers)
    handler: Optional[ir.Var]


def _cannot_raise(x) -> bool:
    """An assignment of an atom, of a new tuple or list (a tape push) or of an identity
    test, or a loop that catches what its body raises (``TryAdjoints._wrapped``)."""
    if isinstance(x, (ir.For, ir.While, ir.Try)):
        return True
    if isinstance(x, ir.Unpack):
        return False
    v = x.value
    return not isinstance(v, ir.Call) or v.fn in (build.make_tuple, build.make_list,
                                                  operator.is_, operator.is_not)


def _contained(s: ir.Try) -> bool:
    """A ``try`` no exception leaves: a handler catches everything and what can run
    after the body (handlers, ``else``, ``finally``) cannot raise (the loops
    ``TryAdjoints._wrapped`` makes, and gradient code of such loops)."""
    catches_all = any(h.type is None or (isinstance(h.type, ir.Const)
                                         and h.type.value is BaseException)
                      for h in s.handlers)
    after = [x for b in [s.orelse, s.finalbody, *[h.body for h in s.handlers]] for x in b]
    return catches_all and all(isinstance(x, (ir.Assign, ir.Break, ir.Continue))
                               and (not isinstance(x, ir.Assign) or _cannot_raise(x))
                               for x in after)


def _reads_target(x) -> bool:
    """``v = f(v, ...)``: the adjoint needs the old ``v``, so it becomes ``t = f(v, ...);
    v = t`` (as in loops)."""
    return bool({v.name for v in ir.stmt_defs(x)}
                & {a.name for a in ir.stmt_uses(x) if isinstance(a, ir.Var)})


class TryAdjoints:
    """Mixin of ``Reverse``: ``try`` statements in reverse mode."""

    def prepare_try(self, s: ir.Try, in_loop) -> List:
        """The statements that replace ``s`` (see the module docstring)."""
        blocks = dict(orelse=tuple(self._prepare_block(s.orelse, True)),
                      finalbody=tuple(self._prepare_block(s.finalbody, True)))
        if not s.handlers:  # try/finally: the body runs to its end or the function raises
            new = replace(s, body=tuple(self._prepare_block(s.body, True)), **blocks)
            self.try_records[id(new)] = _TryRecord(list(new.body), {}, None, None)
            return [new]
        loc = replace(s.loc, derived=True)
        step = ir.Var(self.names.fresh("try_step"))
        caught = ir.Var(self.names.fresh("caught"))
        guards = {}

        def new_group() -> ir.Var:
            done = self.temp()
            guards[done.name] = len(guards) + 1
            self.guard_tests.add(done.name)
            return done

        def body_block(stmts):
            real, synthetic = [], []
            open_group = False  # the last statement of this block ended a group
            pending = list(reversed(stmts))
            while pending:
                x = pending.pop()
                if isinstance(x, ir.If):
                    r, g = body_block(x.body)
                    r2, g2 = body_block(x.orelse)
                    branch = replace(x, body=tuple(g), orelse=tuple(g2))
                    if open_group:  # reached when the group before it (its test) ran
                        synthetic[-1] = replace(synthetic[-1],
                                                body=synthetic[-1].body + (branch,))
                    elif real:  # after another if: a marker of its own
                        done = new_group()
                        real.append(ir.Assign(step, ir.Const(guards[done.name]), x.loc))
                        synthetic.append(ir.If(done, (branch,), (), x.loc))
                    else:  # first in its block: reached when the block is
                        synthetic.append(branch)
                    real.append(replace(x, body=tuple(r), orelse=tuple(r2)))
                    open_group = False
                elif isinstance(x, (ir.For, ir.While)) and id(x) not in self.wrapped_loops:
                    pending += reversed(self._wrapped(x))
                elif isinstance(x, ir.Try) and _contained(x) and id(x) not in self.contained:
                    prepared = self._prepare_block([x], in_loop)  # records its own path
                    self.contained.update(id(y) for y in prepared if isinstance(y, ir.Try))
                    pending += reversed(prepared)
                elif isinstance(x, (ir.Assign, ir.Unpack, ir.For, ir.While, ir.Try)):
                    group = [x] if isinstance(x, (ir.For, ir.While, ir.Try)) else (
                        self._atomic(x) if _reads_target(x) else [x])
                    if open_group and _cannot_raise(x):
                        # it runs whenever the group before it ran to its end: one marker
                        marker = real.pop()
                        real += group + [replace(marker, loc=x.loc)]
                        synthetic[-1] = replace(synthetic[-1],
                                                body=synthetic[-1].body + tuple(group))
                        continue
                    done = new_group()
                    if not _cannot_raise(x):
                        group = self._atomic(x)
                    real += self._received(group) if in_loop else group
                    real.append(ir.Assign(step, ir.Const(guards[done.name]), x.loc))
                    synthetic.append(ir.If(done, tuple(group), (), x.loc))
                    open_group = True
                else:
                    real.append(x)
                    synthetic.append(x)
                    open_group = False
            return real, synthetic

        body, guarded = body_block(s.body)
        handlers = []
        for i, h in enumerate(s.handlers):
            start = ir.Assign(caught, ir.Const(i), h.body[0].loc if h.body else s.loc)
            handlers.append(replace(h, body=(start,) + tuple(self._prepare_block(h.body, True))))
        new = replace(s, body=tuple(body), handlers=tuple(handlers), **blocks)
        steps = ir.Var(self.names.fresh("steps_done"))
        handler = ir.Var(self.names.fresh("handler"))
        self.try_records[id(new)] = _TryRecord(guarded, guards, steps, handler)
        if in_loop:  # pushed after they are set (see the module docstring)
            self.pushed_after.update((steps.name, handler.name))
        pre = [ir.Assign(step, ir.Const(0), loc), ir.Assign(caught, ir.Const(-1), loc)]
        after = [ir.Assign(steps, step, loc), ir.Assign(handler, caught, loc)]
        return pre + [new] + after

    def _wrapped(self, loop) -> List:
        """A loop of a ``try`` body that catches whatever its body raises, so it ends
        after a whole number of recorded steps and the exception is raised again after
        it (see the module docstring).  A ``while`` loop's test moves into its body:
        ``while True: try: <test>; if not test: ran_out = True; break; <body> ...``,
        its ``else`` block after it under ``if ran_out:``."""
        loc = replace(loop.loc, derived=True)
        error, caught = ir.Var(self.names.fresh("error")), ir.Var(self.names.fresh("exc"))
        catch = ir.Handler(ir.Const(BaseException), caught,
                           (ir.Assign(error, caught, loc), ir.Break(loc)))
        before, body, after = [ir.Assign(error, ir.Const(None), loc)], list(loop.body), []
        if isinstance(loop, ir.While):
            ran_out, stop = ir.Var(self.names.fresh("ran_out")), self.temp()
            body = list(loop.test_body) + [
                ir.Assign(stop, ir.Call(operator.not_, (loop.test,)), loc),
                ir.If(stop, (ir.Assign(ran_out, ir.Const(True), loc), ir.Break(loc)), (),
                      loc)] + body
            before.append(ir.Assign(ran_out, ir.Const(False), loc))
            if loop.orelse:
                after.append(ir.If(ran_out, loop.orelse, (), loc))
            loop = ir.While((), ir.Const(True), (), (), loop.loc)
        wrapper = ir.Try(tuple(body), (catch,), loc=loc)
        prepared = self._prepare_block([replace(loop, body=(wrapper,))], True)
        new = replace(prepared[-1], orelse=())  # the else block follows: no jump is left
        self.wrapped_loops.add(id(new))
        failed = self.temp()
        return (before + prepared[:-1] + [new] + list(prepared[-1].orelse) + after
                + [ir.Assign(failed, ir.Call(operator.is_not, (error, ir.Const(None))), loc),
                   ir.If(failed, (ir.Raise(error, loc),), (), loc)])

    def _atomic(self, x) -> List:
        """``v = f(...)`` as ``t = f(...); v = t``: after the call nothing can raise."""
        if isinstance(x, ir.Assign):
            if not isinstance(x.value, ir.Call) and not _reads_target(x):
                return [x]
            t = self.temp()
            return [ir.Assign(t, x.value, x.loc), replace(x, value=t)]
        temps = tuple(self.temp() for _ in x.targets)
        return [replace(x, targets=temps)] + [ir.Assign(v, t, x.loc)
                                              for v, t in zip(x.targets, temps)]

    def _received(self, group) -> List:
        """``group`` with its first statement's call received by fresh names, so the
        pushes before the assignments come after the only statement that may raise."""
        first = group[0]
        if isinstance(first, ir.Assign) and isinstance(first.value, ir.Call):
            r = self.temp()
            return [ir.Assign(r, first.value, first.loc), replace(first, value=r)] + group[1:]
        if isinstance(first, ir.Unpack):
            rs = tuple(self.temp() for _ in first.targets)
            return [replace(first, targets=rs)] + [ir.Assign(t, r, first.loc) for t, r in
                                                   zip(first.targets, rs)] + group[1:]
        return list(group)

    def check_try(self, s: ir.Try, active) -> None:
        inner = list(ir.walk(ir.sub_blocks_flat(s)))
        if not ({v.name for x in [s, *inner] for v in ir.stmt_defs(x)} & active):
            return
        # an exception that stops the body part way through a loop or a try: only loops
        # s2s made safe (``_wrapped``); the other blocks raise out of the function
        body = list(ir.walk(s.body)) if s.handlers else []
        for x in body:
            if isinstance(x, (ir.For, ir.While)) and id(x) not in self.wrapped_loops:
                raise unsupported("this loop inside the body of a 'try' over differentiated "
                                  "values", x.loc, "not yet in reverse mode")
            if isinstance(x, ir.Try) and not _contained(x):
                raise unsupported("a nested 'try' inside the body of a 'try' over "
                                  "differentiated values", x.loc, "not yet in reverse mode")
        for x in inner:
            if isinstance(x, ir.Return):  # single_exit takes them out of every try
                raise unsupported("'return' inside a 'try' over differentiated values", x.loc)

    def adjoint_try(self, s: ir.Try, have, out: List, loc) -> None:
        record = self.try_records.get(id(s))
        blocks = [s.body, s.orelse, s.finalbody] + [h.body for h in s.handlers]
        defs = {v.name for b in blocks for x in ir.walk(b) for v in ir.stmt_defs(x)}
        if record is None or not (self.loop_stack or defs & self.relevant):
            return  # inside a loop the tape must still restore what the try overwrote
        self.tries_with_adjoint.add(id(s))
        self.loop_stack.append(self.relevant & defs)  # consumed at each assignment
        self.scope_kinds.append("try")
        out += self.adjoint_block(list(s.finalbody), have)
        if record.handler is not None:
            branches = [(-1, s.orelse)] + [(i, h.body) for i, h in enumerate(s.handlers)]
            for i, block in branches:
                test, mark = self.temp(), len(out)
                self.guard_tests.add(test.name)
                self.adjoint_if(ir.If(test, tuple(block), (), s.loc), have, out, loc)
                if len(out) > mark:  # handler == i
                    out.insert(mark, ir.Assign(test, ir.Call(operator.eq, (
                        record.handler, ir.Const(i))), loc))
        out += self._with_guards(self.adjoint_block(record.guarded_body, have), record)
        self.scope_kinds.pop()
        self.loop_stack.pop()

    def _with_guards(self, stmts, record) -> List:
        """``done_j = steps_done >= j`` before each ``if done_j:`` of the adjoint."""
        out = []
        for x in stmts:
            if isinstance(x, ir.If):
                x = replace(x, body=tuple(self._with_guards(x.body, record)),
                            orelse=tuple(self._with_guards(x.orelse, record)))
                j = record.guards.get(getattr(x.test, "name", None))
                if j is not None:
                    out.append(ir.Assign(x.test, ir.Call(operator.ge, (record.steps,
                                                                       ir.Const(j))), x.loc))
            out.append(x)
        return out

    def instrument_try(self, s: ir.Try, read, in_loop) -> ir.Try:
        if id(s) not in self.tries_with_adjoint:
            return s
        scope = True if in_loop is True else "try"

        def inst(block):
            return tuple(self._instrument(block, read, scope))
        return replace(s, body=inst(s.body), orelse=inst(s.orelse), finalbody=inst(s.finalbody),
                       handlers=tuple(replace(h, body=inst(h.body)) for h in s.handlers))
