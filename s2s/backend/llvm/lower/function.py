"""Lowering of IR statements to LLVM IR (structured control flow, variables, errors).

Contract: ``FunctionLowering(module, func, param_types, ...).build()`` adds to
``module`` the kernel ``i32 @<name>(i64* ctx, <param types>...)``:

* with ``pooled``, an allocation inside a loop reuses the block it made at an earlier
  iteration once nothing holds it (``abi.pooled_alloc``);
* with ``outline``, in a kernel with at least ``OUTLINE_FROM`` fused elementwise loops
  at its top level, each such loop, and each other top-level call making an array, is a
  function of its own, called (``outline.py``);
* every variable is a stack slot of its inferred type (``infer.py``), zero
  at entry; LLVM's mem2reg makes them registers;
* ``If``/``For`` (over ``range`` with any step, or over an array's first axis)
  /``While``/``Break``/``Continue``/``Return``/``Try`` (handlers chosen at compile
  time from the class of each raise site)/``Raise``/``Assert`` become basic blocks;
* the returned value is written to the result slots of ``ctx`` (``abi.py``),
  arrays the kernel allocated are kept for the caller, everything else it
  allocated is freed, and the kernel returns 0;
* an error (a ``raise``, a failed bounds check, an integer division by zero)
  writes its *site* number and up to three integers to ``ctx`` and returns 1
  after freeing every allocation; ``sites`` lists ``(exception class, message
  template, loc)`` per site for the Python wrapper to raise.

Expressions are lowered by ``calls.lower_call``; scalar and array helpers
live in ``scalars.py`` and ``arrays.py``.
"""
from __future__ import annotations

from collections import Counter

from llvmlite import ir as ll

from ....errors import UnsupportedSyntaxError
from ....ir import nodes as ir
from ..values import abi
from ..typing import types as T
from . import fused_runs, inplace, outline, scalar_windows, stacks
from ..typing.infer import const_type, infer, may_hold_none, static_branch, typed
from ..passes.lean_tapes import lean_tapes
from ..passes.local_copies import propagate_local_copies
from .loops import LoopLowering
from ..passes.write_statements import write_statements
from ..passes.elementwise_fusion import fuse_elementwise
from ..ops.fused import ElementwiseTree
from ..ops import messages
from ..derivs import adjoints as derivs  # noqa: F401  (registers the run-time helpers of derivative code)


#: the number of top-level fused loops from which a kernel outlines them (``outline``)
OUTLINE_FROM = 16


