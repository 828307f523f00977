"""numpy's array-manipulation routines beyond ``shape.py``'s core, and other functions
linear in their array arguments: rolls, flips and rotations, triangles, promotions,
joins and splits, gathers (take_along_axis, select, delete, extract, compress, partition,
resize, sort_complex), pad, append, trapezoid, logspace, geomspace, vander, interp,
np.astype, row_stack, gradient, insert, meshgrid, broadcast_arrays.

All are linear in their array arguments.  Where numpy has the transpose in one
call the VJP uses it (``roll`` by ``-shift``, ``rot90`` by ``-k``, ``tril`` of
``g``); otherwise it is a transpose op of ``apply_linear``
(``runtime/linear_ops.py``) or an existing helper (``reshape_vjp``,
``take_vjp``).  The JVP is the function applied to the tangent (its linear
part, for ``pad``/``append``).  Every template calls primitives with rules, so
derivatives of every order exist.
"""
import numpy as np

from s2s_runtime import (apply_linear, array_jvp, array_vjp, astype_jvp, astype_vjp,
                         broadcast_like, delete_kept, insert_sources, interp_layout, linspace_vjp,
                         matching_permutation, vander_exponents, reshape_vjp, resize_source,
                         rollaxis_destination, select_none, shapes_of, split_axis, take_vjp,
                         trapezoid_weights, unbroadcast, unreduce, vstack_vjp)

from .registry import defjvp, defprops, defvjp

# rolls, flips, rotations: the inverse movement
defvjp(np.roll, lambda g, ans, a, shift, axis=None: np.roll(g, np.negative(shift), axis))
defjvp(np.roll, lambda t, ans, a, shift, axis=None: np.roll(t, shift, axis))
defvjp(np.rollaxis, lambda g, ans, a, axis, start=0:
       np.moveaxis(g, rollaxis_destination(np.ndim(a), axis, start), axis))
defjvp(np.rollaxis, lambda t, ans, a, axis, start=0: np.rollaxis(t, axis, start))
defvjp(np.fliplr, lambda g, ans, m: np.fliplr(g))
defjvp(np.fliplr, lambda t, ans, m: np.fliplr(t))
defvjp(np.flipud, lambda g, ans, m: np.flipud(g))
defjvp(np.flipud, lambda t, ans, m: np.flipud(t))
defvjp(np.rot90, lambda g, ans, m, k=1, axes=(0, 1): np.rot90(g, np.negative(k), axes))
defjvp(np.rot90, lambda t, ans, m, k=1, axes=(0, 1): np.rot90(t, k, axes))
if hasattr(np, "matrix_transpose"):
    defvjp(np.matrix_transpose, lambda g, ans, x: np.matrix_transpose(g))
    defjvp(np.matrix_transpose, lambda t, ans, x: np.matrix_transpose(t))
# triangles: the same mask on g (a 1-D m was broadcast to rows: summed back)
defvjp(np.tril, lambda g, ans, m, k=0: unbroadcast(np.tril(g, k), m))
defjvp(np.tril, lambda t, ans, m, k=0: np.tril(t, k))
defvjp(np.triu, lambda g, ans, m, k=0: unbroadcast(np.triu(g, k), m))
defjvp(np.triu, lambda t, ans, m, k=0: np.triu(t, k))
# diagflat(v, k) = diag(ravel(v), k): v_bar = the k-th diagonal of g
defvjp(np.diagflat, lambda g, ans, v, k=0: np.reshape(np.diagonal(g, k), np.shape(v)))
defjvp(np.diagflat, lambda t, ans, v, k=0: np.diagflat(t, k))
# promotions (one array; several arrays return a tuple and do not bind)
for _f in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    defvjp(_f, lambda g, ans, ary: reshape_vjp(g, ary))
    defjvp(_f, lambda t, ans, ary: reshape_vjp(t, ans))  # (t promoted like ary)
# conversions (as np.asarray; ascontiguousarray/asfortranarray give at least 1-D)
defvjp(np.asanyarray, lambda g, ans, a, dtype=None, order=None, device=None, copy=None,
       like=None: array_vjp(g, a))
defjvp(np.asanyarray, lambda t, ans, a, dtype=None, order=None, device=None, copy=None,
       like=None: array_jvp(t, ans, a, copy, 0))
