"""Type inference over an IR function for the LLVM backend.

Contract: ``infer(func, param_types) -> (types, return_type)`` gives every
variable of ``func`` one backend type (``types.py``): the ``join`` of the types
of every value assigned to it (a fixpoint over loops; a compiler temporary set to
``None`` at the start and a compile-time flag in a branch keeps the flag:
``none_placeholders``), and the join of the types of every returned value.  Call
result types come from the op registry (``calls.type_call``).  A value the backend
cannot type (a string, a Python object, an unsupported call) raises
``UnsupportedSyntaxError`` naming the construct and the user's line.
``typed(func, param_types) -> (func, types, return_type)`` is ``infer`` after
unrolling the loops whose counter indexes a tuple of items of different types
(``passes/tuple_loops.py``): what the compiler calls.

An ``if`` on a compile-time flag or int (``types.Static``: ``isinstance``'s answer,
``ops/type_tests.py``; ``np.ndim`` and what folds from it) types only the branch taken,
and code after a statement that never falls through (``return``, ``raise``, ``break``,
``continue``, such an ``if``) is not typed: neither is ever run, nor lowered
(``lower/function.py``).
"""
from __future__ import annotations

from collections import Counter

import s2s_runtime as rt

from ....errors import S2SError, UnsupportedSyntaxError
from ....ir import nodes as ir
from . import types as T


class TupleIndexedByVariable(UnsupportedSyntaxError):
    """A tuple whose items differ in type, indexed by the run-time int ``index`` (a
    variable name): there is no one type for the item.  Typing a loop that counts
    ``index`` over a compile-time range turns it into ``UnrollLoop``."""

    def __init__(self, message, loc=None, index=None):
        self.index = index
        super().__init__(message, loc)


class TypeClash(UnsupportedSyntaxError):
    """The variable ``name`` is given values of two types that no one compiled type holds.
    Typing a loop over a compile-time range whose body meets it has that loop unrolled
    (the copies may give the variable a type each, as a list display that grows does);
    ``typed`` then names each assignment's value apart (SSA) and types again."""

    def __init__(self, message, loc=None, name=None):
        self.name = name
        super().__init__(message, loc)


class UnrollLoop(UnsupportedSyntaxError):
    """Raised by typing to ``typed``: ``loop`` indexes a mixed tuple at its counter, which
    runs over the compile-time range ``trip``; typed as its copies (``tuple_loops.py``).
    Where ``infer`` is called alone, it is the error of the read that needs the copies."""

    def __init__(self, message, loc=None, loop=None, trip=None, clash=None):
        self.loop, self.trip, self.clash = loop, trip, clash  # clash: a variable's name
        super().__init__(message, loc)


def const_type(value, loc=None):
    """The type of a constant operand."""
    if value is None:
        return T.NONE
    if type(value) is slice:
        return T.Slice(tuple(v is not None for v in (value.start, value.stop, value.step)))
    if type(value) is tuple:
        return T.Tuple(tuple(const_type(v, loc) for v in value))
    if type(value) is range:
        return T.Range()
    t = T.value_type(value)
    if isinstance(t, T.Array):
        raise UnsupportedSyntaxError(
            f"jit: the array constant {_short(value)} in the code; pass it as an argument", loc)
    return T.Static(value) if t is None else t


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def widenable_arrays(func) -> set:
    """The variables that may hold arrays of different dtypes (and one ndim) as one array
    variable of the promoted dtype (``total = 0`` lifted over a batch, then ``total =
    total + x`` of floats): each assignment converts its value, a copy, which is exact
    only where no other name can see the difference.  So: never written in place, and
    every value assigned is fresh (a call that is not a view, a constant) or a copy of
    another such variable."""
    from ..passes.writes import fresh_values_only
    return fresh_values_only(func)


