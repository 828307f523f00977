"""Derivatives of the runtime helpers themselves (``s2s/rules/runtime_rules.py``).

Generated derivative code calls the helpers of ``adjoint``, ``vjps``,
``shape_vjps`` and ``jvps*``; differentiating that code again (grad of grad,
jvp of grad = Hessian-vector products) needs their derivatives.  Almost all
of them are *linear* in their cotangent/tangent argument ``g`` (``t``) and
use the other arguments only for shapes, indices and dtypes.  The JVP of
such a helper is the helper applied to the tangent; its VJP is its
*transpose* (adjoint), which is what the functions here compute:
``<ct, H(g)> == <H^T(ct), g>`` for every ``g`` (no conjugation: JAX's
convention for linear maps).  Cotangents of ``None`` (symbolic zero)
entries of containers are zeros.

Plain numpy; this package never imports ``s2s``.
"""
from __future__ import annotations

import numpy as np

from .adjoint import broadcast_like, unbroadcast, zeros_like
from .vjps import _sum_to


def _is_container(x) -> bool:
    return isinstance(x, (tuple, list, dict))


def add_vjp(ct, x):
    """Cotangent of ``x`` in ``add(a, b) = a + b``: ``ct`` (summed to ``x``'s shape for
    arrays; containers pass through unchanged)."""
    if _is_container(x) or _is_container(ct):
        return ct
    return unbroadcast(ct, x)


def add_jvp(t, ans):
    """Tangent contribution of one operand of ``add``: ``t`` broadcast to ``ans``;
    a container tangent as it is (the forward transform sums the contributions of
    ``add``'s operands with ``add`` itself, leaf by leaf, as its result may be one)."""
    if _is_container(t) or _is_container(ans):
        return t
    return broadcast_like(t, ans)


def array_vjp_transpose(ct, g, x):
    """Transpose of ``g -> array_vjp(g, x)`` (which splits ``g`` into the nested list ``x``):
    the pieces of ``ct`` put back together, shaped like ``g`` (``None`` pieces are zero)."""
    if isinstance(x, (list, tuple)):
        g = np.asarray(g)
        parts = [array_vjp_transpose(None if ct is None else ct[i], g[i], v)
                 for i, v in enumerate(x)]
        return np.stack([np.broadcast_to(p, g.shape[1:]) for p in parts]) if parts \
            else np.zeros(g.shape)
    if ct is None:
        return zeros_like(g)
    return broadcast_like(ct, g)


def concatenate_vjp_transpose(ct, g, xs, axis=0):
    """Transpose of ``g -> concatenate_vjp(g, xs, axis)`` (a split of ``g``): the pieces
    of ``ct`` concatenated back, shaped like ``g`` (``None`` pieces are zero)."""
    gshape = np.shape(g)
    if axis is None:
        parts = [np.zeros(np.size(x)) if c is None else np.reshape(c, -1)
                 for c, x in zip(ct, xs)]
        return np.reshape(np.concatenate(parts), gshape)
    parts = []
    for c, x in zip(ct, xs):
        shape = list(gshape)
        shape[axis] = np.shape(x)[axis]
        parts.append(np.zeros(shape) if c is None else np.reshape(c, shape))
    return np.concatenate(parts, axis=axis)


def getitem_vjp_transpose(ct, g, x, index):
    """Transpose of ``g -> getitem_vjp(g, x, index)`` (a scatter-add into zeros): the
    gather ``ct[index]`` (repeated fancy indices read the same entry), summed to ``g``'s
    shape when ``g`` was broadcast into the slot."""
    if _is_container(x):
        return ct[index]
    return unbroadcast(np.asarray(ct)[index], g)


def stack_vjp_transpose(ct, g, xs, axis=0):
    """Transpose of ``g -> stack_vjp(g, xs, axis)`` (slices of ``g`` along ``axis``): the
    slices of ``ct`` stacked back along ``axis`` (broadcast where an ``x`` was smaller)."""
    g = np.asarray(g)
    if isinstance(xs, (list, tuple)):
        slot = np.take(g, 0, axis=axis).shape
        parts = [np.zeros(slot) if c is None else np.broadcast_to(c, slot) for c in ct]
        return np.stack(parts, axis=axis)
    return np.moveaxis(np.asarray(ct), 0, axis)


def unpack_vjp_transpose(ct, cts, x):
    """Transpose of ``cts -> unpack_vjp(cts, x)`` (packing the targets' cotangents into
    ``x``'s structure): the entries of ``ct``, one per target."""
    if isinstance(x, (tuple, list)):
        return tuple(ct[i] for i in range(len(cts)))
    return tuple(None if c is None else unbroadcast(np.asarray(ct)[i], c)
                 for i, c in enumerate(cts))


def unreduce_transpose(ct, g, x, axis=None, keepdims=False):
    """Transpose of ``g -> unreduce(g, x, axis, keepdims)`` (a broadcast over the reduced
    axes): ``ct`` summed over those axes, shaped like ``g``."""
    gshape = np.shape(g)
    shape = np.shape(x)
    expanded = gshape
    if axis is not None and not keepdims and shape:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        expanded = np.expand_dims(np.zeros(gshape), tuple(sorted(a % len(shape) for a in axes))).shape
    out = np.reshape(_sum_to(ct, expanded), gshape)
    return out[()] if not gshape else out


def trace_vjp_transpose(ct, g, offset=0, axis1=0, axis2=1):
    """Transpose of ``g -> trace_vjp(g, a, offset, axis1, axis2)`` (``g`` written on a
    diagonal): the diagonal of ``ct`` (``np.diagonal``), summed along it when ``g`` was
    broadcast over the diagonal (``np.trace``)."""
    d = np.diagonal(ct, offset, axis1, axis2)
    if np.ndim(d) != np.ndim(g):
        d = np.sum(d, axis=-1)
    return d if np.ndim(g) else d[()]


def _pieces(ct, tup):
    return [np.zeros(np.shape(x)) if c is None else np.reshape(c, np.shape(x))
            for c, x in zip(ct, tup)]


def hstack_vjp_transpose(ct, g, tup):
    """Transpose of ``g -> hstack_vjp(g, tup)`` (a split of ``g``): the pieces of ``ct``
    joined back with ``np.hstack`` (``None`` pieces are zero)."""
    return np.reshape(np.hstack(_pieces(ct, tup)), np.shape(g))


def vstack_vjp_transpose(ct, g, tup):
    """Transpose of ``g -> vstack_vjp(g, tup)``: the pieces of ``ct`` joined back with
    ``np.vstack`` (``None`` pieces are zero)."""
    return np.reshape(np.vstack(_pieces(ct, tup)), np.shape(g))
