"""More batching rules: in-place operators, attributes, iteration helpers, and numpy
functions whose batched form depends on the per-example rank (run-time helpers
``rt.batch_hstack``, ``batch_vstack``, ``batch_diag``, ``batch_tile``...).

* ``x += y`` (and the other in-place operators): ``y`` aligned against ``x``
  (``x`` keeps its shape, as the write is in place).
* ``getattr(x, name)``: ``.shape``/``.ndim``/``.size`` give the per-example
  answer (unbatched); ``.T`` transposes each example; other attributes
  (``.real``, a record's fields) read the batched value as it is.
* ``zip``, ``enumerate``, ``reversed`` of batched values iterate over the
  examples' rows (``rt.batch_rows``), every operand batched.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build, containers, records

from ..ir import nodes as ir
from .rules_core import aligned_operands, axis_rule, same, container
from .table import defbatch


def inplace(site):
    x, *rest = site.call.args
    aligned = aligned_operands(site, [x] + rest)
    return ir.Call(site.fn, (x,) + tuple(aligned[1:]), site.call.kwargs)


defbatch(inplace, operator.iadd, operator.isub, operator.imul, operator.itruediv,
         operator.ipow, operator.ifloordiv, operator.imod, operator.iand, operator.ior,
         operator.ixor)

_QUERIES = {"shape": rt.batch_shape, "ndim": rt.batch_ndim, "size": rt.batch_size_of}


def getattr_rule(site):
    obj, name = site.call.args[:2]
    if isinstance(name, ir.Const) and name.value in _QUERIES:
        return ir.Call(_QUERIES[name.value], (obj,))
    if isinstance(name, ir.Const) and name.value == "T":
        axes = site.rt(rt.batch_transpose_axes, obj)
        return ir.Call(np.transpose, (obj, axes))
    return site.call


def _getattr_unbatched(call) -> bool:
    name = call.args[1] if len(call.args) > 1 else None
    return isinstance(name, ir.Const) and name.value in _QUERIES


defbatch(getattr_rule, builtins.getattr, unbatched_result=_getattr_unbatched)


def rows_of_all(site):
    args = []
    for a in site.call.args:
        if not site.b(a):
            a = site.rt(rt.batch_lift, a, site.n, batched=True)
        args.append(site.rt(rt.batch_rows, a, batched=True))
    return ir.Call(site.fn, tuple(args), site.call.kwargs)


defbatch(rows_of_all, builtins.zip, builtins.enumerate, builtins.reversed)


def helper(fn, *names):
    """``fn(batched operand, *other params)``: the operand is the first parameter."""
    def rule(site):
        args = [site.arg(n) for n in names]
        while args and args[-1] is None:
            args.pop()
        return ir.Call(fn, tuple(ir.Const(None) if a is None else a for a in args))
    return rule


defbatch(helper(rt.batch_item, "x"), build.item)
defbatch(helper(rt.batch_sum_items, "iterable"), builtins.sum)
defbatch(helper(rt.batch_hstack, "tup"), np.hstack)
defbatch(helper(rt.batch_vstack, "tup"), np.vstack)
defbatch(helper(rt.batch_broadcast_to, "array", "shape"), np.broadcast_to)
defbatch(helper(rt.batch_diag, "v", "k"), np.diag)
defbatch(helper(rt.batch_tile, "A", "reps"), np.tile)
defbatch(axis_rule(arrays=("a",), none="flat"), np.repeat)
defbatch(same, build.astype, records.make_record)
defbatch(container, containers.list_append, containers.list_extend)
