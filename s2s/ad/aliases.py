"""Which names may hold the same array object, statement by statement (for
``index_writes.py``).

Contract: ``ObjectStates(body, tracked, roots, exposures)`` runs once over a
structured body (``If``/``For``/``While``/``Try``, ``break``/``continue``/``return``)
and answers, for the names in ``tracked`` (the states of one family of index
writes and the views of them):

* ``may_alias(s, a, b)``: whether ``a`` and ``b`` may name the same object just
  before statement ``s`` runs;
* ``may_write_exposed(w, e)``: whether the object the write ``w`` writes into may
  be one whose values the statement ``e`` read, on some earlier run of ``e``.

Abstract objects: every statement in ``roots`` (one that makes a new array:
``np.zeros``, ``x.copy()``...) gives the object it makes the token ``(site, 0)``;
running it again first turns every ``(site, 0)`` already held into ``(site, 1)``,
the summary of all older objects from that site (two ``(site, 1)`` may be the same
object, ``(site, 0)`` and ``(site, 1)`` are surely different).  A copy ``a = b``,
an index write ``a = index_set(b, ...)`` and a view ``a = b.T`` hold ``b``'s token
(none when ``b`` is not bound on that path);
any other definition of a tracked name (an item of a container, a loop item)
holds ``ANY``, which may be any object.  The analysis is disjunctive: the state
before a statement is a *set* of maps from names to tokens, one per way control
may have come there, joined by union and iterated to a fixed point over loops,
so names swapped or rotated (``u, v = v, u``; ``a, b, c = b, c, a``) stay
distinct objects on every path.  Each exposure ``e`` keeps a ghost: the tokens
of every object it read so far (aged like the names).  Over ``CAP`` states at one
place the analysis gives up: ``precise`` is False and every answer is True.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Set

from ..ir import nodes as ir

ANY = ("any",)
#: the most maps from names to tokens kept at one place before giving up
CAP = 512

State = FrozenSet  # frozenset of (key, value): a name -> token, ("@", id) -> tokens


class _TooMany(Exception):
    pass


def _tokens_alias(a, b) -> bool:
    return a == ANY or b == ANY or a == b


class ObjectStates:
    """The states before each statement of ``body`` (see the module doc)."""

    def __init__(self, body, tracked: Set[str], roots: Iterable, exposures: Dict[int, Set[str]],
                 copies=None):
        """``roots``: the statements that make a new object; ``exposures``: by a statement's
        id, the tracked names whose values it reads; ``copies(value)``: the tracked name a
        definition's value refers to (a copy, a write or a view of it), else None."""
        self.tracked = set(tracked)
        self.roots = {id(s) for s in roots}
        self.exposures = exposures
        self.copies = copies
        self.before: Dict[int, Set[State]] = {}
        self._loops: List = []  # per enclosing loop: [break states, continue states]
        self.precise = True
        try:
            self._block(list(body), {frozenset()})
        except _TooMany:
            self.precise = False

    # ------------------------------------------------------------------ answers
    def may_alias(self, s, a: str, b: str) -> bool:
        if not self.precise:
            return True
        for st in self.before.get(id(s), ()):
            d = dict(st)
            if a in d and b in d and _tokens_alias(d[a], d[b]):
                return True
        return False

    def may_write_exposed(self, w, e) -> bool:
        if not self.precise:
            return True
        base = w.value.args[0].name
        for st in self.before.get(id(w), ()):
            d = dict(st)
            tok = d.get(base)
            if tok is not None and any(_tokens_alias(tok, t) for t in d.get(("@", id(e)), ())):
                return True
        return False

    # ------------------------------------------------------------------ flow
    def _record(self, s, states):
        seen = self.before.setdefault(id(s), set())
        seen |= states
        if len(seen) > CAP:
            raise _TooMany

    def _block(self, stmts, states: Set[State]) -> Set[State]:
        for s in stmts:
            if not states:
                return states
            self._record(s, states)
            states = self._stmt(s, states)
            if len(states) > CAP:
                raise _TooMany
        return states

    def _stmt(self, s, states):
        if isinstance(s, ir.If):
            return self._block(s.body, states) | self._block(s.orelse, states)
        if isinstance(s, (ir.For, ir.While)):
            return self._loop(s, states)
        if isinstance(s, ir.Try):
            body_out = self._block(s.body, states)
            inside = set(states) | body_out
            for x in ir.walk(list(s.body)):
                inside |= self.before.get(id(x), set())
            out = self._block(s.orelse, body_out)
            for h in s.handlers:
                out |= self._block(h.body, self._define(inside, h.name.name if h.name else None,
                                                        ANY))
            return self._block(s.finalbody, out | inside) if s.finalbody else out
        if isinstance(s, (ir.Return, ir.Raise)):
            return set()
        if isinstance(s, ir.Break):
            self._loops[-1][0].update(states)
            return set()
        if isinstance(s, ir.Continue):
            self._loops[-1][1].update(states)
            return set()
        return {self._simple(s, st) for st in states}

    def _loop(self, s, states):
        head = set(states)
        while True:
            self._loops.append([set(), set()])
            at = head
            if isinstance(s, ir.For):
                at = self._define(at, s.target.name, ANY)
            else:
                at = self._block(s.test_body, at)
            out = self._block(s.body, at)
            breaks, conts = self._loops.pop()
            new = head | out | conts
            if len(new) > CAP:
                raise _TooMany
            if new == head:
                break
            head = new
        leave = self._block(s.test_body, head) if isinstance(s, ir.While) else head
        return self._block(s.orelse, leave) | breaks

    def _define(self, states, name, token):
        if name is None or name not in self.tracked:
            return states
        return {frozenset({k: v for k, v in st if k != name}.items() | {(name, token)})
                for st in states}

    def _simple(self, s, st: State) -> State:
        d = dict(st)
        for h in sorted(self.exposures.get(id(s), ())):
            if h in d:
                d[("@", id(s))] = frozenset(d.get(("@", id(s)), frozenset()) | {d[h]})
        if isinstance(s, ir.Assign) and s.target.name in self.tracked:
            t = s.target.name
            if id(s) in self.roots:
                site = id(s)
                young, old = ("new", site, 0), ("new", site, 1)
                for k, v in list(d.items()):
                    if isinstance(k, tuple):
                        if young in v:
                            d[k] = frozenset((v - {young}) | {old})
                    elif v == young:
                        d[k] = old
                d[t] = young
            else:
                src = self.copies(s.value) if self.copies else None
                if src is None:
                    d[t] = ANY
                elif src in d:
                    d[t] = d[src]
                else:  # a copy of a name not bound on this path: no array of the family
                    d.pop(t, None)
        elif isinstance(s, ir.Unpack):
            for v in s.targets:
                if v.name in self.tracked:
                    d[v.name] = ANY
        return frozenset(d.items())