for _f in (np.ascontiguousarray, np.asfortranarray):
    defvjp(_f, lambda g, ans, a, dtype=None, like=None: array_vjp(np.reshape(g, np.shape(a)), a))
    defjvp(_f, lambda t, ans, a, dtype=None, like=None: array_jvp(t, ans, a, None, 1))
# joins: g split back into the pieces
defvjp(np.dstack, lambda g, ans, tup: apply_linear("join_T", g, tup, ("dstack", tup)))
defjvp(np.dstack, lambda t, ans, tup: np.dstack(t))
defvjp(np.column_stack, lambda g, ans, tup:
       apply_linear("join_T", g, tup, ("column_stack", tup)))
defjvp(np.column_stack, lambda t, ans, tup: np.column_stack(t))
# splits: the pieces' cotangents concatenated back (None pieces are zero)
defvjp(np.array_split, lambda g, ans, ary, indices_or_sections, axis=0:
       apply_linear("array_split_T", g, ary, (indices_or_sections, axis)),
       container_result=True)
defjvp(np.array_split, lambda t, ans, ary, indices_or_sections, axis=0:
       np.array_split(t, indices_or_sections, axis))
defvjp(np.hsplit, lambda g, ans, ary, indices_or_sections: apply_linear(
    "array_split_T", g, ary, (indices_or_sections, split_axis(ary, "h"))), container_result=True)
defjvp(np.hsplit, lambda t, ans, ary, indices_or_sections: np.hsplit(t, indices_or_sections))
defvjp(np.vsplit, lambda g, ans, ary, indices_or_sections: apply_linear(
    "array_split_T", g, ary, (indices_or_sections, 0)), container_result=True)
defjvp(np.vsplit, lambda t, ans, ary, indices_or_sections: np.vsplit(t, indices_or_sections))
defvjp(np.dsplit, lambda g, ans, ary, indices_or_sections: apply_linear(
    "array_split_T", g, ary, (indices_or_sections, 2)), container_result=True)
defjvp(np.dsplit, lambda t, ans, ary, indices_or_sections: np.dsplit(t, indices_or_sections))
if hasattr(np, "unstack"):
    defvjp(np.unstack, lambda g, ans, x, axis=0: apply_linear("unstack_T", g, x, (axis,)),
           container_result=True)
    defjvp(np.unstack, lambda t, ans, x, axis=0: np.unstack(t, axis=axis))
    defprops(np.unstack, sequence=True)
defprops(np.array_split, np.hsplit, np.vsplit, np.dsplit, sequence=True)
# gathers: g scattered back (repeated indices accumulate)
defvjp(np.take_along_axis, lambda g, ans, arr, indices, axis=-1:
       apply_linear("take_along_T", g, arr, (indices, axis)))
defjvp(np.take_along_axis, lambda t, ans, arr, indices, axis=-1:
       np.take_along_axis(t, indices, axis))
defvjp(np.delete, lambda g, ans, arr, obj, axis=None:
       take_vjp(g, arr, delete_kept(arr, obj, axis), axis))
defjvp(np.delete, lambda t, ans, arr, obj, axis=None: np.delete(t, obj, axis))
defvjp(np.extract, None, lambda g, ans, condition, arr:
       take_vjp(g, arr, np.flatnonzero(condition), None))
defjvp(np.extract, None, lambda t, ans, condition, arr: np.extract(condition, t))
defvjp(np.compress, None, lambda g, ans, condition, a, axis=None:
       take_vjp(g, a, np.flatnonzero(condition), axis))
defjvp(np.compress, None, lambda t, ans, condition, a, axis=None:
       np.compress(condition, t, axis))
# select: choice i where condition i is the first to hold, default where none does
defvjp(np.select, None,
       lambda g, ans, condlist, choicelist, default=0:
       apply_linear("select_T", g, choicelist, (condlist,)),
       lambda g, ans, condlist, choicelist, default=0:
       unbroadcast(np.where(select_none(condlist, np.shape(ans)), g, 0.0), default))
defjvp(np.select, None,
       lambda t, ans, condlist, choicelist, default=0: apply_linear("select", t, ans, (condlist,)),
       lambda t, ans, condlist, choicelist, default=0:
       broadcast_like(np.where(select_none(condlist, np.shape(ans)), t, 0.0), ans))
