"""Indexing and the structural primitives.

Each VJP undoes the data movement: a reshape is undone by a reshape, a
transpose by the inverse transpose, a concatenation by a split, a
broadcast by a sum (``unbroadcast``), a sort by scattering through the
sort permutation.  Helpers are in ``s2s_runtime.vjps``.

The JVPs do the data movement again, on the tangent: almost all of these
primitives are linear, so the JVP is the primitive applied to ``t`` with the
same non-differentiable arguments (views where the primal gives a view,
copies where it copies).  Helpers in ``s2s_runtime.jvps_arrays``.
"""
import operator

import numpy as np

from s2s_runtime import (array_jvp, array_vjp, astype_jvp, astype_vjp, batch_gathered_value,
                         batch_value, build, concatenate_vjp,
                         diag_vjp, full_vjp, getitem_vjp, hstack_vjp, linspace_vjp, repeat_vjp,
                         reshape_vjp, sort_jvp, sort_vjp, split_vjp, stack_vjp, take_vjp,
                         tile_vjp, trace_vjp, transpose_vjp, unbroadcast, vstack_vjp,
                         zeros_like)

from .registry import defjvp, defprops, defvjp

# x[index]: g scattered back into zeros shaped like x; an index (a key, a position that
# may come from a loop over differentiated values) is piecewise constant: zero derivative
defvjp(operator.getitem, lambda g, ans, x, index: getitem_vjp(g, x, index),
       lambda g, ans, x, index: zeros_like(index))
defjvp(operator.getitem, lambda t, ans, x, index: t[index],
       lambda t, ans, x, index: zeros_like(ans))
defvjp(np.take, lambda g, ans, a, indices, axis=None, out=None, mode="raise":
       take_vjp(g, a, indices, axis, mode))
defjvp(np.take, lambda t, ans, a, indices, axis=None, out=None, mode="raise":
       np.take(t, indices, axis=axis, mode=mode))
# reshapes of every kind: a_bar = reshape(g, shape(a))
defvjp(np.reshape, lambda g, ans, a, shape=None, order="C": reshape_vjp(g, a, order))
defjvp(np.reshape, lambda t, ans, a, shape=None, order="C": np.reshape(t, shape, order=order))
defvjp(np.ravel, lambda g, ans, a, order="C": reshape_vjp(g, a, order))
defjvp(np.ravel, lambda t, ans, a, order="C": np.ravel(t, order))
defvjp(np.squeeze, lambda g, ans, a, axis=None: reshape_vjp(g, a))
defjvp(np.squeeze, lambda t, ans, a, axis=None: np.squeeze(t, axis))
defvjp(np.expand_dims, lambda g, ans, a, axis: reshape_vjp(g, a))
defjvp(np.expand_dims, lambda t, ans, a, axis: np.expand_dims(t, axis))
defvjp(build.flatten, lambda g, ans, x: reshape_vjp(g, x))
defjvp(build.flatten, lambda t, ans, x: build.flatten(t))
# x.item(), x.astype(dt): g back in x's shape and dtype
defvjp(build.item, lambda g, ans, x: astype_vjp(g, x))
defjvp(build.item, lambda t, ans, x: build.item(t))
defvjp(build.astype, lambda g, ans, x, dtype: astype_vjp(g, x))
defjvp(build.astype, lambda t, ans, x, dtype: astype_jvp(t, ans))
# permutations of axes: the inverse permutation
defvjp(np.transpose, lambda g, ans, a, axes=None: transpose_vjp(g, a, axes))
defjvp(np.transpose, lambda t, ans, a, axes=None: np.transpose(t, axes))
defvjp(np.swapaxes, lambda g, ans, a, axis1, axis2: np.swapaxes(g, axis1, axis2))
defjvp(np.swapaxes, lambda t, ans, a, axis1, axis2: np.swapaxes(t, axis1, axis2))
defvjp(np.moveaxis, lambda g, ans, a, source, destination: np.moveaxis(g, destination, source))
defjvp(np.moveaxis, lambda t, ans, a, source, destination:
       np.moveaxis(t, source, destination))
defvjp(np.flip, lambda g, ans, m, axis=None: np.flip(g, axis))
defjvp(np.flip, lambda t, ans, m, axis=None: np.flip(t, axis))
# copies and conversions
defvjp(np.copy, lambda g, ans, a, order="K", subok=False: unbroadcast(g, a))
defjvp(np.copy, lambda t, ans, a, order="K", subok=False: np.copy(t, order))
defvjp(np.array, lambda g, ans, object, dtype=None, copy=True, order="K", subok=False, ndmin=0,
       ndmax=0, like=None: array_vjp(np.reshape(g, np.shape(object)), object))  # ndmin axes off
defjvp(np.array, lambda t, ans, object, dtype=None, copy=True, order="K", subok=False, ndmin=0,
       ndmax=0, like=None: array_jvp(t, ans, object, copy, ndmin))
defvjp(np.asarray, lambda g, ans, a, dtype=None, order=None, device=None, copy=None, like=None:
       array_vjp(g, a))
defjvp(np.asarray, lambda t, ans, a, dtype=None, order=None, device=None, copy=None, like=None:
       array_jvp(t, ans, a, copy, 0))
# joining and splitting: the cotangent of a sequence argument is a sequence
defvjp(np.concatenate, lambda g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind":
       concatenate_vjp(g, arrays, axis))
