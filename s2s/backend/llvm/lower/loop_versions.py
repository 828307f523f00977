"""Loop versioning: the bounds checks of affine indices hoisted out of ``range`` loops.

An element access in a loop ``for i in range(start, stop, step)`` costs a
negative-index ``select`` and a bounds-check branch per index per iteration
(``arrays.wrap_index``), which LLVM can neither remove nor vectorise across.
When every integer index of an access is *affine in the loop variable*,

    e = k*i + c0 + sum_j(a_j * v_j)      (k, c0, a_j constants; v_j integer
                                          variables the loop never assigns)

its values over the loop lie between ``e(first)`` and ``e(last)``, ``first =
start`` and ``last = start + ((span - 1) // |step|) * step`` (``span`` the
distance from start to stop in the step's direction).  So one test before the
loop -- every such ``min(e) >= 0`` and ``max(e) < shape[axis]``, computed with
overflow-checked arithmetic -- proves that no such access can fail or wrap around.
``FunctionLowering.stmt_For`` then emits the loop twice: a copy whose prechecked
accesses skip the select and the check (``unchecked`` on the lowering while they
are lowered), run when the test passes, and the original, fully checked loop,
run otherwise (or when the loop makes no iteration).  The test is conservative
(accesses under a branch, or past a ``break``, count as if they ran), so an
``IndexError`` is raised by the checked copy at the same iteration, with the same
message and the same partial writes as without versioning.

Contract of ``plan(L, s)``: a ``Plan`` or None for the ``for`` statement ``s``
(a range loop whose target is an integer).  Only innermost loops (no ``for`` or
``while`` in the body) of at most ``MAX_BODY`` statements are versioned, so a nest
of depth d makes 2 copies of its innermost body, not 2**d, and large bodies (where
the checks are a small share of an iteration) are not copied.  Statements prechecked (each an access whose every
index component is affine or a slice, whose array the loop does not reassign
-- or reassigns only through shape-keeping adjoint updates -- and that appears
once in the body):

* ``t = a[idx]``, ``a[idx] = v``, ``rt.read_copy/read_checked(a, idx...)``,
  ``rt.index_set/index_updated(a, idx, v)``: checked against ``a``;
* ``rt.index_set_vjp_base(G, idx)``, ``rt.index_set_vjp_value(G, idx, v)``,
  ``G = rt.add_at(G, g, x, idx)``: against ``G`` (every path indexes ``G`` or a
  copy of it);
* ``t = rt.getitem_vjp(g, x, idx)`` (alone or fused with ``A = A + t``): against
  ``x`` (every path indexes ``x``'s shape).

An affine variable is the loop target (if the body never assigns it) or a
variable assigned exactly once in the body, at its top level, from ``+ - *
(by a constant) unary -`` or a copy of affine or invariant integers; accesses
read it only after that assignment.  ``precheck(L, plan, start, stop, step)``
emits the test (an i1) at the loop's preheader.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Optional, Tuple

import s2s_runtime as rt
from llvmlite import ir as ll

from ....ir import nodes as ir
from ..values import arrays as A
from ..typing import types as T

ENABLED = True  # benchmarks/bench_jit_bounds.py compares kernels compiled without it
MAX_BODY = 24  # statements: a larger body doubles more code for checks a smaller share of it
_LIMIT = 2 ** 62  # larger constants are not versioned (the test's products would overflow)
_SHAPE_KEEPING = (rt.add_at, rt.index_set_vjp_base, rt.index_set, rt.index_updated)


@dataclass(frozen=True)
class Affine:
    """``k*i + const + sum(coef * var for var, coef in terms)``."""

    k: int
    const: int
    terms: Tuple[Tuple[str, int], ...] = ()

    def scaled(self, m: int) -> "Affine":
        return Affine(self.k * m, self.const * m, tuple((v, c * m) for v, c in self.terms))

    def plus(self, other: "Affine") -> "Affine":
        terms = dict(self.terms)
        for v, c in other.terms:
            terms[v] = terms.get(v, 0) + c
        return Affine(self.k + other.k, self.const + other.const,
                      tuple(sorted((v, c) for v, c in terms.items() if c)))

    def small(self) -> bool:
        return all(abs(c) < _LIMIT for c in (self.k, self.const, *(c for _, c in self.terms)))


@dataclass(frozen=True)
class Plan:
    checks: Tuple[Tuple[str, int, Affine], ...]  # (array variable, axis, index), deduplicated
    statements: frozenset  # ids of the prechecked statements


def _is_int_type(t) -> bool:
    return isinstance(t, T.Scalar) and t.dtype == "i8"


def plan(L, s: ir.For) -> Optional[Plan]:
    if not (ENABLED and L.boundscheck) or not _is_int_type(L.types.get(s.target.name)):
        return None
    stmts = list(ir.walk(s.body))
    if len(stmts) > MAX_BODY or any(isinstance(x, (ir.For, ir.While)) for x in stmts):
        return None
    defs = {}
    for x in stmts:
        for v in ir.stmt_defs(x):
            defs[v.name] = defs.get(v.name, 0) + 1
    seen = {}
    for x in stmts:
        seen[id(x)] = seen.get(id(x), 0) + 1
    scan = _Scan(L, s.target.name, defs, s.body, stmts)
    checks, ids = [], set()
    for top in s.body:
        for x in ir.walk((top,)):
            found = scan.access(x)
            if not found or seen[id(x)] != 1:
                continue
            ids.add(id(x))
            for check in found:
                if check not in checks:
                    checks.append(check)
        scan.learn(top)
    if not ids:
        return None
    return Plan(tuple(checks), frozenset(ids))


class _Scan:
    """The affine facts known at a point of the body, and the accesses they cover."""

    def __init__(self, L, target, defs, body, stmts):
        self.L, self.target, self.defs = L, target, defs
        self.env = {} if target in defs else {target: Affine(1, 0)}
        self.tuples = {}  # variable -> its items, each an Affine or "slice"
        self.stable = {n for n in defs if _keeps_shape(n, body, stmts)}

    # -- values ---------------------------------------------------------------------
    def affine(self, atom) -> Optional[Affine]:
        if isinstance(atom, ir.Const):
            v = atom.value
            return Affine(0, v) if type(v) is int and abs(v) < _LIMIT else None
        if atom.name in self.env:
            return self.env[atom.name]
        if atom.name not in self.defs and atom.name != self.target \
                and _is_int_type(self.L.types.get(atom.name)):
            return Affine(0, 0, ((atom.name, 1),))
        return None

    def learn(self, x):
        """Record what the top-level statement ``x`` defines, if affine or an index tuple."""
        if not (isinstance(x, ir.Assign) and self.defs.get(x.target.name) == 1):
            return
        name, v = x.target.name, x.value
        if _is_int_type(self.L.types.get(name)):
            form = self._form(v)
            if form is not None and form.small():
                self.env[name] = form
        elif isinstance(v, ir.Call) and v.fn is rt.make_tuple and not v.kwargs:
            items = [self._item(a) for a in v.args]
            if all(i is not None for i in items):
                self.tuples[name] = tuple(items)

    def _form(self, v) -> Optional[Affine]:
        if not isinstance(v, ir.Call):
            return self.affine(v)
        if v.kwargs:
            return None
        args = [self.affine(a) for a in v.args]
        if any(a is None for a in args):
            return None
        if v.fn in (operator.add, operator.iadd) and len(args) == 2:
            return args[0].plus(args[1])
        if v.fn in (operator.sub, operator.isub) and len(args) == 2:
            return args[0].plus(args[1].scaled(-1))
        if v.fn is operator.neg and len(args) == 1:
            return args[0].scaled(-1)
        if v.fn in (operator.mul, operator.imul) and len(args) == 2:
            for a, c in ((args[0], v.args[1]), (args[1], v.args[0])):
                if isinstance(c, ir.Const) and type(c.value) is int:
                    return a.scaled(c.value)
        return None

    def _item(self, atom):
        t = self.L.types.get(atom.name) if isinstance(atom, ir.Var) else None
        if isinstance(t, T.Slice) or (isinstance(atom, ir.Const)
                                      and isinstance(atom.value, slice)):
            return "slice"
        return self.affine(atom) if isinstance(atom, ir.Const) or _is_int_type(t) else None

    def index(self, atom):
        """The index ``atom``'s components (Affine or "slice"), or None."""
        if isinstance(atom, ir.Var) and atom.name in self.tuples:
            return self.tuples[atom.name]
        if isinstance(atom, ir.Const) and isinstance(atom.value, tuple):
            items = [self._item(ir.Const(v)) for v in atom.value]
            return tuple(items) if all(i is not None for i in items) else None
        item = self._item(atom)
        return None if item in (None, "slice") else (item,)

    # -- accesses -------------------------------------------------------------------
    def access(self, x):
        """The checks covering every index test of the statement ``x``, or None."""
        found = _access_of(x)
        if found is None:
            return None
        array, idx = found
        if not isinstance(array, ir.Var) or not isinstance(self.L.types.get(array.name), T.Array):
            return None
        if array.name in self.defs and array.name not in self.stable:
            return None
        parts = self.index(idx)
        if parts is None or len(parts) > self.L.types[array.name].ndim:
            return None
        return [(array.name, axis, p) for axis, p in enumerate(parts) if p != "slice"]


