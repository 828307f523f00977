"""Scalar replacement of an adjoint array's elements in a stencil loop (jit).

The adjoint of a stencil ``for i in range(a, b): ... u[i - 1] ... u[i + 1] ...``
is a loop that updates the adjoint array at ``i + c`` for a few constants ``c``;
each iteration read-modify-writes elements the previous one just wrote (a
memory dependence of distance 1), so the loop runs as scalar loads and stores
of the same few elements over and over and cannot be vectorised.  This pass
keeps those elements in registers (Carr and Kennedy's scalar replacement):

In an innermost loop ``for i in R`` over a range of step ``d = +1`` or ``-1``
(read off the IR: ``range(a, b)``, ``range(a, b, +-1)``, ``rt.reversed_range``
of one), with no ``break``/``continue``/``return`` and no enclosing ``try``,
an adjoint array ``A`` held once throughout the loop (``unique_adjoints.py``:
``A in L.owned``) qualifies when every statement of the body that names ``A``
is, at the top level of the body, one of

* ``A = rt.add_at(A, g, x, idx)`` (``g`` a number, ``x`` not assigned in the loop),
* ``A = rt.index_set_vjp_base(A, idx)``,
* ``v = rt.index_set_vjp_value(A, idx, w)``, ``v = A[idx]`` / ``rt.read_copy`` /
  ``rt.read_checked`` giving a number,

and every ``idx`` is ``i + c`` (``c`` an integer constant, through ``t = i + c``,
``t = i - c``, ``rt.owned(t)``) or a tuple of ``A.ndim`` integers of which one
position is ``i + c`` and the others *fixed*: ``k + c'`` with ``k`` an integer
the loop does not assign (or a constant).  The accesses with the same fixed
indices form one window (``A[k - 1, j + c]``, ``A[k, j + c]``, ``A[k + 1, j + c]``
are three, all along the same axis).  With ``cmin``/``cmax`` the extreme
offsets of a window, the elements
``i + cmin .. i + cmax`` (the *window*) live in registers: the element entering
the window (offset ``cmax`` for ``d = +1``, ``cmin`` for ``d = -1``) is loaded
at the start of each iteration, the one leaving it is stored at the end, the
others move one register along; the elements already in the window when the
loop starts are loaded before it and those still in it are stored after it.
Each element is then loaded and stored once, and the dependence between
iterations goes through registers (a first-order recurrence LLVM vectorises).
The arithmetic is the same operations in the same order as the in-memory
form: results are bit-for-bit those of the loop as written.

The register form is used when (checked at run time before the loop, else the
loop runs as written -- loop versioning): the range has step ``d``, runs at
least once, every index ``i + c`` it reaches lies in ``[0, n)`` along its axis
(no negative-index wraparound, so distinct indices are distinct elements, and
no access can fail), the fixed indices are in bounds, two windows of one array
have different fixed indices (after wraparound: no element in two windows),
and each ``x`` has ``A``'s shape (``rt.add_at``'s contract).

Contract: ``plan(L, loop, iter_type) -> Windows | None``; ``Windows.version(L,
start, stop, step, emit_loop)`` emits the check and both loops, ``emit_loop(w)``
lowering the loop with ``w`` (register form) or ``None`` (as written); the loop
calls ``w.begin(i)`` at the top of the body, ``w.end(i)`` at its end and
``w.finish(i_exit)`` on exit; ``lower_access(L, s)`` lowers a window statement
while a register form is being emitted (False for any other statement).
"""
from __future__ import annotations

import operator

from llvmlite import ir as ll

import s2s_runtime as rt
from s2s_runtime import build

from ...ir import nodes as ir
from . import arrays as A
from . import scalars as S
from . import types as T

_READS = (operator.getitem, rt.read_copy, rt.read_checked)
_MAX_SPAN = 8  # registers per window at most
_MAX_GROUPS = 4  # windows per array at most


# -- the plan (IR only) --------------------------------------------------------------------
def _definitions(func):
    """name -> its defining statements (all depths)."""
    out = {}
    for s in ir.walk(func.body):
        for v in ir.stmt_defs(s):
            out.setdefault(v.name, []).append(s)
    return out


def _int_const(a):
    return isinstance(a, ir.Const) and type(a.value) is int


