"""Which names hold a list or dict the function made itself, shared with nothing.

An abstract interpretation over the structured IR (before SSA) with
*allocation sites*: every statement that makes a new list or dict (a literal,
``list(...)``, ``dict(...)``, ``sorted(...)``, a copy, one of the functional
container helpers) is a site.  Before each ``for`` loop ``Aliases.before[id(s)]``
maps every local name to a ``Binding`` (before each call statement: the names it
reads and those sharing a site with one of them):

* ``sites``: the sites whose objects the name may hold (``UNKNOWN``: any other
  value, e.g. an argument, an item read from a container, a call's result);
* ``escaped``: the object may also be reachable another way — stored in a
  container or object, given to a method, to a lazy iterator (``zip``,
  ``enumerate``... other than a ``for`` loop's), or to a function s2s does not
  know to leave its arguments alone.

Making a new object at site ``S`` turns ``S`` into ``old(S)`` in every other
name (those hold an earlier object of the same site), so two names with the
same single site hold the same object.  Loops are iterated to a fixed point.

``live_after(body)`` is the matching liveness (names read later) per statement.
"""
from __future__ import annotations

import inspect
import operator
from itertools import islice
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build

from ..frontend.desugar import INPLACE_OPS
from ..ir import nodes as ir
from ..rules import lookup

#: any value that is not an object of a known site
UNKNOWN = ("unknown",)

LIST_MAKERS = {build.make_list, list, sorted, rt.list_append, rt.list_extend, rt.list_insert,
               rt.list_remove, rt.list_set, rt.dict_keys, rt.dict_values, rt.dict_items,
               rt.reversed_items}
DICT_MAKERS = {build.make_dict, dict, rt.dict_set, rt.dict_remove, rt.dict_update}
TUPLE_MAKERS = {build.make_tuple, tuple}
#: ``+`` and ``*`` make a new list or tuple from lists or tuples
_SEQ_OPS = {operator.add: "concat", rt.seq_concat: "concat", operator.mul: "repeat",
            rt.seq_repeat: "repeat"}
#: calls that keep a reference to an argument in their result
STORING = {build.make_list, build.make_tuple, build.make_dict, rt.make_record, setattr}
LAZY = {zip, enumerate, reversed, iter, map, filter}
#: calls whose result is their argument itself (an alias, not a new object)
SAME = {rt.sequence}
PLAIN_INPLACE = set(INPLACE_OPS.values())


@dataclass(frozen=True)
class Binding:
    sites: FrozenSet = frozenset({UNKNOWN})
    escaped: bool = False

    def join(self, other: "Binding") -> "Binding":
        return Binding(self.sites | other.sites, self.escaped or other.escaped)


State = Dict[str, Binding]


def site_kind(site) -> Optional[str]:
    """"list" or "dict" for a site made by this pass's statements, else None."""
    return site[1] if isinstance(site, tuple) and site[0] == "site" else None


def kind_of(a, st: State) -> Optional[str]:
    """"list", "dict" or "tuple" if ``a`` surely holds one (a constant of that type, or
    objects made here as one), else None."""
    if isinstance(a, ir.Const):
        v = a.value
        if type(v) in (list, tuple, dict):
            return type(v).__name__
        return None
    b = st.get(a.name) if isinstance(a, ir.Var) else None
    if b is None:
        return None
    kinds = {site_kind(x[1] if x[0] == "old" else x) for x in b.sites}
    return kinds.pop() if len(kinds) == 1 and None not in kinds else None


def seq_op_kind(fn, args, st: State) -> Optional[str]:
    """The kind ("list"/"tuple") of ``fn(*args)`` when it is ``+`` of two lists (tuples)
    or ``*`` of one and a number; else None."""
    op = _SEQ_OPS.get(fn)
    if op is None or len(args) != 2:
        return None
    ka, kb = kind_of(args[0], st), kind_of(args[1], st)
    if op == "concat":
        return ka if ka == kb and ka in ("list", "tuple") else None
    if ka in ("list", "tuple") and kb is None:
        return ka
    return kb if kb in ("list", "tuple") and ka is None else None


def join(*states: State) -> State:
    """The bindings of every name in ``states``, joined (a binding shared by identity, as
    the copies of one state share them, is taken as it is: no new Binding per name)."""
    out: State = {}
    for st in states:
        for n, b in st.items():
            a = out.get(n)
            out[n] = b if a is None or a is b else a.join(b)
    return out


