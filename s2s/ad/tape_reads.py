"""Which pops of the tape the adjoint actually needs.

A pop ``v, tape = tape`` in an adjoint loop restores the value ``v`` had
before an iteration's assignment, for the adjoint code that runs *after* it
(later in the same iteration, in the iterations still to come, or after the
adjoint loop).  A value read only *before* the adjoint loop (the adjoint of
``np.stack(out)`` after a loop that appends to ``out``) needs no pop: it reads
the loop's final value, which the primal left in place.

``unneeded_pops(adjoint, tapes)``: the names that are popped somewhere and
read after none of their pops; their pops, and the pushes that feed them, can
all go (so a loop that builds a list with ``append`` records nothing for it).
"""
from __future__ import annotations

from typing import List, Set

from ..ir import nodes as ir


def _is_pop(x, tapes) -> bool:
    return isinstance(x, ir.Unpack) and x.value in tapes and x.targets[1] == x.value


def _reads(stmts, tapes) -> Set[str]:
    """Names read anywhere in ``stmts`` (nested blocks included), pops aside."""
    out: Set[str] = set()
    for x in ir.walk(list(stmts)):
        if not _is_pop(x, tapes):
            out |= {a.name for a in ir.stmt_uses(x) if isinstance(a, ir.Var)}
    return out


def unneeded_pops(adjoint: List, tapes) -> Set[str]:
    popped: Set[str] = set()
    needed: Set[str] = set()
    _scan(list(adjoint), tapes, set(), popped, needed)
    return popped - needed


def _scan(stmts, tapes, after: Set[str], popped, needed) -> None:
    """``after``: names read after ``stmts`` finish (loops wrapping around included)."""
    suffix = [set(after)]
    for x in reversed(stmts):
        suffix.append(suffix[-1] | _reads([x], tapes))
    suffix.reverse()  # suffix[i]: read after stmts[i] starts; suffix[i + 1]: after it
    for i, x in enumerate(stmts):
        later = suffix[i + 1]
        if _is_pop(x, tapes):
            name = x.targets[0].name
            popped.add(name)
            if name in later:
                needed.add(name)
        elif isinstance(x, (ir.For, ir.While)):
            # the next iteration runs the whole body again
            again = later | _reads(ir.sub_blocks_flat(x), tapes) | _reads([x], tapes)
            for block in ir.sub_blocks(x):
                _scan(list(block), tapes, again, popped, needed)
        elif isinstance(x, ir.Try):
            whole = later | _reads(ir.sub_blocks_flat(x), tapes)
            for block in ir.sub_blocks(x):
                _scan(list(block), tapes, whole, popped, needed)
        else:
            for block in ir.sub_blocks(x):  # an if's branches
                _scan(list(block), tapes, later, popped, needed)
