"""Batching rules of numpy functions beyond the core families (``rules_core``): more
axis-taking functions, functions acting on an example's trailing axes, ``np.fft``,
``np.linalg``'s array-API names, padding and the evenly spaced ranges.  (The quantiles
batch as the plain Python that defines them, ``rules/numpy_code/statistics.py``.)

The batch is axis 0 of every batched operand.  A per-example axis counted from the end
(``axis=-1``) reaches the batch axis where an example has too few axes (a 0-d example);
the rules here (and ``rules_core``'s for axes counted from the end) resolve such axes
at run time with ``rt.batch_axis_in``, which raises
numpy's ``AxisError`` as the per-example call does, so no example is ever computed
across the batch.

* ``checked_axes(...)``: ``rules_core.axis_rule`` with every axis the call passes or
  defaults to resolved by ``rt.batch_axis_in`` (``np.partition``, ``np.unwrap``,
  ``np.unstack``, ``np.rollaxis``, ``np.fft.fft``...); ``axis=None`` means every
  per-example axis, the flattened examples, or is kept, as in ``axis_rule``.
* ``trailing(k)``: functions of the last ``k`` axes that broadcast over the leading
  ones (``np.sort_complex``, ``np.matrix_transpose``, ``np.linalg.svdvals``...): the
  call as it is, once every example is checked to have ``k`` axes.
* ``alias(fn)``: a function that is another with a rule (``np.linalg.matmul`` is
  ``np.matmul``, ``np.row_stack`` is ``np.vstack``): that rule.
* ``shape_reads``: derivative helpers that read their array operands only for one
  example's shape (``rt.scan_slots``...): called once, on stand-ins of one example.
* ``np.pad``, ``np.linspace``/``logspace``/``geomspace``,
  ``np.broadcast_arrays``: below, each with its per-example semantics.

An operand that changes the *shape* of each example's result (``np.partition``'s
``kth``, ``np.delete``'s ``obj``) is batched by ``per_example``
(``rt.batch_loop``: a loop over the examples) where it differs per example.
"""
from __future__ import annotations

import numpy as np

import s2s_runtime as rt

from ..ir import nodes as ir
from .rules_core import aligned_operands, axis_rule, view_others
from .table import batch_rule, defbatch, per_example


def _const(atom, value) -> bool:
    return isinstance(atom, ir.Const) and atom.value is value


def checked_axes(axis_param="axis", none="keep", array="a", default=None, shifted_too=(),
                 varying=()):
    """``axis_rule`` for ``f(array, ..., axis_param=...)`` where every per-example axis
    (``axis_param`` and ``more_axes``, passed or defaulted) is resolved at run time by
    ``rt.batch_axis_in`` (numpy's ``AxisError`` where an example has no such axis);
    ``none`` is ``axis_rule``'s meaning of ``axis=None`` (an axis held by a variable is
    resolved by ``axis_rule`` too where it may be ``None`` at run time: ``none="all"``);
    ``shifted_too``: ``(name,
    default)`` of positions that may also be one past the last axis (``np.rollaxis``'s
    ``start``), shifted past the batch (negative ones stay).  A batched operand among
    ``varying`` (one that shapes each example's result), or any batched operand but
    ``array``, batches by ``per_example``."""
    shifted = axis_rule(axis_param, none=none, arrays=(array,), default=default)

    def rule(site):
        if any(site.b(site.arg(p)) for p in varying):
            return per_example(site)
        a = site.arg(array)
        if any(site.b(o) for o in site.call.operands() if o is not a):
            return per_example(site)
        axis = site.arg(axis_param, ir.Const(default))
        call = site.call
        if isinstance(axis, ir.Const) and axis.value is None or \
                isinstance(axis, ir.Var) and none == "all":  # None, or possibly None
            call = shifted(site)
        else:
            call = site.with_arg(call, axis_param, site.rt(rt.batch_axis_in, axis, a))
        for p, d in shifted_too:
            call = site.with_arg(call, p, _shift_axis(site, site.arg(p, ir.Const(d))))
        return call
    return rule


def trailing(k, array="a", then=None):
    """A function of the last ``k`` axes of ``array`` that broadcasts over the leading
    ones: per example it is the call as it is (or ``then``'s rule of it), once every
    batched operand is checked to have ``k`` axes in each example (numpy's
    ``AxisError`` for one with fewer, never the batch axis as one of them).  A batched
    operand other than the arrays ``then`` aligns batches by ``per_example``."""
    axes = tuple(range(-k, 0))

    def rule(site):
        a = site.arg(array)
        if then is None and any(site.b(o) for o in site.call.operands() if o is not a):
            return per_example(site)
        for o in site.call.operands():
            if site.b(o):
                site.check(rt.batch_axis_in, ir.Const(axes), o)
        return site.call if then is None else then(site)
    return rule


