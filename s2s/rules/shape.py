"""Indexing and the structural primitives.

Each VJP undoes the data movement: a reshape is undone by a reshape, a
transpose by the inverse transpose, a concatenation by a split, a
broadcast by a sum (``unbroadcast``), a sort by scattering through the
sort permutation.  Helpers are in ``s2s_runtime.vjps``.
"""
import operator

import numpy as np

from s2s_runtime import (array_vjp, astype_vjp, build, concatenate_vjp, diag_vjp, full_vjp,
                         getitem_vjp, hstack_vjp, linspace_vjp, repeat_vjp, reshape_vjp,
                         sort_vjp, split_vjp, stack_vjp, take_vjp, tile_vjp, trace_vjp,
                         transpose_vjp, unbroadcast, vstack_vjp)

from .registry import defvjp

# x[index]: g scattered back into zeros shaped like x
defvjp(operator.getitem, lambda g, ans, x, index: getitem_vjp(g, x, index))
defvjp(np.take, lambda g, ans, a, indices, axis=None, out=None, mode="raise":
       take_vjp(g, a, indices, axis, mode))
# reshapes of every kind: a_bar = reshape(g, shape(a))
defvjp(np.reshape, lambda g, ans, a, shape=None, order="C": reshape_vjp(g, a, order))
defvjp(np.ravel, lambda g, ans, a, order="C": reshape_vjp(g, a, order))
defvjp(np.squeeze, lambda g, ans, a, axis=None: reshape_vjp(g, a))
defvjp(np.expand_dims, lambda g, ans, a, axis: reshape_vjp(g, a))
defvjp(build.flatten, lambda g, ans, x: reshape_vjp(g, x))
# x.item(), x.astype(dt): g back in x's shape and dtype
defvjp(build.item, lambda g, ans, x: astype_vjp(g, x))
defvjp(build.astype, lambda g, ans, x, dtype: astype_vjp(g, x))
# permutations of axes: the inverse permutation
defvjp(np.transpose, lambda g, ans, a, axes=None: transpose_vjp(g, a, axes))
defvjp(np.swapaxes, lambda g, ans, a, axis1, axis2: np.swapaxes(g, axis1, axis2))
defvjp(np.moveaxis, lambda g, ans, a, source, destination: np.moveaxis(g, destination, source))
defvjp(np.flip, lambda g, ans, m, axis=None: np.flip(g, axis))
# copies and conversions
defvjp(np.copy, lambda g, ans, a, order="K", subok=False: unbroadcast(g, a))
defvjp(np.array, lambda g, ans, object, dtype=None, copy=True, order="K", subok=False, ndmin=0,
       ndmax=0, like=None: array_vjp(g, object))
defvjp(np.asarray, lambda g, ans, a, dtype=None, order=None, device=None, copy=None, like=None:
       array_vjp(g, a))
# joining and splitting: the cotangent of a sequence argument is a sequence
defvjp(np.concatenate, lambda g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind":
       concatenate_vjp(g, arrays, axis))
defvjp(np.stack, lambda g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind":
       stack_vjp(g, arrays, axis))
defvjp(np.hstack, lambda g, ans, tup, dtype=None, casting="same_kind": hstack_vjp(g, tup))
defvjp(np.vstack, lambda g, ans, tup, dtype=None, casting="same_kind": vstack_vjp(g, tup))
defvjp(np.split, lambda g, ans, ary, indices_or_sections, axis=0:
       split_vjp(g, ary, indices_or_sections, axis), container_result=True)
# broadcasting and filling: the sum over the copies
defvjp(np.broadcast_to, lambda g, ans, array, shape, subok=False: unbroadcast(g, array))
defvjp(np.full, None, lambda g, ans, shape, fill_value, dtype=None, order="C", device=None,
       like=None: full_vjp(g, fill_value))
defvjp(np.full_like, None, lambda g, ans, a, fill_value, dtype=None, order="K", subok=True,
       shape=None, device=None: full_vjp(g, fill_value))
defvjp(np.tile, lambda g, ans, A, reps: tile_vjp(g, A, reps))
defvjp(np.repeat, lambda g, ans, a, repeats, axis=None: repeat_vjp(g, a, repeats, axis))
# linspace: y_i = start (1 - t_i) + stop t_i
defvjp(np.linspace,
       lambda g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
       device=None: linspace_vjp(g, start, stop, num, endpoint, retstep, axis, 0),
       lambda g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
       device=None: linspace_vjp(g, start, stop, num, endpoint, retstep, axis, 1))
# diagonals
defvjp(np.diag, lambda g, ans, v, k=0: diag_vjp(g, v, k))
defvjp(np.diagonal, lambda g, ans, a, offset=0, axis1=0, axis2=1:
       trace_vjp(g, a, offset, axis1, axis2))
# sort: g scattered back through the (stable) sort permutation
defvjp(np.sort, lambda g, ans, a, axis=-1, kind=None, order=None, stable=None:
       sort_vjp(g, a, axis))
