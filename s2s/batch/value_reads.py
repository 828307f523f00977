"""Reads that are values per example stay values when batched.

Unbatched numpy, ``v = u[i]`` of a 1-D array ``u`` is a number: a later
``u[i] = w`` (or ``u += 1``, a write through another name for ``u``, a masked
write under a batched ``if``) leaves ``v`` alone.  Batched, the same read is
the column ``u[:, i]``, a view of the batched array, which such a write would
change; likewise iterating over (or unpacking) an example that is a 1-D array
yields numbers unbatched but columns of the batched array (``rt.batch_rows``).
A read whose examples are arrays (``r = M[i]`` of a 2-D ``M``) is a view in
both worlds and stays a view.

Contract: ``changing_names(body)`` is the set of names whose memory may be
changed in place somewhere in ``body`` (a flow-insensitive, conservative alias
analysis: names that may share memory form one class, by union-find over the
assignments; a class is *changing* when any member is written in place).  The
batching transform wraps a batched read ``x[index]`` (index the same for every
example) of a changing ``x``, and the items of a loop over (or an unpacking of)
a changing array, in ``rt.batch_value``: a copy where each example is a number,
the read itself where each example is an array (numpy's view semantics).
Reads of names no in-place write can reach are left as they are (no copy), as are
reads used up before any statement that may write (``safe_reads``: ``u[i] + 1``).
A read at an index that differs per example is a gather (a new array): fine where
each example reads a number; where each reads an array (numpy: a view) of a
changing array it is refused (``rt.batch_gathered_value``), naming the line.

Which calls share memory with their operands: every call but those known to make
a new value (ufuncs and the elementwise operators, ``np.copy``, reductions, reverse
mode's copying reads ``read_copy``/``read_checked``).  Which write: an in-place
operator (``x += y``), reverse mode's ``index_set`` (``passes/dce.MUTATING``: its
first operand, which its result is; the values it stores are copied), a call with
``out=``, and a call made for its effect only (``x[i] = v``, ``lst.append(v)``,
``np.copyto(x, v)``: its operands).
"""
from __future__ import annotations

import operator
from typing import Dict, List, Set

import numpy as np

import s2s_runtime as rt

from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir
from ..passes.dce import MUTATING
from ..rules.registry import defjvp, defvjp

#: calls whose result never shares memory with an operand (besides ufuncs)
_FRESH = {np.copy, np.sum, np.prod, np.mean, np.max, np.min, np.amax, np.amin, np.dot,
          np.matmul, np.zeros_like, np.ones_like, np.empty_like, np.full_like, len,
          np.shape, np.ndim, np.size, float, int, abs, rt.read_copy, rt.read_checked}


def _fresh(call: ir.Call) -> bool:
    from .rules_core import ELEMENTWISE
    if call.fn in PLAIN_OF_INPLACE or any(k == "out" for k, _ in call.kwargs):
        return False
    return isinstance(call.fn, np.ufunc) or id(call.fn) in ELEMENTWISE or call.fn in _FRESH


class _Classes:
    def __init__(self):
        self.parent: Dict[str, str] = {}

    def find(self, name: str) -> str:
        root = name
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while name != root:  # path compression
            self.parent[name], name = root, self.parent.get(name, name)
        return root

    def union(self, names) -> None:
        for n in names:
            self.parent.setdefault(n, n)
        roots = sorted({self.find(n) for n in names})
        for r in roots[1:]:
            self.parent[r] = roots[0]


def _vars(atoms):
    return [a.name for a in atoms if isinstance(a, ir.Var)]


def changing_names(body) -> Set[str]:
    """The names of ``body`` that may share memory with an array written in place."""
    classes = _Classes()
    written = set()
    for s in ir.walk(body):
        if isinstance(s, ir.Assign):
            v = s.value
            if isinstance(v, ir.Var):
                classes.union([s.target.name, v.name])
            elif isinstance(v, ir.Call) and v.fn in MUTATING:  # the array written
                classes.union([s.target.name] + _vars(v.args[:1]))
            elif isinstance(v, ir.Call) and not _fresh(v):
                classes.union([s.target.name] + _vars(v.operands()))
            if isinstance(v, ir.Call):
                if v.fn in PLAIN_OF_INPLACE or v.fn in MUTATING:
                    written.update(_vars(v.args[:1]))
                written.update(_vars(a for k, a in v.kwargs if k == "out"))
        elif isinstance(s, ir.Unpack):
            classes.union([t.name for t in s.targets] + _vars([s.value]))
        elif isinstance(s, ir.For):
            classes.union([s.target.name] + _vars([s.iter]))
        elif isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call):
            names = _vars(s.value.operands())
            classes.union(names)
            written.update(names)
    roots = {classes.find(n) for n in written}
    names = set(classes.parent) | written
    return {n for n in names if classes.find(n) in roots}