def alias(fn):
    """The rule of ``fn`` applied to a call of a function that computes what ``fn``
    computes with the same parameters (``np.linalg.matmul`` and ``np.matmul``)."""
    def rule(site):
        site.call = ir.Call(fn, site.call.args, site.call.kwargs)
        return batch_rule(fn).rule(site)
    return rule


# -- running and NaN-skipping reductions, order statistics -----------------------------
defbatch(checked_axes(none="flat"), np.nancumsum, np.nancumprod)
defbatch(checked_axes(none="all"), np.nanprod)


defbatch(checked_axes(none="flat", default=-1, varying=("kth",)), np.partition, np.argpartition)
defbatch(checked_axes(array="p", default=-1, varying=("discont", "period")), np.unwrap)
defbatch(checked_axes(array="arr", none="flat", varying=("obj",)), np.delete)
defbatch(checked_axes(none="flat", varying=("condition",)), np.compress)
defbatch(per_example, np.insert, np.resize, np.gradient)

# -- layout --------------------------------------------------------------------------
defbatch(checked_axes(array="x", default=0), np.unstack)
defbatch(checked_axes(default=0, shifted_too=(("start", 0),)), np.rollaxis)
defbatch(checked_axes(array="ary", default=0, varying=("indices_or_sections",)),
         np.array_split)
defbatch(trailing(1), np.sort_complex)
defbatch(trailing(2, array="x"), np.matrix_transpose, np.linalg.matrix_transpose,
         np.linalg.svdvals, np.linalg.matrix_norm, np.linalg.cond, np.linalg.trace,
         np.linalg.diagonal)
defbatch(trailing(1, array="x1", then=alias(np.matmul)), np.linalg.matmul)
defbatch(trailing(1, array="x1", then=alias(np.vecdot)), np.linalg.vecdot)
defbatch(alias(np.vstack), *[f for f in (getattr(np, "row_stack", None),) if f is not None])
defbatch(alias(np.asarray), np.asanyarray)
defbatch(alias(np.tensordot), np.linalg.tensordot)


def astype(site):
    """``np.astype(x, dtype)``, ``np.longdouble(x)``: an elementwise cast, the batch kept."""
    return site.call


defbatch(astype, np.astype, np.longdouble)


def broadcast_arrays(site):
    """``np.broadcast_arrays(*args)`` of every example: every operand broadcast over the
    batch and aligned against the others (size-1 axes after the batch axis), so numpy
    broadcasts the per-example shapes; each result is batched."""
    viewed = view_others(site)
    return ir.Call(np.broadcast_arrays, tuple(aligned_operands(site, list(viewed.args))),
                   viewed.kwargs)


defbatch(broadcast_arrays, np.broadcast_arrays)


def pad(site):
    """``np.pad(array, pad_width, ...)`` of every example: ``pad_width`` read per example
    (``rt.batch_pad_width``: numpy's broadcast to one pair per axis) with ``(0, 0)`` for
    the batch axis; every mode pads each axis from values along that axis only, so the
    examples never mix.  Per-axis ``constant_values``/``end_values``/``stat_length``, a
    batched width or a callable mode batch by ``per_example``."""
    array, width = site.arg("array"), site.arg("pad_width")
    mode = site.arg("mode", ir.Const("constant"))
    kw = dict(site.call.kwargs)
    scalar_options = all(isinstance(v, ir.Const) and np.ndim(v.value) == 0
                         for k, v in kw.items() if k not in ("mode", "pad_width"))
    if site.b(width) or not site.b(array) or not scalar_options or \
            not (isinstance(mode, ir.Const) and isinstance(mode.value, str)):
        return per_example(site)
    return site.with_arg(site.call, "pad_width", site.rt(rt.batch_pad_width, array, width))


defbatch(pad, np.pad)


def spaced(site):
    """``np.linspace``/``logspace``/``geomspace(start, stop, num, ..., axis=k)`` of every
    example: numpy takes array ends and puts the ``num`` samples on ``axis`` of the
    result (rank of the ends + 1), so the ends are aligned against each other and
    ``axis`` is shifted past the batch (negative axes count from the end and stay); a
    batched ``num`` changes each example's shape and is refused."""
    num = site.arg("num")
    if num is not None and site.b(num):
        raise site.tr.error(f"np.{site.fn.__name__} with a number of samples that differs "
                            f"per example (a shape that differs per example)", site.loc)
    start, stop = site.arg("start"), site.arg("stop")
    a, b = aligned_operands(site, [start, stop])
    call = site.with_arg(site.with_arg(site.call, "start", a), "stop", b)
    if site.b(site.arg("base")) or not _const(site.arg("retstep", ir.Const(False)), False):
        return per_example(site)
    axis = site.arg("axis", ir.Const(0))
    return site.with_arg(call, "axis", _shift_axis(site, axis))


