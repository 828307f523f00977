"""Updating an array in place where no one else can see it (adjoint accumulations).

Adjoint code accumulates into arrays functionally: ``x_bar = x_bar + t`` makes a
new array, and the adjoint of a read ``x[i]`` is ``t = rt.getitem_vjp(g, x, i)``
(zeros with ``g`` at ``i``) added to ``x_bar`` -- O(size) per scalar read.  Both
are done in place when it cannot be observed: the array on the left is held by
exactly one reference (``abi``'s reference counts: the variable being
reassigned) and already has the result's shape and dtype.  Contract:

* ``fused_accumulation(L, s1, s2)``: for ``t = rt.getitem_vjp(g, x, idx)``
  followed by ``A = A + t`` (``t`` read nowhere else), emits ``A[idx] += g``
  when ``A`` is unshared and shaped like ``x``, else the two statements as
  written;
* ``inplace_add(L, s)``: ``A = A + B`` / ``A = A - B`` for arrays, in place
  when ``A`` is unshared and ``B`` broadcasts to ``A``'s shape;
* ``inplace_add_at(L, s)``: ``A = rt.add_at(A, g, x, idx)`` as ``A[idx] += g``
  when ``A`` is unshared and shaped like ``x`` (else the copying form); repeated
  places of an advanced index accumulate, as ``add_at`` states.
Arrays passed in by the caller (no block) are never updated in place.
"""
from __future__ import annotations

import operator

from llvmlite import ir as ll

import s2s_runtime as rt

from ....ir import nodes as ir
from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T

_ADD = (operator.add, operator.iadd, rt.add)
_SUB = (operator.sub, operator.isub)


def _binary(s):
    """``(op, A, B)`` of ``A = A op B`` (or ``A = B + A``), else None."""
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
            and len(s.value.args) == 2 and not s.value.kwargs):
        return None
    fn, (a, c) = s.value.fn, s.value.args
    target = s.target
    if fn in _ADD and a == target:
        return "add", a, c
    if fn in _ADD and c == target:
        return "add", c, a
    if fn in _SUB and a == target:
        return "sub", a, c
    return None


def unshared(L, a):
    """i1: the array value ``a`` is the only reference to a block the call allocated."""
    b = L.b
    block = b.extract_value(a, 1)
    words = b.bitcast(block, T.I64.as_pointer())
    is_block = b.icmp_unsigned("!=", b.ptrtoint(block, T.I64), A.ZERO)
    # a null block never reaches the load: select on the address first
    safe = b.select(is_block, words, L.refcount_dummy())
    refs = b.load(b.gep(safe, [ll.Constant(T.I32, 3)]))
    return b.and_(is_block, b.icmp_signed("==", refs, A.ONE))


def fusable(L, s1, s2, uses) -> bool:
    if not (isinstance(s1, ir.Assign) and isinstance(s1.value, ir.Call)
            and s1.value.fn is rt.getitem_vjp and len(s1.value.args) == 3):
        return False
    pattern = _binary(s2)
    if pattern is None or pattern[0] != "add" or pattern[2] != s1.target:
        return False
    if uses.get(s1.target.name, 0) != 1:
        return False
    at = L.types.get(s2.target.name)
    xt = L.types.get(getattr(s1.value.args[1], "name", None))
    gt = L.types.get(getattr(s1.value.args[0], "name", None)) if isinstance(
        s1.value.args[0], ir.Var) else None
    return (isinstance(at, T.Array) and isinstance(xt, T.Array) and at.ndim == xt.ndim
            and at.dtype in ("f4", "f8", "c16") and isinstance(gt, (T.Scalar, T.Array)))


def fused_accumulation(L, s1, s2):
    b = L.b
    g, gt = L.atom(s1.value.args[0])
    x, xt = L.atom(s1.value.args[1])
    idx, it = L.atom(s1.value.args[2])
    a, at = L.atom(s2.target)
    ok = unshared(L, a)
    ok = b.and_(ok, b.not_(A.differs(L, A.shape_list(L, a, at), A.shape_list(L, x, xt))))
    with b.if_else(ok) as (fast, slow):
        with fast:
            _add_at(L, a, at, idx, it, g, gt)
        with slow:
            L.stmt(s1)
            L.stmt(s2)