# pad: each entry collects g from the positions copied from it (constant values are
# constants: only modes that copy entries are differentiated)
defvjp(np.pad, lambda g, ans, array, pad_width, mode="constant", constant_values=0,
       end_values=0, reflect_type="even", stat_length=None:
       apply_linear("pad_T", g, array, (pad_width, mode, reflect_type)))
defjvp(np.pad, lambda t, ans, array, pad_width, mode="constant", constant_values=0,
       end_values=0, reflect_type="even", stat_length=None:
       apply_linear("pad", t, ans, (pad_width, mode, reflect_type)))
# append(arr, values, axis): each argument's slot of g
defvjp(np.append,
       lambda g, ans, arr, values, axis=None:
       apply_linear("append_part_T", g, arr, (values, axis, 0)),
       lambda g, ans, arr, values, axis=None:
       apply_linear("append_part_T", g, values, (arr, axis, 1)))
defjvp(np.append,
       lambda t, ans, arr, values, axis=None:
       apply_linear("append_part", t, ans, (values, axis, 0)),
       lambda t, ans, arr, values, axis=None:
       apply_linear("append_part", t, ans, (arr, axis, 1)))
# trapezoid(y, x, dx, axis) = sum(w * y, axis), w half the spacing on each side of a sample
if hasattr(np, "trapezoid"):
    defvjp(np.trapezoid, lambda g, ans, y, x=None, dx=1.0, axis=-1:
           unreduce(g, y, axis) * trapezoid_weights(y, x, dx, axis))
    defjvp(np.trapezoid, lambda t, ans, y, x=None, dx=1.0, axis=-1:
           np.trapezoid(t, x, dx, axis))
# partition: a permutation of a along the axis (like sort), found by matching values
defvjp(np.partition, lambda g, ans, a, kth, axis=-1, kind="introselect", order=None:
       apply_linear("take_along_T", g, a, (matching_permutation(ans, a, axis), axis)))
defjvp(np.partition, lambda t, ans, a, kth, axis=-1, kind="introselect", order=None:
       apply_linear("take_along", t, ans, (matching_permutation(ans, a, axis), axis)))
# resize: each entry copies a flat entry of a (cyclically): the copies' cotangents summed
defvjp(np.resize, lambda g, ans, a, new_shape:
       take_vjp(np.ravel(g), a, resize_source(a, new_shape), None))
defjvp(np.resize, lambda t, ans, a, new_shape: np.resize(t, new_shape))
# logspace = base ** linspace(start, stop): the linspace derivatives times ans ln(base)
defvjp(np.logspace,
       lambda g, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0:
       linspace_vjp(g * ans * np.log(base), start, stop, num, endpoint, False, axis, 0),
       lambda g, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0:
       linspace_vjp(g * ans * np.log(base), start, stop, num, endpoint, False, axis, 1))
defjvp(np.logspace,
       lambda t, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0:
       ans * np.log(base) * np.linspace(t, np.zeros_like(stop), num=num, endpoint=endpoint,
                                        axis=axis),
       lambda t, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0:
       ans * np.log(base) * np.linspace(np.zeros_like(start), t, num=num, endpoint=endpoint,
                                        axis=axis))
# geomspace: y_i = start (stop / start)^t_i: dy/dstart = (1 - t) y / start, dy/dstop = t y / stop
defvjp(np.geomspace,
       lambda g, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0:
       linspace_vjp(g * ans, start, stop, num, endpoint, False, axis, 0) / start,
       lambda g, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0:
       linspace_vjp(g * ans, start, stop, num, endpoint, False, axis, 1) / stop)
defjvp(np.geomspace,
       lambda t, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0:
       ans * np.linspace(t / start, np.zeros_like(stop), num=num, endpoint=endpoint, axis=axis),
       lambda t, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0:
       ans * np.linspace(np.zeros_like(start), t / stop, num=num, endpoint=endpoint, axis=axis))
# np.astype (numpy 2's function form of x.astype), row_stack (vstack's old name)
if hasattr(np, "astype"):
    defvjp(np.astype, lambda g, ans, x, dtype, copy=True, device=None: astype_vjp(g, x))
    defjvp(np.astype, lambda t, ans, x, dtype, copy=True, device=None: astype_jvp(t, ans))
