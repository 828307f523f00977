"""Batching rules of Python's own constructs in batched code: in-place operators,
attributes, ``isinstance``, iteration, ``sum``, containers and records.

* ``x += y`` (and the other in-place operators): ``y`` aligned against ``x``
  (``x`` keeps its shape, as the write is in place).
* ``getattr(x, name)``: ``.shape``/``.ndim``/``.size`` give the per-example
  answer (unbatched); ``.T`` transposes each example; other attributes
  (``.real``, a record's fields) read the batched value as it is.
* ``isinstance(x, C)``: the batched value's answer for container classes ``C``.
* ``zip``, ``enumerate``, ``reversed`` of batched values iterate over the
  examples' rows (``rt.batch_rows``), every operand batched; ``rt.reversed_items``
  (a ``reversed`` that no loop reads) is the rows backwards.
* ``sum(items, start)`` and ``x.item()``: per example (``rt.batch_sum_items``,
  ``rt.batch_item``); list ``append``/``extend`` and records keep batched leaves.
* ``tuple(x)``, ``list(x)``: the items of each example, batched (``rt.batch_rows``: a
  container's own items, an array's rows); ``math.fsum(items)`` once per example
  (``per_example``: Python's exactly rounded sum and its errors, example by example).
* The dict helpers (``rt.dict_set``, ``rt.old_item``, ``d.get``/``d.update`` and their
  cotangents): on the whole batch as they are, dicts and values lifted where they are
  the same for every example (a batched dict holds batched values); a key must be the
  same for every example.  ``d.items()`` stays per example (its keys are not batched).
"""
from __future__ import annotations

import builtins
import cmath
import math
import operator

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build, containers, mappings, records

from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir
from .rules_core import aligned_operands, container, per_example_helper, same
from .table import defbatch, per_example


def inplace(site):
    """``x op= y``: ``y`` aligned against ``x``; in place only where the examples are
    arrays (``rt.batch_inplace``), as numbers are never changed in place: the plain
    operator where ``x`` holds one number per example (``scalars.py``; its batch may be
    shared with another name, as a lifted ``acc = y`` is) or is the same for every
    example."""
    x, *rest = site.call.args
    aligned = aligned_operands(site, [x] + rest)
    if not site.b(x) or isinstance(x, ir.Var) and x.name in site.tr.scalars:
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
        if isinstance(a, ir.Var) and a.name in site.tr.iterators and site.b(a):
            args.append(a)  # (as it is, so reverse mode still sees the zip it indexes)
            continue
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


defbatch(per_example_helper(rt.batch_item, "x"), build.item)


def sequence_of(site):
    """``tuple(x)`` / ``list(x)`` of a batched ``x``: what iterating one example yields,
    batched (``rt.batch_rows``: a list's or tuple's items, which are batched, or an
    array's rows), collected in a tuple or list."""
    call = site.call
    if call.kwargs or len(call.args) != 1:
        raise site.tr.error(f"{call.fn.__name__} with keyword arguments", site.loc)
    return ir.Call(call.fn, (site.rt(rt.batch_rows, call.args[0], batched=True),))


defbatch(sequence_of, builtins.tuple, builtins.list)
defbatch(per_example, math.fsum)
# cmath's functions of every example: cmath itself, example by example (its results for
# operands with a nan part, the signs of its zeros and its errors are CPython's own, which
# numpy's complex functions do not reproduce); their derivatives are that loop of the
# rules', and the jit compiles the loop (passes/per_example_loops.py)
defbatch(per_example, cmath.exp, cmath.log, cmath.log10, cmath.sqrt, cmath.sin, cmath.cos,
         cmath.tan, cmath.sinh, cmath.cosh, cmath.tanh, cmath.phase, cmath.isnan,
         cmath.isinf, cmath.isfinite)


def sequence_cast(site):
    """``seq_cast(items, like)`` / ``seq_cast_transpose(ct, items, like)`` (the derivatives
    of ``tuple(x)``, ``list(x)``): per example they read their operands as sequences, so
    batched they read the examples' rows (``rt.batch_rows``, every operand batched), and
    a result stacked from rows (``like`` an array) has its axes swapped back."""
    args = [a if site.b(a) else site.rt(rt.batch_lift, a, site.n, batched=True)
            for a in site.call.args]
    rows = [site.rt(rt.batch_rows, a, batched=True) for a in args]
    out = site.emit(ir.Call(site.fn, tuple(rows)))
    site.tr.batched.add(out.name)
    return ir.Call(rt.batch_rows, (out,))


