"""Loops over sequences become loops over a range that index them.

Contract: ``range_loops(body, names, temps, indexable)`` rewrites every
``for v in seq`` whose sequence is known to be indexable by position — a
list or tuple literal, an array (a numpy call's result, or a parameter named
in ``indexable``), or ``zip``/``enumerate``/``reversed`` of such — into::

    n = len(seq); r = range(n)
    for k in r:
        v = seq[k]
        ...

so both modes see plain indexing (whose derivative rules exist) and reverse
mode can run the loop backwards (``for k in reversed(r)``).  Other loops are
left alone; a ``zip``/``enumerate`` object no longer iterated is dropped.
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import Dict, List, Set

import s2s_runtime as rt
from s2s_runtime import build

from ..ir import nodes as ir
from ..rules import lookup
from ..rules.registry import has


_WRITES = (rt.index_set, rt.index_updated)


def single_defs(body) -> Dict[str, ir.Expr]:
    """Value of every variable assigned exactly once (by an ``Assign``) in ``body``, not
    counting the in-place writes into it (``y = index_set(y, i, v)``, which keep what
    kind of value it holds)."""
    seen: Dict[str, object] = {}
    for x in ir.walk(body):
        for v in ir.stmt_defs(x):
            if isinstance(x, ir.Assign) and isinstance(x.value, ir.Call) \
                    and x.value.fn in _WRITES and x.value.args[:1] == (v,):
                continue
            seen[v.name] = x.value if v.name not in seen and isinstance(x, ir.Assign) else None
    return {k: v for k, v in seen.items() if v is not None}


def is_range(atom, defs) -> bool:
    """Whether ``atom`` holds a range: ``range(...)`` or an adjoint loop's reversed range."""
    v = defs.get(atom.name) if isinstance(atom, ir.Var) else None
    return isinstance(v, ir.Call) and v.fn in (range, build.reversed_range)


def range_loops(body: List, names, temps: Set[str], indexable: Set[str]) -> List:
    rw = _RangeLoops(body, names, temps, indexable)
    body = rw.block(body)
    while True:  # enumerate(zip(x, w)): the zip object is dead once the enumerate is
        counts = ir.use_counts(body)
        dead = {n for n in rw.replaced_iters if not counts.get(n)}
        if not dead:
            return body
        body = _without_defs(body, dead)
        rw.replaced_iters -= dead