def _range_step(atom, defs, depth=0):
    """The constant step (+1 or -1) of the ranges ``atom`` holds, else None: every
    assignment of it makes a range of that step (a pop from a tape gives back a value
    pushed earlier; ``None`` is the placeholder before the first).  A guess for the code
    to emit: ``Windows.version`` checks the step at run time."""
    if not isinstance(atom, ir.Var) or depth > 4:
        return None
    steps = set()
    for s in defs.get(atom.name, ()):
        if isinstance(s, ir.Unpack) and len(s.targets) == 2 and s.targets[1] == s.value \
                and s.targets[0] == atom:
            continue  # a pop
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Const) and s.value.value is None:
            continue
        if not isinstance(s, ir.Assign) or not isinstance(s.value, ir.Call) or s.value.kwargs:
            return None
        fn, args = s.value.fn, s.value.args
        if fn is range and len(args) in (1, 2):
            steps.add(1)
        elif fn is range and len(args) == 3 and _int_const(args[2]) and args[2].value in (1, -1):
            steps.add(args[2].value)
        elif fn is rt.reversed_range and len(args) == 1:
            inner = _range_step(args[0], defs, depth + 1)
            if inner is None:
                return None
            steps.add(-inner)
        else:
            return None
    return steps.pop() if len(steps) == 1 else None


class _Resolver:
    """Indices of the body as ``(invariants, position, offset)``."""

    def __init__(self, L, loop, defs):
        self.L, self.var = L, loop.target
        self.defs = defs
        self.local = {}  # name -> its statement at the body's top level
        for s in loop.body:
            for v in ir.stmt_defs(s):
                self.local[v.name] = s
        self.assigned = {v.name for s in ir.walk(loop.body) for v in ir.stmt_defs(s)}
        self.assigned.add(loop.target.name)

    def _def(self, atom):
        if isinstance(atom, ir.Var) and atom.name in self.local \
                and len(self.defs.get(atom.name, ())) == 1:
            s = self.local[atom.name]
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and not s.value.kwargs:
                return s.value
        return None

    def offset(self, atom, depth=0):
        """``c`` when ``atom`` is ``i + c``, else None."""
        if atom == self.var:
            return 0
        call = self._def(atom)
        if call is None or depth > 4:
            return None
        fn, args = call.fn, call.args
        if fn is rt.owned and len(args) == 1:
            return self.offset(args[0], depth + 1)
        if fn in (operator.add, operator.sub) and len(args) == 2:
            a, c = args
            if _int_const(c):
                base = self.offset(a, depth + 1)
                if base is not None:
                    return base + c.value if fn is operator.add else base - c.value
            if fn is operator.add and _int_const(a):
                base = self.offset(c, depth + 1)
                if base is not None:
                    return base + a.value
        return None

    def invariant(self, atom, depth=0):
        """``(name, c)`` when ``atom`` is ``name + c`` with ``name`` an integer variable the
        loop does not assign (``None`` for a constant ``c``), else None."""
        if _int_const(atom):
            return None, atom.value
        if not isinstance(atom, ir.Var) or atom == self.var:
            return None
        if atom.name not in self.assigned:
            t = self.L.types.get(atom.name)
            return (atom.name, 0) if isinstance(t, T.Scalar) and t.dtype == "i8" else None
        call = self._def(atom)
        if call is None or depth > 4 or len(call.args) != 2:
            return None
        a, c = call.args
        if call.fn in (operator.add, operator.sub) and _int_const(c):
            base = self.invariant(a, depth + 1)
            sign = 1 if call.fn is operator.add else -1
            return None if base is None else (base[0], base[1] + sign * c.value)
        if call.fn is operator.add and _int_const(a):
            base = self.invariant(c, depth + 1)
            return None if base is None else (base[0], base[1] + a.value)
        return None

    def index(self, atom, ndim, depth=0):
        """``(invariants, position, c)``: ``invariants`` the other components in order,
        each as ``invariant`` gives it."""
        c = self.offset(atom)
        if c is not None:
            return ((), 0, c) if ndim == 1 else None
        call = self._def(atom)
        if call is None or depth > 4:
            return None
        if call.fn is rt.owned and len(call.args) == 1:
            return self.index(call.args[0], ndim, depth + 1)
        if call.fn is not build.make_tuple or len(call.args) != ndim:
            return None
        found, rest = None, []
        for k, part in enumerate(call.args):
            c = self.offset(part)
            if c is not None:
                if found is not None:
                    return None
                found = (k, c)
                continue
            fixed = self.invariant(part)
            if fixed is None:
                return None
            rest.append(fixed)
        if found is None:
            return None
        return tuple(rest), found[0], found[1]


