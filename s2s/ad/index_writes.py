"""In-place index writes in reverse mode: when ``y = index_set(y, i, v)`` is a value.

``passes/index_writes.py`` turned every ``y[i] = v`` into ``y2 =
index_set(y1, i, v)``, a write in place that SSA versions like a value.
Reverse mode differentiates that as ``y2 = y1 with [i] = v`` — which is
what happens *if* nothing else sees the array change.  This pass checks
that and makes it so, for every *family* (the names ``index_set`` and plain
copies connect: the states of one array) that differentiated values flow
through:

* the array is one the function made (``np.zeros``, ``x.copy()``,
  arithmetic...): writing into an argument, a global, a view or an item of
  a container is an error (the caller's array would change under it);
* a *view* of it (``reshape``, ``.T``...) or another name for an earlier
  state must not be used after a later write into the same object (Python
  would show the new values, the derivative would follow the old): an error.
  Which names may hold the same object is ``aliases.ObjectStates``'s answer,
  so buffers swapped or rotated by name (``u, v = v, u``), each made by its
  own ``np.zeros``/``.copy()``/helper, are distinct arrays and accepted;
* reads ``y[k]`` become ``read_copy`` (an array read is copied, so a value
  the adjoint records keeps its values when ``y`` changes later), or
  ``read_checked`` where the value read is used after a later write (fine for
  a number; an array view raises at run time);
* every write stays a write in place (``index_set``): one buffer, whatever
  loops it sits in.  When the adjoint of a statement needs the values of a
  whole state (``y * w`` reads ``y``) and a later write may go into the object
  it read, that statement reads a snapshot (``rt.owned``) taken right before
  it: one copy per such read, never one per write.  A new array whose adjoint
  reads the result itself (``v = np.exp(x)``: ``g * ans``) and that is written
  later keeps that result under its own name; the writes go into a copy.  (Past ``aliases.CAP``
  ways of holding the arrays the analysis gives up, and those writes copy
  first, ``index_updated``, as a last resort.)

An in-place operator left in place by ``inplace.py`` (``x += v`` on an
array that may be shared) that carries derivatives is first made the
whole-array write ``x = index_set(x, ..., x + v)``, and checked the same way.
Families of lists and dicts (made by ``[...]``/``{...}``) are left as they
were written; reverse mode's other checks apply to them.  Arrays no
derivative flows through keep their writes as written; a differentiated
statement that reads one before a later write reads a snapshot.
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import Dict, List, Set

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build

from ..errors import unsupported
from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir
from ..passes.ssa import overwritten_versions
from ..rules import lookup
from ..rules.templates import vjp_reads_result
from .common import expr_active, is_in
from .aliases import ObjectStates
from .inplace import VIEW_OPS, has_inplace_operators
from .positions import Positions as _Positions

_CONTAINERS = {build.make_list, build.make_dict, build.make_tuple, list, dict, tuple}
_READS = {operator.getitem}
#: calls whose adjoint never reads their argument's values (shapes only, or nothing)
_SHAPE_ONLY = {np.shape, len, np.ndim, np.size, rt.index_set, rt.index_updated}


def resolve_index_writes(body, wrt, params: Set[str], names):
    """``(body, same_object)``: ``body`` with its index writes checked and rewritten
    (see the module doc; ``wrt``: the differentiated parameters; ``names``: a
    ``NameGen`` for new variables), and the names that
    hold one array throughout (made once, by one statement outside every loop, written in
    place only, never copied; not a family of swapped buffers): a loop tape need not
    record them, restoring would give the same object."""
    operators = {}
    if has_inplace_operators(body):
        body, operators = _operators_as_writes(body, activity(body, set(wrt)), names)
    writes = [s for s in ir.walk(body) if _is_write(s)]
    same_object: Set[str] = set()
    if not writes:
        return body, same_object
    active = activity(body, set(wrt))  # with the operators' new values (``t = x * v``)
    # inside a loop a written name keeps one name for all its values: the ones a later
    # statement of the same block overwrites get their own, so that ``y = x`` then
    # ``y = y * 2.0; y[0] = v`` is not taken for a write into ``x``
    body = overwritten_versions(body, names, {s.target.name for s in writes})
    writes = [s for s in ir.walk(body) if _is_write(s)]
    parent = {}

    def find(n):
        while parent.get(n, n) != n:
            n = parent[n]
        return n

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for s in ir.walk(body):
        if _is_write(s):
            union(s.target.name, s.value.args[0].name)
        elif isinstance(s, ir.Assign) and isinstance(s.value, ir.Var):
            union(s.target.name, s.value.name)
    families: Dict[str, Set[str]] = {}
    for s in writes:
        families.setdefault(find(s.target.name), set())
    for s in ir.walk(body):
        for v in ir.stmt_defs(s) + tuple(a for a in ir.stmt_uses(s) if isinstance(a, ir.Var)):
            if find(v.name) in families:
                families[find(v.name)].add(v.name)
    for p in params:
        if find(p) in families:
            families[find(p)].add(p)
    pos = _Positions(body)
    replace_stmt: Dict[int, List] = {}
    for root, members in sorted(families.items()):
        fam_writes = [s for s in writes if s.target.name in members]
        if not (members & active) and not any(
                isinstance(a, ir.Var) and a.name in active for s in fam_writes for a in s.value.args):
            # no derivative flows through the array, but its values may reach the
            # adjoint (``y * x``): that reads a snapshot taken where it was used
            snapshot_exposed(body, members, fam_writes, pos, active, replace_stmt, names)
            continue
        kind = _family_kind(body, members, params, fam_writes, pos)
        if kind == "container":
            for s in fam_writes:
                if id(s) in operators:  # l += [x] of a list: as written
                    replace_stmt[id(s)] = [operators[id(s)]]
                    continue
                base = s.value.args[0]
                back = [ir.ExprStmt(ir.Call(operator.setitem, s.value.args), s.loc)]
                if base != s.target:
                    back.append(ir.Assign(s.target, base, s.loc))
                replace_stmt[id(s)] = back
            continue
        _check_family(body, members, fam_writes, pos, active, replace_stmt, names)
        copies = any(replace_stmt[id(w)][0].value.fn is rt.index_updated
                     for w in fam_writes if id(w) in replace_stmt)
        roots = list(_roots(body, members))
        if not copies and len(roots) == 1 and not pos.site[id(roots[0])].loops:
            same_object |= members  # one array, made once (swapped buffers are several)
    return rewrite_writes(body, replace_stmt), same_object


def snapshot_exposed(body, members, fam_writes, pos, active, replace_stmt, names) -> None:
    """Before each differentiated statement that reads the values of the array (or of
    a read or view of it) and after which a write may come, a copy of that operand
    (``rt.owned``) for the statement to read: Python's aliasing is kept, and the
    adjoint sees the values the statement saw."""
    handles = set(members)
    for s in ir.walk(body):
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and not _is_write(s) \
                and (s.value.fn in VIEW_OPS or s.value.fn in _READS) \
                and isinstance(s.value.args[0], ir.Var) and s.value.args[0].name in handles:
            handles.add(s.target.name)
    for s in ir.walk(body):
        if not _exposes(s, handles, active) or not any(pos.may_follow(s, w) for w in fam_writes):
            continue
        exposed = {a.name for a in _value_uses(s) if a.name in handles}
        snaps, rename = [], {}
        for n in sorted(exposed):
            snap = ir.Var(names.fresh(f"{n}_snapshot"))
            snaps.append(ir.Assign(snap, ir.Call(rt.owned, (ir.Var(n),)), s.loc))
            rename[n] = snap
        value = replace(s.value, args=tuple(rename.get(a.name, a) if isinstance(a, ir.Var)
                                            else a for a in s.value.args))
        replace_stmt[id(s)] = snaps + [replace(s, value=value)]


def _roots(body, members):
    """The statements that give the family a new array (not a write, not a copy)."""
    for s in ir.walk(body):
        if any(t.name in members for t in ir.stmt_defs(s)) and not (
                isinstance(s, ir.Assign) and (_is_write(s) or (
                    isinstance(s.value, ir.Var) and s.value.name in members))):
            yield s


def _operators_as_writes(body, active, names):
    """``t = x.__iadd__(v)`` left in place (``inplace.py`` made those on numbers and on
    arrays nobody else sees plain) and carrying derivatives becomes ``u = x + v`` and
    the whole-array write ``t = index_set(x, ..., u)``: one mechanism for in-place
    changes.  Returns the body and, by the new write's id, the original statement."""
    originals = {}

    def block(stmts):
        out = []
        for s in stmts:
            v = getattr(s, "value", None)
            if isinstance(s, ir.Assign) and isinstance(v, ir.Call) and v.fn in PLAIN_OF_INPLACE \
                    and len(v.args) == 2 and isinstance(v.args[0], ir.Var) \
                    and (s.target.name in active or any(is_in(a, active) for a in v.args)):
                new = ir.Var(names.fresh("t"))
                write = ir.Assign(s.target, ir.Call(rt.index_set, (v.args[0], ir.Const(Ellipsis),
                                                                   new)), s.loc)
                originals[id(write)] = s
                out += [ir.Assign(new, ir.Call(PLAIN_OF_INPLACE[v.fn], v.args), s.loc), write]
                continue
            blocks = ir.sub_blocks(s)
            if blocks:
                s = ir.with_blocks(s, [block(b) for b in blocks])
            out.append(s)
        return out

    return block(body), originals


