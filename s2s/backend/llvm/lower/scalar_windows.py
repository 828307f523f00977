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
Each element is then loaded and stored once (a window only read is never
stored: ``unique_adjoints`` also holds arrays the loop only reads), and the
index temporaries count only when assigned before their use in the iteration
from values of that iteration.  The dependence between
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
while a register form is being emitted (False for any other statement).  The IR
analysis (which statements are window accesses) is ``window_accesses.py``.
"""
from __future__ import annotations

from llvmlite import ir as ll

import s2s_runtime as rt

from ....ir import nodes as ir
from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T
from . import window_accesses as W

_MAX_SPAN = 8  # registers per window at most
_MAX_GROUPS = 4  # windows per array at most


def plan(L, loop, iter_type):
    """The windows of ``loop`` (None when no array qualifies)."""
    if not isinstance(iter_type, T.Range) or L.handlers or loop.orelse \
            or not W.plain_body(loop.body) or not L.owned:
        return None
    defs = W.definitions(L.func)
    d = W.range_step(loop.iter, defs)
    if d is None:
        return None
    res = W.Resolver(L, loop, defs)
    if res.reassigns_counter:
        return None
    windows = []
    for name in sorted(L.owned):
        at = L.types.get(name)
        if not isinstance(at, T.Array) or at.dtype not in ("f4", "f8", "c16"):
            continue
        groups, ok = {}, True  # (invariants, position) -> {id(statement): access}
        for position, s in enumerate(loop.body):
            if not W.mentions(s, name):
                continue
            acc = W.access(L, s, name, res, position) if not ir.sub_blocks(s) else None
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
            # worth registers only with reuse: an element written, or read at two offsets
            # (a read-only window of one offset would just copy the loop and lose the bounds
            # versioning of the other accesses, loop_versions.py)
            if any(w.written or w.cmax > w.cmin for w in made):
                windows += made
    return Windows(loop, d, windows) if windows else None


# -- lowering ---------------------------------------------------------------------------
class _Window:
    def __init__(self, name, group, at, cmin, cmax, key, accesses):
        self.name, self.group, self.at, self.cmin, self.cmax = name, group, at, cmin, cmax
        self.invariants, self.position = key
        self.accesses = accesses  # id(statement) -> (kind, c, key, extra)
        self.written = any(acc[0] in ("add", "zero") for acc in accesses.values())
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
            ok = b.and_(ok, b.not_(A.differs(L, shape, A.shape_list(L, xv, xt))))
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
        if not self.written:  # a window only read: memory holds its values already
            return
        A.store(L, L.b.load(self.slot(c)), self.ptr(L, i, c), self.at.elem)


class Windows:
    def __init__(self, loop, d, windows):
        self.loop, self.d, self.windows = loop, d, windows
        self.by_statement = {}
        for w in windows:
            for key in w.accesses:
                self.by_statement[key] = w

    def entering(self, w):
        """The offset at which an element enters ``w`` (is first touched)."""
        return w.cmax if self.d > 0 else w.cmin

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
            # lo + cmin >= 0 and hi + cmax < n, written so that nothing overflows
            ok = b.and_(ok, b.icmp_signed(">=", lo, ll.Constant(T.I64, -w.cmin)))
            ok = b.and_(ok, b.icmp_signed("<", hi, b.sub(w.n, ll.Constant(T.I64, w.cmax))))
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
                        if c != self.entering(w):
                            w.load(L, start, c)
                emit_loop(self)
            with slow:
                emit_loop(None)

    def begin(self, L, i):
        L.windows = self
        for w in self.windows:
            w.load(L, i, self.entering(w))

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
                if c != self.entering(w):
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
        from ..derivs.adjoints import Unbroadcast
        v, vt = L.atom(extra)
        rtype = L.types[s.target.name]
        value = Unbroadcast().lower(L, rt.index_set_vjp_value, [(b.load(slot), et), (v, vt)],
                                    {}, rtype)
        L.store(s.target.name, value, rtype)
    else:
        L.store(s.target.name, b.load(slot), et)
    return True