def _access(L, s, name, res):
    """``(kind, c, key, extra)`` of a window statement on ``name``, else None."""
    var = ir.Var(name)
    if not isinstance(s, ir.Assign) or not isinstance(s.value, ir.Call) or s.value.kwargs:
        return None
    fn, args = s.value.fn, s.value.args
    at = L.types[name]
    if s.target == var:
        if fn is rt.add_at and len(args) == 4 and args[0] == var and var not in args[1:]:
            g, x = args[1], args[2]
            gt = L.types.get(g.name) if isinstance(g, ir.Var) else T.value_type(g.value)
            xt = L.types.get(x.name) if isinstance(x, ir.Var) else None
            if not (isinstance(gt, T.Scalar) and isinstance(xt, T.Array) and xt.ndim == at.ndim
                    and x.name not in res.assigned
                    and T.promote(at.elem, gt).dtype == at.dtype):
                return None
            kind, idx, extra = "add", args[3], (g, x)
        elif fn is rt.index_set_vjp_base and len(args) == 2 and args[0] == var \
                and args[1] != var:
            kind, idx, extra = "zero", args[1], None
        else:
            return None
    elif fn is rt.index_set_vjp_value and len(args) == 3 and args[0] == var \
            and var not in args[1:] and isinstance(L.types.get(s.target.name), T.Scalar):
        kind, idx, extra = "value", args[1], args[2]
    elif fn in _READS and len(args) in (2, 3) and args[0] == var and var not in args[1:] \
            and isinstance(L.types.get(s.target.name), T.Scalar):
        kind, idx, extra = "read", args[1], None
    else:
        return None
    where = res.index(idx, at.ndim)
    if where is None:
        return None
    invariants, position, c = where
    return kind, c, (invariants, position), extra


def _mentions(s, name):
    var = ir.Var(name)
    return any(var in ir.stmt_uses(x) or var in ir.stmt_defs(x) for x in ir.walk([s]))


def _plain_body(body):
    for s in ir.walk(body):
        if isinstance(s, (ir.Break, ir.Continue, ir.Return, ir.For, ir.While, ir.Try)):
            return False
    return True


def plan(L, loop, iter_type):
    """The windows of ``loop`` (None when no array qualifies)."""
    if not isinstance(iter_type, T.Range) or L.handlers or loop.orelse \
            or not _plain_body(loop.body) or not L.owned:
        return None
    defs = _definitions(L.func)
    d = _range_step(loop.iter, defs)
    if d is None:
        return None
    res = _Resolver(L, loop, defs)
    windows = []
    for name in sorted(L.owned):
        at = L.types.get(name)
        if not isinstance(at, T.Array) or at.dtype not in ("f4", "f8", "c16"):
            continue
        groups, ok = {}, True  # (invariants, position) -> {id(statement): access}
        for s in loop.body:
            if not _mentions(s, name):
                continue
            acc = _access(L, s, name, res) if not ir.sub_blocks(s) else None
            if acc is None:
                ok = False
                break
            groups.setdefault(acc[2], {})[id(s)] = acc
        if not ok or not groups or len(groups) > _MAX_GROUPS \
                or len({key[1] for key in groups}) != 1:
            continue  # (several groups: along the same axis, at other fixed places)
        made = []
        for k, key in enumerate(sorted(groups, key=repr)):
            offsets = [acc[1] for acc in groups[key].values()]
            if max(offsets) - min(offsets) + 1 > _MAX_SPAN:
                break
            made.append(_Window(name, k, at, min(offsets), max(offsets), key, groups[key]))
        else:
            windows += made
    return Windows(loop, d, windows) if windows else None


# -- lowering ---------------------------------------------------------------------------
class _Window:
    def __init__(self, name, group, at, cmin, cmax, key, accesses):
        self.name, self.group, self.at, self.cmin, self.cmax = name, group, at, cmin, cmax
        self.invariants, self.position = key
        self.accesses = accesses  # id(statement) -> (kind, c, key, extra)
        self.xs = sorted({acc[3][1].name for acc in accesses.values() if acc[0] == "add"})

    def prepare(self, L):
        """Before the loop: the data, strides, axis length and invariant indices; the i1
        that they are usable (invariants in bounds, each ``x`` of ``A``'s shape)."""
        b = L.b
        a, at = L.atom(ir.Var(self.name))
        self.data = b.extract_value(a, 0)
        self.strides = A.strides_list(L, a, at)
        shape = A.shape_list(L, a, at)
        self.n = shape[self.position]
        ok = ll.Constant(T.I1, 1)
        self.fixed = []
        others = [k for k in range(at.ndim) if k != self.position]
        for k, (base, c) in zip(others, self.invariants):
            v = ll.Constant(T.I64, c)
            if base is not None:
                bv, bt = L.atom(ir.Var(base))
                v = b.add(S.convert(L, bv, bt, T.INT), v)
            j = b.select(b.icmp_signed("<", v, A.ZERO), b.add(v, shape[k]), v)
            ok = b.and_(ok, b.and_(b.icmp_signed(">=", j, A.ZERO),
                                   b.icmp_signed("<", j, shape[k])))
            self.fixed.append(j)
        for x in self.xs:
            xv, xt = L.atom(ir.Var(x))
            ok = b.and_(ok, b.not_(A._differs(L, shape, A.shape_list(L, xv, xt))))
        self.slots = [L.entry_alloca(self.at.elem.llvm(), name=f"win.{self.name}.g{self.group}.{c}")
                      for c in range(self.cmin, self.cmax + 1)]
        return ok

    def ptr(self, L, i, c):
        idx = list(self.fixed)
        idx.insert(self.position, L.b.add(i, ll.Constant(T.I64, c)))
        return A.element_ptr(L, self.data, self.strides, idx, self.at.elem)

    def slot(self, c):
        return self.slots[c - self.cmin]

    def load(self, L, i, c):
        L.b.store(A.load(L, self.ptr(L, i, c), self.at.elem), self.slot(c))

    def store(self, L, i, c):
        A.store(L, L.b.load(self.slot(c)), self.ptr(L, i, c), self.at.elem)