def activity(body, active: Set[str]) -> Set[str]:
    """Names that may depend on ``active`` ones (loops to a fixed point)."""
    while True:
        before = len(active)
        for s in ir.walk(body):
            if isinstance(s, ir.Assign) and expr_active(s.value, active):
                active.add(s.target.name)
            elif isinstance(s, ir.Unpack) and is_in(s.value, active):
                active.update(t.name for t in s.targets)
            elif isinstance(s, ir.For) and is_in(s.iter, active):
                active.add(s.target.name)
        if len(active) == before:
            return active


def _is_write(s) -> bool:
    return isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) \
        and s.value.fn is rt.index_set and isinstance(s.value.args[0], ir.Var)


def _family_kind(body, members, params, fam_writes, pos) -> str:
    """"array" when every value a write may go into starts as an array the function
    made; "container" for a list or dict it made; otherwise an error at that write.
    The values a write may go into are found from its base backwards through copies
    and earlier writes (``t = cp if c else x`` after the writes into ``cp`` gives ``t``
    either, but gives ``cp`` nothing), each definition only where it reaches the
    statement reading the name (not after it, not rebound in between: a tape restore
    in an adjoint loop, followed in the next trip of a loop around both by the
    definition the write reads), less ``None`` (a name set before a loop that may not
    run)."""
    defs: Dict[str, List] = {}
    for s in ir.walk(body):
        for t in ir.stmt_defs(s):
            if t.name in members:
                defs.setdefault(t.name, []).append(s)
    kinds = set()
    for w in fam_writes:
        seen, todo = set(), [(w.value.args[0].name, w)]  # (a name, a statement reading it)
        while todo:
            n, user = todo.pop()
            if (n, id(user)) in seen:
                continue
            seen.add((n, id(user)))
            if n in params:
                raise unsupported(
                    f"in-place write into the argument {n!r} in differentiated code", w.loc,
                    f"the caller's array would change; write {n} = {n}.copy() first")
            for s in defs.get(n, []):
                if not pos.may_follow(s, user) or pos.rebound_between(
                        s, user, [d for d in defs[n] if d is not s]):
                    continue  # (this value of n never reaches the statement reading it)
                v = s.value if isinstance(s, ir.Assign) else None
                if isinstance(v, ir.Var):
                    todo.append((v.name, s))
                elif _is_write(s):
                    todo.append((v.args[0].name, s))
                elif v != ir.Const(None):
                    kinds.add(_root_kind(s, v, w))
    if len(kinds) > 1:
        raise unsupported("in-place write into a value that is an array on one path and a "
                          "list or dict on another", fam_writes[0].loc)
    return kinds.pop() if kinds else "array"