def _access_of(x):
    """``(array atom, index atom)`` of an access statement, or None."""
    v = getattr(x, "value", None)
    if not isinstance(x, (ir.Assign, ir.ExprStmt)) or not isinstance(v, ir.Call) or v.kwargs:
        return None
    fn, args = v.fn, v.args
    if fn is operator.getitem and len(args) == 2 and isinstance(x, ir.Assign):
        return args[0], args[1]
    if fn is operator.setitem and len(args) == 3:
        return args[0], args[1]
    if fn in (rt.read_copy, rt.index_set_vjp_base) and len(args) == 2:
        return args[0], args[1]
    if fn in (rt.read_checked, rt.index_set, rt.index_updated, rt.index_set_vjp_value) \
            and len(args) == 3:
        return args[0], args[1]
    if fn is rt.getitem_vjp and len(args) == 3 and isinstance(x, ir.Assign):
        return args[1], args[2]
    if fn is rt.add_at and len(args) == 4 and isinstance(x, ir.Assign) and args[0] == x.target:
        return args[0], args[3]
    return None


def _keeps_shape(name, body, stmts) -> bool:
    """Every assignment to ``name`` in the loop keeps its shape: ``name = f(name, ...)``
    with ``f`` returning an array of its first argument's shape (adjoint updates, in-place
    writes), or ``name = t`` at the top level where ``t``'s one assignment, earlier at the
    top level with no assignment to ``name`` in between, is ``t = f(name, ...)``."""
    def keeping(x, of):
        v = getattr(x, "value", None)
        return (isinstance(x, ir.Assign) and isinstance(v, ir.Call) and v.fn in _SHAPE_KEEPING
                and v.args and v.args[0] == of)

    def assigns(x, n):
        return any(n in {v.name for v in ir.stmt_defs(y)} for y in ir.walk((x,)))

    top = {id(x): k for k, x in enumerate(body)}
    for x in stmts:
        if name not in {v.name for v in ir.stmt_defs(x)} or keeping(x, ir.Var(name)):
            continue
        if not (isinstance(x, ir.Assign) and isinstance(x.value, ir.Var) and id(x) in top):
            return False
        t, p = x.value.name, top[id(x)]
        sources = [k for k, y in enumerate(body) if assigns(y, t)]
        if not (len(sources) == 1 and sources[0] < p
                and sum(assigns(y, t) for y in stmts) == 1
                and keeping(body[sources[0]], ir.Var(name))
                and not any(assigns(y, name) for y in body[sources[0] + 1:p])):
            return False
    return True


