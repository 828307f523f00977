"""Renaming so that no value the adjoint may need is ever overwritten.

Contract: accepts an IR function whose top level and ``if`` branches are
straight-line (loops and ``try`` are allowed and treated as opaque);
returns an equivalent function where

* every variable is assigned at most once on any execution path outside
  loops (a re-assignment ``x = x * 2`` gets a new version ``x_1``);
* after an ``if``, a variable that the branches left under different names
  is merged by a copy at the end of each branch;
* a variable assigned inside a loop or ``try`` gets a fresh version before
  it, used throughout it, so versions defined earlier stay intact — unless
  it may be unassigned there (set on one branch only, or only in an earlier
  loop): copying it could fail, so the loop goes on with its version.

Only names change; the computation is the same.  ``to_ssa(fn, only=names)`` renames
the variables in ``names`` alone (every other name is left as it is).

``overwritten_versions(body, names, only)`` goes further inside loops, where ``to_ssa``
keeps one name per variable: a variable of ``only`` assigned twice in one block (``y =
x; y = y * 2.0`` in a loop body) gets a name of its own for every definition but the
last of that block, read up to the next one, so an analysis by name (which array a
name may hold, ``ad/index_writes.py``) does not mix the two values.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict

from ..ir import nodes as ir
from ..ir.names import NameGen


#: key of the environment that holds the names that may be unassigned at this point
#: (set on one branch only, or only inside a loop); never a variable name
_PARTIAL = "<partial>"


class _SSA:
    def __init__(self, fn: ir.Function, only=None):
        self.names = NameGen(ir.all_names(fn))
        self.temps = set(fn.temps)
        self.needs_init = set()
        self.only = only  # None: every variable

    def version(self, name: str, env: Dict[str, str]) -> str:
        if name not in env:
            return name
        base = name
        new = self.names.fresh(base)
        if name in self.temps:
            self.temps.add(new)
        return new

    def use(self, a, env):
        if isinstance(a, ir.Var) and a.name in env:
            return ir.Var(env[a.name])
        return a

    def expr(self, v, env):
        if isinstance(v, ir.Call):
            return replace(v, args=tuple(self.use(a, env) for a in v.args),
                           kwargs=tuple((k, self.use(x, env)) for k, x in v.kwargs))
        return self.use(v, env)

    def block(self, stmts, env):
        out = []
        for s in stmts:
            out += self.stmt(s, env)
        return out

    def define(self, var, env):
        if self.only is not None and var.name not in self.only:
            return var
        new = self.version(var.name, env)
        env[var.name] = new
        env[_PARTIAL] = env[_PARTIAL] - {var.name}
        return ir.Var(new)

    def stmt(self, s, env):
        if isinstance(s, ir.Assign):
            value = self.expr(s.value, env)
            return [replace(s, target=self.define(s.target, env), value=value)]
        if isinstance(s, ir.Unpack):
            value = self.use(s.value, env)
            return [replace(s, value=value, targets=tuple(self.define(t, env) for t in s.targets))]
        if isinstance(s, ir.ExprStmt):
            return [replace(s, value=self.expr(s.value, env))]
        if isinstance(s, ir.Return):
            return [replace(s, value=self.use(s.value, env))]
        if isinstance(s, ir.Raise):
            return [replace(s, exc=None if s.exc is None else self.use(s.exc, env))]
        if isinstance(s, ir.Assert):
            return [replace(s, test=self.use(s.test, env),
                            msg=None if s.msg is None else self.use(s.msg, env))]
        if isinstance(s, ir.If):
            return self.if_(s, env)
        return self.opaque(s, env)

    def if_(self, s, env):
        test = self.use(s.test, env)
        env_b, env_o = dict(env), dict(env)
        body = self.block(s.body, env_b)
        orelse = self.block(s.orelse, env_o)
        partial = set(env_b[_PARTIAL] | env_o[_PARTIAL])
        for name in sorted((set(env_b) | set(env_o)) - {_PARTIAL}):
            b, o = env_b.get(name), env_o.get(name)
            if b is None or o is None:
                if b is not None or o is not None:
                    env[name] = b or o  # defined on one path only
                    partial.add(name)
                continue
            if b == o:
                env[name] = b
                continue
            merged = self.names.fresh(name)
            body.append(ir.Assign(ir.Var(merged), ir.Var(b), s.loc))
            orelse.append(ir.Assign(ir.Var(merged), ir.Var(o), s.loc))
            # a branch where the name may be unassigned copies a version that may not exist:
            # that version starts as None (only a program that reads it unassigned differs)
            if name in env_b[_PARTIAL]:
                self.needs_init.add(b)
            if name in env_o[_PARTIAL]:
                self.needs_init.add(o)
            env[name] = merged
        env[_PARTIAL] = frozenset(partial)
        return [replace(s, test=test, body=tuple(body), orelse=tuple(orelse))]

    def opaque(self, s, env):
        """Loops and try: one fresh version per variable they assign, used throughout."""
        assigned = sorted({v.name for x in [s, *ir.walk(ir.sub_blocks_flat(s))]
                           for v in ir.stmt_defs(x)
                           if self.only is None or v.name in self.only})
        pre = []
        inner = dict(env)
        partial = set(env[_PARTIAL])
        for name in assigned:
            if name in env and name not in partial:
                new = self.names.fresh(name)
                pre.append(ir.Assign(ir.Var(new), ir.Var(env[name]), s.loc))
                inner[name] = new
            else:
                # no copy of a value that may not exist: the loop goes on with the same
                # version (reverse mode's tape restores what the loop overwrites)
                inner[name] = env.get(name, name)
                partial.add(name)
        inner.pop(_PARTIAL)
        renamed = rename_all(s, inner)
        env.update({n: inner[n] for n in assigned})
        env[_PARTIAL] = frozenset(partial)
        return pre + [renamed]


def rename_all(s, env):
    """Rename every use and definition inside ``s`` through ``env``."""
    def r(a):
        return ir.Var(env[a.name]) if isinstance(a, ir.Var) and a.name in env else a

    def expr(v):
        if isinstance(v, ir.Call):
            return replace(v, args=tuple(r(a) for a in v.args),
                           kwargs=tuple((k, r(x)) for k, x in v.kwargs))
        return r(v)

    def block(b):
        return tuple(rename_all(x, env) for x in b)

    if isinstance(s, ir.Assign):
        return replace(s, target=r(s.target), value=expr(s.value))
    if isinstance(s, ir.Unpack):
        return replace(s, targets=tuple(r(t) for t in s.targets), value=r(s.value))
    if isinstance(s, ir.ExprStmt):
        return replace(s, value=expr(s.value))
    if isinstance(s, (ir.Return,)):
        return replace(s, value=r(s.value))
    if isinstance(s, ir.Raise):
        return replace(s, exc=None if s.exc is None else r(s.exc))
    if isinstance(s, ir.Assert):
        return replace(s, test=r(s.test), msg=None if s.msg is None else r(s.msg))
    if isinstance(s, ir.If):
        return replace(s, test=r(s.test), body=block(s.body), orelse=block(s.orelse))
    if isinstance(s, ir.For):
        return replace(s, target=r(s.target), iter=r(s.iter), body=block(s.body),
                       orelse=block(s.orelse))
    if isinstance(s, ir.While):
        return replace(s, test_body=block(s.test_body), test=r(s.test), body=block(s.body),
                       orelse=block(s.orelse))
    if isinstance(s, ir.Try):
        handlers = tuple(replace(h, type=None if h.type is None else r(h.type),
                                 name=None if h.name is None else r(h.name),
                                 body=block(h.body)) for h in s.handlers)
        return replace(s, body=block(s.body), handlers=handlers, orelse=block(s.orelse),
                       finalbody=block(s.finalbody))
    return s


_JUMPS = (ir.Break, ir.Continue, ir.Return, ir.Raise)


def _rename_uses(s, name, new):
    """``s`` reading ``new`` for ``name`` (its definitions untouched: ``s`` makes none)."""
    if isinstance(s, ir.Assign):
        return replace(s, value=rename_all(ir.ExprStmt(s.value, s.loc), {name: new}).value)
    if isinstance(s, ir.Unpack):
        return replace(s, value=ir.Var(new) if s.value == ir.Var(name) else s.value)
    return rename_all(s, {name: new})


def overwritten_versions(body, names: NameGen, only) -> tuple:
    """``body`` with each definition of a name in ``only`` that a later statement of the
    same block defines again given a fresh name, read by the statements up to (and by
    the value of) that later definition.  Left as it is where a statement in between
    defines the name in a nested block, may jump out of the block (``break``,
    ``continue``, ``return``, ``raise``) or is a ``try``: then the earlier value may be
    the one seen later."""
    out = []
    for s in body:
        blocks = ir.sub_blocks(s)
        out.append(ir.with_blocks(s, [overwritten_versions(b, names, only) for b in blocks])
                   if blocks else s)
    for i in range(len(out)):
        s = out[i]
        if not isinstance(s, (ir.Assign, ir.Unpack)):
            continue
        for target in ir.stmt_defs(s):
            if target.name not in only:
                continue
            j = next((k for k in range(i + 1, len(out))
                      if any(t.name == target.name for t in ir.stmt_defs(out[k]))), None)
            if j is None or not isinstance(out[j], (ir.Assign, ir.Unpack)):
                continue
            between = [x for k in range(i + 1, j) for x in (out[k], *ir.walk(
                ir.sub_blocks_flat(out[k])))]
            if any(isinstance(x, _JUMPS + (ir.Try,)) or any(
                    t.name == target.name for t in ir.stmt_defs(x)) for x in between):
                continue
            new = names.fresh(target.name)
            out[i] = _retarget(out[i], target.name, new)
            for k in range(i + 1, j + 1):
                out[k] = _rename_uses(out[k], target.name, new)
    return tuple(out)


def _retarget(s, name, new):
    if isinstance(s, ir.Assign):
        return replace(s, target=ir.Var(new))
    return replace(s, targets=tuple(ir.Var(new) if t.name == name else t for t in s.targets))


def to_ssa(fn: ir.Function, only=None) -> ir.Function:
    pass_ = _SSA(fn, only)
    env = {p.var.name: p.var.name for p in fn.params}
    env[_PARTIAL] = frozenset()
    body = pass_.block(fn.body, env)
    params = {p.var.name for p in fn.params}
    init = [ir.Assign(ir.Var(n), ir.Const(None), fn.loc)
            for n in sorted(pass_.needs_init - params)]
    return replace(fn, body=tuple(init + body), temps=frozenset(pass_.temps))