def _root_kind(s, v, write) -> str:
    """"container" or "array" for the statement ``s`` that gives a family a new value
    ``v``; an error at ``write`` where that value may be shared."""
    if isinstance(v, ir.Call) and v.fn in _CONTAINERS:
        return "container"
    rule = lookup(v.fn) if isinstance(v, ir.Call) else None
    if rule is None or rule.container_result or v.fn in VIEW_OPS:
        raise unsupported(
            "in-place write into an array that may be shared (a view, an item of a "
            "container, a global or a loop item) in differentiated code", write.loc,
            "the write would change what other names see; make a copy first, "
            "e.g. y = y.copy()")
    return "array"


def _check_family(body, members, fam_writes, pos, active, replace_stmt, names) -> None:
    defs: Dict[str, List] = {}
    for s in ir.walk(body):
        for t in ir.stmt_defs(s):
            defs.setdefault(t.name, []).append(s)
    handles = set(members)  # names that refer to the array's memory
    views = set()
    reads = []
    for s in ir.walk(body):
        if isinstance(s, ir.Unpack) and isinstance(s.value, ir.Var) and s.value.name in handles:
            handles.update(t.name for t in s.targets)  # items of a container holding it
            views.update(t.name for t in s.targets)
        if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)):
            continue
        v = s.value
        refs = [a for a in v.args if isinstance(a, ir.Var) and a.name in handles]
        if not refs or _is_write(s):
            continue
        if v.fn in _READS and v.args[0].name in members:
            reads.append(s)
        elif v.fn in VIEW_OPS or v.fn in _CONTAINERS:
            handles.add(s.target.name)
            views.add(s.target.name)
    exposed = {id(s): s for s in ir.walk(body) if _adjoint_reads(s, handles, active)}
    objects = ObjectStates(
        body, handles, _roots(body, members),
        {i: _adjoint_reads(s, handles, active) for i, s in exposed.items()},
        lambda v: _refers_to(v, handles))
    for s in ir.walk(body):
        uses = [a.name for a in _value_uses(s) if a.name in handles]
        for h in uses:
            for w in fam_writes:
                if w.target.name == h or not pos.may_follow(w, s):
                    continue
                if not objects.may_alias(w, h, w.value.args[0].name):
                    continue  # surely another array (a swapped or rotated buffer)
                if any(pos.may_follow(d, w) for d in defs.get(h, [])) or h not in defs:
                    if not pos.rebound_between(w, s, defs.get(h, [])):
                        what = "a view of it, or a container holding it," if h in views \
                            else "another name for it"
                        raise unsupported(
                            f"in-place write to an array while {what} ({h}) is used after "
                            "the write in differentiated code", w.loc,
                            "Python would show the new values where the derivative follows the "
                            "old ones; copy the view (.copy()) or read the array again")
    for r in reads:
        later = any(pos.may_follow(r, u) and pos.may_follow(w, u) and pos.may_follow(r, w)
                    and not pos.rebound_between(w, u, defs.get(r.target.name, []))
                    for w in fam_writes for u in ir.walk(body)
                    if r.target in [a for a in ir.stmt_uses(u) if isinstance(a, ir.Var)])
        if later:
            where = ir.Const(f"{r.loc.file}:{r.loc.line}")
            call = ir.Call(rt.read_checked, r.value.args + (where,))
        else:
            call = ir.Call(rt.read_copy, r.value.args)
        replace_stmt[id(r)] = [replace(r, value=call)]
    if not objects.precise:  # too many ways to hold the arrays: copy on write, as before
        for w in fam_writes:
            if any(pos.may_follow(e, w) for e in exposed.values()):
                replace_stmt[id(w)] = [replace(w, value=replace(w.value, fn=rt.index_updated))]
        return
    for e in exposed.values():  # the writes stay in place; what the adjoint reads, a copy
        if any(pos.may_follow(e, w) and objects.may_write_exposed(w, e) for w in fam_writes):
            _snapshot(e, _adjoint_reads(e, handles, active), replace_stmt, names)
    for r in _roots(body, members):  # a result the adjoint reads (exp: g * ans), written later
        if _adjoint_reads_result(r, active) and any(pos.may_follow(r, w) for w in fam_writes):
            _keep_result(r, replace_stmt, names)