class _RangeLoops:
    def __init__(self, body, names, temps, indexable):
        self.names, self.temps, self.indexable = names, temps, indexable
        self.single_defs = single_defs(body)
        self.replaced_iters: Set[str] = set()

    def temp(self) -> ir.Var:
        name = self.names.temp()
        self.temps.add(name)
        return ir.Var(name)

    def block(self, stmts) -> List:
        out = []
        for s in stmts:
            if isinstance(s, ir.For):
                pre, s = self._range_loop(s)
                out += pre
                s = replace(s, body=tuple(self.block(s.body)), orelse=tuple(self.block(s.orelse)))
            elif isinstance(s, ir.While):
                s = replace(s, test_body=tuple(self.block(s.test_body)),
                            body=tuple(self.block(s.body)), orelse=tuple(self.block(s.orelse)))
            elif isinstance(s, ir.If):
                s = replace(s, body=tuple(self.block(s.body)), orelse=tuple(self.block(s.orelse)))
            out.append(s)
        return out

    def _range_loop(self, s: ir.For):
        """``([statements before], loop)`` with the loop running over a range."""
        if is_range(s.iter, self.single_defs):
            return [], s
        seqs, make = self._indexable(s.iter)
        if seqs is None:
            return [], s  # left alone: an error later if it carries differentiated values
        loc = replace(s.loc, derived=True)
        pre, lens = [], []
        for q in seqs:
            n = self.temp()
            pre.append(ir.Assign(n, ir.Call(len, (q,)), loc))
            lens.append(n)
        if len(lens) > 1:
            n = self.temp()
            pre.append(ir.Assign(n, ir.Call(min, tuple(lens)), loc))
        r = self.temp()
        pre.append(ir.Assign(r, ir.Call(range, (n,)), loc))
        self.single_defs[r.name] = pre[-1].value
        if isinstance(s.iter, ir.Var):
            self.replaced_iters.add(s.iter.name)
        k = ir.Var(self.names.fresh("k"))
        head = make(k, n, loc)
        head[-1] = ir.Assign(s.target, head[-1].value, loc)
        return pre, replace(s, target=k, iter=r, body=tuple(head) + s.body)

    def _indexable(self, seq, top=True):
        """``(sequences, make)`` where ``make(k, n, loc)`` returns the statements
        computing item ``k`` (the last assigns it), ``n`` the loop's trip count (the
        least length of ``sequences``); ``(None, None)`` if ``seq`` is not known to be
        indexable by position.  ``zip``/``enumerate``/``reversed`` nest
        (``enumerate(zip(x, w))``, ``zip(reversed(x), y)``); ``top``: ``seq`` is the
        loop's own iterable (not an argument of a ``zip``/``enumerate``)."""
        call = self._defining_call(seq)
        if call is not None and call.fn in (zip, enumerate, reversed) and not (
                call.kwargs and call.fn is not enumerate):
            args = call.args[:1 if call.fn is not zip else None]
            if call.fn is reversed:  # Python reverses sequences only (not zip, enumerate)
                inner = [self._plain_indexable(a) for a in args]
            else:
                inner = [self._indexable(a, top=False) for a in args]
            if not inner or any(i[0] is None for i in inner):
                return None, None
            seqs = [q for qs, _ in inner for q in qs]
            self.replaced_iters.update(a.name for a in args if isinstance(a, ir.Var)
                                       and self._defining_call(a) is not None
                                       and self._defining_call(a).fn in (zip, enumerate))

            def items(k, n, loc):
                stmts, out = [], []
                for _, make_item in inner:
                    part = make_item(k, n, loc)
                    stmts += part
                    out.append(part[-1].target)
                return stmts, out

            if call.fn is zip:
                def make(k, n, loc):
                    stmts, parts = items(k, n, loc)
                    return stmts + [ir.Assign(self.temp(), ir.Call(build.make_tuple,
                                                                   tuple(parts)), loc)]
                return seqs, make
            seq0 = call.args[0]
            if call.fn is reversed:
                def make(k, n, loc):
                    stmts, length = [], n
                    if not top:  # zip(reversed(x), y): x's own length, not the loop's
                        length = self.temp()
                        stmts.append(ir.Assign(length, ir.Call(len, (seq0,)), loc))
                    last, j = self.temp(), self.temp()
                    return stmts + [
                        ir.Assign(last, ir.Call(operator.sub, (length, ir.Const(1))), loc),
                        ir.Assign(j, ir.Call(operator.sub, (last, k)), loc),
                        ir.Assign(self.temp(), ir.Call(operator.getitem, (seq0, j)), loc)]
                return seqs, make
            start = call.args[1] if len(call.args) > 1 else dict(call.kwargs).get(
                "start", ir.Const(0))

            def make(k, n, loc):
                i = self.temp()
                stmts, (item,) = items(k, n, loc)
                return [ir.Assign(i, ir.Call(operator.add, (k, start)), loc)] + stmts + [
                    ir.Assign(self.temp(), ir.Call(build.make_tuple, (i, item)), loc)]
            return seqs, make
        return self._plain_indexable(seq)

    def _plain_indexable(self, seq):
        """``_indexable`` of a sequence that is not a ``zip``/``enumerate``/``reversed``."""
        if not self._known_sequence(seq):
            return None, None

        def make(k, n, loc):
            return [ir.Assign(self.temp(), ir.Call(operator.getitem, (seq, k)), loc)]
        return [seq], make

    def _known_sequence(self, seq) -> bool:
        """Whether ``seq`` is indexable by position: a list or tuple display, an array (a
        numpy call's result), the list or tuple of a primitive with the ``sequence``
        property (``np.split``, ``sorted``, ``rt.list_append``), a parameter named in
        ``indexable``, a copy of one of these, or a cotangent ``rt.densify(ct, like)`` of
        one (a gradient's result: a container of ``like``'s kind)."""
        seen = set()
        while isinstance(seq, ir.Var) and isinstance(self.single_defs.get(seq.name), ir.Var) \
                and seq.name not in self.indexable and seq.name not in seen:
            seen.add(seq.name)
            seq = self.single_defs[seq.name]  # a copy, assigned once
        call = self._defining_call(seq)
        if call is not None and call.fn is rt.densify and len(call.args) == 2:
            return self._known_sequence(call.args[1])
        return (call is not None and (call.fn in (build.make_list, build.make_tuple) or (
            lookup(call.fn) is not None and not lookup(call.fn).container_result
            and call.fn not in (build.make_dict,)) or has(call.fn, "sequence"))) or (
            isinstance(seq, ir.Var) and seq.name in self.indexable)

    def _defining_call(self, atom):
        if isinstance(atom, ir.Var):
            v = self.single_defs.get(atom.name)
            if isinstance(v, ir.Call):
                return v
        return None

    def _defined_by(self, atom, fn):
        call = self._defining_call(atom)
        return call if call is not None and call.fn is fn else None



def _without_defs(stmts, dead) -> List:
    out = []
    for s in stmts:
        if isinstance(s, ir.Assign) and s.target.name in dead:
            continue
        if isinstance(s, ir.If):
            s = replace(s, body=tuple(_without_defs(s.body, dead)),
                        orelse=tuple(_without_defs(s.orelse, dead)))
        elif isinstance(s, (ir.For, ir.While)):
            s = replace(s, body=tuple(_without_defs(s.body, dead)))
        out.append(s)
    return out