class Inference:
    def __init__(self, func: ir.Function, param_types: dict):
        self.func = func
        self._ranges = None  # name -> its one definition (compile_time_range)
        self.types = dict(param_types)
        self.returns = None
        self.changed = True
        from ..lower.stacks import find_stacks
        self.stacks = find_stacks(func)
        for name in self.stacks:
            self.types.setdefault(name, T.Stack(False))
        assigned = {v.name for st in ir.walk(func.body) for v in ir.stmt_defs(st)}
        #: array parameters the body never assigns: ndarrays, never the None a local
        #: array variable may start as (what ``isinstance`` of them answers)
        self.array_params = {p.var.name for p in func.params
                             if isinstance(self.types.get(p.var.name), T.Array)} - assigned
        self.widenable = widenable_arrays(func)
        self.placeholders = none_placeholders(func, self.stacks)

    def atom(self, a, loc):
        if isinstance(a, ir.Const):
            return const_type(a.value, loc)
        t = self.types.get(a.name)
        return t

    def assign(self, name, t, loc):
        if t is None:
            return
        old = self.types.get(name)
        new = T.join(old, t)
        if name in self.placeholders and _flag_over_none(old, t):
            new = t if isinstance(old, T.NoneType) else old
        if new is None and name in self.widenable and isinstance(old, T.Array) and \
                isinstance(t, T.Array) and old.ndim == t.ndim:
            new = T.Array(T.promote(old.elem, t.elem).dtype, old.ndim)
        if new is None and (_linked_tape(old) or _linked_tape(t)):
            raise UnsupportedSyntaxError(
                f"jit: the tape {name!r} (values reverse mode records, as a linked list of "
                "tuples) is used in a way compiled code does not keep (one stack per tape): "
                "copied, or recorded on another tape, as reverse mode over reverse mode does "
                "(jacrev(grad(f)) or grad(grad(f)) of a loop; for second derivatives compile "
                "jit(hessian(f)), forward mode over reverse mode), or kept beside a container "
                "the code updates", loc)
        if new is None:
            lists = any(isinstance(x, (T.List, T.ListLiteral)) for x in (old, t))
            raise TypeClash(
                f"jit: the variable {name!r} holds values of types {old} and {t}; a compiled "
                "variable has one type (numbers of one kind, or arrays of one dtype and ndim"
                + ("; a list that grows holds numbers, or arrays of one dtype and number of "
                   "dimensions, and a list of other items is compiled where its length is "
                   "known when compiling" if lists else "") + ")", loc, name)
        if new != old:
            self.types[name] = new
            self.changed = True

    def compile_time_range(self, atom, loc, seen=()):
        """The ``range`` ``atom`` holds when that is known when compiling (a constant, a
        compile-time value, or a name assigned once ``range`` of ints known when compiling
        -- constants, or ``len`` of a tuple, typed ``Static`` -- or ``reversed_range`` of
        such a range), else None."""
        value = getattr(self.atom(atom, loc), "value", None)
        if type(value) is range or not isinstance(atom, ir.Var):
            return value if type(value) is range else None
        if self._ranges is None:  # (name -> its one definition, None if several)
            self._ranges = {}
            for st in ir.walk(self.func.body):
                for v in ir.stmt_defs(st):
                    self._ranges[v.name] = st if v.name not in self._ranges else None
        st = self._ranges.get(atom.name)
        call = getattr(st, "value", None) if isinstance(st, ir.Assign) else None
        if not isinstance(call, ir.Call) or call.kwargs or atom.name in seen:
            return None
        if call.fn is range:
            bounds = [self.compile_time_int(a, loc) for a in call.args]
            return range(*bounds) if bounds and None not in bounds else None
        if call.fn is rt.reversed_range and len(call.args) == 1:
            r = self.compile_time_range(call.args[0], loc, seen + (atom.name,))
            return None if r is None else rt.reversed_range(r)
        return None

    def compile_time_int(self, atom, loc):
        """The int ``atom`` is when that is known when compiling, else None."""
        if isinstance(atom, ir.Const):
            return atom.value if type(atom.value) is int else None
        t = self.atom(atom, loc)
        return t.value if isinstance(t, T.Static) and type(t.value) is int else None

    def expr(self, value, loc):
        if isinstance(value, ir.Call) and value.fn is isinstance and len(value.args) == 2 \
                and isinstance(value.args[0], ir.Var) and value.args[0].name in self.array_params \
                and isinstance(value.args[1], ir.Const) and not value.kwargs:
            from ..ops.type_tests import answer_of_array
            known = answer_of_array(value.args[1].value)
            if known is not None:
                return T.Static(known)
        if isinstance(value, ir.Call):
            from ..ops.calls import type_call
            args = [(a, self.atom(a, loc)) for a in value.args]
            kwargs = {k: (a, self.atom(a, loc)) for k, a in value.kwargs}
            if any(t is None for _, t in args) or any(t is None for _, t in kwargs.values()):
                return None  # an operand not typed yet (first pass over a loop)
            return type_call(value.fn, args, kwargs, loc)
        return self.atom(value, loc)

    def block(self, stmts) -> bool:
        """Type ``stmts``; whether control never falls through their end."""
        for s in stmts:
            if self.stmt(s):
                return True
        return False

    def stmt(self, s) -> bool:
        """Type ``s``; whether control never falls through it."""
        loc = getattr(s, "loc", None)
        if isinstance(s, ir.If):
            taken = static_branch(s, self.atom(s.test, loc))
            if taken is not None:
                return self.block(taken)
            return self.block(s.body) & self.block(s.orelse)
        if isinstance(s, ir.Raise) and s.exc is not None:
            refused = self.atom(s.exc, loc)
            if isinstance(refused, T.Static) and isinstance(refused.value, S2SError):
                # s2s's own refusal in code it reads (numpy_code): on a path typing takes,
                # a compile-time error, as the call table's refusals are
                raise UnsupportedSyntaxError(refused.value.message, loc)
        if isinstance(s, (ir.Return, ir.Raise, ir.Break, ir.Continue)):
            self.simple_statement(s, loc)
            return True
        self.simple_statement(s, loc)
        return False

    def simple_statement(self, s, loc):
        """Type ``s``: any statement but an ``if`` (a loop's or a ``try``'s blocks too)."""
        if isinstance(s, ir.Assign):
            if s.target.name in self.stacks:
                return  # a push or a reset (stacks.py)
            self.assign(s.target.name, self.expr(s.value, loc), loc)
        elif isinstance(s, ir.ExprStmt):
            self.expr(s.value, loc)
        elif isinstance(s, ir.Unpack):
            if isinstance(s.value, ir.Var) and s.value.name in self.stacks:
                return  # a pop: the target keeps the type of what it was assigned
            t = self.atom(s.value, loc)
            if t is None:
                return
            if isinstance(t, T.List):  # its length checked when run (lower/function.py)
                for v in s.targets:
                    self.assign(v.name, t.elem if t.elem is not None else T.F64T, loc)
                return
            if not isinstance(t, T.Tuple) or len(t.items) != len(s.targets):
                n = len(t.items) if isinstance(t, T.Tuple) else None
                raise UnsupportedSyntaxError(
                    f"jit: unpacking {len(s.targets)} names from a {t}"
                    + ("" if n is None else f" of {n} items"), loc)
            for v, it in zip(s.targets, t.items):
                self.assign(v.name, it, loc)
        elif isinstance(s, ir.For):
            t = T.runtime_type(self.atom(s.iter, loc))  # a compile-time range: a range
            if isinstance(t, T.Range):
                self.assign(s.target.name, T.INT, loc)
            elif isinstance(t, T.Array) and t.ndim >= 1:
                self.assign(s.target.name, t.elem if t.ndim == 1 else T.Array(t.dtype, t.ndim - 1),
                            loc)
            elif t is not None:
                raise UnsupportedSyntaxError(
                    f"jit: a for loop over a {t} (loops run over range(...) or an array)", loc)
            try:
                self.block(s.body)
            except (TupleIndexedByVariable, TypeClash) as e:
                from ..passes.tuple_loops import unrollable
                trip = self.compile_time_range(s.iter, loc)
                clash = e.name if isinstance(e, TypeClash) else None
                if (clash or e.index == s.target.name) and unrollable(s, trip):
                    raise UnrollLoop(e.message, e.loc, s, trip, clash) from None
                if clash:
                    e.in_loop = True  # naming assignments apart keeps a loop's one version
                raise
            self.block(s.orelse)
        elif isinstance(s, ir.While):
            self.block(s.test_body)
            self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, ir.Return):
            t = T.runtime_type(self.atom(s.value, loc))
            if _holds_message(t):
                raise UnsupportedSyntaxError(
                    "jit: returning a string formatted at run time (compiled code formats "
                    "strings only to raise or print them)", loc)
            if t is not None:
                new = T.join(self.returns, t)
                if new is None:
                    raise UnsupportedSyntaxError(
                        f"jit: the function returns values of types {self.returns} and {t}", loc)
                if new != self.returns:
                    self.returns, self.changed = new, True
        elif isinstance(s, ir.Try):
            if s.finalbody:
                raise UnsupportedSyntaxError("jit: try ... finally", loc)
            self.block(s.body)
            for h in s.handlers:
                if h.name is not None:
                    raise UnsupportedSyntaxError(
                        f"jit: 'except ... as {h.name.name}' (the exception object is a Python "
                        "object)", loc)
                self.block(h.body)
            self.block(s.orelse)
        elif isinstance(s, (ir.Break, ir.Continue, ir.Raise, ir.Assert)):
            pass
        else:
            raise UnsupportedSyntaxError(f"jit: the statement {type(s).__name__}", loc)


