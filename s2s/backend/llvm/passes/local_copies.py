"""Copies of temporaries inside one block, propagated before lowering (jit).

Reverse mode names an adjoint several times in a row (``t21 = u_bar;
t15_bar = t21; u_bar = rt.index_set_vjp_base(t15_bar, i)``).  In compiled code
each copy of an array is a reference (``abi.retain``/``release``), so the
in-place forms of ``inplace.py``, which need the array held once, do not
apply and every iteration of an adjoint loop copies the array.

``propagate_local_copies(func)``: for ``x = y`` (``y`` a variable) where ``x``
is a compiler temporary assigned once in the function and read only in later
statements of the same block (not in nested blocks), and ``y`` is not
reassigned before the last of those reads (reassigned *by* it is fine: a
statement reads before it writes), the reads of ``x`` become reads of ``y``
and the copy goes.  Before that, ``inplace.swap_base_and_value`` puts each
``index_set_vjp_value`` before its ``index_set_vjp_base`` (both pure), so the
base is the last read.  The computation is unchanged.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

from ....ir import nodes as ir
from ..lower.inplace import swap_base_and_value


def _renamed(s, old, new):
    def atom(a):
        return new if isinstance(a, ir.Var) and a.name == old else a

    if isinstance(s, (ir.Assign, ir.ExprStmt)):
        v = s.value
        if isinstance(v, ir.Call):
            v = replace(v, args=tuple(atom(a) for a in v.args),
                        kwargs=tuple((k, atom(a)) for k, a in v.kwargs))
        else:
            v = atom(v)
        return replace(s, value=v)
    if isinstance(s, (ir.Unpack, ir.Return)):
        return replace(s, value=atom(s.value))
    raise TypeError(s)  # _RENAMEABLE only


_RENAMEABLE = (ir.Assign, ir.ExprStmt, ir.Unpack, ir.Return)


def _reads(s):
    return {a.name for a in ir.stmt_uses(s) if isinstance(a, ir.Var)}


class _Names:
    """The names each statement reads or assigns and those it assigns, nested blocks
    included, computed once per statement object (a copy's scan of the statements
    after it would otherwise walk each of them again: quadratic in a long block)."""

    def __init__(self):
        self._known = {}  # id(statement) -> (statement, all names, assigned names)

    def _of(self, s):
        hit = self._known.get(id(s))
        if hit is None or hit[0] is not s:
            every, assigned = set(), set()
            for x in ir.walk([s]):
                defs = {v.name for v in ir.stmt_defs(x)}
                every |= _reads(x) | defs
                assigned |= defs
            hit = self._known[id(s)] = (s, every, assigned)
        return hit

    def all(self, s):
        return self._of(s)[1]

    def assigned(self, s):
        return self._of(s)[2]


def _block(stmts, once, temps, names):
    stmts = swap_base_and_value(list(stmts))
    k = 0
    while k < len(stmts):
        s = stmts[k]
        if (isinstance(s, ir.Assign) and isinstance(s.value, ir.Var)
                and s.target.name in temps and once[s.target.name] == 1
                and s.value.name != s.target.name):
            x, y = s.target.name, s.value
            later = stmts[k + 1:]
            uses = [j for j, t in enumerate(later) if x in names.all(t)]
            ok = bool(uses) and all(
                isinstance(later[j], _RENAMEABLE) and x in _reads(later[j]) for j in uses)
            if ok:
                last = uses[-1]
                ok = not any(y.name in names.assigned(later[j]) for j in range(last))
            if ok:
                for j in uses:
                    later[j] = _renamed(later[j], x, y)
                stmts = stmts[:k] + later
                continue
        blocks = ir.sub_blocks(s)
        if blocks:
            stmts[k] = ir.with_blocks(s, [tuple(_block(b, once, temps, names)) for b in blocks])
        k += 1
    return stmts


def propagate_local_copies(func):
    once = Counter(v.name for s in ir.walk(func.body) for v in ir.stmt_defs(s))
    temps = set(func.temps) - {p.var.name for p in func.params}
    body = tuple(_block(func.body, once, temps, _Names()))
    return func if body == tuple(func.body) else replace(func, body=body)