#: products whose adjoint reads an operand's values only for the other operand's cotangent
_BILINEAR = {operator.mul, np.multiply, operator.matmul, np.matmul, np.dot}


def _adjoint_reads(s, handles, active) -> Set[str]:
    """The names in ``handles`` whose values the adjoint of ``s`` may read: those it
    reads (``_exposes``), less, for a product, an operand whose partner carries no
    derivative (``0.5 * y``: the adjoint is ``0.5 * g``)."""
    if not _exposes(s, handles, active):
        return set()
    v = s.value
    if v.fn in _BILINEAR and len(v.args) == 2 and not v.kwargs:
        a, b = v.args
        return {x.name for x, other in ((a, b), (b, a))
                if isinstance(x, ir.Var) and x.name in handles and is_in(other, active)}
    return {a.name for a in _value_uses(s) if a.name in handles}


def _refers_to(v, handles):
    """The name in ``handles`` whose object the value ``v`` is (a copy, an index write
    or a view of it), else None."""
    if isinstance(v, ir.Var):
        return v.name if v.name in handles else None
    if isinstance(v, ir.Call) and v.args and isinstance(v.args[0], ir.Var) \
            and v.args[0].name in handles and (v.fn is rt.index_set or v.fn in VIEW_OPS):
        return v.args[0].name
    return None