class Windows:
    def __init__(self, loop, d, windows):
        self.loop, self.d, self.windows = loop, d, windows
        self.by_statement = {}
        for w in windows:
            for key in w.accesses:
                self.by_statement[key] = w

    def enter(self):
        return lambda w: w.cmax if self.d > 0 else w.cmin

    def version(self, L, start, stop, step, emit_loop):
        b = L.b
        d = ll.Constant(T.I64, self.d)
        ok = b.icmp_signed("==", step, d)
        if self.d > 0:
            ok = b.and_(ok, b.icmp_signed("<", start, stop))
            lo, hi = start, b.sub(stop, A.ONE)
        else:
            ok = b.and_(ok, b.icmp_signed(">", start, stop))
            lo, hi = b.add(stop, A.ONE), start
        for k, w in enumerate(self.windows):
            ok = b.and_(ok, w.prepare(L))
            ok = b.and_(ok, b.icmp_signed(">=", b.add(lo, ll.Constant(T.I64, w.cmin)), A.ZERO))
            ok = b.and_(ok, b.icmp_signed("<", b.add(hi, ll.Constant(T.I64, w.cmax)), w.n))
            for other in self.windows[:k]:  # two windows of one array: other rows
                if other.name == w.name:
                    differ = ll.Constant(T.I1, 0)
                    for x, y in zip(w.fixed, other.fixed):
                        differ = b.or_(differ, b.icmp_signed("!=", x, y))
                    ok = b.and_(ok, differ)
        with b.if_else(ok, likely=True) as (fast, slow):
            with fast:
                for w in self.windows:  # the elements already in the window
                    for c in range(w.cmin, w.cmax + 1):
                        if c != self.enter()(w):
                            w.load(L, start, c)
                emit_loop(self)
            with slow:
                emit_loop(None)

    def begin(self, L, i):
        L.windows = self
        for w in self.windows:
            w.load(L, i, self.enter()(w))

    def end(self, L, i):
        b = L.b
        for w in self.windows:
            leave = w.cmin if self.d > 0 else w.cmax
            w.store(L, i, leave)
            order = range(w.cmin, w.cmax) if self.d > 0 else range(w.cmax, w.cmin, -1)
            for c in order:  # the value at offset c + d moves to offset c
                b.store(b.load(w.slot(c + self.d)), w.slot(c))
        L.windows = None

    def finish(self, L, i_exit):
        """After the last iteration: the elements still in the window go to memory."""
        L.windows = None
        for w in self.windows:
            for c in range(w.cmin, w.cmax + 1):
                if c != self.enter()(w):
                    w.store(L, i_exit, c)


def lower_access(L, s) -> bool:
    ws = getattr(L, "windows", None)
    if ws is None:
        return False
    w = ws.by_statement.get(id(s))
    if w is None:
        return False
    kind, c, _, extra = w.accesses[id(s)]
    b, et, slot = L.b, w.at.elem, w.slot(c)
    if kind == "add":
        g, gt = L.atom(extra[0])
        b.store(S.binary(L, "add", b.load(slot), S.convert(L, g, gt, et), et), slot)
    elif kind == "zero":
        b.store(S.convert(L, L.const(0, T.INT), T.INT, et), slot)
    elif kind == "value":
        from .derivs import Unbroadcast
        v, vt = L.atom(extra)
        rtype = L.types[s.target.name]
        value = Unbroadcast().lower(L, rt.index_set_vjp_value, [(b.load(slot), et), (v, vt)],
                                    {}, rtype)
        L.store(s.target.name, value, rtype)
    else:
        L.store(s.target.name, b.load(slot), et)
    return True