if hasattr(np, "row_stack") and np.row_stack is not np.vstack:
    defvjp(np.row_stack, lambda g, ans, tup, dtype=None, casting="same_kind": vstack_vjp(g, tup))
    defjvp(np.row_stack, lambda t, ans, tup, dtype=None, casting="same_kind": np.vstack(t))
# sort_complex: a permutation of a (lexicographic on real, imag)
defvjp(np.sort_complex, lambda g, ans, a:
       unbroadcast(apply_linear("take_along_T", g, a, (matching_permutation(ans, a, -1), -1)), a))
defjvp(np.sort_complex, lambda t, ans, a:
       apply_linear("take_along", t + 0j, ans, (matching_permutation(ans, a, -1), -1)))


# vander(x, N)_ik = x_i^k_k: x_bar_i = sum_k g_ik k_k x_i^(k_k - 1)
def _vander_vjp(g, ans, x, N=None, increasing=False):
    k, k1 = vander_exponents(x, N, increasing)
    return np.sum(g * k * np.power(np.expand_dims(x, -1), k1), axis=-1)


def _vander_jvp(t, ans, x, N=None, increasing=False):
    k, k1 = vander_exponents(x, N, increasing)
    return np.expand_dims(t, -1) * k * np.power(np.expand_dims(x, -1), k1)


defvjp(np.vander, _vander_vjp)
defjvp(np.vander, _vander_jvp)


# interp(x, xp, fp) = keep ((1 - s) fp[lo] + s fp[hi]) (+ constants), s = (x - xp[lo]) / span
#   inside the knots: x_bar = g (fp[hi] - fp[lo]) / span there (0 outside), fp_bar collects
#   g keep (1 - s) at lo and g keep s at hi.  xp (the knots) is not differentiated.
def _interp_vjp_x(g, ans, x, xp, fp, left=None, right=None, period=None):
    lo, hi, x_lo, span, keep, inside = interp_layout(x, xp, left, right, period)
    return unbroadcast(g * inside * (np.take(fp, hi) - np.take(fp, lo)) / span, x)


def _interp_vjp_fp(g, ans, x, xp, fp, left=None, right=None, period=None):
    lo, hi, x_lo, span, keep, inside = interp_layout(x, xp, left, right, period)
    s = np.clip((x - x_lo) / span, 0.0, 1.0)
    return (take_vjp(np.ravel(g * keep * (1 - s)), fp, np.ravel(lo), None)
            + take_vjp(np.ravel(g * keep * s), fp, np.ravel(hi), None))


def _interp_jvp_x(t, ans, x, xp, fp, left=None, right=None, period=None):
    lo, hi, x_lo, span, keep, inside = interp_layout(x, xp, left, right, period)
    return t * inside * (np.take(fp, hi) - np.take(fp, lo)) / span


def _interp_jvp_fp(t, ans, x, xp, fp, left=None, right=None, period=None):
    lo, hi, x_lo, span, keep, inside = interp_layout(x, xp, left, right, period)
    s = np.clip((x - x_lo) / span, 0.0, 1.0)
    return keep * ((1 - s) * np.take(t, lo) + s * np.take(t, hi))


defvjp(np.interp, _interp_vjp_x, None, _interp_vjp_fp)
defjvp(np.interp, _interp_jvp_x, None, _interp_jvp_fp)
# gradient: linear in f (the spacing, one scalar or the sample points of a 1-D f, is a
# constant); the cotangents of the axes' derivatives (a tuple for several) are transposed
defvjp(np.gradient, lambda g, ans, f, spacing=1.0, axis=None, edge_order=1:
       apply_linear("gradient_T", g, f, (spacing, axis, edge_order)), container_result=True)
defjvp(np.gradient, lambda t, ans, f, spacing=1.0, axis=None, edge_order=1:
       apply_linear("gradient", t, ans, (spacing, axis, edge_order)))
# insert: every entry of the result comes from arr or from (broadcast) values
def _insert_vjp_arr(g, ans, arr, obj, values, axis=None):
    source = insert_sources(arr, obj, values, axis)
    from_arr = source >= 0
    return take_vjp(g[from_arr], arr, source[from_arr], None)


