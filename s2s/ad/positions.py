"""Where statements sit in a body, and what may run after what (for ``index_writes.py``).

``Positions(body)`` walks the body once: each statement's pre-order position, its
enclosing loops, the ``if`` branches (and ``try`` blocks) it is in, and its chain of
``(block, index)`` from the body down.  ``may_follow(a, b)``: whether ``b`` may run
after ``a`` (later in order and not in the other branch of a common ``if``, or
anywhere in a loop around both).  ``rebound_between(w, u, defs)``: whether every
way from ``w`` to ``u`` runs one of the statements ``defs`` (an ``if`` each of whose
branches runs one counts as one of them).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Set

from ..ir import nodes as ir


@dataclass
class _Site:
    """Where a statement sits: its pre-order position, enclosing loops (outermost
    first), ``if`` branches, and its chain of ``(block, index)`` from the body down."""

    pos: int
    loops: tuple
    branches: tuple  # ((id of If, 0 body / 1 orelse), ...)
    chain: tuple  # ((block key, index of the statement holding it in that block), ...)


class Positions:
    """The places of the statements of a body (``site``, by ``id``), in pre-order
    (``order``), and the keys of the blocks that repeat (``loop_blocks``)."""

    def __init__(self, body):
        self.site: Dict[int, _Site] = {}
        self.order: List = []
        self.loop_blocks: Set = set()  # keys of the blocks that repeat (loop bodies)
        self._covers: Dict[tuple, list] = {}
        self._walk(body, "body", (), (), ())

    def _walk(self, stmts, key, loops, branches, chain):
        for i, s in enumerate(stmts):
            here = chain + ((key, i),)
            self.site[id(s)] = _Site(len(self.order), loops, branches, here)
            self.order.append(s)
            if isinstance(s, ir.If):
                self._walk(s.body, (id(s), 0), loops, branches + ((id(s), 0),), here)
                self._walk(s.orelse, (id(s), 1), loops, branches + ((id(s), 1),), here)
            elif isinstance(s, (ir.For, ir.While)):
                inner = loops + (id(s),)
                self.loop_blocks |= {(id(s), "test"), (id(s), 0)}
                if isinstance(s, ir.While):
                    self._walk(s.test_body, (id(s), "test"), inner, branches, here)
                self._walk(s.body, (id(s), 0), inner, branches, here)
                self._walk(s.orelse, (id(s), 1), loops, branches, here)
            elif isinstance(s, ir.Try):
                for k, block in enumerate(ir.sub_blocks(s)):
                    self._walk(block, (id(s), k), loops, branches + ((id(s), "try"),), here)

    def may_follow(self, a, b) -> bool:
        """Whether statement ``b`` may run after statement ``a`` (in this pass or a
        later iteration of a loop around both)."""
        sa, sb = self.site[id(a)], self.site[id(b)]
        if set(sa.loops) & set(sb.loops):
            return True
        if sb.pos <= sa.pos:
            return False
        exclusive = any(ia == ib and ba != bb and ba != "try"
                        for ia, ba in sa.branches for ib, bb in sb.branches)
        return not exclusive

    def rebound_between(self, w, u, defs) -> bool:
        """Whether every way from ``w`` to ``u`` runs one of ``defs`` (a statement of
        the block it sits in directly runs whenever control passes through that
        block: it is left only at its end)."""
        cw, cu = dict(self.site[id(w)].chain), dict(self.site[id(u)].chain)
        for d in self._covering(defs):
            key, i_d = self.site[id(d)].chain[-1]
            if key not in cw:  # w is outside d's block: u in it is reached from its start
                if key in cu and i_d < cu[key]:
                    return True
                continue
            i_w = cw[key]
            if u is w:  # once around the loop whose body holds both
                if key == self.site[id(w)].chain[-1][0] and key in self.loop_blocks:
                    return True
                continue
            if key not in cu:  # u is outside d's block: reached only by leaving it
                if i_d > i_w:
                    return True
                continue
            i_u = cu[key]
            if (i_d > i_w and (i_u > i_d or i_u < i_w)) or i_d < i_u < i_w:
                return True
        return False

    def _covering(self, defs) -> list:
        """``defs`` and every ``if`` each of whose branches runs one of them (directly
        in the branch's block, or by such an ``if``)."""
        key = tuple(id(d) for d in defs)
        if key not in self._covers:
            out, ids = list(defs), set(key)
            for s in reversed(self.order):  # (inner ifs before the ifs holding them)
                if isinstance(s, ir.If) and s.orelse and id(s) not in ids \
                        and any(id(x) in ids for x in s.body) \
                        and any(id(x) in ids for x in s.orelse):
                    ids.add(id(s))
                    out.append(s)
            self._covers[key] = out
        return self._covers[key]
