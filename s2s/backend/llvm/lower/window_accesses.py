"""Which statements of a loop body read or update an array at ``i + c`` (jit).

The IR analysis behind ``scalar_windows.py`` (see there for the transformation):

* ``range_step(atom, defs)``: the constant step (+1 or -1) of the ranges a loop
  iterates over, read off their assignments (``range``, ``rt.reversed_range``,
  values popped from a tape), else None;
* ``Resolver(L, loop, defs)``: the indices of the loop's body as ``(fixed,
  position, c)`` -- component ``position`` is the counter plus the constant
  ``c``, the others fixed in the loop, each ``(name, c')`` for ``name + c'``
  (``name`` None for a constant);
* ``access(L, s, name, res, position)``: ``(kind, c, key, extra)`` of a statement
  of the body that reads or updates the adjoint array ``name`` at such an index
  (kind ``add`` / ``zero`` / ``value`` / ``read``, ``key`` the fixed indices and the
  position), else None;
* ``plain_body(body)``: no ``break``/``continue``/``return``, nested loop or ``try``.
"""
from __future__ import annotations

import operator

import s2s_runtime as rt
from s2s_runtime import build

from ....ir import nodes as ir
from ..typing import types as T

_READS = (operator.getitem, rt.read_copy, rt.read_checked)


def definitions(func):
    """name -> its defining statements (all depths)."""
    out = {}
    for s in ir.walk(func.body):
        for v in ir.stmt_defs(s):
            out.setdefault(v.name, []).append(s)
    return out


def _int_const(a):
    """An integer constant small enough that offsets made of it never overflow."""
    return isinstance(a, ir.Const) and type(a.value) is int and abs(a.value) < 2 ** 31


def range_step(atom, defs, depth=0):
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
            inner = range_step(args[0], defs, depth + 1)
            if inner is None:
                return None
            steps.add(-inner)
        else:
            return None
    return steps.pop() if len(steps) == 1 else None


class Resolver:
    """Indices of the body as ``(invariants, position, offset)``."""

    def __init__(self, L, loop, defs):
        self.L, self.var = L, loop.target
        self.defs = defs
        self.assigned = {v.name for s in ir.walk(loop.body) for v in ir.stmt_defs(s)}
        self.reassigns_counter = loop.target.name in self.assigned
        self.assigned.add(loop.target.name)
        # name -> (its statement at the body's top level, position): assigned once in the
        # function, from operands the loop does not assign or assigned so before it (each
        # read in an iteration sees that iteration's value)
        self.local = {}
        for k, s in enumerate(loop.body):
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) \
                    and not s.value.kwargs and len(self.defs.get(s.target.name, ())) == 1 \
                    and all(not isinstance(a, ir.Var) or a == self.var or a.name in self.local
                            or a.name not in self.assigned for a in s.value.args):
                self.local[s.target.name] = (s, k)

    def _def(self, atom):
        if isinstance(atom, ir.Var) and atom.name in self.local:
            return self.local[atom.name][0].value
        return None

    def defined_before(self, atom, position) -> bool:
        """``atom`` has its iteration's value at the body's ``position``."""
        return not isinstance(atom, ir.Var) or atom == self.var \
            or atom.name not in self.assigned \
            or (atom.name in self.local and self.local[atom.name][1] < position)

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


def access(L, s, name, res, position):
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
    where = res.index(idx, at.ndim) if res.defined_before(idx, position) else None
    if where is None:
        return None
    invariants, position, c = where
    return kind, c, (invariants, position), extra


def mentions(s, name):
    var = ir.Var(name)
    return any(var in ir.stmt_uses(x) or var in ir.stmt_defs(x) for x in ir.walk([s]))


def plain_body(body):
    for s in ir.walk(body):
        if isinstance(s, (ir.Break, ir.Continue, ir.Return, ir.For, ir.While, ir.Try)):
            return False
    return True