def _join_derived(size: int, first: State, rest, written) -> State:
    """``join(first, *rest)`` (``first`` updated in place) for states made from one state
    of ``size`` names by giving the names in ``written`` new bindings: the others are
    the same objects in each, so only ``written`` and the names added after the first
    ``size`` need joining.  (A join over every name at each branch and loop was
    quadratic in the number of compound statements.)"""
    for n in written:
        x = first.get(n)
        if x is None:
            continue  # new in some of ``rest``: below
        for st in rest:
            b = st.get(n)
            if b is not None and b is not x:
                x = x.join(b)
        first[n] = x
    added = set()  # names none of ``first``'s, in the order ``rest`` adds them
    for st in rest:
        for n, b in islice(st.items(), size, None):  # the names added after the first
            if n in added:
                a = first[n]
                first[n] = b if a is b else a.join(b)
            elif n not in first:
                first[n] = b
                added.add(n)
    return first


def _known_pure(fn) -> bool:
    """Functions that keep no reference to their arguments (numpy, math, builtins,
    the operators, s2s's helpers, anything with a derivative rule)."""
    if lookup(fn) is not None or isinstance(fn, np.ufunc):
        return True
    module = getattr(fn, "__module__", None) or (
        getattr(inspect.getmodule(fn), "__name__", "") if not isinstance(fn, type) else "")
    return module.split(".")[0] in ("numpy", "math", "builtins", "_operator", "operator",
                                    "s2s_runtime", "cmath")


class Aliases:
    """Runs the analysis on construction; read ``before`` (see the module docstring)."""

    def __init__(self, body, params, single_for_iters):
        self.before: Dict[int, State] = {}
        self.for_iters = single_for_iters  # lazy iterators only a for loop reads
        self.jumps: List[List[State]] = []
        self.collect: List[List[State]] = []
        self.written: set = set()  # names given a binding since the innermost fork
        self.block(list(body), {p: Binding() for p in params})

    # -- transfer --------------------------------------------------------------------
    def block(self, stmts, st: State) -> State:
        """The state after ``stmts`` from ``st`` (which is updated in place)."""
        for s in stmts:
            if isinstance(s, ir.For):
                self.before[id(s)] = dict(st)
            elif isinstance(s, (ir.Assign, ir.ExprStmt)) and isinstance(s.value, ir.Call):
                self.before[id(s)] = _slice(st, s.value)
            st = self.stmt(s, st)
            for c in self.collect:
                c.append(dict(st))
        return st

    def escape(self, st: State, atoms) -> None:
        for a in atoms:
            if isinstance(a, ir.Var) and a.name in st:
                sites = st[a.name].sites - {UNKNOWN}
                if not sites:  # no other name can share its object
                    st[a.name] = Binding(st[a.name].sites, True)
                    self.written.add(a.name)
                    continue
                for n, b in st.items():
                    if n == a.name or (b.sites & sites):
                        st[n] = Binding(b.sites, True)
                        self.written.add(n)

    def escapes_of(self, s, v: ir.Call):
        """The operands a call keeps (or may keep) a reference to."""
        fn, args = v.fn, v.args
        if fn is build.call_method:
            return v.operands()[1:]
        if fn is operator.setitem:
            return args[2:]
        if fn in LAZY:
            target = getattr(s, "target", None)
            if target is not None and (target.name in self.for_iters or fn is reversed):
                return ()  # a loop's iterator, or reversed(...) made a list (containers.py)
            return v.operands()
        if fn in STORING or not _known_pure(fn):
            return v.operands()
        return ()

    def stmt(self, s, st: State) -> State:
        if isinstance(s, (ir.Assign, ir.ExprStmt)) and isinstance(s.value, ir.Call):
            self.escape(st, self.escapes_of(s, s.value))
        if isinstance(s, ir.Assign):
            st[s.target.name] = self.binding_of(s, st)
            self.written.add(s.target.name)
        elif isinstance(s, ir.Unpack):
            for t in s.targets:
                st[t.name] = Binding()
                self.written.add(t.name)
        elif isinstance(s, ir.If):
            outer, self.written = self.written, set()
            size = len(st)
            body = self.block(s.body, dict(st))
            st = _join_derived(size, body, [self.block(s.orelse, st)], self.written)
            outer |= self.written
            self.written = outer
        elif isinstance(s, (ir.For, ir.While)):
            st = self.loop(s, st)
        elif isinstance(s, ir.Try):
            st = self.try_(s, st)
        elif isinstance(s, (ir.Break, ir.Continue)) and self.jumps:
            self.jumps[-1].append(dict(st))
        return st

    def binding_of(self, s: ir.Assign, st: State) -> Binding:
        v = s.value
        if isinstance(v, ir.Var):
            return st.get(v.name, Binding())
        if not isinstance(v, ir.Call):
            return Binding()
        fn, args = v.fn, v.args
        if fn in SAME and args and isinstance(args[0], ir.Var):
            return st.get(args[0].name, Binding())
        if fn in PLAIN_INPLACE and args and args[0] == s.target \
                and kind_of(args[0], st) != "tuple":
            return st.get(s.target.name, Binding())  # x += w: the same object
        kind = "list" if fn in LIST_MAKERS else "dict" if fn in DICT_MAKERS else \
            "tuple" if fn in TUPLE_MAKERS else None
        if fn is reversed and s.target.name not in self.for_iters:
            kind = "list"  # made a list by containers.py
        if fn is np.copy and args:
            kind = kind_of(args[0], st)
        elif fn in _SEQ_OPS:
            kind = seq_op_kind(fn, args, st)
        elif fn in (operator.iadd, operator.imul) and args and args[0] == s.target:
            kind = seq_op_kind({operator.iadd: operator.add, operator.imul: operator.mul}[fn],
                               args, st)
        if kind is None:
            return Binding()
        site = ("site", kind, id(s))
        old = ("old", site)
        for n, b in st.items():  # other names hold an earlier object of this site
            if site in b.sites:
                st[n] = Binding((b.sites - {site}) | {old}, b.escaped)
                self.written.add(n)
        return Binding(frozenset({site}), False)

    def loop(self, s, st: State) -> State:
        stmts = list(s.test_body) + list(s.body) if isinstance(s, ir.While) else list(s.body)
        outer = self.written
        head = st
        while True:
            self.jumps.append([])
            self.written = set()
            entry = dict(head)
            if isinstance(s, ir.For):
                entry[s.target.name] = Binding()
                self.written.add(s.target.name)
            end = self.block(stmts, entry)
            jumps = self.jumps.pop()
            new = _join_derived(len(head), dict(head), [end, *jumps], self.written)
            outer |= self.written
            if new == head:
                break
            head = new
        after = _join_derived(len(head), dict(head), jumps, self.written)
        self.written = set()
        end = self.block(list(s.orelse), dict(after))
        st = _join_derived(len(after), after, [end], self.written)
        outer |= self.written
        self.written = outer
        return st

    def try_(self, s: ir.Try, st: State) -> State:
        self.collect.append([st])
        end = self.block(list(s.body), dict(st))
        seen = self.collect.pop()
        start = join(*seen)
        ends = [self.block(list(s.orelse), dict(end))]
        for h in s.handlers:
            entry = dict(start)
            if h.name is not None:
                entry[h.name.name] = Binding()
                self.written.add(h.name.name)
            ends.append(self.block(list(h.body), entry))
        st = join(start, *ends)
        return self.block(list(s.finalbody), st)