def _insert_vjp_values(g, ans, arr, obj, values, axis=None):
    source = insert_sources(arr, obj, values, axis)
    from_values = source < 0
    return take_vjp(g[from_values], values, -1 - source[from_values], None)


defvjp(np.insert, _insert_vjp_arr, None, _insert_vjp_values)
defjvp(np.insert,
       lambda t, ans, arr, obj, values, axis=None: np.insert(t, obj, np.zeros_like(values), axis),
       None,
       lambda t, ans, arr, obj, values, axis=None: np.insert(np.zeros_like(arr), obj, t, axis))
# meshgrid (up to four inputs): output k is input k broadcast along its axis
defvjp(np.meshgrid,
       lambda g, ans, x0, x1=None, x2=None, x3=None, *, copy=True, sparse=False, indexing="xy":
       apply_linear("mesh_T", g, x0, (0, indexing, sparse, shapes_of(ans))),
       lambda g, ans, x0, x1=None, x2=None, x3=None, *, copy=True, sparse=False, indexing="xy":
       apply_linear("mesh_T", g, x1, (1, indexing, sparse, shapes_of(ans))),
       lambda g, ans, x0, x1=None, x2=None, x3=None, *, copy=True, sparse=False, indexing="xy":
       apply_linear("mesh_T", g, x2, (2, indexing, sparse, shapes_of(ans))),
       lambda g, ans, x0, x1=None, x2=None, x3=None, *, copy=True, sparse=False, indexing="xy":
       apply_linear("mesh_T", g, x3, (3, indexing, sparse, shapes_of(ans))),
       container_result=True)
defjvp(np.meshgrid,
       lambda t, ans, x0, x1=None, x2=None, x3=None, *, copy=True, sparse=False, indexing="xy":
       apply_linear("mesh", t, ans, (0, indexing, sparse, shapes_of(ans))),
       lambda t, ans, x0, x1=None, x2=None, x3=None, *, copy=True, sparse=False, indexing="xy":
       apply_linear("mesh", t, ans, (1, indexing, sparse, shapes_of(ans))),
       lambda t, ans, x0, x1=None, x2=None, x3=None, *, copy=True, sparse=False, indexing="xy":
       apply_linear("mesh", t, ans, (2, indexing, sparse, shapes_of(ans))),
       lambda t, ans, x0, x1=None, x2=None, x3=None, *, copy=True, sparse=False, indexing="xy":
       apply_linear("mesh", t, ans, (3, indexing, sparse, shapes_of(ans))))
# broadcast_arrays (up to four inputs): output k is input k broadcast
defvjp(np.broadcast_arrays,
       lambda g, ans, x0, x1=None, x2=None, x3=None, *, subok=False:
       apply_linear("bcast_T", g, x0, (0, shapes_of(ans))),
       lambda g, ans, x0, x1=None, x2=None, x3=None, *, subok=False:
       apply_linear("bcast_T", g, x1, (1, shapes_of(ans))),
       lambda g, ans, x0, x1=None, x2=None, x3=None, *, subok=False:
       apply_linear("bcast_T", g, x2, (2, shapes_of(ans))),
       lambda g, ans, x0, x1=None, x2=None, x3=None, *, subok=False:
       apply_linear("bcast_T", g, x3, (3, shapes_of(ans))),
       container_result=True)
defjvp(np.broadcast_arrays,
       lambda t, ans, x0, x1=None, x2=None, x3=None, *, subok=False:
       apply_linear("bcast", t, ans, (0, shapes_of(ans))),
       lambda t, ans, x0, x1=None, x2=None, x3=None, *, subok=False:
       apply_linear("bcast", t, ans, (1, shapes_of(ans))),
       lambda t, ans, x0, x1=None, x2=None, x3=None, *, subok=False:
       apply_linear("bcast", t, ans, (2, shapes_of(ans))),
       lambda t, ans, x0, x1=None, x2=None, x3=None, *, subok=False:
       apply_linear("bcast", t, ans, (3, shapes_of(ans))))
# (np.gradient of a 1-D array is one array, else a list: either is read by position)
defprops(np.gradient, np.meshgrid, np.broadcast_arrays, sequence=True)
