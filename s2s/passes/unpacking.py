"""Calls with argument unpacking made plain, once the inliner knows what is unpacked
(a mixin of ``inline.Inliner``).

Contract: ``unpacking_call(s)`` takes a statement whose value is
``build.apply_call(fn, layout, *operands)`` (``frontend/unpacking.py``) and, when
every ``*s`` operand is known to hold a fixed number of items and every ``**d``
operand a fixed set of keys, returns the statements of the plain call
``fn(...)`` (item ``i`` of ``s`` read as ``s[i]``, entry ``k`` of ``d`` as
``d[k]``), processed like any other call (a user function is inlined).  What is
known, where (``local_callables.Bindings``): a tuple or list made by a display or
bound to ``*args`` (``Items``), a slice of one and the sum of two, the target of a
loop over rows of one length (``for p in [(a, b), (c, d)]``), a dict display
with constant keys, a constant, and,
in a specialisation, an argument (``ir.kinds`` keys the code on the lengths and
keys of tuples, lists and dicts).  Otherwise the call is left as it is until the
specialisation, and there (or at once, if it calls a local function or an object
that exists only at transform time) it is an ``UnsupportedSyntaxError``.
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import List, Optional

from s2s_runtime import build

from ..errors import unsupported
from ..frontend import desugar
from ..ir import nodes as ir
from .local_callables import Constant, Items, Pack, Value

#: methods whose several positional arguments mean one tuple (``x.reshape(2, 3)``)
_PACKED = {desugar.ARRAY_METHODS[m] for m in ("reshape", "transpose") if m in desugar.ARRAY_METHODS}


class UnpackingCalls:
    """``build.apply_call`` statements as plain calls (see the module docstring)."""

    def unpacking_call(self, s) -> List:
        fn_atom, layout_atom, *operands = s.value.args
        fn, layout = fn_atom.value, layout_atom.value
        reads: List = []
        args, kwargs = [], []
        for tag, a in zip(layout, operands):
            if tag == "a":
                args.append(a)
            elif tag == "*":
                items = self._unpacked_items(a, reads, s.loc)
                if items is None:
                    return self._not_yet(s, a, "*")
                args += items
            elif tag == "**":
                entries = self._unpacked_entries(a, reads, s.loc)
                if entries is None:
                    return self._not_yet(s, a, "**")
                kwargs += entries
            else:
                kwargs.append((tag[1], a))
        names = [k for k, _ in kwargs]
        twice = sorted({k for k in names if names.count(k) > 1})
        if twice:
            raise unsupported(f"a call given the keyword argument {twice[0]!r} twice", s.loc)
        if fn in _PACKED and len(args) > 2:  # x.reshape(*shape): the shape as one tuple
            t = ir.Var(self.names.temp())
            self.temps.add(t.name)
            reads.append(ir.Assign(t, ir.Call(build.make_tuple, tuple(args[1:])), s.loc))
            args = args[:1] + [t]
        out: List = []
        for r in reads:
            out += self.stmt(r)
        return out + self.stmt(replace(s, value=ir.Call(fn, tuple(args), tuple(kwargs))))

    def forget_resized(self, s) -> None:
        """A method call on a tuple, list or dict of known length (``xs.append(y)``,
        ``d.pop(k)``) or ``del xs[i]`` may change it, and ``xs[i] = v`` its items: what
        it holds is no longer known."""
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call) and v.fn in (build.call_method, operator.delitem,
                                               operator.setitem) \
                and v.args and isinstance(v.args[0], ir.Var) \
                and isinstance(self.known.get(v.args[0].name), Items):
            self.known.forget(v.args[0].name)

    def common_item(self, atoms) -> Optional[Items]:
        """``Items(n)`` when every atom is known to hold ``n`` items (a display's rows)."""
        counts = {self._count(a) for a in atoms}
        return Items(counts.pop()) if len(counts) == 1 and None not in counts else None

    def loop_item(self, loop: ir.For) -> Optional[Items]:
        """What the target of ``for p in xs`` holds at every trip, when it is known."""
        if not isinstance(loop.target, ir.Var) or not isinstance(loop.iter, ir.Var):
            return None
        known = self.known.get(loop.iter.name)
        return known.item if isinstance(known, Items) and known.keys is None else None

    def items_of(self, v: ir.Call) -> Optional[Items]:
        """``Items`` of ``a[i:j:k]`` and ``a + b`` of tuples or lists of known lengths."""
        counts = [self._count(a) for a in v.args]
        if v.fn is operator.getitem and len(v.args) == 2 and counts[0] is not None \
                and isinstance(v.args[1], ir.Const) and type(v.args[1].value) is slice:
            return Items(len(range(counts[0])[v.args[1].value]))
        if v.fn is operator.add and len(v.args) == 2 and None not in counts:
            return Items(counts[0] + counts[1])
        return None

    def _count(self, a) -> Optional[int]:
        if isinstance(a, ir.Const):
            return len(a.value) if type(a.value) in (tuple, list) else None
        known = self.known.get(a.name)
        if isinstance(known, Items) and known.keys is None:
            return known.count
        if isinstance(known, Pack):  # a display holding objects or local functions
            return len(known.items)
        if isinstance(known, (Value, Constant)) and type(known.value) in (tuple, list):
            return len(known.value)
        return None

    def _read(self, seq, key, reads, loc) -> ir.Var:
        t = ir.Var(self.names.temp())
        self.temps.add(t.name)
        reads.append(ir.Assign(t, ir.Call(operator.getitem, (seq, ir.Const(key))), loc))
        return t

    def _unpacked_items(self, a, reads, loc) -> Optional[list]:
        """The atoms of ``*a``'s items, or None when their number is not known here."""
        if isinstance(a, ir.Const):
            return [ir.Const(v) for v in a.value] if type(a.value) in (tuple, list) else None
        n = self._count(a)
        return None if n is None else [self._read(a, i, reads, loc) for i in range(n)]

    def _unpacked_entries(self, a, reads, loc) -> Optional[list]:
        """``[(key, atom)]`` of ``**a``, or None when its keys are not known here."""
        if isinstance(a, ir.Const):
            d = a.value
            return [(k, ir.Const(v)) for k, v in d.items()] if type(d) is dict else None
        known = self.known.get(a.name)
        if isinstance(known, Items) and known.keys is not None:
            keys = known.keys
        elif isinstance(known, Value) and type(known.value) is dict:
            keys = tuple(known.value)
        else:
            return None
        if not all(type(k) is str for k in keys):
            raise unsupported("'**' unpacking of a dict whose keys are not all strings", loc)
        return [(k, self._read(a, k, reads, loc)) for k in keys]

    def _not_yet(self, s, a, star) -> List:
        """Unknown here: left for the specialisation, where the arguments are known; an
        error there."""
        compile_time = [a for a in s.value.args[2:] if isinstance(a, ir.Var)
                        and getattr(self.known.get(a.name), "runtime", True) is False]
        if self.values is None and not compile_time:
            return self.plain(s)
        what = "items" if star == "*" else "keys"
        name = f"'{a.name}'" if isinstance(a, ir.Var) and a.name not in self.temps \
            else "a value"
        raise unsupported(f"'{star}' unpacking of {name}, whose {what} s2s does not know when "
                          "it transforms the code", s.loc,
                          "unpack a tuple, list or dict whose length (keys) is fixed: an "
                          "argument, *args or **kwargs, or a display like (a, b); not one "
                          "built in a loop or a branch")
