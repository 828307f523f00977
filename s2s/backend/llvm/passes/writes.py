"""Which array parameters a kernel may write into (so read-only arrays can be refused).

Contract: ``written_params(func, types)`` returns the names of array parameters
that a ``setitem``, ``rt.index_set`` or in-place operator may reach: the
parameter itself or a value that may share its memory (plain copies, views made
by indexing/transposing/reshaping, tuples holding it, items unpacked or popped
from them) -- an over-approximation.  The entry points check numpy's WRITEABLE
flag of those arguments and raise numpy's ``ValueError`` ("assignment
destination is read-only") before running the kernel.
"""
from __future__ import annotations

import operator

import s2s_runtime as rt
from s2s_runtime import build

from ....ir import nodes as ir
from ....rules.registry import having
from ..typing import types as T

#: calls whose result may be (a view of, or hold) an operand, and calls that write into
#: their first argument: the ``view``, ``aliases`` and ``in_place`` properties of the
#: primitives' records (``s2s/rules``)
_VIEWS = having("view") | having("aliases")
_WRITES = having("in_place")


def _aliases(func, name):
    seen = {name}
    changed = True
    while changed:
        changed = False
        for s in ir.walk(func.body):
            new = []
            if isinstance(s, ir.Assign):
                v = s.value
                if isinstance(v, ir.Var) and v.name in seen:
                    new = [s.target.name]
                elif isinstance(v, ir.Call) and v.fn in _VIEWS and any(
                        isinstance(a, ir.Var) and a.name in seen for a in v.args):
                    new = [s.target.name]
            elif isinstance(s, (ir.Unpack,)) and isinstance(s.value, ir.Var) \
                    and s.value.name in seen:
                new = [t.name for t in s.targets]
            elif isinstance(s, ir.For) and isinstance(s.iter, ir.Var) and s.iter.name in seen:
                new = [s.target.name]
            for n in new:
                if n not in seen:
                    seen.add(n)
                    changed = True
    return seen


def written_params(func, types) -> set:
    """(In SSA form, so that ``u = u.copy(); u[i] = v`` writes the copy, not ``u``.)"""
    from ....passes.ssa import to_ssa
    if not _written_names(func):
        return set()  # nothing is written in place (no renaming needed to say so)
    try:
        func = to_ssa(func)
    except Exception:  # a shape the renaming does not take: the name-based answer
        pass
    writes = _written_names(func)
    out = set()
    for p, t in zip((p.var.name for p in func.params), types):
        if isinstance(t, (T.Array, T.Tuple)) and _aliases(func, p) & writes:
            out.add(p)
    return out


def _written_names(func) -> set:
    """The names written in place: first operands of ``in_place`` calls."""
    writes = set()
    for s in ir.walk(func.body):
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call) and v.fn is rt.batch_inplace and len(v.args) == 4:
            v = ir.Call(operator.iadd, v.args[2:])  # x op= y (jit(vmap(f)), in place)
        if isinstance(v, ir.Call) and v.fn in _WRITES and v.args and isinstance(v.args[0], ir.Var):
            writes.add(v.args[0].name)
    return writes


def _is_push(s) -> bool:
    """``tape = (v, tape)``: a value pushed on a tape."""
    v = getattr(s, "value", None)
    return isinstance(s, ir.Assign) and isinstance(v, ir.Call) and v.fn is build.make_tuple \
        and len(v.args) == 2 and v.args[1] == s.target and isinstance(v.args[0], ir.Var)


def fresh_values_only(func) -> set:
    """The names never written in place (first operand of an ``in_place`` call) whose
    every assignment is a call that is not a view (``_VIEWS``), a constant, a copy of
    another such name (a greatest fixed point), or the pop of a value reverse mode pushed
    from the name itself (``v, tape = tape`` where ``tape = (v, tape)`` is in the code)."""
    written, sources, bad = set(), {}, set()
    pushed = {(s.value.args[1].name, s.value.args[0].name) for s in ir.walk(func.body)
              if _is_push(s)}
    for s in ir.walk(func.body):
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call) and v.fn in _WRITES and v.args and isinstance(v.args[0], ir.Var):
            written.add(v.args[0].name)
        if isinstance(s, ir.Unpack) and len(s.targets) == 2 and s.targets[1] == s.value and \
                (s.value.name, s.targets[0].name) in pushed:
            sources.setdefault(s.targets[0].name, set())  # (a value it held: a tape's pop)
            continue
        if isinstance(s, ir.Assign):
            name = s.target.name
            if isinstance(v, ir.Var):
                sources.setdefault(name, set()).add(v.name)
            elif isinstance(v, ir.Call) and v.fn in _VIEWS:
                bad.add(name)
            else:
                sources.setdefault(name, set())
        else:
            bad.update(t.name for t in ir.stmt_defs(s))  # unpacked, a loop target...
    ok = set(sources) - bad - written - {p.var.name for p in func.params}
    changed = True
    while changed:
        changed = False
        for name in list(ok):
            if not sources[name] <= ok:
                ok.discard(name)
                changed = True
    return ok