def _shift_axis(site, axis):
    if isinstance(axis, ir.Const):
        return ir.Const(rt.batch_axis(axis.value))
    return site.rt(rt.batch_axis, axis)


defbatch(spaced, np.linspace, np.logspace, np.geomspace)

# -- np.fft -----------------------------------------------------------------------------
defbatch(checked_axes(default=-1), np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft,
         np.fft.hfft, np.fft.ihfft)


def fft_axes(default):
    """``np.fft.fft2``/``fftn``/``fftshift``... of every example: ``axes`` resolved
    against the example (``rt.batch_axis_in``); ``axes=None`` means every per-example
    axis (``fftn`` with ``s=`` given transforms the last ``len(s)`` axes)."""
    def rule(site):
        a = site.arg("a") if "a" in site.params() else site.arg("x")
        if not site.b(a):
            return per_example(site)
        axes = site.arg("axes", ir.Const(default))
        s = site.arg("s")
        if isinstance(axes, ir.Const) and axes.value is None:
            if s is None or _const(s, None):
                return site.with_arg(site.call, "axes", site.rt(rt.batch_axes, a))
            if not isinstance(s, ir.Const):
                return per_example(site)
            axes = ir.Const(tuple(range(-len(s.value), 0)))
        return site.with_arg(site.call, "axes", site.rt(rt.batch_axis_in, axes, a))
    return rule


defbatch(fft_axes((-2, -1)), np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2)
defbatch(fft_axes(None), np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn,
         np.fft.fftshift, np.fft.ifftshift)


# -- derivative helpers (vmap of derivative code: vmap(grad(f))) --------------------------
def shape_reads(*names):
    """A helper that reads its operands ``names`` only for their shape and dtype
    (``rt.scan_slots(x, axis)``, ``rt.fft_axes(a, s, axes)``...): the same result for
    every example, computed once from a stand-in of one example (``rt.batch_stand_in``)
    for each of them; any other operand batched is refused (its values would differ
    per example)."""
    def rule(site):
        call = site.call
        for name in names:
            a = site.arg(name)
            if a is not None and site.b(a):
                call = site.with_arg(call, name, site.rt(rt.batch_stand_in, a))
        if any(site.b(a) for a in call.operands()):
            raise site.tr.error(f"{site.fn.__name__} of values that differ per example",
                                site.loc)
        return call
    return rule


for _fn, _names in ((rt.scan_slots, ("x",)), (rt.poly_factors, ("p",)),
                    (rt.poly_slots, ("a", "ans")), (rt.fft_size, ("a",)),
                    (rt.irfft_weights, ("g",)), (rt.fft_axes, ("a",)),
                    (rt.fft_rest_axes, ("a",)), (rt.fft_last_axis, ("a",)),
                    (rt.rfftn_sizes, ("g", "a")), (rt.shapes_of, ("arrays",)),
                    (rt.delete_kept, ("arr",)),
                    (rt.half_lower_mask, ("x",)), (rt.conv_pad, ("a", "v")),
                    (rt.resize_source, ("a",)), (rt.scan_pad_widths, ("x",)),
                    (rt.split_axis, ("ary",)), (rt.vander_exponents, ("x",)),
                    (rt.cov_layout, ("m",)), (rt.insert_sources, ("arr", "values"))):
    defbatch(shape_reads(*_names), _fn, unbatched_result=True)
# the index arrays of an array's triangles and diagonal: functions of its shape alone
for _fn, _names in ((np.triu_indices_from, ("arr",)), (np.tril_indices_from, ("arr",)),
                    (np.diag_indices_from, ("arr",))):
    defbatch(shape_reads(*_names), _fn, unbatched_result=True)
# fit_to(v, x, axes): v cropped or zero-padded to x's lengths along axes; along the batch
# axis both have the batch size, so every axis of the batched arrays (None) is right too
defbatch(axis_rule(arrays=("v", "x"), axis_param="axes", none="keep"), rt.fit_to)
# the cotangent of np.linspace's ends: the sum over the samples, then summed to the shape of
# an end that may be the same for every example (one call per example keeps that right)
defbatch(per_example, rt.linspace_vjp)
# numpy's lstsq solves one system per call (no stacks): once per example
defbatch(per_example, np.linalg.lstsq)
# np.bincount's length is the largest index's (per example): once per example, and results
# of different lengths are refused when stacked
defbatch(per_example, np.bincount)
