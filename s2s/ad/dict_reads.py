"""Entries of dict arguments read in loops and branches, read once instead.

Models keep their parameters in dicts (``params["cell"]["weight_ih"]``) and
read them inside loops.  The adjoint of such a read in a loop would build a
whole dict of zeros with one entry set, and add it to the dict's adjoint, at
every iteration.  A person would keep one running sum per entry.

Contract: ``hoist_entry_reads(body, dict_paths, names)`` takes the SSA form
and, for each *entry dict* — a dict parameter, or a name assigned once at
the top level as ``d = c[k]`` of an entry dict ``c`` where that entry is a
dict — that is used only by reads ``d[k]`` with a constant key the argument
has, rewrites each such read inside a loop, branch or ``try`` as a copy of
one top-level read ``d_k = d[k]`` placed right after ``d`` is assigned.
Reading an entry the argument has is pure, so the function computes the same
values.  Returns the new body and the entry dicts that are not parameters;
reverse mode collects the adjoints of their (now top-level) reads by key and
writes each one's adjoint as a dict literal (entries not read are zeros when
the gradient is completed, ``rt.densify``).

``dict_paths``: for each dict parameter, the key paths of its nested entries
(``("cell", "bias")``...), as the argument has them.
"""
from __future__ import annotations

import operator
from collections import Counter
from dataclasses import replace
from typing import Dict, List, Set, Tuple

import s2s_runtime as rt
from s2s_runtime import build

from ..ir import nodes as ir
from ..passes.ssa import rename_all


def hoist_entry_reads(body, dict_paths: Dict[str, frozenset], names) -> Tuple[List, Set[str]]:
    body = list(body)
    while True:  # a hoisted read may itself be an entry dict read in a loop
        body, valid, changed = _one_round(body, dict_paths, names)
        if not changed:
            return body, valid - set(dict_paths)


def _one_round(body, dict_paths, names):
    defs = Counter(v.name for s in ir.walk(body) for v in ir.stmt_defs(s))
    paths: Dict[str, tuple] = {p: () for p in dict_paths}  # entry dict -> its path
    root: Dict[str, str] = {p: p for p in dict_paths}
    for s in body:  # top-level d = c[k] of an entry dict c, where c[k] is a dict
        key = _const_read(s, paths)
        if key is not None and defs[s.target.name] == 1:
            base = s.value.args[0].name
            path = paths[base] + (key,)
            if any(len(q) > len(path) and q[:len(path)] == path for q in dict_paths[root[base]]):
                paths[s.target.name] = path
                root[s.target.name] = root[base]
    valid = {d for d in paths if _only_read_by_key(body, d, paths[d], dict_paths[root[d]])}
    hoisted: Dict[Tuple[str, object], ir.Var] = {}
    new_reads: Dict[str, List] = {}
    rename: Dict[str, str] = {}
    reads_of_valid = {d: paths[d] for d in valid}

    def rewrite(stmts, top):
        out = []
        for s in stmts:
            key = _const_read(s, reads_of_valid)
            if key is not None and not top:
                d = s.value.args[0].name
                var = hoisted.get((d, key))
                if var is None:
                    var = ir.Var(names.fresh(_name(d, key)))
                    hoisted[(d, key)] = var
                    new_reads.setdefault(d, []).append(replace(s, target=var))
                if defs[s.target.name] == 1:  # its only value: read the hoisted one
                    rename[s.target.name] = var.name
                else:
                    out.append(ir.Assign(s.target, var, s.loc))
                continue
            blocks = ir.sub_blocks(s)
            if blocks:
                s = ir.with_blocks(s, [rewrite(b, False) for b in blocks])
            out.append(s)
        return out

    body = rewrite(body, True)
    if not new_reads:
        return body, valid, False
    out = [r for p in dict_paths for r in new_reads.get(p, ())]
    for s in body:
        out.append(rename_all(s, rename) if rename else s)
        for t in ir.stmt_defs(s):
            out += new_reads.get(t.name, ())
    return out, valid, True


def _const_read(s, paths):
    """The key of ``t = d[key]`` with ``d`` in ``paths`` and a constant str/int key."""
    if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) \
            and s.value.fn is operator.getitem and not s.value.kwargs and len(s.value.args) == 2:
        base, key = s.value.args
        if isinstance(base, ir.Var) and base.name in paths and isinstance(key, ir.Const) \
                and type(key.value) in (str, int):
            return key.value
    return None


def _only_read_by_key(body, d, path, present) -> bool:
    for s in ir.walk(body):
        if any(isinstance(a, ir.Var) and a.name == d for a in ir.stmt_uses(s)):
            key = _const_read(s, {d: path})
            if key is None or path + (key,) not in present:
                return False
    return True


def _name(d, key) -> str:
    text = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in str(key))
    return f"{d}_{text}" if text and not text[0].isdigit() else f"{d}_{text or 'entry'}"



class EntryAdjoints:
    """Reverse mode's side (a mixin of ``Reverse``): the adjoints of top-level reads
    ``d[k]`` of an entry dict are collected by key, and ``d``'s adjoint is written as
    the dict literal ``{k: ...}`` where ``d`` is assigned (at the end for a parameter)."""

    def _dict_entry(self, v: ir.Call) -> bool:
        base, key = v.args[0], v.args[1]
        return (isinstance(base, ir.Var) and (base.name in self.entry_dicts or (
            base.name in self.info and self.info[base.name].is_dict))
                and isinstance(key, ir.Const) and isinstance(key.value, (str, int)))

    def _assemble_entries(self, p: str, have, out, loc) -> None:
        """``p_bar = {k: adjoint of p[k], ...}`` (+ any other contribution to p_bar)."""
        by_key: Dict[object, ir.Atom] = {}
        for key, g in self.entries.get(p, ()):
            if key.value in by_key:
                t = self.temp()
                out.append(ir.Assign(t, ir.Call(rt.add, (by_key[key.value], g)), loc))
                by_key[key.value] = t
            else:
                by_key[key.value] = g
        if not by_key:
            return
        items = []
        for k in sorted(by_key, key=repr):
            items += [ir.Const(k), by_key[k]]
        literal = ir.Call(build.make_dict, tuple(items))
        t = self.temp()
        out.append(ir.Assign(t, literal, loc))
        self.template_results[t.name] = True
        self.accumulate(ir.Var(p), t, have, out, loc)