def none_placeholders(func, stacks=()) -> frozenset:
    """The compiler temporaries set to ``None`` once at the top of ``func``, assigned
    their values only inside loops and branches, and read only as the test of an ``if``
    or pushed on one of ``stacks``: reverse mode's residual branch tests, set first so
    that the residual tuple exists on the other path, in a kernel that replays the branch
    (a Jacobian kernel: the tuple itself is gone, so no ``None`` escapes).  Every test
    reading such a value is on a path that assigned it, so a flag known when compiling
    (``np.ndim(a) == 1``) stays one: ``Inference.assign`` does not join it with the
    ``None`` of the start (which would make a run-time bool and type both branches)."""
    temps = func.temps
    top = Counter(s.target.name for s in func.body if isinstance(s, ir.Assign)
                  and isinstance(s.value, ir.Const) and s.value.value is None
                  and s.target.name in temps)
    if not top:
        return frozenset()
    at_top = Counter(v.name for s in func.body for v in ir.stmt_defs(s))
    other_reads = set()
    for s in ir.walk(func.body):
        if isinstance(s, ir.If) or isinstance(s, ir.Assign) and s.target.name in stacks:
            continue  # an if's test; a push (its nested blocks are walked on their own)
        other_reads.update(a.name for a in ir.stmt_uses(s) if isinstance(a, ir.Var))
    return frozenset(n for n, k in top.items()
                     if k == 1 and at_top[n] == 1 and n not in other_reads)


