"""A checkpointed loop at run time: the segment function and its schedule.

``passes/checkpoint_loops.py`` turns ``for i in checkpoint_loop(range(...)):``
into one call ``state = loop(lo, hi, step, *state, *reads)`` of a
``LoopRemat``, whose function (``segment``) runs the loop's iterations
``range(lo, hi, step)`` on the carried ``state`` and returns the new state.

Its pullback runs a *multi-level uniform* schedule (``levels`` L, n steps):
with ``m = ceil(n ** (1/L))``, a range longer than ``m`` is cut into ``m``
chunks; a plain (untaped) sweep stores the state at the start of each chunk,
then the chunks are reversed last to first, each by the same rule one level
down; a range of at most ``m`` steps (or at level 1) runs the generated vjp of
the segment (taped primal then adjoint).  Cost:

* snapshots: at most ``L * m`` states alive at once, plus the tape of one
  leaf range of about ``m`` steps, so memory is O(L n^(1/L)) states: O(sqrt n)
  for L = 2 (the default), O(log n) for ``levels="log"`` (m = 2);
* time: one untaped sweep per level above the leaves, so (L - 1) n extra
  primal steps in all, plus the n taped steps and their adjoint: about one
  extra primal for L = 2, O(n log n) steps for ``levels="log"``.

The loop's invariant inputs (``reads``) get the sum of their cotangents
over all leaf ranges.  The second derivative of a checkpointed loop is the
second derivative of the whole loop's generated vjp (recorded in full).
"""
from __future__ import annotations

import math

import s2s_runtime as rt

from ..errors import S2SError
from .remat import Remat, RematPullback, FixedFunction, has_none, kinds_of, ir_callable
from ..passes.checkpoint_loops import set_loop_factory


class LoopRemat(FixedFunction, Remat):
    """``(lo, hi, step, levels, *state, *reads) -> (*state, *reads)`` of one
    checkpointed loop."""

    def __init__(self, segment, n_state: int, name: str):
        super().__init__(ir_callable(segment), (0, 1, 2, 3), name)
        self.segment = segment
        self.n_state = n_state
        self._primal = None

    def __repr__(self) -> str:
        return f"<checkpointed loop {self.__name__}>"

    def __call__(self, *args):
        if self._primal is None:
            from .pipeline import compile_function

            self._primal, _ = compile_function(self.segment)
        return self._primal(*args)

    def check_replayable(self) -> None:  # checked when the loop was extracted
        return None

    @property
    def pullback(self):
        if self._pullback is None:
            self._pullback = LoopPullback(self)
        return self._pullback


class LoopPullback(RematPullback):
    """The pullback of a ``LoopRemat``, run by the schedule of the module docstring."""

    def __call__(self, *args):
        base = self.base
        lo, hi, step, levels = args[:4]
        k = base.n_state
        state, reads, ct = tuple(args[4:4 + k]), tuple(args[4 + k:-1]), args[-1]
        r = range(lo, hi, step)
        n = len(r)
        if levels == "log":
            width, levels = 2, max(1, math.ceil(math.log2(max(n, 2))))
        else:
            width = max(2, math.ceil(n ** (1.0 / levels) - 1e-9))
        run = _Schedule(base, r, levels, reads, width)
        ct_state = tuple(ct[:k])
        if has_none(ct_state):  # the final state of carried values nobody read later
            ct_state = rt.densify(ct_state, run.sweep(0, n, state))
        ct_reads = rt.densify(tuple(ct[k:]), reads)  # the seeds of the reads' adjoints
        state_ct, reads_ct = run.reverse(0, n, state, ct_state + ct_reads, levels)
        return (None, None, None, None) + state_ct + reads_ct


class _Schedule:
    def __init__(self, base: LoopRemat, r: range, levels, reads: tuple, width: int):
        self.base, self.r, self.reads, self.width = base, r, reads, width
        self.levels = levels
        self.k = base.n_state
        self.kinds = set()

    def bounds(self, p0: int, p1: int) -> tuple:
        r = self.r
        return (r.start + p0 * r.step, r.start + p1 * r.step, r.step, self.levels)

    def sweep(self, p0: int, p1: int, state: tuple) -> tuple:
        """The state after positions ``p0 .. p1 - 1``, nothing recorded."""
        out = tuple(self.base(*self.bounds(p0, p1), *state, *self.reads)[:self.k])
        self.kinds.add(kinds_of(out))
        if len(self.kinds) > 2:  # each kind of state is code of its own
            raise S2SError(
                "the values a checkpointed loop carries from one iteration to the next "
                "change their kind (structure, shape or dtype) as it runs, e.g. a list it "
                "appends to; checkpoint_loop needs a state of fixed shape",
                self.base.segment.loc)
        return out

    def reverse(self, p0: int, p1: int, state: tuple, ct: tuple, level: int):
        """``(state_ct, reads_ct)`` at ``p0`` from ``ct`` (the state's cotangent at ``p1``,
        then the reads' cotangents so far); ``state``: the state at ``p0``."""
        k = self.k
        if p1 <= p0:
            return ct[:k], ct[k:]
        if level <= 1 or p1 - p0 <= self.width:
            cts = self.base.vjp_call(self.bounds(p0, p1) + state + self.reads, ct)
            return tuple(cts[4:4 + k]), tuple(cts[4 + k:])
        chunk = math.ceil((p1 - p0) / self.width)
        starts = list(range(p0, p1, chunk))
        snapshots = [state]
        for a in starts[:-1]:
            snapshots.append(self.sweep(a, a + chunk, snapshots[-1]))
        for a in reversed(starts):
            ct = sum(self.reverse(a, min(a + chunk, p1), snapshots.pop(), ct, level - 1), ())
        return ct[:k], ct[k:]


set_loop_factory(LoopRemat)  # passes/checkpoint_loops.py makes one per checkpointed loop