def _add_at(L, a, at, idx, it, g, gt):
    """``a[idx] += g`` in place (repeated places of an advanced index accumulate)."""
    from ..values import fancy
    if fancy.is_advanced(it):
        return fancy.scatter(L, a, at, idx, it, g, gt, "add")
    parts = A.index_parts(L, idx, it)
    data, shape, strides = A.view(L, a, at, parts)
    et = at.elem
    if A.is_element(parts, at.ndim):
        ptr = L.b.bitcast(data, T.memory_llvm(et).as_pointer())
        A.store(L, S.binary(L, "add", A.load(L, ptr, et), S.convert(L, g, gt, et), et), ptr, et)
        return
    vt = T.Array(at.dtype, len(shape))
    target = A.make(L, vt, data, L.b.extract_value(a, 1), shape, strides)
    A.elementwise(L, lambda xs: (S.binary(L, "add", *(S.convert(L, v, t, et) for v, t in xs),
                                          et), et),
                  [(target, vt), (g, gt)], at.dtype, out=(target, vt))


def add_at_candidate(L, s) -> bool:
    """``A = rt.add_at(A, g, x, idx)``: ``A`` a float array of the array ``x``'s rank
    (the shapes are checked at run time), ``g`` a number or array of ``A``'s dtype or
    lower."""
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
            and s.value.fn is rt.add_at and len(s.value.args) == 4 and not s.value.kwargs
            and s.value.args[0] == s.target and isinstance(s.value.args[2], ir.Var)):
        return False
    at = L.types.get(s.target.name)
    xt = L.types.get(s.value.args[2].name)
    g = s.value.args[1]
    gt = L.types.get(g.name) if isinstance(g, ir.Var) else None
    ge = gt.elem if isinstance(gt, T.Array) else gt
    return (isinstance(at, T.Array) and isinstance(xt, T.Array) and at.ndim == xt.ndim
            and at.dtype in ("f4", "f8", "c16") and isinstance(ge, T.Scalar)
            and (not isinstance(gt, T.Array) or gt.ndim <= at.ndim)
            and T.promote(at.elem, ge).dtype == at.dtype)


def inplace_add_at(L, s):
    """``A[idx] += g`` in place when ``A`` is unshared and shaped like ``x``; else
    ``s`` as written (a copy of ``A`` with ``g`` added)."""
    b = L.b
    acc, g, x, idx = s.value.args
    a, at = L.atom(acc)
    xv, xt = L.atom(x)
    gv, gt = L.atom(g)
    iv, it = L.atom(idx)
    if acc.name in L.owned:  # held once throughout the loop (unique_adjoints.py)
        from .unique_adjoints import check_shape
        check_shape(L, a, at, xv, xt)
        _add_at(L, a, at, iv, it, gv, gt)
        return
    ok = b.and_(unshared(L, a), b.not_(A.differs(L, A.shape_list(L, a, at),
                                                      A.shape_list(L, xv, xt))))
    with b.if_else(ok, likely=True) as (fast, slow):
        with fast:
            _add_at(L, a, at, iv, it, gv, gt)
        with slow:
            L.stmt(s)


def inplace_candidate(L, s) -> bool:
    pattern = _binary(s)
    if pattern is None:
        return False
    at = L.types.get(s.target.name)
    other = pattern[2]
    ot = L.types.get(other.name) if isinstance(other, ir.Var) else None
    return (isinstance(at, T.Array) and at.dtype in ("f4", "f8", "c16")
            and isinstance(ot, (T.Array, T.Scalar)) and (not isinstance(ot, T.Array)
                                                         or ot.ndim <= at.ndim)
            and T.promote(at.elem, ot.elem if isinstance(ot, T.Array) else ot).dtype == at.dtype)


def inplace_add(L, s):
    b = L.b
    op, target, other = _binary(s)
    a, at = L.atom(target)
    c, ct = L.atom(other)
    ok = unshared(L, a)
    if isinstance(ct, T.Array):
        ashape, cshape = A.shape_list(L, a, at), A.shape_list(L, c, ct)
        for k in range(ct.ndim):
            ad, cd = ashape[at.ndim - ct.ndim + k], cshape[k]
            ok = b.and_(ok, b.or_(b.icmp_signed("==", ad, cd), b.icmp_signed("==", cd, A.ONE)))
    et = at.elem
    with b.if_else(ok) as (fast, slow):
        with fast:
            A.elementwise(L, lambda xs: (S.binary(L, op, *(S.convert(L, v, t, et) for v, t in xs),
                                                  et), et),
                          [(a, at), (c, ct)], at.dtype, out=(a, at))
        with slow:
            L.stmt(s)


