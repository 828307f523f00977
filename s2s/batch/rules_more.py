"""More batching rules: in-place operators, attributes, iteration helpers, and numpy
functions whose batched form depends on the per-example rank (run-time helpers
``rt.batch_hstack``, ``batch_vstack``, ``batch_diag``, ``batch_tile``...).

* ``x += y`` (and the other in-place operators): ``y`` aligned against ``x``
  (``x`` keeps its shape, as the write is in place).
* ``getattr(x, name)``: ``.shape``/``.ndim``/``.size`` give the per-example
  answer (unbatched); ``.T`` transposes each example; other attributes
  (``.real``, a record's fields) read the batched value as it is.
* ``zip``, ``enumerate``, ``reversed`` of batched values iterate over the
  examples' rows (``rt.batch_rows``), every operand batched; ``rt.reversed_items``
  (a ``reversed`` that no loop reads) is the rows backwards.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build, containers, index_writes, records

from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir
from .rules_core import aligned_operands, axis_rule, same, container
from .table import defbatch


def inplace(site):
    """``x op= y``: ``y`` aligned against ``x``; in place only where the examples are
    arrays (``rt.batch_inplace``), as numbers are never changed in place."""
    x, *rest = site.call.args
    aligned = aligned_operands(site, [x] + rest)
    if not site.b(x):  # x the same for every example, y batched: a new batched value
        return ir.Call(PLAIN_OF_INPLACE[site.fn], (x,) + tuple(aligned[1:]))
    return ir.Call(rt.batch_inplace, (ir.Const(site.fn), ir.Const(PLAIN_OF_INPLACE[site.fn]),
                                      x) + tuple(aligned[1:]))


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


_CONTAINERS = (tuple, list, dict)


def _container_classes(call) -> bool:
    """Whether ``isinstance``'s classes are a constant container class or tuple of them
    (subclasses of ``tuple``, ``list``, ``dict``)."""
    cls = call.args[1] if len(call.args) == 2 and not call.kwargs else None
    if not isinstance(cls, ir.Const):
        return False
    classes = cls.value if isinstance(cls.value, tuple) else (cls.value,)
    return bool(classes) and all(isinstance(c, type) and issubclass(c, _CONTAINERS)
                                 for c in classes)


def isinstance_rule(site):
    """``isinstance(x, C)`` for container classes ``C``: the same answer in every example,
    which is the batched value's own (a batched container is a container of batched
    leaves, a batched number or array is an array, never a container).  Other classes
    are refused (a batched number is an array while each example's is a float)."""
    if not _container_classes(site.call):
        raise site.tr.error("isinstance of a value that differs per example, with classes "
                            "other than tuple, list or dict", site.loc)
    return site.call


defbatch(isinstance_rule, builtins.isinstance, unbatched_result=_container_classes)


def rows_of_all(site):
    """Each sequence operand as the examples' rows (an iterator made by another of these
    calls, ``enumerate(zip(x, w))``, is already one: ``rt.batch_rows`` leaves it as it
    is).  ``enumerate``'s ``start`` is a number, not a sequence: the same for every
    example, or the index would differ per example (refused)."""
    sequences = site.call.args[:1] if site.fn is builtins.enumerate else site.call.args
    starts = site.call.args[len(sequences):] + tuple(v for _, v in site.call.kwargs)
    if any(site.b(a) for a in starts):
        raise site.tr.error("enumerate with a start that differs per example (write "
                            "the index as start + i)", site.loc)
    args = []
    for a in sequences:
        if not site.b(a):
            a = site.rt(rt.batch_lift, a, site.n, batched=True)
        args.append(site.rt(rt.batch_rows, a, batched=True))
    return ir.Call(site.fn, tuple(args) + site.call.args[len(sequences):], site.call.kwargs)


defbatch(rows_of_all, builtins.zip, builtins.enumerate, builtins.reversed)


def reversed_rows(site):
    """``rt.reversed_items(x)`` (the list ``reversed`` gives where no loop reads it): a
    batched list holds batched items, so it is the examples' rows, backwards."""
    (x,) = site.call.args
    return ir.Call(rt.reversed_items, (site.rt(rt.batch_rows, x, batched=True),))


defbatch(reversed_rows, rt.reversed_items)
# rt.sequence(x): x itself for a list, tuple or array (a batched array stays one), else
# list(x): an iterator over the examples' rows (zip, enumerate) becomes the batched list
defbatch(same, rt.sequence)


def helper(fn, *names):
    """``fn(batched operand, *other params)``: the operand is the first parameter."""
    def rule(site):
        args = [site.arg(n) for n in names]
        while args and args[-1] is None:
            args.pop()
        return ir.Call(fn, tuple(ir.Const(None) if a is None else a for a in args))
    return rule


defbatch(helper(rt.batch_item, "x"), build.item)
defbatch(helper(rt.batch_sum_items, "iterable", "start"), builtins.sum)
defbatch(helper(rt.batch_hstack, "tup"), np.hstack)
defbatch(helper(rt.batch_vstack, "tup"), np.vstack)
defbatch(helper(rt.batch_broadcast_to, "array", "shape"), np.broadcast_to)
defbatch(helper(rt.batch_diag, "v", "k"), np.diag)
defbatch(helper(rt.batch_tile, "A", "reps"), np.tile)
defbatch(axis_rule(arrays=("a",), none="flat"), np.repeat)
defbatch(same, build.astype, records.make_record)
defbatch(container, containers.list_append, containers.list_extend, records.record_like)


# -- VJP and JVP helpers of generated derivative code ---------------------------------
def _lifted(site, names):
    """The call with the unbatched operands among ``names`` broadcast over the batch."""
    call = site.call
    for p in names:
        a = site.arg(p)
        if isinstance(a, ir.Var) and not site.b(a):
            call = site.with_arg(call, p, site.rt(rt.batch_view, a, site.n, batched=True))
    return call


def flat_when_none(arrays, flatten, reshape_like=None):
    """``f(..., axis=None)`` that works on the flattened example: the ``flatten``
    operands flattened per example, ``axis=1``, the result reshaped like
    ``reshape_like``; with an axis, the axis shifted."""
    def rule(site):
        call = _lifted(site, arrays)
        axis = site.arg("axis", ir.Const(None))
        if not (isinstance(axis, ir.Const) and axis.value is None):
            return site.with_arg(call, "axis", ir.Const(rt.batch_axis(axis.value))
                                 if isinstance(axis, ir.Const) else
                                 site.rt(rt.batch_axis, axis))
        from .rules_core import current_batch
        shape_of = current_batch(site, call, reshape_like) if reshape_like else None
        for p in flatten:
            flat = site.rt(rt.batch_flat, current_batch(site, call, p), batched=True)
            call = site.with_arg(call, p, flat)
        call = site.with_arg(call, "axis", ir.Const(1))
        if shape_of is None:
            return call
        out = site.emit(call)
        shape = site.rt(np.shape, shape_of)
        return ir.Call(np.reshape, (out, shape))
    return rule


defbatch(flat_when_none(("g", "a"), ("a",), "a"), rt.cumsum_vjp)
defbatch(flat_when_none(("g", "a"), ("g", "a"), "a"), rt.cumprod_vjp)
defbatch(flat_when_none(("t", "ans", "a"), ("t", "a")), rt.cumprod_jvp)


def transpose_vjp(site):
    call = _lifted(site, ("g", "a"))
    axes = site.arg("axes", ir.Const(None))
    a = call.args[1]
    return site.with_arg(call, "axes", site.rt(rt.batch_transpose_axes, a, axes))


defbatch(transpose_vjp, rt.transpose_vjp)


def view_all(*names):
    def rule(site):
        return _lifted(site, names)
    return rule


defbatch(view_all("g", "a"), rt.reshape_vjp)
defbatch(view_all("g", "x"), rt.astype_vjp)
defbatch(view_all("t", "ans"), rt.tangent_as, rt.astype_jvp, rt.cast_jvp)
defbatch(axis_rule(arrays=("t", "a"), none="keep", default=-1), rt.sort_jvp)
defbatch(axis_rule(arrays=("g", "a"), none="keep", axis_param="axis1", more_axes=("axis2",),
                   default=0), rt.trace_vjp)
defbatch(axis_rule(arrays=("g", "ans", "a", "weights"), axes_of="a"), rt.average_vjp)
defbatch(axis_rule(arrays=("t", "ans", "a", "weights"), axes_of="a"), rt.average_jvp)


def unpack_vjp(site):
    """``a, b = x`` of a batched array: the targets' cotangents stacked on axis 1."""
    cts, x = site.call.args
    if not site.b(x):
        x = site.rt(rt.batch_view, x, site.n, batched=True)
    if not site.b(cts):
        cts = site.rt(rt.batch_lift, cts, site.n, batched=True)
    made = site.emit(ir.Call(rt.unpack_vjp, (cts, site.rt(rt.batch_rows, x, batched=True))))
    return ir.Call(rt.batch_rows, (made,))


defbatch(unpack_vjp, rt.unpack_vjp)


# -- in-place writes as values (generated reverse-mode code) ---------------------------
def _no_batched_index(site, index):
    if site.b(index):
        from .transform import BatchingError
        raise BatchingError("vmap: an in-place write at an index that differs per example "
                            "in differentiated code", site.loc)


def read_at(site):
    y, index = site.call.args[:2]
    _no_batched_index(site, index)
    if site.fn is index_writes.read_checked:
        return ir.Call(rt.batch_read_checked, site.call.args)
    shifted = site.rt(rt.batch_index, y, index)
    return ir.Call(site.fn, (y, shifted) + site.call.args[2:])


def index_set(site):
    y, index, v = site.call.args
    _no_batched_index(site, index)
    # under a mask (a branch or loop whose condition differs per example: every example
    # runs it) the write is a value, so the examples that skip it keep the array unwritten
    copy = ir.Const(site.fn is index_writes.index_updated or site.tr.mask is not None)
    return ir.Call(rt.batch_index_set, (y, index, v, site.flag(y), site.flag(v), site.n, copy))


def index_set_vjp_base(site):
    g, index = site.call.args
    _no_batched_index(site, index)
    return ir.Call(site.fn, (g, site.rt(rt.batch_index, g, index)))


def index_set_vjp_value(site):
    g, index, v = site.call.args
    _no_batched_index(site, index)
    return ir.Call(rt.batch_index_set_vjp_value, (g, index, v, site.flag(g), site.flag(v)))


defbatch(read_at, index_writes.read_copy, index_writes.read_checked)
defbatch(index_set, index_writes.index_set, index_writes.index_updated)
defbatch(index_set_vjp_base, index_writes.index_set_vjp_base)
defbatch(index_set_vjp_value, index_writes.index_set_vjp_value)


def array_jvp(site):
    t, ans, obj = site.call.args[:3]
    t = t if site.b(t) else site.rt(rt.batch_lift, t, site.n, batched=True)
    ans = ans if site.b(ans) else site.rt(rt.batch_view, ans, site.n, batched=True)
    obj = obj if site.b(obj) else site.rt(rt.batch_lift, obj, site.n, batched=True)
    return ir.Call(rt.batch_array_jvp, (t, ans, obj) + site.call.args[3:])


def array_vjp(site):
    g, x = site.call.args
    g = g if site.b(g) else site.rt(rt.batch_view, g, site.n, batched=True)
    x = x if site.b(x) else site.rt(rt.batch_lift, x, site.n, batched=True)
    return ir.Call(rt.batch_array_vjp, (g, x))


defbatch(array_jvp, rt.array_jvp)
defbatch(array_vjp, rt.array_vjp)