def _slice(st: State, call: ir.Call) -> State:
    """What ``containers.py`` reads of the state before a call: the bindings of its
    operands and of every name sharing a site with one (in ``st``'s order, which the
    aliases ``owned`` lists keep).  A copy of the whole state per statement was
    quadratic in the function's length."""
    names = dict.fromkeys(a.name for a in call.operands() if isinstance(a, ir.Var))
    sites = set()
    for n in names:
        b = st.get(n)
        if b is not None:
            sites.update(b.sites)
    sites.discard(UNKNOWN)
    if not sites:
        return {n: st[n] for n in names if n in st}
    return {n: b for n, b in st.items() if n in names or not sites.isdisjoint(b.sites)}


# -- liveness ----------------------------------------------------------------------------
def live_after(body, wanted=None) -> Dict[int, set]:
    """For each statement (by id; only those in ``wanted`` when given): the names that
    may be read after it runs.  One set is updated in place along the way and copied
    only where kept or where the flow splits, so the cost is the number of names read
    and written, not the statements times the names live."""
    out: Dict[int, set] = {}
    _live_block(list(body), set(), out, wanted)
    return out


def _uses(s) -> set:
    return {a.name for a in ir.stmt_uses(s) if isinstance(a, ir.Var)}


def _live_block(stmts, live: set, out, wanted) -> set:
    """The names live before ``stmts`` given ``live`` after them (``live`` is updated)."""
    for s in reversed(stmts):
        if wanted is None or id(s) in wanted:
            out[id(s)] = set(live)
        live = _live_stmt(s, live, out, wanted)
    return live


def _live_stmt(s, live: set, out, wanted) -> set:
    if isinstance(s, ir.If):
        live_body = _live_block(list(s.body), set(live), out, wanted)
        live = _live_block(list(s.orelse), live, out, wanted)
        live |= live_body
        live |= _uses(s)
        return live
    if isinstance(s, (ir.For, ir.While, ir.Try)):
        # conservative: whatever the construct reads anywhere is live throughout it
        for x in [s, *ir.walk(ir.sub_blocks_flat(s))]:
            live |= _uses(x)
        for block in ir.sub_blocks(s):
            _live_block(list(block), set(live), out, wanted)
        return live
    live.difference_update(v.name for v in ir.stmt_defs(s))
    live |= _uses(s)
    return live
