"""The batching transform (``s2s.vmap``): an IR function over one example -> the same
function over a batch of examples.

Contract: accepts an IR function from ``pipeline.front`` (user calls inlined,
single exit) and the names of its parameters that are batched (batch on
axis 0 of every array leaf, see ``s2s_runtime.batching``); returns a function
with the same parameters that computes every example at once and returns
the batched result (``out_batched`` says whether the result depends on the
batch at all).  Statement by statement:

* *batching analysis*: a variable is batched when its value depends on a
  batched parameter, through data or through a branch or loop condition
  that is batched (a fixpoint over loops; flow-insensitive per name, so a
  batched name that is assigned an unbatched value gets it broadcast,
  ``rt.batch_lift``);
* a call with a batched operand is rewritten by the primitive's batching
  rule (``table.py``, ``rules_*.py``); without one it is an error naming the
  primitive and the line, or, with ``fallback="loop"``, a loop over the
  batch for that call only (``rt.batch_loop``);
* ``if`` on an unbatched condition and loops with unbatched trip counts stay
  as they are; ``for`` over a batched array iterates over the examples' rows;
* ``if`` on a batched condition runs both branches and selects per example
  (``rt.batch_select``); in-place writes in a branch are masked to the examples
  that take it; ``raise``, ``return``, ``break``, ``continue`` in such a branch
  are errors (``control.py``);
* ``while`` on a batched condition runs until every example is done; the
  examples already done keep their values (a mask of active examples);
* ``for`` over a range whose bounds differ per example: a masked ``while``, or,
  where the range is read again or the loop records or replays a tape (reverse
  mode's code), ``M`` aligned batch iterations (``lanes.py``); tapes stay one
  stack for the batch, so ``vmap(grad(f))`` batches per-example trip counts;
* a read ``x[i]`` with a per-example index raises ``IndexError`` where ``i`` is out
  of range in an example that runs it (finished examples read a clamped index);
* a read ``x[i]`` whose examples are numbers is a value (``value_reads.py``: copied
  where ``x`` may be written in place while the read is used), as numpy's is;
* in-place operators change an example in place only where it is an array
  (``rt.batch_inplace``), as Python does; in-place writes ``x[i] = v`` become
  ``rt.batch_setitem`` (the index shifted past the batch axis, or gathered
  per example when the index is batched).
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import List, Set

import numpy as np

import s2s_runtime as rt

from ..errors import S2SError
from ..ir import nodes as ir
from ..ir.names import NameGen
from . import lanes
from .table import Site, batch_rule


class BatchingError(S2SError):
    """A construct ``vmap`` cannot batch (a primitive without a batching rule, or
    control flow that differs per example in a way that cannot be masked)."""


def _describe(fn) -> str:
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    mod = "rt" if mod.startswith("s2s_runtime") else {
        "numpy": "np", "_operator": "operator", "builtins": ""}.get(mod, mod)
    return f"{mod}.{name}" if mod else name


class Batch:
    def __init__(self, fn: ir.Function, batched_params, fallback=None):
        self.fn = fn
        self.names = NameGen(ir.all_names(fn))
        self.temps = set(fn.temps)
        self.batched: Set[str] = set(batched_params)
        self.params_batched = [p.var.name for p in fn.params if p.var.name in self.batched]
        self.fallback = fallback
        #: ``(callable, flags) -> callable or None`` (set by the caller, ``core/vmap.py``):
        #: the function computing a call on operands batched (on axis 0) where ``flags``
        #: says, its whole result batched, for a call mapped as a whole (a custom
        #: function keeps its rule, a ``vmap`` site merges with this batch); None when
        #: the call is batched by its rule
        self.mapped_whole = lambda fn, flags: None
        self._size = None
        self.mask = None
        #: per try body enclosing the statement batched, the refusals raised in it
        self.try_raises: List[list] = []
        self.defined: Set[str] = {p.var.name for p in fn.params}
        self.count_names(fn.body)
        self.out_batched = False
        #: which parts of the result are batched: 0 (batched) or None per item of the
        #: tuples, lists and dicts the function builds and returns, else one entry
        self.out_tree = None
        #: names known to hold numpy arrays (indexing them needs no container check)
        self.arrays: Set[str] = set()
        #: parameters whose examples are numbers (set by the caller) and the names that
        #: certainly hold one number per example (``scalars.py``)
        self.scalar_params: Set[str] = set()
        self.vector_params: Set[str] = set()  # examples that are 1-D arrays of numbers
        self.scalars: Set[str] = set()
        #: tapes (names used only as stacks) and ranges with per-example bounds (``lanes.py``)
        self.stacks: Set[str] = set()
        self.range_names: Set[str] = set()
        self.replayed: Set[str] = set()
        self.lane_ranges: Set[str] = set()
        #: names that may share memory with an array written in place (``value_reads.py``)
        self.changing: Set[str] = set()
        self.safe_reads: Set[int] = set()

    def known_array(self, atom) -> bool:
        return isinstance(atom, ir.Var) and atom.name in self.arrays

    def size_var(self) -> ir.Var:
        if self._size is None:
            self._size = ir.Var(self.names.fresh("batch_size"))
        return self._size

    def temp(self) -> ir.Var:
        name = self.names.temp()
        self.temps.add(name)
        return ir.Var(name)

    # -- batching analysis ---------------------------------------------------------
    def is_b(self, atom) -> bool:
        return isinstance(atom, ir.Var) and atom.name in self.batched

    def expr_batched(self, v) -> bool:
        if isinstance(v, ir.Call):
            if not any(self.is_b(a) for a in v.operands()):
                return False
            rule = batch_rule(v.fn)
            if rule is None or not rule.unbatched_result:
                return True
            return callable(rule.unbatched_result) and not rule.unbatched_result(v)
        return self.is_b(v)

    def analyse(self, stmts, ctrl: bool) -> None:
        for s in stmts:
            if isinstance(s, ir.Assign):
                if ctrl or self.expr_batched(s.value):
                    self.batched.add(s.target.name)
            elif isinstance(s, ir.Unpack):
                if ctrl or self.is_b(s.value):
                    self.batched.update(t.name for t in s.targets)
            elif isinstance(s, ir.ExprStmt):
                v = s.value
                if isinstance(v, ir.Call) and v.fn is operator.setitem and \
                        isinstance(v.args[0], ir.Var) and (ctrl or self.is_b(v.args[1])
                                                           or self.is_b(v.args[2])):
                    self.batched.add(v.args[0].name)
            elif isinstance(s, ir.If):
                inner = ctrl or self.is_b(s.test)
                if inner:
                    from .control import branch_locals
                    kept = branch_locals(s, self.uses, self.def_counts)
                    if kept:  # values the branch alone reads: batched only by their operands
                        self.analyse_except(s, kept)
                        continue
                self.analyse(s.body, inner)
                self.analyse(s.orelse, inner)
            elif isinstance(s, ir.For):
                if self.is_b(s.iter):
                    self.batched.add(s.target.name)
                per_example = self.is_b(s.iter) and s.iter.name in self.range_names
                self.analyse(s.body, ctrl or per_example)
                self.analyse(s.orelse, ctrl)
            elif isinstance(s, ir.While):
                self.analyse(s.test_body, ctrl or self.is_b(s.test))
                inner = ctrl or self.is_b(s.test)
                self.analyse(s.test_body, inner)
                self.analyse(s.body, inner)
                self.analyse(s.orelse, ctrl)
            elif isinstance(s, ir.Try):
                for block in ir.sub_blocks(s):
                    self.analyse(block, ctrl)

    def analyse_except(self, s: ir.If, kept) -> None:
        """``analyse`` of the blocks of a branch whose condition differs per example,
        where the names ``kept`` are batched only where their values are."""
        for block in (s.body, s.orelse):
            for stmt in block:
                if isinstance(stmt, ir.Assign) and stmt.target.name in kept:
                    if self.expr_batched(stmt.value):
                        self.batched.add(stmt.target.name)
                else:
                    self.analyse([stmt], True)

    def count_names(self, body) -> None:
        """How often each name is read (``uses``) and assigned (``def_counts``) in
        ``body``, the function's body as batching sees it."""
        self.uses = ir.use_counts(body)
        self.def_counts = {}
        for stmt in ir.walk(body):
            for v in ir.stmt_defs(stmt):
                self.def_counts[v.name] = self.def_counts.get(v.name, 0) + 1

    # -- rewriting -----------------------------------------------------------------
    def error(self, what, loc) -> BatchingError:
        return BatchingError(f"vmap: {what}", loc)

    def lift(self, value, loc) -> ir.Call:
        return ir.Call(rt.batch_lift, (value, self.size_var()))

    def block(self, stmts) -> List:
        out: List = []
        for s in stmts:
            loc = replace(s.loc, derived=True)
            if isinstance(s, ir.Assign):
                out += self.assign(s, loc)
                self.defined.add(s.target.name)
            elif isinstance(s, ir.Unpack):
                out += self.unpack(s, loc)
                self.defined.update(t.name for t in s.targets)
            elif isinstance(s, ir.ExprStmt):
                out += self.expr_stmt(s, loc)
            elif isinstance(s, ir.If):
                if self.is_b(s.test):
                    from .control import select_if
                    out += select_if(self, s, loc)
                else:
                    out.append(replace(s, body=tuple(self.block(s.body)),
                                       orelse=tuple(self.block(s.orelse))))
            elif isinstance(s, ir.For) and isinstance(s.iter, ir.Var) and \
                    s.iter.name in self.lane_ranges:
                out += lanes.aligned_for(self, s, loc)
            elif isinstance(s, ir.For):
                out += self.for_loop(s, loc)
            elif isinstance(s, ir.While):
                if self.is_b(s.test):
                    from .control import masked_while
                    lanes.check_while(self, s, loc)
                    out += masked_while(self, s, loc)
                else:
                    out.append(replace(s, test_body=tuple(self.block(s.test_body)),
                                       body=tuple(self.block(s.body)),
                                       orelse=tuple(self.block(s.orelse))))
            elif isinstance(s, ir.Try):
                self.try_raises.append([])  # raises per example in its body (raising_if)
                body = self.block(s.body)
                raised = self.try_raises.pop()
                handlers = tuple(replace(h, body=tuple(self.block(h.body))) for h in s.handlers)
                if raised and handlers:  # the refusal raising_if raises passes every handler
                    handlers = (ir.Handler(ir.Const(rt.BatchingRuntimeError), None,
                                           (ir.Raise(raised[0], loc),)),) + handlers
                elif any(_may_catch_batching_errors(h) for h in handlers):
                    # batched code's own refusals (containers of lengths that differ per
                    # example...) pass the user's handlers: never caught and gone on from
                    handlers = (ir.Handler(ir.Const(rt.BatchingRuntimeError), None,
                                           (ir.Raise(None, loc),)),) + handlers
                if raised and self.try_raises:
                    self.try_raises[-1] += raised
                out.append(replace(s, body=tuple(body), handlers=handlers,
                                   orelse=tuple(self.block(s.orelse)),
                                   finalbody=tuple(self.block(s.finalbody))))
            elif isinstance(s, ir.Assert) and self.is_b(s.test):
                t = self.temp()
                out += [ir.Assign(t, ir.Call(np.all, (s.test,)), loc), replace(s, test=t)]
            else:
                out.append(s)
        return out

    def call(self, v: ir.Call, loc) -> tuple:
        """``(statements, expression)`` computing call ``v`` on its (partly) batched operands."""
        if not any(self.is_b(a) for a in v.operands()):
            return [], v
        whole = self.mapped_whole(v.fn, tuple(self.is_b(a) for a in v.args))
        if whole is not None:
            if v.kwargs:
                raise self.error(f"{_describe(v.fn)} with keyword arguments", loc)
            return [], ir.Call(whole, v.args)
        rule = batch_rule(v.fn)
        site = Site(self, v, loc)
        if rule is not None:
            return site.out, rule.rule(site)
        if self.fallback == "loop":
            flags = tuple(self.is_b(a) for a in v.args)
            if any(self.is_b(a) for _, a in v.kwargs):
                raise self.error(f"{_describe(v.fn)} with a batched keyword argument", loc)
            return [], ir.Call(rt.batch_loop, (ir.Const(v.fn), ir.Const(flags), self.size_var())
                               + v.args, v.kwargs)
        raise self.error(f"no batching rule for {_describe(v.fn)} (called on a value that "
                         "differs per example); pass fallback='loop' to s2s.vmap to run it "
                         "once per example", loc)

    def assign(self, s: ir.Assign, loc) -> List:
        target_b = s.target.name in self.batched
        v = s.value
        ranged = lanes.range_assign(self, s, loc)
        if ranged is not None:
            return ranged
        if isinstance(v, ir.Call):
            pre, expr = self.call(v, loc)
            made_b = self.expr_batched(v)
        else:
            pre, expr, made_b = [], v, self.is_b(v)
        if isinstance(expr, ir.Call) and ((isinstance(expr.fn, np.ufunc) and expr.fn.nout == 1)
                                          or expr.fn is rt.batch_contract):
            # (a ufunc of two results, np.divmod, np.modf, np.frexp: a tuple of arrays)
            self.arrays.add(s.target.name)
        if target_b and not made_b:
            if isinstance(expr, ir.Call):
                t = self.temp()
                pre.append(ir.Assign(t, expr, s.loc))
                expr = t
            return pre + [ir.Assign(s.target, self.lift(expr, loc), s.loc)]
        return pre + [replace(s, value=expr)]

    def unpack(self, s: ir.Unpack, loc) -> List:
        out = []
        value = s.value
        if self.is_b(value):
            rows = self.temp()
            self.batched.add(rows.name)
            out.append(ir.Assign(rows, ir.Call(rt.batch_rows, (value,)), loc))
            return out + [replace(s, value=rows)] + self.values_of(s.targets, value, loc)
        if any(t.name in self.batched for t in s.targets):
            temps = tuple(self.temp() for _ in s.targets)
            out.append(replace(s, targets=temps))
            for t, tmp in zip(s.targets, temps):
                out.append(ir.Assign(t, self.lift(tmp, loc) if t.name in self.batched else tmp,
                                     loc))
            return out
        return [s]

    def expr_stmt(self, s: ir.ExprStmt, loc) -> List:
        v = s.value
        if isinstance(v, ir.Call) and v.fn is operator.setitem and self.is_b(v.args[0]):
            x, index, value = v.args
            mask = (self.mask,) if self.mask is not None else ()
            return [ir.ExprStmt(ir.Call(rt.batch_setitem, (x, index, value,
                                                          ir.Const(self.is_b(index)),
                                                          ir.Const(self.is_b(value))) + mask),
                                s.loc)]
        if isinstance(v, ir.Call):
            pre, expr = self.call(v, loc)
            return pre + [replace(s, value=expr)]
        return [s]

    def values_of(self, targets, source, loc) -> List:
        """Items of batched ``source`` (a loop's, an unpacking's) as values where each
        example is a number and ``source`` may be written in place (``value_reads.py``)."""
        if not (isinstance(source, ir.Var) and source.name in self.changing) or \
                source in targets:  # a pop of a chain (reverse mode's tape): a tuple
            return []
        return [ir.Assign(t, ir.Call(rt.batch_value, (t, source)), loc) for t in targets]

    def for_loop(self, s: ir.For, loc) -> List:
        out = []
        it = s.iter
        target = s.target
        head = []
        if self.is_b(it) and not (isinstance(it, ir.Var) and it.name in self.iterators):
            rows = self.temp()
            out.append(ir.Assign(rows, ir.Call(rt.batch_rows, (it,)), loc))
            head = self.values_of((target,), it, loc)
            it = rows
        elif self.is_b(it):  # a zip/enumerate of batched rows yields them as they are,
            head = self.values_of((target,), it, loc)  # and stays one that reverse mode
            # indexes (passes/loop_ranges.py)
        elif target.name in self.batched:
            target = self.temp()
            head = [ir.Assign(s.target, self.lift(target, loc), loc)]
        self.defined.add(s.target.name)
        body = head + self.block(s.body)
        return out + [replace(s, target=target, iter=it, body=tuple(body),
                              orelse=tuple(self.block(s.orelse)))]

    # -- driver --------------------------------------------------------------------
    def build(self, name: str) -> ir.Function:
        body = list(self.fn.body)
        while True:  # (twice where loops with jumps per example get flags)
            self.stacks = lanes.tape_stacks(body)
            self.range_names = lanes.range_names(body, self.stacks)
            self.replayed = lanes.replayed_names(body, self.stacks)
            from .value_reads import written_views
            groups = written_views(body)
            while True:
                before = len(self.batched)
                self.analyse(body, False)
                for group in groups:  # a view written with batched values: its array too
                    if group & self.batched:
                        self.batched |= group
                if len(self.batched) == before:
                    break
            from .control import jumps_as_flags
            body, flagged = jumps_as_flags(self, body)
            if not flagged:
                break
            self.count_names(body)
        # a tape made afresh in each trip of a loop: one stack only if every example runs
        # the same trips (else it is a value per example, selected like any other)
        per_example = {n for n, loops in lanes.stack_loops(body, self.stacks).items()
                       if any(self.is_b(f.iter) for f in loops)}
        if per_example:
            self.stacks -= per_example
            self.range_names = lanes.range_names(body, self.stacks)
            self.replayed = lanes.replayed_names(body, self.stacks)
        # loops over a range whose bounds differ per example: masked while loops
        from .control import ranges_as_whiles
        body, made = ranges_as_whiles(body, lanes.keep_range_loop(self, body),
                                      self.names.fresh)
        if made:
            self.count_names(body)
            while True:
                before = len(self.batched)
                self.analyse(body, False)
                if len(self.batched) == before:
                    break
        from . import rules  # noqa: F401  (register the batching rules)
        # a parameter given unbatched that the code later assigns batched values: batched
        # from the start (every name is batched or not throughout the function)
        lifted = [ir.Assign(p.var, self.lift(p.var, self.fn.loc), self.fn.loc)
                  for p in self.fn.params if p.var.name in self.batched
                  and p.var.name not in self.params_batched]
        from .rules_core import ELEMENTWISE
        from .scalars import scalar_names
        from .value_reads import changing_names, safe_reads
        self.changing = changing_names(body)
        self.iterators = _iterator_names(body)
        self.safe_reads = safe_reads(body, self.temps)
        self.scalars = scalar_names(replace(self.fn, body=tuple(body)), self.scalar_params,
                                    lambda fn: id(fn) in ELEMENTWISE, self.vector_params)
        out = lifted + self.block(body)
        ret = out[-1]
        if isinstance(ret, ir.Return):
            self.out_batched = self.is_b(ret.value)
            from .out_axes import result_tree
            self.out_tree = result_tree(self, body, ret.value)
        if self._size is not None:
            if not self.params_batched:
                raise BatchingError("vmap: no argument is batched")
            head = ir.Assign(self._size, ir.Call(rt.batch_size, tuple(
                ir.Var(p) for p in self.params_batched)), self.fn.loc)
            out.insert(0, head)
        return replace(self.fn, name=name, body=tuple(out), docstring=None,
                       temps=frozenset(self.temps))


def _may_catch_batching_errors(handler) -> bool:
    """Whether ``except <handler.type>`` may catch an ``rt.BatchingRuntimeError`` (a
    ``ValueError``): a bare ``except``, a class it derives from, or a type not known when
    s2s transforms the code."""
    t = handler.type
    if t is None:
        return True
    if not isinstance(t, ir.Const):
        return True
    kinds = t.value if isinstance(t.value, tuple) else (t.value,)
    return any(not isinstance(k, type) or issubclass(rt.BatchingRuntimeError, k) for k in kinds)


def _iterator_names(body):
    """The names every assignment of which is a ``zip``/``enumerate`` call: iterating one
    batched yields its items as they are (``rt.batch_rows`` of it would be the identity)."""
    defs = {}
    for s in ir.walk(body):
        for v in ir.stmt_defs(s):
            ok = isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and \
                s.value.fn in (zip, enumerate)
            defs[v.name] = defs.get(v.name, True) and ok
    return {name for name, ok in defs.items() if ok}