defbatch(sequence_cast, rt.seq_cast, rt.seq_cast_transpose)
# the derivatives of sum(items) and math.fsum(items): each item's own broadcasting,
# example by example
defbatch(per_example, rt.sum_builtin_jvp)


def sum_builtin_vjp(site):
    """Each item's cotangent is ``g`` summed to its example shape: for a list,
    ``rt.batch_unbroadcast`` item by item (``rt.batch_sum_builtin_vjp``, plain code the jit
    reads), else example by example."""
    g, items = site.call.args
    items = items if site.b(items) else site.rt(rt.batch_lift, items, site.n, batched=True)
    return ir.Call(rt.batch_sum_builtin_vjp, (g, items, site.flag(g), site.n))


defbatch(sum_builtin_vjp, rt.sum_builtin_vjp)
defbatch(per_example_helper(rt.batch_sum_items, "iterable", "start"), builtins.sum)


def extreme_items(site):
    """``max(items)`` / ``min(items)`` (``rt.max_of``, ``rt.min_of``) of every example:
    ``rt.batch_extreme_items``, plain numpy code (so its derivative, its compilation and
    an outer vmap come from ``np.where``); with ``key=`` the result depends on what
    ``key`` returns for each item, refused by name."""
    call = site.call
    if call.kwargs or len(call.args) != 1:
        raise site.tr.error(f"{'max' if call.fn is rt.max_of else 'min'}(..., key=...) of "
                            "values that differ per example", site.loc)
    items = call.args[0]
    return ir.Call(rt.batch_extreme_items, (items, ir.Const(call.fn is rt.max_of)))


defbatch(extreme_items, rt.max_of, rt.min_of)


def extreme_derivative(helper):
    """``extreme_ct(g, items, ans)`` / ``extreme_tangent(t, items, ans)`` (the derivatives
    of ``max(items)``) of every example: the plain-code ``helper``, its operands lifted
    where they are the same for every example."""
    def rule(site):
        args = [a if site.b(a) else site.rt(rt.batch_lift, a, site.n, batched=True)
                for a in site.call.args]
        return ir.Call(helper, tuple(args))
    return rule


defbatch(extreme_derivative(rt.batch_extreme_ct), rt.extreme_ct)
defbatch(extreme_derivative(rt.batch_extreme_tangent), rt.extreme_tangent)
defbatch(same, build.astype, records.make_record)
defbatch(container, containers.list_append, containers.list_extend, records.record_like)


def entries_helper(lifted, keys=()):
    """The rule of a helper that moves the entries of a dict or the fields of a record
    around (``rt.dict_set``, the cotangents of ``d.get`` and of ``obj.name``...): run on
    the whole batch as it is, the operands at ``lifted`` (dicts, records, values,
    cotangents) lifted where they are the same for every example, since a batched
    container holds batched values; the operands at ``keys`` (a key, a field's name)
    must be the same for every example (a key per example is refused by name)."""
    def rule(site):
        call = site.call
        for k in keys:
            if k < len(call.args) and site.b(call.args[k]):
                raise site.tr.error(f"{call.fn.__name__} with a key that differs per "
                                    "example", site.loc)
        args = [site.rt(rt.batch_lift, a, site.n, batched=True)
                if k in lifted and not site.b(a) else a for k, a in enumerate(call.args)]
        return ir.Call(call.fn, tuple(args), call.kwargs)
    return rule


for _fn, _lifted, _keys in (
        (mappings.old_item, (0,), (1,)), (mappings.dict_set, (0, 2), (1,)),
        (mappings.dict_remove, (0,), (1,)), (mappings.dict_update, (0, 1), ()),
        (mappings.dict_get, (0, 2), (1,)), (mappings.dict_values, (0,), ()),
        (mappings.dict_reset, (0, 2), (1,)), (mappings.dict_restore, (0, 2), (1,)),
        (mappings.dict_get_ct, (0, 1), (2,)), (mappings.dict_default_ct, (0, 1, 3), (2,)),
        (mappings.dict_update_ct, (0, 1, 2), ()), (mappings.dict_subset, (0, 1), ()),
        (mappings.dict_values_ct, (0, 1), ()), (mappings.dict_values_of, (0, 1), ())):
    defbatch(entries_helper(_lifted, _keys), _fn)
# a record's field cotangent, its fields as a tuple, a field of its tangent
defbatch(entries_helper((0, 1), (2,)), rt.getattr_vjp)
defbatch(entries_helper((0,)), records.record_fields)
defbatch(entries_helper((0,), (1,)), records.field_tangent)
# a record's class is the same for every example (its fields are what is batched)
defbatch(same, records.is_record, unbatched_result=True)
defbatch(same, mappings.dict_keys, unbatched_result=True)