defjvp(np.concatenate, lambda t, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind":
       np.concatenate(t, axis))
defvjp(np.stack, lambda g, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind":
       stack_vjp(g, arrays, axis))
defjvp(np.stack, lambda t, ans, arrays, axis=0, out=None, dtype=None, casting="same_kind":
       np.stack(t, axis))
defvjp(np.hstack, lambda g, ans, tup, dtype=None, casting="same_kind": hstack_vjp(g, tup))
defjvp(np.hstack, lambda t, ans, tup, dtype=None, casting="same_kind": np.hstack(t))
defvjp(np.vstack, lambda g, ans, tup, dtype=None, casting="same_kind": vstack_vjp(g, tup))
defjvp(np.vstack, lambda t, ans, tup, dtype=None, casting="same_kind": np.vstack(t))
defvjp(np.split, lambda g, ans, ary, indices_or_sections, axis=0:
       split_vjp(g, ary, indices_or_sections, axis), container_result=True)
defjvp(np.split, lambda t, ans, ary, indices_or_sections, axis=0:
       np.split(t, indices_or_sections, axis))
defprops(np.split, sequence=True)
# broadcasting and filling: the sum over the copies
defvjp(np.broadcast_to, lambda g, ans, array, shape, subok=False: unbroadcast(g, array))
defjvp(np.broadcast_to, lambda t, ans, array, shape, subok=False: np.broadcast_to(t, shape))
defvjp(np.full, None, lambda g, ans, shape, fill_value, dtype=None, order="C", device=None,
       like=None: full_vjp(g, fill_value))
defjvp(np.full, None, lambda t, ans, shape, fill_value, dtype=None, order="C", device=None,
       like=None: np.full(shape, t))
# (``a`` gives only the shape and dtype: a zero derivative, so an active ``a`` is fine)
defvjp(np.full_like, lambda g, ans, a, fill_value, dtype=None, order="K", subok=True,
       shape=None, device=None: zeros_like(a),
       lambda g, ans, a, fill_value, dtype=None, order="K", subok=True,
       shape=None, device=None: full_vjp(g, fill_value))
defjvp(np.full_like, lambda t, ans, a, fill_value, dtype=None, order="K", subok=True,
       shape=None, device=None: zeros_like(ans),
       lambda t, ans, a, fill_value, dtype=None, order="K", subok=True,
       shape=None, device=None: np.full(np.shape(ans), t))
defvjp(np.tile, lambda g, ans, A, reps: tile_vjp(g, A, reps))
defjvp(np.tile, lambda t, ans, A, reps: np.tile(t, reps))
defvjp(np.repeat, lambda g, ans, a, repeats, axis=None: repeat_vjp(g, a, repeats, axis))
defjvp(np.repeat, lambda t, ans, a, repeats, axis=None: np.repeat(t, repeats, axis))
# linspace: y_i = start (1 - t_i) + stop t_i
defvjp(np.linspace,
       lambda g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
       device=None: linspace_vjp(g, start, stop, num, endpoint, retstep, axis, 0),
       lambda g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
       device=None: linspace_vjp(g, start, stop, num, endpoint, retstep, axis, 1))
defjvp(np.linspace,
       lambda t, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
       device=None: np.linspace(t, np.zeros_like(stop), num=num, endpoint=endpoint,
                                retstep=retstep, axis=axis),
       lambda t, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
       device=None: np.linspace(np.zeros_like(start), t, num=num, endpoint=endpoint,
                                retstep=retstep, axis=axis))
# diagonals
defvjp(np.diag, lambda g, ans, v, k=0: diag_vjp(g, v, k))
defjvp(np.diag, lambda t, ans, v, k=0: np.diag(t, k))
defvjp(np.diagonal, lambda g, ans, a, offset=0, axis1=0, axis2=1:
       trace_vjp(g, a, offset, axis1, axis2))
defjvp(np.diagonal, lambda t, ans, a, offset=0, axis1=0, axis2=1:
       np.diagonal(t, offset, axis1, axis2))
# sort: g scattered back through the (stable) sort permutation
defvjp(np.sort, lambda g, ans, a, axis=-1, kind=None, order=None, stable=None:
       sort_vjp(g, a, axis))
defjvp(np.sort, lambda t, ans, a, axis=-1, kind=None, order=None, stable=None:
       sort_jvp(t, a, axis))


# Views: the result may share memory with the first argument, so a write into one may be
# seen through the other (reverse mode's in-place analysis, forward mode, the LLVM check
# of writes into read-only arguments all read this).
defprops(operator.getitem, np.reshape, np.transpose, np.ravel, np.squeeze, np.expand_dims,
         np.swapaxes, np.moveaxis, np.asarray, np.broadcast_to, np.real, np.imag,
         np.diagonal, np.atleast_1d, np.atleast_2d, np.atleast_3d, getattr, build.item,
         np.rollaxis, np.asanyarray, view=True)
defprops(*[f for f in (getattr(np, "matrix_transpose", None),  # numpy >= 2
                       getattr(np.linalg, "matrix_transpose", None)) if f], view=True)
# vmap's reads of a batched array return the read itself where each example is an array
# (a view of the source: a write through it changes the source, as in numpy)
defprops(batch_value, batch_gathered_value, view=True)