def _linked_tape(t) -> bool:
    """``t`` is the type of a tape kept as Python keeps it: ``()`` or ``(item, tape)``."""
    return type(t) is T.Tuple and (
        not t.items or len(t.items) == 2 and type(t.items[1]) is T.Tuple
        and (not t.items[1].items or _linked_tape(t.items[1])))


def _flag_over_none(old, t) -> bool:
    """One of ``old``/``t`` is ``None`` and the other a compile-time flag."""
    return any(isinstance(a, T.NoneType) and isinstance(b, T.Static)
               and type(b.value) is bool for a, b in ((old, t), (t, old)))


def static_branch(s: ir.If, test_type):
    """The statements an ``if`` runs when its test is a compile-time flag, else None."""
    if isinstance(test_type, T.Static) and type(test_type.value) in (bool, int):
        return s.body if test_type.value else s.orelse
    return None


def typed(func: ir.Function, param_types: dict):
    """``(func, types, return_type)``: ``infer`` of ``func``, where each loop over a range
    known when compiling whose counter indexes a tuple of items of different types (``for
    v in t``, ``for k, v in d.items()``), or whose body gives a variable values of two
    types (a list display that grows), is first unrolled (``tuple_loops.py``); and where a
    variable is given values of two types, its assignments are given names of their own
    (``type_versions.renamed``, once per variable) before the clash is reported."""
    from ..passes.tuple_loops import unrolled
    from ..passes.type_versions import renamed
    named_apart = set()
    while True:
        try:
            return (func, *infer(func, param_types))
        except UnrollLoop as u:  # each round removes a loop: this ends
            func = unrolled(func, u.loop, u.trip)
            if u.clash:
                func = renamed(func, {u.clash})
        except TypeClash as c:
            if getattr(c, "in_loop", False):
                raise
            new = None if c.name in named_apart else renamed(func, {c.name})
            if new is None or new.body == func.body:
                raise
            named_apart.add(c.name)
            func = new


def infer(func: ir.Function, param_types: dict):
    inf = Inference(func, param_types)
    for _ in range(50):
        if not inf.changed:
            break
        inf.changed = False
        inf.block(func.body)
    return inf.types, (inf.returns if inf.returns is not None else T.NONE)


#: calls whose result may be None where an operand may (``may_hold_none``)
_NONE_THROUGH = (rt.zeros_like, rt.batch_select, rt.batch_select_replayed)


def may_hold_none(func) -> frozenset:
    """The variables of ``func`` that may hold ``None`` where typing gives them the array
    type they become (a null array at run time): assigned ``None``, a copy of such a
    variable, or ``zeros_like``/``batch_select`` of one, somewhere in the function (a pop
    gives back what was pushed from the same name)."""
    readers = {}  # name -> the targets that may take None from it
    out = []
    for s in ir.walk(func.body):
        if not isinstance(s, ir.Assign):
            continue
        v = s.value
        if v == ir.Const(None):
            out.append(s.target.name)
        elif isinstance(v, ir.Var):
            readers.setdefault(v.name, []).append(s.target.name)
        elif isinstance(v, ir.Call) and v.fn in _NONE_THROUGH:
            for a in v.args:
                if isinstance(a, ir.Var):
                    readers.setdefault(a.name, []).append(s.target.name)
    seen = set(out)
    while out:  # a worklist: each name is visited once
        for target in readers.get(out.pop(), ()):
            if target not in seen:
                seen.add(target)
                out.append(target)
    return frozenset(seen)


def _holds_message(t) -> bool:
    """Whether ``t`` is, or holds, a string formatted at run time (``types.Message``)."""
    if isinstance(t, (T.Message, T.Raised)):
        return True
    return isinstance(t, T.Tuple) and any(_holds_message(i) for i in t.items)