def written_views(body) -> List[Set[str]]:
    """The groups of names of ``body`` that are views of one array (copies of a name and
    results of calls whose record says ``view``: ``x[i]``, ``np.ravel``, ``np.moveaxis``...)
    where some member is written in place.  Batched, such a group is batched as a whole:
    a batched value written through a view of an unbatched array is written into the
    lifted array itself, so that the array and its other views see it, as in numpy."""
    from ..rules.registry import having
    views = having("view")
    classes = _Classes()
    written = set()
    for s in ir.walk(body):
        if isinstance(s, ir.Assign):
            v = s.value
            if isinstance(v, ir.Var):
                classes.union([s.target.name, v.name])
            elif isinstance(v, ir.Call) and v.fn in views and v.args and \
                    isinstance(v.args[0], ir.Var):
                classes.union([s.target.name, v.args[0].name])
            if isinstance(v, ir.Call) and (v.fn in PLAIN_OF_INPLACE or v.fn in MUTATING):
                written.update(_vars(v.args[:1]))
        elif isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call) and \
                s.value.fn is operator.setitem:
            written.update(_vars(s.value.args[:1]))
    groups: Dict[str, Set[str]] = {}
    for n in classes.parent:
        groups.setdefault(classes.find(n), set()).add(n)
    return [g for root, g in sorted(groups.items()) if len(g) > 1 and g & written]


def _no_effect(s) -> bool:
    """Whether statement ``s`` certainly writes nothing in place (a plain assignment of a
    name, a constant, a read or a call that makes a new value)."""
    if not isinstance(s, ir.Assign):
        return False
    v = s.value
    return not isinstance(v, ir.Call) or _fresh(v) or v.fn is operator.getitem


def safe_reads(body, temps) -> Set[int]:
    """The ids of the ``x[index]`` calls of ``body`` whose value is certainly used before
    any in-place write: the read is assigned to a temporary (defined once) whose every use
    is an operand of a call making a new value, in the statements that follow it in its
    block, with only statements that write nothing in between.  Such a read may stay a
    view."""
    defs: Dict[str, int] = {}
    for s in ir.walk(body):
        for t in ir.stmt_defs(s):
            defs[t.name] = defs.get(t.name, 0) + 1
    counts = ir.use_counts(body)
    safe: Set[int] = set()

    def block(stmts):
        for k, s in enumerate(stmts):
            for b in ir.sub_blocks(s):
                block(b)
            if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
                    and s.value.fn is operator.getitem and s.target.name in temps
                    and defs.get(s.target.name) == 1):
                continue
            name, need, seen = s.target.name, counts.get(s.target.name, 0), 0
            for later in stmts[k + 1:]:
                if seen == need or not _no_effect(later):
                    break
                uses = sum(1 for a in ir.stmt_uses(later)
                           if isinstance(a, ir.Var) and a.name == name)
                if uses and not (isinstance(later.value, ir.Call) and _fresh(later.value)):
                    break
                seen += uses
            if seen == need:
                safe.add(id(s.value))

    block(list(body))
    return safe


def _needs_value(site) -> bool:
    x = site.call.args[0]
    return isinstance(x, ir.Var) and x.name in site.tr.changing and \
        id(site.call) not in site.tr.safe_reads


def value_read(site, read: ir.Call) -> ir.Expr:
    """``read`` (the batched ``x[index]`` of ``site``, an index the same for every example)
    as a value where each example reads a number and ``x`` may be written in place while
    the read is still used (``rt.batch_value``); else ``read`` itself."""
    if not _needs_value(site):
        return read
    return ir.Call(rt.batch_value, (site.emit(read), read.args[0], read.args[1]))


def gathered_read(site, read: ir.Call) -> ir.Expr:
    """``read`` (the batched ``x[index]`` of ``site``, an index that differs per example: a
    gather, a new array) checked where ``x`` may be written in place while the read is
    still used: each example must read a number, since a row would be a view in numpy
    (writes to ``x`` show in it, writes to it change ``x``) and cannot be one when
    gathered (``rt.batch_gathered_value`` raises, naming the line), unless the index
    holds an integer array per example (numpy's advanced indexing copies too)."""
    if not _needs_value(site):
        return read
    from .transform import BatchingError
    message = BatchingError(
        "vmap: this reads a part of an array that is an array itself (a view in numpy) at "
        "an index that differs per example, and the array (or the part read) is written in "
        "place while the read is used; a batched read cannot be a view of each example's "
        "own part: copy it (x[i].copy()) or read it after the writes", site.loc)
    return ir.Call(rt.batch_gathered_value, (site.emit(read), ir.Const(str(message)),
                                             read.args[1]))


# batch_value is the identity on values: derivatives pass through it unchanged
# (``source`` only says what kind of value was read: a zero derivative)
defvjp(rt.batch_value, lambda g, ans, r, source, index=None: g,
       lambda g, ans, r, source, index=None: rt.zeros_like(source))
defjvp(rt.batch_value, lambda t, ans, r, source, index=None: rt.batch_value(t, source, index),
       lambda t, ans, r, source, index=None: rt.zeros_like(ans))
defvjp(rt.batch_gathered_value, lambda g, ans, r, message, index=None: g, None, None)
defjvp(rt.batch_gathered_value, lambda t, ans, r, message, index=None: t, None, None)
