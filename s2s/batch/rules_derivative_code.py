"""Batching rules of the calls generated derivative code makes: the VJPs and
JVPs of numpy functions (``rt.cumsum_vjp``, ``cumprod_vjp``/``_jvp``, ``transpose_vjp``,
``reshape_vjp``, ``astype_vjp``/``_jvp``, ``sort_jvp``, ``trace_vjp``, ``average_vjp``/``_jvp``,
``unpack_vjp``, ``array_jvp``/``_vjp``, ``apply_linear`` per example) and in-place writes as values
(``index_writes.index_set``/``index_updated``, their VJPs, ``read_copy``/``read_checked``).

Unbatched cotangents and primals are broadcast over the batch (``rt.batch_view``); an
axis is shifted past the batch, and ``axis=None`` works on the flattened examples.  An
in-place write whose index differs per example is refused (a ``BatchingError``).
"""
from __future__ import annotations

import numpy as np

import s2s_runtime as rt
from s2s_runtime import index_writes

from ..ir import nodes as ir
from .rules_core import axis_rule, same
from .table import defbatch, per_example


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
                   default=0, axes_of="a"), rt.trace_vjp)  # (the axes are a's: g lacks two)
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
# apply_linear(op, x, like, spec): a linear map chosen by the name op and like's shape
# (np.diff's, the median's and quantiles' interpolation, np.pad's...): one call per example
defbatch(per_example, rt.apply_linear)


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


# -- derivative helpers with no batched form yet: once per example (``rt.batch_loop``) ----
# (the linear-algebra rules' masks, shape helpers and checks, the stacking VJPs, and the
# second-order helpers of products and norms); ``eye_like`` reads only the last axis of
# its operand, which the batch (in front) leaves alone: the same identity for every example
def joined_vjp(batched_form):
    """``hstack_vjp(g, tup)`` / ``vstack_vjp(g, tup)`` of every example: ``g`` cut where
    the batched items were joined (``rt.batch_hstack_vjp``/``batch_vstack_vjp``, the
    transposes of vmap's joins), each operand the batch lacks lifted first."""
    def rule(site):
        g, tup = site.call.args
        g = g if site.b(g) else site.rt(rt.batch_view, g, site.n, batched=True)
        tup = tup if site.b(tup) else site.rt(rt.batch_lift, tup, site.n, batched=True)
        return ir.Call(batched_form, (g, tup))
    return rule


defbatch(joined_vjp(rt.batch_hstack_vjp), rt.hstack_vjp)
defbatch(joined_vjp(rt.batch_vstack_vjp), rt.vstack_vjp)


defbatch(per_example, rt.diag_vjp, rt.degenerate_nan,
         rt.svd_checked, rt.qr_checked, rt.strict_lower_mask, rt.nonempty_or_zeros,
         rt.nonempty_or_zeros_t, rt.prod_hvp,
         rt.cumprod_hvp, rt.norm_vjp_dans, rt.norm_vjp_dans_transpose, rt.norm_vjp_dx)
defbatch(same, rt.eye_like, unbatched_result=True)
# (the Cholesky rule's conj_lower, and the helpers of np.partition, np.interp,
# np.trapezoid, np.prod's initial=, np.rollaxis and np.vecdot that read values; those
# that read only shapes are rules_numpy's shape_reads)
defbatch(per_example, rt.conj_lower, rt.matching_permutation, rt.interp_layout,
         rt.trapezoid_weights, rt.initial_or_one, rt.rollaxis_destination,
         rt.contraction_axis)
# (the derivative helpers of np.linalg.multi_dot, which vmap reads as a chain of np.dot
# (rules/numpy_code/products.py); np.linalg.matrix_rank, which has no derivative)
defbatch(per_example, rt.multi_dot_vjp, rt.multi_dot_jvp, rt.multi_dot_vjp_dx,
         rt.multi_dot_jvp2, np.linalg.matrix_rank)
# (the transposes of vmap's joins, met by vmap of gradient code of batched code)
defbatch(per_example, rt.batch_vstack_vjp, rt.batch_hstack_vjp)
