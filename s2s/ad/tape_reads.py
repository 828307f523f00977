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

from typing import List, Set, Tuple

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
    _scan(list(adjoint), tapes, (), popped, needed)
    return popped - needed


def _scan(stmts, tapes, after: Tuple[Set[str], ...], popped, needed) -> None:
    """``after``: layers of the names read after ``stmts`` finish (loops wrapping around
    included); a name is read later when it is in one of them.

    One backward pass with one growing set per block (``seen``: read after the current
    statement), never a copy per statement, so the scan is linear in the length of the
    code (times its nesting depth)."""
    seen: Set[str] = set()
    layers = after + (seen,)

    def read_later(name):
        return any(name in layer for layer in layers)

    for x in reversed(stmts):
        if _is_pop(x, tapes):
            name = x.targets[0].name
            popped.add(name)
            if read_later(name):
                needed.add(name)
        elif isinstance(x, (ir.For, ir.While, ir.Try)):
            # a loop's next iteration runs the whole body again; a try may leave any
            # block for its handlers
            whole = _reads([x], tapes)
            for block in ir.sub_blocks(x):
                _scan(list(block), tapes, layers + (whole,), popped, needed)
            seen |= whole
            continue
        else:
            for block in ir.sub_blocks(x):  # an if's branches
                _scan(list(block), tapes, layers, popped, needed)
        seen |= _reads([x], tapes)