# -- the test at the preheader ---------------------------------------------------------
def precheck(L, p: Plan, start, stop, step):
    """i1: the loop runs at least once and every check of ``p`` holds for all iterations."""
    b = L.b
    zero = A.ZERO
    up = b.icmp_signed(">", step, zero)
    forward, f_ovf = _op(b, "ssub", stop, start)
    backward, b_ovf = _op(b, "ssub", start, stop)
    span = b.select(up, forward, backward)
    width, w_ovf = _op(b, "ssub", zero, step)
    width = b.select(up, step, width)
    failed = b.or_(b.select(up, f_ovf, b.or_(b_ovf, w_ovf)), b.icmp_signed("<=", span, zero))
    count = b.sdiv(b.sub(span, A.ONE), width)  # iterations after the first
    first = start
    last = b.add(start, b.mul(count, step))  # lies between start and stop: no overflow
    bounds = {}
    for array, axis, form in p.checks:
        if array not in bounds:
            a, at = L.atom(ir.Var(array))
            bounds[array] = A.shape_list(L, a, at)
        n = bounds[array][axis]
        c, bad = A.i64(form.const), ll.Constant(T.I1, 0)
        for name, coef in form.terms:
            v, _ = L.atom(ir.Var(name))
            term, o1 = _op(b, "smul", v, A.i64(coef))
            c, o2 = _op(b, "sadd", c, term)
            bad = b.or_(bad, b.or_(o1, o2))
        if form.k == 0:
            lo = hi = c
        else:
            ends = []
            for i in (first, last):
                ki, o1 = _op(b, "smul", i, A.i64(form.k))
                e, o2 = _op(b, "sadd", ki, c)
                bad = b.or_(bad, b.or_(o1, o2))
                ends.append(e)
            less = b.icmp_signed("<", ends[0], ends[1])
            lo, hi = b.select(less, ends[0], ends[1]), b.select(less, ends[1], ends[0])
        out = b.or_(b.icmp_signed("<", lo, zero), b.icmp_signed(">=", hi, n))
        failed = b.or_(failed, b.or_(bad, out))
    return b.not_(failed)


def _op(b, name, x, y):
    """``(x op y, overflowed)`` with LLVM's overflow-reporting intrinsics."""
    pair = getattr(b, name + "_with_overflow")(x, y)
    return b.extract_value(pair, 0), b.extract_value(pair, 1)
