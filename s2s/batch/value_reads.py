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
Reads of names no in-place write can reach are left as they are (no copy).

Which calls share memory with their operands: every call but those known to make
a new value (ufuncs and the elementwise operators, ``np.copy``, reductions); an
in-place operator (``x += y``), a call with ``out=`` and a call made for its effect
only (``x[i] = v``, ``lst.append(v)``, ``np.copyto(x, v)``: its operands) write.
"""
from __future__ import annotations

from typing import Dict, Set

import numpy as np

import s2s_runtime as rt

from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir
from ..rules.registry import defjvp, defvjp

#: calls whose result never shares memory with an operand (besides ufuncs)
_FRESH = {np.copy, np.sum, np.prod, np.mean, np.max, np.min, np.amax, np.amin, np.dot,
          np.matmul, np.zeros_like, np.ones_like, np.empty_like, np.full_like, len,
          np.shape, np.ndim, np.size, float, int, abs}


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
            elif isinstance(v, ir.Call) and not _fresh(v):
                classes.union([s.target.name] + _vars(v.operands()))
            if isinstance(v, ir.Call):
                if v.fn in PLAIN_OF_INPLACE:
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


def value_read(site, read: ir.Call) -> ir.Expr:
    """``read`` (a batched ``x[index]``) as a value where each example reads a number and
    ``x`` may be written in place later (``rt.batch_value``); else ``read`` itself."""
    x = read.args[0]
    if not (isinstance(x, ir.Var) and x.name in site.tr.changing):
        return read
    return ir.Call(rt.batch_value, (site.emit(read),))


# batch_value is the identity on values: derivatives pass through it unchanged
defvjp(rt.batch_value, lambda g, ans, r: g)
defjvp(rt.batch_value, lambda t, ans, r: rt.batch_value(t))