class FunctionLowering(LoopLowering):
    def __init__(self, module, func: ir.Function, param_types, name, boundscheck=True,
                 pooled=False, outline=False):
        self.module = module
        self.pooled = pooled  # allocation sites in loops reuse their block (abi.pooled_alloc)
        self.func = func
        self.param_types = list(param_types)
        self.boundscheck = boundscheck
        names = [p.var.name for p in func.params]
        # (loops over tuples whose items differ in type unrolled first)
        func, self.types, self.return_type = typed(func, dict(zip(names, self.param_types)))
        self.func = func
        lean = propagate_local_copies(lean_tapes(func, self.types))  # record only what
        # the adjoint reads; adjoint arrays held once (in-place updates)
        lean = write_statements(lean)  # y[i] = v without rebinding y (no count updates)
        if lean is not func:
            self.func = func = lean
            self.types, self.return_type = infer(func, dict(zip(names, self.param_types)))
        fused = fuse_elementwise(func, self.types)  # chains of elementwise statements: one loop
        if fused is not func:
            self.func = func = fused
            self.types, self.return_type = infer(func, dict(zip(names, self.param_types)))
        # fused loops outside loops as functions of their own (outline.py), in a kernel
        # with enough of them for LLVM's cost per loop to grow with their number
        self.outline = outline and sum(
            isinstance(getattr(s, "value", None), ir.Call)
            and isinstance(s.value.fn, ElementwiseTree) for s in func.body) >= OUTLINE_FROM
        self.none_holders = may_hold_none(func)
        self.stacks = stacks.find_stacks(func)
        self.owned = set()  # adjoint arrays held once throughout the loops being lowered
        self.replayed = stacks.replayed(func, self.stacks)
        self.stack_slot = {}
        self.uses = ir.use_counts(func.body)
        # names assigned once, by an assignment at the function's top level (run at most
        # once, when the name's slot still holds its initial null; not a loop's variable,
        # a parameter or a stack, whose slots start filled): no old value to drop
        defs = Counter(v.name for x in ir.walk(func.body) for v in ir.stmt_defs(x))
        self.assigned_once = {v.name for x in func.body if isinstance(x, (ir.Assign, ir.Unpack))
                              for v in ir.stmt_defs(x) if defs[v.name] == 1} \
            - set(names) - set(self.stacks)
        for stack in self.stacks:  # (not ``name``: the kernel's name, used below)
            if isinstance(self.types.get(stack), T.Stack) and not self.types[stack].tagged:
                pushed = [self.types.get(getattr(s.value.args[0], "name", ""))
                          or const_type(getattr(s.value.args[0], "value", None))
                          for s in stacks.pushes(func, stack)]
                self.stack_slot[stack] = None if stacks.item_sizes(func, stack, self.types) \
                    else stacks.slot_size([t for t in pushed if t is not None])
        self.sites = []
        self.prechecked, self.unchecked = frozenset(), False  # loop_versions.py
        self.loops = []  # (continue block, break block)
        self.handlers = []  # per enclosing Try: list of (exception class, handler block)
        self.loc = func.loc
        fnty = ll.FunctionType(T.I32, [T.I64.as_pointer()] + [t.llvm() for t in self.param_types])
        self.fn = ll.Function(module, fnty, name)
        self.fn.linkage = "internal"
        self.fn.attributes.add("alwaysinline")
        self.ctx = self.fn.args[0]
        self.params = dict(zip(names, self.fn.args[1:]))

    # -- entry / exits -------------------------------------------------------------
    def build(self):
        entry = self.fn.append_basic_block("entry")
        start = self.fn.append_basic_block("start")
        ll.IRBuilder(entry).branch(start)
        self.b = ll.IRBuilder(start)
        self.slots = {}
        for name, t in sorted(self.types.items()):
            if t is None:
                continue
            if isinstance(t, T.Static):
                continue
            slot = self.entry_alloca(t.llvm(), name=f"v.{name}")
            self.b.store(ll.Constant(t.llvm(), None), slot)
            self.slots[name] = slot
        for name, arg in self.params.items():
            self.b.store(arg, self.slots[name])  # arrays passed in: no block to count
        for name in sorted(self.stacks):
            if name not in self.params and not self.types[name].tagged:
                stacks.start(self, name)
        self.error_block = self.fn.append_basic_block("error")
        self.return_block = self.fn.append_basic_block("return")
        self.block(self.func.body)
        if not self.b.block.is_terminated:
            if self.return_type != T.NONE:
                self._missing_return()
            else:
                self.b.branch(self.return_block)
        self.b.position_at_end(self.error_block)
        abi.free_all(self, keep=False)
        self.b.ret(ll.Constant(T.I32, 1))
        self.b.position_at_end(self.return_block)
        abi.free_all(self, keep=True)
        self.b.ret(ll.Constant(T.I32, 0))
        return self

    def entry_alloca(self, ty, name=""):
        """A stack slot allocated once, in the entry block (never inside a loop)."""
        entry = self.fn.entry_basic_block
        b = ll.IRBuilder(entry)
        b.position_before(entry.terminator)
        return b.alloca(ty, name=name)

    def _missing_return(self):
        self.b.branch(self.return_block)

    # -- values -------------------------------------------------------------------
    def var_type(self, name):
        t = self.types.get(name)
        if t is None:
            raise UnsupportedSyntaxError(f"jit: cannot infer the type of {name!r}", self.loc)
        return t

    def atom(self, a):
        """``(llvm value, type)`` of an operand."""
        if isinstance(a, ir.Const):
            t = const_type(a.value, self.loc)
            return self.const(a.value, t), t
        t = self.var_type(a.name)
        if T.runtime_type(t) is not t:  # a compile-time number: a constant
            return self.const(t.value, T.runtime_type(t)), T.runtime_type(t)
        if isinstance(t, T.Static):
            return ll.Constant(t.llvm(), None), t
        return self.b.load(self.slots[a.name]), t

    def may_hold_none(self, atom) -> bool:
        """Whether the variable ``atom`` may hold ``None`` (``infer.may_hold_none``: an
        array variable then holds a null array, ``values/arrays.holds_none``)."""
        return isinstance(atom, ir.Var) and atom.name in self.none_holders

    def const(self, value, t):
        if isinstance(t, T.Scalar):
            if t.dtype == "c16":
                z = complex(value)
                return ll.Constant(T.C128, [ll.Constant(T.F64, z.real), ll.Constant(T.F64, z.imag)])
            if t.dtype == "b1":
                return ll.Constant(T.I1, int(bool(value)))
            if t.dtype == "i8":
                return ll.Constant(T.I64, int(value))
            return ll.Constant(t.llvm(), float(value))
        if isinstance(t, T.Tuple):
            return ll.Constant(t.llvm(), [self.const(v, it) for v, it in zip(value, t.items)])
        if isinstance(t, T.Slice):
            parts = [value.start, value.stop, value.step]
            return ll.Constant(t.llvm(), [ll.Constant(T.I64, int(p or 0)) for p in parts])
        if isinstance(t, T.Range):
            return ll.Constant(t.llvm(), [ll.Constant(T.I64, v) for v in
                                          (value.start, value.stop, value.step)])
        return ll.Constant(t.llvm(), None)

    def store(self, name, value, t):
        """``name = value``; a variable holding arrays holds a reference to their blocks."""
        from ..values.scalars import convert
        vt = self.var_type(name)
        if isinstance(vt, T.Static):
            return  # (known when compiling: no slot)
        if T.runtime_type(t) is not t:  # a compile-time number into a run-time variable
            value, t = self.const(t.value, T.runtime_type(t)), T.runtime_type(t)
        if isinstance(t, T.Static):
            return
        value = convert(self, value, t, vt)
        slot = self.slots[name]
        if abi.holds_arrays(vt) and name in self.assigned_once:
            abi.retain(self, value, vt)
            self.b.store(value, slot)
        elif abi.holds_arrays(vt):
            old = self.b.load(slot)
            abi.retain(self, value, vt)
            self.b.store(value, slot)
            abi.release(self, old, vt)
        else:
            self.b.store(value, slot)

    def expr(self, value):
        if isinstance(value, ir.Call):
            from ..ops.calls import lower_call
            return lower_call(self, value)
        return self.atom(value)

    def truth(self, value, t):
        from ..values.scalars import truth
        return truth(self, value, t)

    # -- errors -------------------------------------------------------------------
    def site(self, exc, template, loc=None, user=False):
        self.sites.append((exc, template, loc if loc is not None else self.loc, user))
        return len(self.sites)

    def raise_(self, exc, template, ints=(), loc=None, user=False):
        """Branch to the handler of ``exc`` (a class) or out of the kernel with an error."""
        for handlers in reversed(self.handlers):
            for cls, block in handlers:
                if cls is None or (isinstance(cls, type) and issubclass(exc, cls)):
                    self.b.branch(block)
                    return
        if len(ints) > abi.MESSAGE_INTS:
            raise AssertionError(f"s2s internal error: an error message with {len(ints)} "
                                 f"integers (at most {abi.MESSAGE_INTS})")
        site = self.site(exc, template, loc, user)
        self.b.store(ll.Constant(T.I64, site), abi.ctx_slot(self, abi.STATUS))
        for k, v in enumerate(ints):
            self.b.store(v, abi.ctx_slot(self, abi.STATUS + 1 + k))
        self.b.branch(self.error_block)

    def check(self, failed, exc, template, ints=()):
        """Raise ``exc`` when the i1 ``failed`` is true (a branch marked unlikely)."""
        fail = self.fn.append_basic_block("fail")
        ok = self.fn.append_basic_block("ok")
        br = self.b.cbranch(failed, fail, ok)
        br.set_weights([1, 1000])
        self.b.position_at_end(fail)
        self.raise_(exc, template, ints)
        self.b.position_at_end(ok)

    # -- statements ---------------------------------------------------------------
    def block(self, stmts):
        """Lower a block; array temporaries local to it release their reference after
        their last read (``inplace.local_temporaries``), which lets the in-place forms
        of adjoint updates apply (``inplace.py``)."""
        stmts = inplace.swap_base_and_value(stmts)
        temps = {n for n in inplace.local_temporaries(self.func, stmts, self.stacks)
                 if abi.holds_arrays(self.types.get(n))}
        dying = inplace.last_reads(stmts, temps)
        k = 0
        while k < len(stmts):
            s = stmts[k]
            if self.b.block.is_terminated:
                return  # code after break/continue/return/raise is never run
            self.loc = getattr(s, "loc", self.loc)
            self.unchecked = id(s) in self.prechecked  # in bounds (loop_versions.py)
            run = fused_runs.run_length(self, stmts, k)
            if run > 1:  # fused statements of one shape: one loop
                done = [n for j in range(k, k + run) for n in dying.get(j, [])]
                fused_runs.lower_run(self, stmts[k:k + run], set(done))
                k += run
            elif k + 1 < len(stmts) and inplace.fusable(self, s, stmts[k + 1], self.uses):
                inplace.fused_accumulation(self, s, stmts[k + 1])
                done = dying.get(k, []) + dying.get(k + 1, [])
                k += 2
            else:
                if scalar_windows.lower_access(self, s):
                    pass
                elif inplace.inplace_candidate(self, s):
                    inplace.inplace_add(self, s)
                elif inplace.add_at_candidate(self, s):
                    inplace.inplace_add_at(self, s)
                elif not inplace.inplace_base(self, s, dying.get(k, ())):
                    self.stmt(s)
                done = dying.get(k, [])
                k += 1
            self.unchecked = False
            if not self.b.block.is_terminated:
                for name in done:
                    self.forget(name)

    def forget(self, name):
        """Drop the reference a dead temporary holds (its slot is zeroed)."""
        t = self.types[name]
        slot = self.slots[name]
        old = self.b.load(slot)
        self.b.store(ll.Constant(t.llvm(), None), slot)
        abi.release(self, old, t)

    def refcount_dummy(self):
        """Four readable zero words (a reference-count read for a null block, discarded)."""
        if getattr(self, "_dummy", None) is None:
            entry = self.fn.entry_basic_block
            b = ll.IRBuilder(entry)
            b.position_before(entry.terminator)
            words = b.alloca(ll.ArrayType(T.I64, 4), name="no.block")
            b.store(ll.Constant(ll.ArrayType(T.I64, 4), None), words)
            self._dummy = b.bitcast(words, T.I64.as_pointer())
        return self._dummy

    def stmt(self, s):
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise UnsupportedSyntaxError(f"jit: the statement {type(s).__name__}", s.loc)
        method(s)

    def stmt_Assign(self, s):
        if s.target.name in self.stacks:
            if isinstance(self.types[s.target.name], T.Stack) and self.types[s.target.name].tagged:
                raise UnsupportedSyntaxError("jit: a push onto a tape handed in by Python", s.loc)
            if isinstance(s.value, ir.Call) and len(s.value.args) == 2:
                value, t = self.atom(s.value.args[0])
                stacks.push(self, s.target.name, value, t)
            else:
                stacks.reset(self, s.target.name)
            return
        if isinstance(self.types.get(s.target.name), T.Static):
            return  # a compile-time constant (its value has no side effect): no code
        if outline.outlines_call(self, s):
            value, t = outline.outlined_call(self, s.value, self.types[s.target.name])
        else:
            value, t = self.expr(s.value)
        self.store(s.target.name, value, t)

    def stmt_ExprStmt(self, s):
        self.expr(s.value)

    def stmt_Unpack(self, s):
        if stacks.is_pop(s, self.stacks):
            target = s.targets[0].name
            tt = self.var_type(target)
            value = stacks.pop(self, s.value.name, tt)
            self.store(target, value, tt)
            if not self.types[s.value.name].tagged and s.value.name not in self.replayed:
                abi.release(self, value, tt)  # the tape's reference
            return
        value, t = self.atom(s.value)
        if isinstance(t, T.List):  # ``a, b = np.split(x, 2)``: Python's errors, then items
            from ..values import lists as Li
            from ..values.arrays import i64
            data, _, n = Li.fields(self, value)
            want = i64(len(s.targets))
            self.check(self.b.icmp_signed(">", n, want), ValueError,
                       f"too many values to unpack (expected {len(s.targets)})")
            self.check(self.b.icmp_signed("<", n, want), ValueError,
                       f"not enough values to unpack (expected {len(s.targets)}, got {{0}})",
                       (n,))
            for k, target in enumerate(s.targets):
                self.store(target.name, Li.load(self, data, i64(k), t), Li.elem_of(t))
            return
        for k, target in enumerate(s.targets):
            self.store(target.name, self.b.extract_value(value, k), t.items[k])

    def stmt_If(self, s):
        known = self.var_type(s.test.name) if isinstance(s.test, ir.Var) else None
        taken = static_branch(s, known)
        if taken is not None:  # a compile-time flag: only the branch run is compiled
            self.block(taken)
            return
        value, t = self.atom(s.test)
        then = self.fn.append_basic_block("then")
        other = self.fn.append_basic_block("else")
        after = self.fn.append_basic_block("endif")
        self.b.cbranch(self.truth(value, t), then, other)
        for block, stmts in ((then, s.body), (other, s.orelse)):
            self.b.position_at_end(block)
            self.block(stmts)
            if not self.b.block.is_terminated:
                self.b.branch(after)
        self.b.position_at_end(after)

    def stmt_Return(self, s):
        value, t = self.atom(s.value)
        owned = None
        if outline.outlines_result(self, self.return_type):  # a copy is a loop: outlined
            def owned(v, rt):
                return outline.outlined_owned(self, v, rt)
        abi.store_result(self, value, t, self.return_type, owned)
        self.b.branch(self.return_block)

    def stmt_Raise(self, s):
        exc = s.exc
        raised = self.types.get(exc.name) if isinstance(exc, ir.Var) else None
        if isinstance(raised, T.Raised):  # a message formatted at run time (ops/messages.py)
            messages.raise_message(self, raised.cls, raised.message, self.atom(exc)[0], s.loc)
            return
        if isinstance(exc, ir.Var) and isinstance(self.types.get(exc.name), T.Static):
            exc = ir.Const(self.types[exc.name].value)
        exc, message = _exception(exc, s.loc)
        self.raise_(exc, message, loc=s.loc, user=True)

    def stmt_Assert(self, s):
        value, t = self.atom(s.test)
        formatted = self.types.get(s.msg.name) if isinstance(s.msg, ir.Var) else None
        if isinstance(formatted, T.Message):  # assert test, f"... {x}"
            fail = self.fn.append_basic_block("fail")
            ok = self.fn.append_basic_block("ok")
            self.b.cbranch(self.truth(value, t), ok, fail).set_weights([1000, 1])
            self.b.position_at_end(fail)
            messages.raise_message(self, AssertionError, formatted, self.atom(s.msg)[0], s.loc)
            self.b.position_at_end(ok)
            return
        message = "" if s.msg is None else str(getattr(s.msg, "value", ""))
        self.check(self.b.not_(self.truth(value, t)), AssertionError, message)

    def stmt_Try(self, s):
        blocks = [(_handler_class(h, s.loc), self.fn.append_basic_block("except"), h)
                  for h in s.handlers]
        after = self.fn.append_basic_block("try.end")
        self.handlers.append([(cls, block) for cls, block, _ in blocks])
        self.block(s.body)
        self.handlers.pop()
        self.block(s.orelse)
        if not self.b.block.is_terminated:
            self.b.branch(after)
        for _, block, h in blocks:
            self.b.position_at_end(block)
            self.block(h.body)
            if not self.b.block.is_terminated:
                self.b.branch(after)
        self.b.position_at_end(after)


def _handler_class(h, loc):
    if h.type is None:
        return None
    cls = getattr(h.type, "value", None)
    classes = cls if isinstance(cls, tuple) else (cls,)
    if not all(isinstance(c, type) and issubclass(c, BaseException) for c in classes):
        raise UnsupportedSyntaxError("jit: an except clause whose class is not a constant", loc)
    return cls


def _exception(exc, loc):
    """``(class, message)`` of a ``raise`` operand known at compile time."""
    value = getattr(exc, "value", None)
    if isinstance(value, type) and issubclass(value, BaseException):
        return value, ""
    if isinstance(value, BaseException):
        return type(value), str(value)
    raise UnsupportedSyntaxError(
        "jit: a raise of an exception that is not a constant class or instance", loc)

