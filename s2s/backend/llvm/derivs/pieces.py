"""The cotangents of joined arrays: ``g`` cut back into one piece per array joined.

* ``concatenate_vjp(g, xs, axis)``: the slab of ``g`` along ``axis`` that each ``x`` filled;
* ``stack_vjp(g, xs, axis)``: ``g``'s slices ``k`` along ``axis``;
* ``vstack_vjp(g, tup)``: row blocks of ``g`` (a 1-D ``x`` was one row);
* ``hstack_vjp(g, tup)``: slabs along axis 1 (axis 0 for 1-D arrays);
* ``batch_hstack_vjp(g, xs)``, ``batch_vstack_vjp(g, xs)`` (vmap's forms of the two, the
  batch in front of ``g`` and of every ``x``): slabs along axis 1 (axis 2 where every
  example has two axes or more), and row blocks along axis 1 (an example of one axis
  was one row).

``xs`` is a tuple (or list literal) of arrays, ``axis`` a constant integer; each piece is
a copy of its part of ``g`` (a cotangent the adjoint may later update in place; real ``g`` only), and the
result a tuple with one piece per array, shaped like it (the tuple the runtime helpers
return; generated code reads it by constant index).  A tuple of pieces has no plain
Python form the jit compiles (its lists hold numbers), hence a lowering.
"""
from __future__ import annotations

import s2s_runtime as rt
from llvmlite import ir as ll

from ..ops.calls import register
from ..typing import types as T
from ..values import arrays as A


class Pieces:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) < 2 or not isinstance(types[0], T.Array) or types[0].dtype == "c16":
            return None
        g, xs = types[0], types[1]
        if not isinstance(xs, T.Tuple) or not xs.items or \
                not all(isinstance(x, T.Array) and x.ndim >= 1 for x in xs.items):
            return None
        if self._axis(fn, g, xs, atoms) is None:
            return None
        return T.Tuple(tuple(T.Array(g.dtype, x.ndim) for x in xs.items))

    def _axis(self, fn, g, xs, atoms):
        """The axis of ``g`` the pieces are cut along (normalised), or None (refused)."""
        if fn in (rt.concatenate_vjp, rt.stack_vjp):
            axis = getattr(atoms[2], "value", None) if len(atoms) > 2 else 0
            if type(axis) is not int or not -g.ndim <= axis < g.ndim:
                return None
            return axis % g.ndim
        if len(atoms) != 2:
            return None
        if fn is rt.vstack_vjp:
            return 0
        if fn is rt.hstack_vjp:
            return 0 if xs.items[0].ndim == 1 else 1
        if min(x.ndim for x in xs.items) < 2:  # (a batch of numbers: never joined so)
            return None
        if fn is rt.batch_vstack_vjp:
            return 1
        return 1 if min(x.ndim for x in xs.items) <= 2 else 2  # batch_hstack_vjp

    def lower(self, L, fn, vals, kw, rtype):
        (g, gt), (xs, xt) = vals[0], vals[1]
        axis = self._axis(fn, gt, xt, L.call_atoms[0])
        b = L.b
        data, block = b.extract_value(g, 0), b.extract_value(g, 1)
        shape, strides = A.shape_list(L, g, gt), A.strides_list(L, g, gt)
        out = ll.Constant(rtype.llvm(), None)
        at = A.ZERO
        for k, (x_t, piece_t) in enumerate(zip(xt.items, rtype.items)):
            x = b.extract_value(xs, k)
            drop = fn is rt.stack_vjp or (fn is rt.vstack_vjp and x_t.ndim == 1) or (
                fn is rt.batch_vstack_vjp and x_t.ndim == 2)
            n = A.ONE if drop else A.shape_of(L, x, axis)
            start = b.gep(data, [b.mul(at, strides[axis])])
            if drop:
                p_shape = shape[:axis] + shape[axis + 1:]
                p_strides = strides[:axis] + strides[axis + 1:]
            else:
                p_shape = shape[:axis] + [n] + shape[axis + 1:]
                p_strides = list(strides)
            view_t = T.Array(gt.dtype, len(p_shape))
            piece = A.make(L, view_t, start, block, p_shape, p_strides)
            copied = A.copy(L, piece, view_t)
            out = b.insert_value(out, copied, k)
            at = b.add(at, n)
        return out


register(Pieces(), rt.concatenate_vjp, rt.stack_vjp, rt.vstack_vjp, rt.hstack_vjp,
         rt.batch_hstack_vjp, rt.batch_vstack_vjp)
