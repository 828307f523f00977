"""Lists and dicts the function makes itself become values.

Contract: ``functional_containers(fn)`` accepts an IR function after inlining
(before single exit and SSA) and returns an equivalent one in which

* every in-place change of a list or dict that the function made itself and
  that nothing else refers to (``container_aliases``) assigns a new container
  instead: ``l.append(v)`` -> ``l = rt.list_append(l, v)``, ``l.extend(w)`` and
  ``l += w`` -> ``rt.list_extend``, ``l.insert(i, v)``, ``x = l.pop(i)``,
  ``l[i] = v``, ``l.clear()``; ``d[k] = v``, ``d.update(o)``, ``d |= o``,
  ``d.setdefault(k, v)``, ``x = d.pop(k[, default])``, ``d.clear()``.  Another
  name known to hold the same object is set to the new one where it is read
  later.  Each state is then an ordinary value that SSA versions, loops
  record and both modes differentiate with the rules of
  ``s2s/rules/containers.py``;
* ``d.get(k[, default])``, ``d.items()``, ``d.values()``, ``d.keys()`` of any
  receiver call ``rt.dict_get``/``dict_items``/``dict_values``/``dict_keys``
  (readers with rules; the item views become lists);
* ``c.copy()`` (which the frontend wrote ``np.copy(c)``) of such a list or
  dict is ``list(c)`` / ``dict(c)``;
* a ``for`` loop over such a container (directly, or through ``zip``,
  ``enumerate``, ``reversed``) iterates ``rt.sequence(l)`` (a dict's keys:
  ``rt.dict_keys(d)``), which ``loop_ranges`` can index — unless its body
  changes that container: then the loop and those changes are left as they
  are (in place, Python's semantics; differentiating them is an error).

Everything else is left alone: a change to a container that may be shared
(an argument, an item of another container, one stored elsewhere) runs in
place, and the transforms reject it if differentiated values flow through it.
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import List

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build

from ..ir import nodes as ir
from ..ir.names import NameGen
from .container_aliases import (LAZY, PLAIN_INPLACE, UNKNOWN, Aliases, kind_of, live_after,
                               seq_op_kind, site_kind)

LIST_METHODS = {"append", "extend", "insert", "pop", "clear"}
DICT_METHODS = {"update", "setdefault", "pop", "clear"}
_READS = {"get": rt.dict_get, "items": rt.dict_items, "values": rt.dict_values,
          "keys": rt.dict_keys}


def functional_containers(fn: ir.Function) -> ir.Function:
    rw = _Rewriter(fn)
    body = rw.block(list(fn.body))
    return replace(fn, body=tuple(body), temps=frozenset(rw.temps))


def _receiver(s):
    """``(receiver, method)`` of a statement that may change a container in place."""
    v = getattr(s, "value", None)
    if not isinstance(v, ir.Call) or not v.args or not isinstance(v.args[0], ir.Var):
        return None
    if v.fn is build.call_method and isinstance(v.args[1], ir.Const) \
            and v.args[1].value in LIST_METHODS | DICT_METHODS:
        return v.args[0], v.args[1].value
    if v.fn is operator.setitem and isinstance(s, ir.ExprStmt):
        return v.args[0], "__setitem__"
    if isinstance(s, ir.Assign) and v.fn in PLAIN_INPLACE and v.args[0] == s.target:
        return v.args[0], "__iop__"
    return None


class _Rewriter:
    def __init__(self, fn: ir.Function):
        self.names = NameGen(ir.all_names(fn))
        self.temps = set(fn.temps)
        self.aliases = Aliases(fn.body, [p.var.name for p in fn.params], _loop_iterators(fn))
        changes = {id(x) for x in ir.walk(fn.body) if _receiver(x) is not None}
        self.live = live_after(fn.body, changes) if changes else {}  # read in simple()
        self.frozen = set()  # sites a loop iterates while its body changes them
        self.snapshots = {s.target.name for s in ir.walk(fn.body) if isinstance(s, ir.Assign)
                          and isinstance(s.value, ir.Call)
                          and s.value.fn in (rt.sequence, rt.dict_keys)}

    def temp(self) -> ir.Var:
        name = self.names.temp()
        self.temps.add(name)
        return ir.Var(name)

    # -- ownership -------------------------------------------------------------------
    def owned(self, a, st):
        """``(kind, aliases)`` if ``a`` surely holds one object of a known site that
        nothing else refers to (``aliases``: other names holding it); else None."""
        b = st.get(a.name) if isinstance(a, ir.Var) else None
        if b is None or b.escaped or len(b.sites) != 1:
            return None
        (site,) = b.sites
        kind = site_kind(site)
        if kind is None or site in self.frozen:
            return None
        aliases = []
        for n, other in st.items():
            if n != a.name and site in other.sites:
                if other.sites != b.sites:
                    return None  # may hold it or something else: cannot keep it in step
                aliases.append(n)
        return kind, aliases

    # -- statements --------------------------------------------------------------------
    def block(self, stmts) -> List:
        out: List = []
        for s in stmts:
            if isinstance(s, ir.For):
                out += self.loop(s, out)
            elif isinstance(s, ir.If):
                out.append(replace(s, body=tuple(self.block(s.body)),
                                   orelse=tuple(self.block(s.orelse))))
            elif isinstance(s, ir.While):
                out.append(replace(s, test_body=tuple(self.block(s.test_body)),
                                   body=tuple(self.block(s.body)),
                                   orelse=tuple(self.block(s.orelse))))
            elif isinstance(s, ir.Try):
                out.append(replace(
                    s, body=tuple(self.block(s.body)), orelse=tuple(self.block(s.orelse)),
                    handlers=tuple(replace(h, body=tuple(self.block(h.body)))
                                   for h in s.handlers),
                    finalbody=tuple(self.block(s.finalbody))))
            else:
                out += self.simple(s)
        return out

    def simple(self, s) -> List:
        v = getattr(s, "value", None)
        if not isinstance(s, (ir.Assign, ir.ExprStmt)) or not isinstance(v, ir.Call):
            return [s]
        st = self.aliases.before.get(id(s), {})
        target = s.target if isinstance(s, ir.Assign) else None
        if v.fn is build.call_method and isinstance(v.args[1], ir.Const) \
                and v.args[1].value in _READS:
            new = self.read(s, target)
            if new is not None:
                return new
        if target is not None and v.fn is np.copy and len(v.args) == 1 and not v.kwargs:
            kind = kind_of(v.args[0], st)
            if kind is not None:  # c.copy() of a list or dict: not an array
                return [replace(s, value=ir.Call(list if kind == "list" else dict, v.args))]
        seq = self.seq_op(s, st)
        if seq is not None:
            return seq
        if target is not None and v.fn is reversed and len(v.args) == 1 and not v.kwargs \
                and target.name not in self.aliases.for_iters:
            return [replace(s, value=ir.Call(rt.reversed_items, v.args))]
        found = _receiver(s)
        if found is None:
            return [s]
        recv, method = found
        own = self.owned(recv, st)
        if own is None:
            return [s]
        kind, aliases = own
        new = self.change(s, kind, recv, method, target)
        if new is None:
            return [s]
        live = self.live.get(id(s), set())
        return new + [ir.Assign(ir.Var(n), recv, s.loc) for n in aliases if n in live]

    def seq_op(self, s, st):
        """``a + b``, ``a * n`` (and ``t += w``, ``t *= n`` of a tuple) of lists or tuples:
        new objects, with their own rules (the numeric rules of + and * would be wrong)."""
        v = s.value
        fn = {operator.iadd: operator.add, operator.imul: operator.mul}.get(v.fn, v.fn)
        if fn not in (operator.add, operator.mul):
            return None
        if fn is not v.fn and not (kind_of(v.args[0], st) == "tuple" and v.args[0] == s.target):
            return None  # l += w of a list: in place (see change())
        kind = seq_op_kind(fn, v.args, st) if not v.kwargs else None
        if kind is None or not isinstance(s, ir.Assign):
            return None
        a, b = v.args
        if fn is operator.add:
            return [replace(s, value=ir.Call(rt.seq_concat, (a, b)))]
        seq, n = (a, b) if kind_of(a, st) in ("list", "tuple") else (b, a)
        return [replace(s, value=ir.Call(rt.seq_repeat, (seq, n)))]

    def read(self, s, target):
        v = s.value
        recv, method, args = v.args[0], v.args[1].value, v.args[2:]
        if v.kwargs or not isinstance(recv, ir.Var) or \
                len(args) not in ((1, 2) if method == "get" else (0,)):
            return None
        call = ir.Call(_READS[method], (recv,) + args)
        return [ir.Assign(target, call, s.loc) if target is not None else ir.ExprStmt(call, s.loc)]

    def change(self, s, kind, c, method, target):
        """The statements doing ``s`` (an in-place change of ``c``) as new values."""
        v, loc = s.value, s.loc
        args = v.args[2:] if v.fn is build.call_method else v.args[1:]
        kw = dict(v.kwargs)
        out: List = []

        def assign(value, to=c):
            out.append(ir.Assign(to, value, loc))

        def result(value):  # what the method returns, if the program reads it
            if target is not None:
                assign(value, target)

        if method == "__iop__":
            fn = {("list", operator.iadd): rt.list_extend, ("list", operator.imul): rt.seq_repeat,
                  ("dict", operator.ior): rt.dict_update}.get((kind, v.fn))
            if fn is None:
                return None
            assign(ir.Call(fn, (c, v.args[1])))
            return out
        if method == "__setitem__":
            key, value = args
            if kind == "dict":
                old = self.temp()
                assign(ir.Call(rt.old_item, (c, key)), old)
                assign(ir.Call(rt.dict_set, (c, key, value, old)))
                return out
            if isinstance(key, ir.Const) and not isinstance(key.value, int):
                return None  # a slice: in place (see the module docstring)
            p, old = self.position(c, key, out, loc), self.temp()
            assign(ir.Call(operator.getitem, (c, p)), old)
            assign(ir.Call(rt.list_set, (c, p, value, old)))
            return out
        if kw and method != "update":
            return None
        if method == "clear" and not args:
            assign(ir.Call(build.make_list if kind == "list" else build.make_dict, ()))
            result(ir.Const(None))
            return out
        if kind == "list":
            return self.list_method(c, method, args, assign, result, out, loc)
        return self.dict_method(c, method, args, kw, assign, result, out, loc)

    def position(self, c, i, out, loc) -> ir.Atom:
        """``i`` normalised to ``0 <= p < len(c)`` (a non-negative constant as it is)."""
        if isinstance(i, ir.Const) and isinstance(i.value, int) and i.value >= 0:
            return i
        p = self.temp()
        out.append(ir.Assign(p, ir.Call(rt.item_index, (c, i)), loc))
        return p

    def list_method(self, c, method, args, assign, result, out, loc):
        if method == "append" and len(args) == 1:
            assign(ir.Call(rt.list_append, (c, args[0])))
        elif method == "extend" and len(args) == 1:
            assign(ir.Call(rt.list_extend, (c, args[0])))
        elif method == "insert" and len(args) == 2:
            p = self.temp()
            assign(ir.Call(rt.insert_index, (c, args[0])), p)
            assign(ir.Call(rt.list_insert, (c, p, args[1])))
        elif method == "pop" and len(args) <= 1:
            p = self.position(c, args[0] if args else ir.Const(-1), out, loc)
            item = self.temp()
            assign(ir.Call(operator.getitem, (c, p)), item)
            assign(ir.Call(rt.list_remove, (c, p, item)))
            result(item)
            return out
        else:
            return None
        result(ir.Const(None))
        return out

    def dict_method(self, c, method, args, kw, assign, result, out, loc):
        if method == "update" and len(args) <= 1 and (args or kw):
            for other in args:
                assign(ir.Call(rt.dict_update, (c, other)))
            if kw:
                t = self.temp()
                items = tuple(x for k, a in kw.items() for x in (ir.Const(k), a))
                assign(ir.Call(build.make_dict, items), t)
                assign(ir.Call(rt.dict_update, (c, t)))
            result(ir.Const(None))
        elif method == "setdefault" and len(args) in (1, 2):
            key = args[0]
            default = args[1] if len(args) == 2 else ir.Const(None)
            value, old = self.temp(), self.temp()
            assign(ir.Call(rt.dict_get, (c, key, default)), value)
            assign(ir.Call(rt.old_item, (c, key)), old)
            assign(ir.Call(rt.dict_set, (c, key, value, old)))
            result(value)
        elif method == "pop" and len(args) in (1, 2):
            key, item = args[0], self.temp()
            if len(args) == 1:
                assign(ir.Call(operator.getitem, (c, key)), item)
                old = item
            else:
                old = self.temp()
                assign(ir.Call(rt.dict_get, (c, key, args[1])), item)
                assign(ir.Call(rt.old_item, (c, key)), old)
            assign(ir.Call(rt.dict_remove, (c, key, old)))
            result(item)
        else:
            return None
        return out

    # -- loops -------------------------------------------------------------------------
    def loop(self, s: ir.For, out: List) -> List:
        """The loop (and what it needs before it), iterating snapshots of the containers
        made here; ``out`` (the block so far) may hold the ``zip``/``enumerate`` call
        the loop iterates, rewritten in place."""
        st = self.aliases.before.get(id(s), {})
        lazy_at = None
        for j in range(len(out) - 1, -1, -1):
            x = out[j]
            if isinstance(x, ir.Assign) and x.target == s.iter and isinstance(x.value, ir.Call) \
                    and x.value.fn in LAZY and x.value.fn is not iter and not x.value.kwargs:
                lazy_at = j
                break
        sources = list(out[lazy_at].value.args) if lazy_at is not None else [s.iter]
        pre, new_args = [], []
        for a in sources:
            kind = kind_of(a, st)
            if kind not in ("list", "dict") or a.name in self.snapshots \
                    or self.changed_in(s, a, kind, st):
                new_args.append(a)
                continue
            items = ir.Var(self.names.fresh(f"{a.name}_items"))
            fn = rt.sequence if kind == "list" else rt.dict_keys
            pre.append(ir.Assign(items, ir.Call(fn, (a,)), replace(s.loc, derived=True)))
            new_args.append(items)
        body = replace(s, body=tuple(self.block(s.body)), orelse=tuple(self.block(s.orelse)))
        if not pre:
            return [body]
        if lazy_at is None:
            return pre + [replace(body, iter=new_args[0])]
        lazy = out[lazy_at]
        out[lazy_at:lazy_at + 1] = pre + [replace(lazy, value=replace(lazy.value,
                                                                      args=tuple(new_args)))]
        return [body]

    def changed_in(self, s: ir.For, a: ir.Var, kind, st) -> bool:
        """Whether the body of ``s`` may change the container ``a`` holds (then its
        changes stay in place and the loop iterates it as it is)."""
        sites = st[a.name].sites - {UNKNOWN}
        hit = False
        for x in ir.walk(list(s.body)):
            found = _receiver(x)
            if found is None:
                continue
            b = self.aliases.before.get(id(x), {}).get(found[0].name)
            if b is None or not (b.sites & sites):
                continue
            if kind == "dict" and found[1] == "__setitem__" and _iterates_keys(s, a):
                continue  # d[k] = ... over d's keys: the keys stay the same
            hit = True
        if hit:
            self.frozen |= {x for x in sites if site_kind(x) is not None}
        return hit


def _loop_iterators(fn: ir.Function) -> set:
    """Iterators (``zip(...)``, ``enumerate(...)``...) made right before the one ``for`` loop
    that reads them: nothing can change their sequences in between."""
    counts = ir.use_counts(fn.body)
    out = set()
    for x in ir.walk(fn.body):
        for block in ir.sub_blocks(x) if not isinstance(x, list) else ():
            out |= _iterators_in(block, counts)
    return out | _iterators_in(fn.body, counts)


def _iterators_in(block, counts) -> set:
    out = set()
    for before, s in zip(block, block[1:]):
        if isinstance(s, ir.For) and isinstance(s.iter, ir.Var) and counts.get(s.iter.name) == 1 \
                and isinstance(before, ir.Assign) and before.target == s.iter:
            out.add(s.iter.name)
    return out


def _iterates_keys(s: ir.For, a: ir.Var) -> bool:
    return s.iter == a