# -- dead temporaries ---------------------------------------------------------------------
def local_temporaries(func, stmts, stacks) -> set:
    """Array variables of ``stmts`` (one block) that appear nowhere else -- not in nested
    blocks, not as parameters -- and are assigned before any read in the block: dead after
    their last read in the block (the next pass through the block assigns them first)."""
    own = {}
    for k, s in enumerate(stmts):
        for v in ir.stmt_defs(s):
            own.setdefault(v.name, ("def", k))
        for a in ir.stmt_uses(s):
            if isinstance(a, ir.Var):
                own.setdefault(a.name, ("use", k))
    outside = set(p.var.name for p in func.params) | set(stacks)
    for s in stmts:
        for block in ir.sub_blocks(s):
            for x in ir.walk(block):
                outside |= {v.name for v in ir.stmt_defs(x)}
                outside |= {a.name for a in ir.stmt_uses(x) if isinstance(a, ir.Var)}
    counts = _name_counts(func)
    local = {}
    for s in stmts:
        for v in list(ir.stmt_defs(s)) + [a for a in ir.stmt_uses(s) if isinstance(a, ir.Var)]:
            local[v.name] = local.get(v.name, 0) + 1
    return {n for n, (first, _) in own.items()
            if first == "def" and n not in outside and counts.get(n) == local.get(n)}


_COUNTS = [None]  # (function, its name counts): one tuple, read and written at once


def _name_counts(func) -> dict:
    """How often each name is defined or read in ``func`` (computed once per function, not
    once per block: lowering a function of many blocks stays linear)."""
    hit = _COUNTS[0]
    if hit is not None and hit[0] is func:
        return hit[1]
    counts = {}
    for x in ir.walk(func.body):
        for v in list(ir.stmt_defs(x)) + [a for a in ir.stmt_uses(x) if isinstance(a, ir.Var)]:
            counts[v.name] = counts.get(v.name, 0) + 1
    _COUNTS[0] = (func, counts)
    return counts


def last_reads(stmts, temps) -> dict:
    """statement index -> the temporaries read there for the last time in the block."""
    last = {}
    for k, s in enumerate(stmts):
        for a in ir.stmt_uses(s):
            if isinstance(a, ir.Var) and a.name in temps:
                last[a.name] = k
    out = {}
    for name, k in last.items():
        out.setdefault(k, []).append(name)
    return out


def swap_base_and_value(stmts):
    """``X = index_set_vjp_base(G, i); Y = index_set_vjp_value(G, i, v)`` -> the value
    first (both pure; it reads nothing the first assigns), so ``G`` dies at the base."""
    stmts = list(stmts)
    for k in range(len(stmts) - 1):
        s1, s2 = stmts[k], stmts[k + 1]
        if (isinstance(s1, ir.Assign) and isinstance(s2, ir.Assign)
                and isinstance(s1.value, ir.Call) and isinstance(s2.value, ir.Call)
                and s1.value.fn is rt.index_set_vjp_base and s2.value.fn is rt.index_set_vjp_value
                and s1.target not in s2.value.args and s2.target not in s1.value.args
                and s1.target != s2.target):
            stmts[k], stmts[k + 1] = s2, s1
    return stmts


def inplace_base(L, s, dying) -> bool:
    """``T = index_set_vjp_base(G, idx)`` with ``G`` dying here: zero ``G[idx]`` in place
    when the only references to its block are ``G`` and ``T`` (being reassigned);
    ``G = index_set_vjp_base(G, idx)``: in place when ``G`` is its block's only reference."""
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
            and s.value.fn is rt.index_set_vjp_base and len(s.value.args) == 2
            and isinstance(s.value.args[0], ir.Var)):
        return False
    itself = s.value.args[0] == s.target  # G = index_set_vjp_base(G, idx)
    if not (itself or s.value.args[0].name in dying):
        return False
    gt = L.types.get(s.value.args[0].name)
    if not isinstance(gt, T.Array) or L.types.get(s.target.name) != gt:
        return False
    b = L.b
    g, _ = L.atom(s.value.args[0])
    if itself and s.target.name in L.owned:  # held once throughout the loop
        idx, it = L.atom(s.value.args[1])
        A.setitem(L, g, gt, idx, it, L.const(0, T.INT), T.INT)
        return True
    old, _ = L.atom(s.target)
    block = b.extract_value(g, 1)
    same = b.icmp_unsigned("==", b.ptrtoint(block, T.I64),
                           b.ptrtoint(b.extract_value(old, 1), T.I64))
    is_block = b.icmp_unsigned("!=", b.ptrtoint(block, T.I64), A.ZERO)
    words = b.select(is_block, b.bitcast(block, T.I64.as_pointer()), L.refcount_dummy())
    refs = b.load(b.gep(words, [ll.Constant(T.I32, 3)]))
    expected = A.ONE if itself else b.add(A.ONE, b.zext(same, T.I64))
    ok = b.and_(is_block, b.icmp_signed("==", refs, expected))
    with b.if_else(ok) as (fast, slow):
        with fast:
            idx, it = L.atom(s.value.args[1])
            A.setitem(L, g, gt, idx, it, L.const(0, T.INT), T.INT)
            if not itself:  # (else the variable holds ``g`` already: no reference moves)
                L.store(s.target.name, g, gt)
        with slow:
            L.stmt(s)
    return True