def _snapshot(s, exposed, replace_stmt, names) -> None:
    """``s`` reading copies (``rt.owned``) of the arrays named in ``exposed``, taken
    right before it: its adjoint then sees the values it saw, however the arrays are
    written later."""
    snaps, rename = [], {}
    for n in sorted(exposed):
        snap = ir.Var(names.fresh(f"{n}_snapshot"))
        snaps.append(ir.Assign(snap, ir.Call(rt.owned, (ir.Var(n),)), s.loc))
        rename[n] = snap
    value = replace(s.value, args=tuple(rename.get(a.name, a) if isinstance(a, ir.Var)
                                        else a for a in s.value.args),
                    kwargs=tuple((k, rename.get(a.name, a) if isinstance(a, ir.Var) else a)
                                 for k, a in s.value.kwargs))
    replace_stmt[id(s)] = snaps + [replace(s, value=value)]


def _adjoint_reads_result(s, active) -> bool:
    """Whether the adjoint of ``s`` may read the value ``s`` assigns (its template reads
    ``ans``; a call without a rule's templates is assumed to)."""
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)) \
            or s.target.name not in active or s.value.fn in _CONTAINERS:
        return False
    rule = lookup(s.value.fn)
    if rule is not None and rule.nondiff:
        return False
    return rule is None or not rule.vjps or vjp_reads_result(rule)


def _keep_result(r, replace_stmt, names) -> None:
    """``r`` (``v = f(...)``, a new array the family writes into later) assigning its
    result to a fresh name the adjoint reads, and ``v`` a copy of it (``rt.owned``),
    which the writes change."""
    stmts = replace_stmt.get(id(r), [r])
    last = stmts[-1]
    made = ir.Var(names.fresh(f"{last.target.name}_made"))
    replace_stmt[id(r)] = stmts[:-1] + [replace(last, target=made),
                                         ir.Assign(last.target, ir.Call(rt.owned, (made,)),
                                                   last.loc)]


def _value_uses(s):
    """The variables ``s`` reads, less those passed only for their shape (the
    zero-derivative parameters of runtime helpers: ``unbroadcast(g, x)``...)."""
    uses = [a for a in ir.stmt_uses(s) if isinstance(a, ir.Var)]
    v = getattr(s, "value", None)
    if not (isinstance(v, ir.Call) and uses):
        return uses
    if v.fn in _SHAPE_ONLY:
        return []
    rule = lookup(v.fn)
    zero = rule.zero_params() if rule is not None else ()
    if not zero:
        return uses
    names = rule.param_names()
    shape_only = {i for i, n in enumerate(names) if n in zero}
    kept = [a for i, a in enumerate(v.args) if isinstance(a, ir.Var) and i not in shape_only]
    return kept + [a for k, a in v.kwargs if isinstance(a, ir.Var) and k not in zero]


def _exposes(s, handles, active) -> bool:
    """Whether the adjoint of ``s`` may read the values of an array in ``handles``."""
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)) \
            or s.target.name not in active:
        return False
    v = s.value
    if v.fn in _READS or v.fn in VIEW_OPS or v.fn in _CONTAINERS:
        return False
    rule = lookup(v.fn)
    return not (rule is not None and rule.nondiff) and any(
        a.name in handles for a in _value_uses(s))


def rewrite_writes(stmts, table):
    """``stmts`` with each statement whose id is in ``table`` replaced by its list."""
    out = []
    for s in stmts:
        if id(s) in table:
            out += table[id(s)]
            continue
        blocks = ir.sub_blocks(s)
        if blocks:
            s = ir.with_blocks(s, [rewrite_writes(b, table) for b in blocks])
        out.append(s)
    return out
