"""Lowering of loops (a mixin of ``lower.function.FunctionLowering``): ``for`` over ``range``
(any step) or over an array's first axis, ``while``, ``break`` and ``continue``.

A ``for`` loop is emitted in one of three shapes, each a copy of the same loop:

* plain: head (the trip test), body, step, then the ``else`` block or, on
  ``break``, the end;
* bounds-versioned (``loop_versions``): when the indices of the body's accesses
  are affine in the loop variable, one test before the loop chooses a copy
  without per-access bounds checks or the fully checked one;
* register windows (``scalar_windows``): an adjoint stencil loop keeps the
  elements it touches in registers, versioned on its own run-time test.

Arrays the loop's adjoint updates in place are made unique before it
(``unique_adjoints``), and tape room is reserved from the trip count (``stacks``).
"""
from __future__ import annotations

from llvmlite import ir as ll

from ....errors import UnsupportedSyntaxError
from ....ir import nodes as ir
from . import loop_versions, scalar_windows, stacks, unique_adjoints
from ..typing import types as T


class LoopLowering:
    def stmt_For(self, s):
        it, t = self.atom(s.iter)
        if isinstance(t, T.Range):
            start, stop, step = (self.b.extract_value(it, k) for k in range(3))
            if isinstance(s.iter, ir.Var) or step.constant == 0:
                zero = self.b.icmp_signed("==", step, ll.Constant(T.I64, 0))
                self.check(zero, ValueError, "range() arg 3 must not be zero")
            element = None
        elif isinstance(t, T.Array):
            from ..values.arrays import shape_of
            start, stop, step = ll.Constant(T.I64, 0), shape_of(self, it, 0), ll.Constant(T.I64, 1)
            element = (it, t)
        else:
            raise UnsupportedSyntaxError(f"jit: a for loop over a {t}", s.loc)
        stacks.reserve_for_loop(self, s, start, stop, step)
        owned = unique_adjoints.owned_in_loop(self, s)
        for name in owned:
            unique_adjoints.make_owned(self, name)
        self.owned.update(owned)
        windows = scalar_windows.plan(self, s, t)  # adjoint stencils: elements in registers
        if windows is not None:  # checked at run time: the register copy, else the plain loop
            windows.version(self, start, stop, step,
                            lambda w: self._loop_with_exits(s, start, stop, step, element, w))
            self.owned.difference_update(owned)
            return
        orelse = self.fn.append_basic_block("for.else")
        after = self.fn.append_basic_block("for.end")
        versions = loop_versions.plan(self, s) if element is None else None
        if versions is None:
            self._loop_copy(s, start, stop, step, element, orelse, after)
        else:  # in bounds for sure: the copy without those checks, else the checked one
            fast = self.fn.append_basic_block("for.unchecked")
            checked = self.fn.append_basic_block("for.checked")
            self.b.cbranch(loop_versions.precheck(self, versions, start, stop, step),
                           fast, checked)
            self.b.position_at_end(fast)
            outer, self.prechecked = self.prechecked, versions.statements
            self._loop_copy(s, start, stop, step, element, orelse, after)
            self.prechecked = outer
            self.b.position_at_end(checked)
            self._loop_copy(s, start, stop, step, element, orelse, after)
        self._loop_exits(s, orelse, after)
        self.owned.difference_update(owned)

    def _loop_with_exits(self, s, start, stop, step, element, windows):
        """One whole copy of the loop, its ``else`` and its exit (a ``scalar_windows``
        version: each copy ends where the versioning's branches join)."""
        orelse = self.fn.append_basic_block("for.else")
        after = self.fn.append_basic_block("for.end")
        self._loop_copy(s, start, stop, step, element, orelse, after, windows)
        self._loop_exits(s, orelse, after)

    def _loop_exits(self, s, orelse, after):
        """The ``else`` block (run when the loop ends without ``break``), then ``after``."""
        self.b.position_at_end(orelse)
        self.block(s.orelse)
        if not self.b.block.is_terminated:
            self.b.branch(after)
        self.b.position_at_end(after)

    def _loop_copy(self, s, start, stop, step, element, orelse, after, windows=None):
        """The loop proper (head, body, step), leaving to ``orelse`` or ``after``; with
        ``windows`` (``scalar_windows``), the window's elements are stored back on the
        way to ``orelse`` (such loops have no ``break``)."""
        exhausted = orelse
        if windows is not None:
            exhausted = self.fn.append_basic_block("for.done")
        counter = self.entry_alloca(T.I64, name="for.i")
        self.b.store(start, counter)
        head = self.fn.append_basic_block("for.head")
        body = self.fn.append_basic_block("for.body")
        step_block = self.fn.append_basic_block("for.step")
        self.b.branch(head)
        self.b.position_at_end(head)
        i = self.b.load(counter)
        up = self.b.icmp_signed(">", step, ll.Constant(T.I64, 0))
        more = self.b.select(up, self.b.icmp_signed("<", i, stop), self.b.icmp_signed(">", i, stop))
        self.b.cbranch(more, body, exhausted)
        self.b.position_at_end(body)
        if element is None:
            self.store(s.target.name, i, T.INT)
        else:
            from ..values.arrays import first_axis_item
            item, item_t = first_axis_item(self, element[0], element[1], i)
            self.store(s.target.name, item, item_t)
        if windows is not None:
            windows.begin(self, i)
        self.loops.append((step_block, after))
        self.block(s.body)
        self.loops.pop()
        if not self.b.block.is_terminated:
            if windows is not None:
                windows.end(self, i)
            self.b.branch(step_block)
        self.b.position_at_end(step_block)
        self.b.store(self.b.add(self.b.load(counter), step), counter)
        self.b.branch(head)
        if windows is not None:
            self.b.position_at_end(exhausted)
            windows.finish(self, self.b.load(counter))
            self.b.branch(orelse)

    def stmt_While(self, s):
        head = self.fn.append_basic_block("while.head")
        body = self.fn.append_basic_block("while.body")
        orelse = self.fn.append_basic_block("while.else")
        after = self.fn.append_basic_block("while.end")
        self.b.branch(head)
        self.b.position_at_end(head)
        self.loops.append((head, after))
        self.block(s.test_body)
        if not self.b.block.is_terminated:
            value, t = self.atom(s.test)
            self.b.cbranch(self.truth(value, t), body, orelse)
        self.b.position_at_end(body)
        self.block(s.body)
        self.loops.pop()
        if not self.b.block.is_terminated:
            self.b.branch(head)
        self.b.position_at_end(orelse)
        self.block(s.orelse)
        if not self.b.block.is_terminated:
            self.b.branch(after)
        self.b.position_at_end(after)

    def stmt_Break(self, s):
        self.b.branch(self.loops[-1][1])

    def stmt_Continue(self, s):
        self.b.branch(self.loops[-1][0])
