"""Rules of the runtime helpers that generated derivative code calls.

Differentiating generated code again (``grad(grad(f))``, ``jvp(grad(f))``:
Hessian-vector products) meets the helpers of ``s2s_runtime`` as ordinary
calls, so each needs rules like a numpy function.

Almost every helper is *linear* in its cotangent/tangent argument (``g``,
``t``, ``gs``, ``cts``) and uses its other arguments only for shapes,
indices and dtypes.  Then

* the JVP w.r.t. ``g`` is the helper applied to the tangent;
* the VJP w.r.t. ``g`` is the helper's transpose (an ``*_transpose`` helper
  in ``s2s_runtime.helper_rules`` where numpy has no one-call inverse), with
  no conjugation (JAX's convention for linear maps);
* the shape-only arguments have a zero derivative.  They are usually
  active in a second-order program (``unbroadcast(g, x)`` with ``x`` the
  primal input), so they get explicit zero templates (``zeros_like``), not
  ``None`` (which would make the transforms raise ``NoRuleError``).

``matmul_vjp_lhs(g, a, b)`` and ``matmul_vjp_rhs(g, a, b)`` are bilinear in
``(g, b)`` resp. ``(g, a)``.  The masks of ``max_vjp``/``max_jvp`` and the sort
permutation are piecewise constant: zero derivative in ``a`` and ``ans``.
The VJP helpers that are non-linear in a primal argument (``prod_vjp``,
``norm_vjp``, ``cumprod_vjp``, ``var_vjp``, ``average_vjp``) and those of the
bilinear products (``dot_vjp``...): ``runtime_rules_nonlinear.py`` (second order;
helpers in ``s2s_runtime.second_order``), registered when this module is imported.  Still without rules (third order, and the JVP
helpers of those primitives): ``NO_RULE_YET`` in ``tests/unit/test_rules_runtime.py``.

Helpers whose result may be a container (``add``, ``densify``, ``getitem_vjp``,
``array_vjp``...) are registered with ``container_result=True``: reverse mode over
gradient code then accumulates their cotangents with ``add``, not ``+`` (which
would concatenate tuples and lists).

Role parameters: VJP templates start with ``(ct, out, ...)`` (``cbar`` where
the helper has a parameter ``ct``), JVP templates with ``(tan, out, ...)``.
"""
import numpy as np

from s2s_runtime import build
from s2s_runtime import (add, add_at, owned, add_jvp, add_vjp, array_jvp, array_vjp, array_vjp_transpose,
                         astype_jvp, astype_vjp, broadcast_like, cast_jvp, cast_vjp,
                         clip_inside, concatenate_vjp, concatenate_vjp_transpose, cumsum_vjp,
                         densify, diag_vjp, full_vjp, getattr_vjp, getitem_vjp,
                         getitem_vjp_transpose, grad_seed, matmul_vjp_lhs, matmul_vjp_rhs,
                         max_jvp, max_vjp, mean_vjp, hstack_vjp_transpose, vstack_vjp_transpose, repeat_vjp,
                         reshape_vjp, sort_jvp, sort_vjp, split_vjp, stack_vjp,
                         stack_vjp_transpose, sum_builtin_jvp, sum_builtin_vjp, sum_vjp,
                         take_vjp, tile_vjp, trace_vjp, trace_vjp_transpose, transpose_vjp,
                         unbroadcast, unpack_vjp, unpack_vjp_transpose, unreduce,
                         unreduce_transpose, vstack_vjp, hstack_vjp, zeros_like)


from .registry import defjvp, defnondiff, defresult_shape, defshape_operands, defvjp

# the seed 1 of grad, zero cotangents, the 0/1 mask of clip: constants; raise_error never returns
defnondiff(grad_seed, zeros_like, clip_inside, build.raise_error, build.reversed_range,
           build.iteration_items, build.with_cause)

# operands read only for their type and shape (the shape and dtype of the result, of the
# zeros a cotangent is scattered into, of what a cotangent is broadcast to;
# index_set_vjp_value's: index_writes.py)
defshape_operands(unbroadcast, 1)
defshape_operands(zeros_like, 0)
defshape_operands(densify, 1)
defshape_operands(getitem_vjp, 1)
defshape_operands(add_at, 2)
defshape_operands(add_vjp, 1)
defshape_operands(add_jvp, 1)
defshape_operands(broadcast_like, 1)
defshape_operands(unreduce, 1)
defshape_operands(sum_vjp, 1)
defshape_operands(mean_vjp, 1)
# ... and each of these results is shaped like that operand (a cotangent summed or
# scattered to it, a tangent broadcast to it, zeros like it)
for fn, position in ((unbroadcast, 1), (zeros_like, 0), (densify, 1), (getitem_vjp, 1),
                     (add_at, 2), (add_vjp, 1), (add_jvp, 1), (broadcast_like, 1),
                     (unreduce, 1), (sum_vjp, 1), (mean_vjp, 1)):
    defresult_shape(fn, position)

# --- adjoint.py ------------------------------------------------------------------------
# add(a, b) = a + b (None is zero): linear in both
defvjp(add, lambda ct, out, a, b: add_vjp(ct, a), lambda ct, out, a, b: add_vjp(ct, b),
       container_result=True)
defjvp(add, lambda tan, out, a, b: add_jvp(tan, out), lambda tan, out, a, b: add_jvp(tan, out))
# add_vjp(ct, x) = ct summed to x's shape (containers as they are): linear in ct, its
# transpose the broadcast back to ct's shape, add_jvp(c, ct); x gives only a shape (zero).
# add_jvp(t, ans) = t broadcast to ans's shape: linear in t, its transpose add_vjp(c, t).
defvjp(add_vjp, lambda c, out, ct, x: add_jvp(c, ct), lambda c, out, ct, x: zeros_like(x),
       container_result=True)
defjvp(add_vjp, lambda tan, out, ct, x: add_vjp(tan, x), lambda tan, out, ct, x: zeros_like(out))
defvjp(add_jvp, lambda c, out, t, ans: add_vjp(c, t), lambda c, out, t, ans: zeros_like(ans),
       container_result=True)
defjvp(add_jvp, lambda tan, out, t, ans: add_jvp(tan, ans),
       lambda tan, out, t, ans: zeros_like(out))
# densify(ct, like): identity on ct (None -> zeros, integer leaves -> zero)
defvjp(densify, lambda cbar, out, ct, like: densify(cbar, like),
       lambda cbar, out, ct, like: zeros_like(like),
       container_result=True)
defjvp(densify, lambda tan, out, ct, like: densify(tan, like),
       lambda tan, out, ct, like: zeros_like(out))
# unbroadcast(g, x) = sum of g down to x's shape; its transpose is the broadcast
defvjp(unbroadcast, lambda ct, out, g, x: broadcast_like(ct, g),
       lambda ct, out, g, x: zeros_like(x))
defjvp(unbroadcast, lambda tan, out, g, x: unbroadcast(tan, x),
       lambda tan, out, g, x: zeros_like(out))
# broadcast_like(t, ans) = t broadcast to ans's shape; its transpose is the sum
defvjp(broadcast_like, lambda ct, out, t, ans: unbroadcast(ct, t),
       lambda ct, out, t, ans: zeros_like(ans))
defjvp(broadcast_like, lambda tan, out, t, ans: broadcast_like(tan, ans),
       lambda tan, out, t, ans: zeros_like(out))
# unreduce(g, x, axis, keepdims) = g broadcast over the reduced axes; transpose: their sum
defvjp(unreduce, lambda ct, out, g, x, axis=None, keepdims=False:
       unreduce_transpose(ct, g, x, axis, keepdims),
       lambda ct, out, g, x, axis=None, keepdims=False: zeros_like(x))
defjvp(unreduce, lambda tan, out, g, x, axis=None, keepdims=False:
       unreduce(tan, x, axis, keepdims),
       lambda tan, out, g, x, axis=None, keepdims=False: zeros_like(out))
# getitem_vjp(g, x, index) = g scattered into zeros at index; transpose: the gather ct[index]
# (the index, e.g. a key a loop over a dict's items gives, is piecewise constant)
defvjp(getitem_vjp, lambda ct, out, g, x, index: getitem_vjp_transpose(ct, g, x, index),
       lambda ct, out, g, x, index: zeros_like(x),
       lambda ct, out, g, x, index: zeros_like(index),
       container_result=True)
defjvp(getitem_vjp, lambda tan, out, g, x, index: getitem_vjp(tan, x, index),
       lambda tan, out, g, x, index: zeros_like(out),
       lambda tan, out, g, x, index: zeros_like(out))
# add_at(acc, g, x, index) = acc + getitem_vjp(g, x, index): linear in (acc, g)
defvjp(add_at, lambda ct, out, acc, g, x, index: add_vjp(ct, acc),
       lambda ct, out, acc, g, x, index: getitem_vjp_transpose(ct, g, x, index),
       lambda ct, out, acc, g, x, index: zeros_like(x),
       lambda ct, out, acc, g, x, index: zeros_like(index),
       container_result=True)
defjvp(add_at, lambda tan, out, acc, g, x, index: tan,  # acc is shaped like out
       lambda tan, out, acc, g, x, index: getitem_vjp(tan, x, index),
       lambda tan, out, acc, g, x, index: zeros_like(out),
       lambda tan, out, acc, g, x, index: zeros_like(out))
# unpack_vjp(cts, x) = the targets' cotangents packed like x; transpose: unpack ct
defvjp(unpack_vjp, lambda ct, out, cts, x: unpack_vjp_transpose(ct, cts, x),
       lambda ct, out, cts, x: zeros_like(x),
       container_result=True)
defjvp(unpack_vjp, lambda tan, out, cts, x: unpack_vjp(tan, x),
       lambda tan, out, cts, x: zeros_like(out))
# getattr_vjp(g, obj, name) = g placed at field name; transpose: that field of ct
defvjp(getattr_vjp, lambda ct, out, g, obj, name: getattr(ct, name),
       lambda ct, out, g, obj, name: zeros_like(obj),
       container_result=True)
defjvp(getattr_vjp, lambda tan, out, g, obj, name: getattr_vjp(tan, obj, name),
       lambda tan, out, g, obj, name: zeros_like(out))
# array_vjp(g, x) = g split into the nested list x; transpose: the pieces stacked
defvjp(array_vjp, lambda ct, out, g, x: array_vjp_transpose(ct, g, x),
       lambda ct, out, g, x: zeros_like(x),
       container_result=True)
defjvp(array_vjp, lambda tan, out, g, x: array_vjp(tan, x),
       lambda tan, out, g, x: zeros_like(out))
# cast_vjp(g, x) = g in x's type (Re for real x); transpose: ct in g's type (cast_jvp)
defvjp(cast_vjp, lambda ct, out, g, x: cast_jvp(ct, g), lambda ct, out, g, x: zeros_like(x))
defjvp(cast_vjp, lambda tan, out, g, x: cast_vjp(tan, x),
       lambda tan, out, g, x: zeros_like(out))
# sum_builtin_vjp(g, items) = [g summed to each item's shape]; transpose: the sum of ct
defvjp(sum_builtin_vjp, lambda ct, out, g, iterable: sum_builtin_jvp(ct, g),
       lambda ct, out, g, iterable: zeros_like(iterable),
       container_result=True)
defjvp(sum_builtin_vjp, lambda tan, out, g, iterable: sum_builtin_vjp(tan, iterable),
       lambda tan, out, g, iterable: zeros_like(out))
# concatenate_vjp(g, xs, axis) = g split into xs' pieces; transpose: concatenate
defvjp(concatenate_vjp, lambda ct, out, g, xs, axis=0: concatenate_vjp_transpose(ct, g, xs, axis),
       lambda ct, out, g, xs, axis=0: zeros_like(xs),
       container_result=True)
defjvp(concatenate_vjp, lambda tan, out, g, xs, axis=0: concatenate_vjp(tan, xs, axis),
       lambda tan, out, g, xs, axis=0: zeros_like(out))
# stack_vjp(g, xs, axis) = slices of g along axis; transpose: stack
defvjp(stack_vjp, lambda ct, out, g, xs, axis=0: stack_vjp_transpose(ct, g, xs, axis),
       lambda ct, out, g, xs, axis=0: zeros_like(xs),
       container_result=True)
defjvp(stack_vjp, lambda tan, out, g, xs, axis=0: stack_vjp(tan, xs, axis),
       lambda tan, out, g, xs, axis=0: zeros_like(out))
# split_vjp(gs, x, ...) = the pieces concatenated (None -> 0); transpose: split
defvjp(split_vjp, lambda ct, out, gs, x, indices_or_sections, axis=0:
       np.split(ct, indices_or_sections, axis),
       lambda ct, out, gs, x, indices_or_sections, axis=0: zeros_like(x))
defjvp(split_vjp, lambda tan, out, gs, x, indices_or_sections, axis=0:
       split_vjp(tan, x, indices_or_sections, axis),
       lambda tan, out, gs, x, indices_or_sections, axis=0: zeros_like(out))
# matmul_vjp_lhs(g, a, b) = (g @ b^T summed to a's shape): bilinear in (g, b)
#   <ct, g b^T> = <ct b, g> = <ct^T g, b>
defvjp(matmul_vjp_lhs, lambda ct, out, g, a, b: np.matmul(ct, b),
       lambda ct, out, g, a, b: zeros_like(a),
       lambda ct, out, g, a, b: matmul_vjp_rhs(g, ct, b))
defjvp(matmul_vjp_lhs, lambda tan, out, g, a, b: matmul_vjp_lhs(tan, a, b),
       lambda tan, out, g, a, b: zeros_like(out),
       lambda tan, out, g, a, b: matmul_vjp_lhs(g, a, tan))
# matmul_vjp_rhs(g, a, b) = (a^T g summed to b's shape): bilinear in (g, a)
#   <ct, a^T g> = <a ct, g> = <g ct^T, a>
defvjp(matmul_vjp_rhs, lambda ct, out, g, a, b: np.matmul(a, ct),
       lambda ct, out, g, a, b: matmul_vjp_lhs(g, a, ct),
       lambda ct, out, g, a, b: zeros_like(b))
defjvp(matmul_vjp_rhs, lambda tan, out, g, a, b: matmul_vjp_rhs(tan, a, b),
       lambda tan, out, g, a, b: matmul_vjp_rhs(g, tan, b),
       lambda tan, out, g, a, b: zeros_like(out))

# --- jvps.py ---------------------------------------------------------------------------
# cast_jvp(t, ans) = t in ans's dtype (Re for a real ans); transpose: cast back (cast_vjp)
defvjp(cast_jvp, lambda ct, out, t, ans: cast_vjp(ct, t), lambda ct, out, t, ans: zeros_like(ans))
defjvp(cast_jvp, lambda tan, out, t, ans: cast_jvp(tan, ans),
       lambda tan, out, t, ans: zeros_like(out))
# sum_builtin_jvp(t, ans) = sum of the items of t; transpose: ct to every item
defvjp(sum_builtin_jvp, lambda ct, out, t, ans: sum_builtin_vjp(ct, t),
       lambda ct, out, t, ans: zeros_like(ans))
defjvp(sum_builtin_jvp, lambda tan, out, t, ans: sum_builtin_jvp(tan, ans),
       lambda tan, out, t, ans: zeros_like(out))

# --- vjps.py: reductions (linear in g) ---------------------------------------------------
# sum_vjp = transpose of np.sum, so its transpose is np.sum
defvjp(sum_vjp, lambda ct, out, g, a, axis=None, keepdims=False, where=True:
       np.sum(ct, axis=axis, keepdims=keepdims, where=where),
       lambda ct, out, g, a, axis=None, keepdims=False, where=True: zeros_like(a))
defjvp(sum_vjp, lambda tan, out, g, a, axis=None, keepdims=False, where=True:
       sum_vjp(tan, a, axis, keepdims, where),
       lambda tan, out, g, a, axis=None, keepdims=False, where=True: zeros_like(out))
# mean_vjp = transpose of np.mean, so its transpose is np.mean
defvjp(mean_vjp, lambda ct, out, g, a, axis=None, keepdims=False, where=True:
       np.mean(ct, axis=axis, keepdims=keepdims, where=where),
       lambda ct, out, g, a, axis=None, keepdims=False, where=True: zeros_like(a))
defjvp(mean_vjp, lambda tan, out, g, a, axis=None, keepdims=False, where=True:
       mean_vjp(tan, a, axis, keepdims, where),
       lambda tan, out, g, a, axis=None, keepdims=False, where=True: zeros_like(out))
# max_vjp(g, ans, a) = g * mask(a == ans) / #ties: the mask is piecewise constant
#   (zero derivative in ans and a); transpose in g: max_jvp (the masked mean)
defvjp(max_vjp, lambda ct, out, g, ans, a, axis=None, keepdims=False, initial=None, where=True:
       max_jvp(ct, ans, a, axis, keepdims, initial, where),
       lambda ct, out, g, ans, a, axis=None, keepdims=False, initial=None, where=True:
       zeros_like(ans),
       lambda ct, out, g, ans, a, axis=None, keepdims=False, initial=None, where=True:
       zeros_like(a))
defjvp(max_vjp, lambda tan, out, g, ans, a, axis=None, keepdims=False, initial=None, where=True:
       max_vjp(tan, ans, a, axis, keepdims, initial, where),
       lambda tan, out, g, ans, a, axis=None, keepdims=False, initial=None, where=True:
       zeros_like(out),
       lambda tan, out, g, ans, a, axis=None, keepdims=False, initial=None, where=True:
       zeros_like(out))
# cumsum_vjp = reversed cumulative sum, the transpose of cumsum
defvjp(cumsum_vjp, lambda ct, out, g, a, axis=None: np.reshape(np.cumsum(ct, axis), np.shape(g)),
       lambda ct, out, g, a, axis=None: zeros_like(a))
defjvp(cumsum_vjp, lambda tan, out, g, a, axis=None: cumsum_vjp(tan, a, axis),
       lambda tan, out, g, a, axis=None: zeros_like(out))
# trace_vjp = g written on a diagonal; transpose: the diagonal (its sum for trace)
defvjp(trace_vjp, lambda ct, out, g, a, offset=0, axis1=0, axis2=1:
       trace_vjp_transpose(ct, g, offset, axis1, axis2),
       lambda ct, out, g, a, offset=0, axis1=0, axis2=1: zeros_like(a))
defjvp(trace_vjp, lambda tan, out, g, a, offset=0, axis1=0, axis2=1:
       trace_vjp(tan, a, offset, axis1, axis2),
       lambda tan, out, g, a, offset=0, axis1=0, axis2=1: zeros_like(out))

# --- jvps_arrays.py (linear in t) ----------------------------------------------------------
# max_jvp(t, ans, a) = masked mean of t; transpose: max_vjp
defvjp(max_jvp, lambda ct, out, t, ans, a, axis=None, keepdims=False, initial=None, where=True:
       max_vjp(ct, ans, a, axis, keepdims, initial, where),
       lambda ct, out, t, ans, a, axis=None, keepdims=False, initial=None, where=True:
       zeros_like(ans),
       lambda ct, out, t, ans, a, axis=None, keepdims=False, initial=None, where=True:
       zeros_like(a))
defjvp(max_jvp, lambda tan, out, t, ans, a, axis=None, keepdims=False, initial=None, where=True:
       max_jvp(tan, ans, a, axis, keepdims, initial, where),
       lambda tan, out, t, ans, a, axis=None, keepdims=False, initial=None, where=True:
       zeros_like(out),
       lambda tan, out, t, ans, a, axis=None, keepdims=False, initial=None, where=True:
       zeros_like(out))
# sort_jvp(t, a) = t permuted by argsort(a) (piecewise constant in a); transpose: sort_vjp
defvjp(sort_jvp, lambda ct, out, t, a, axis=-1: sort_vjp(ct, a, axis),
       lambda ct, out, t, a, axis=-1: zeros_like(a))
defjvp(sort_jvp, lambda tan, out, t, a, axis=-1: sort_jvp(tan, a, axis),
       lambda tan, out, t, a, axis=-1: zeros_like(out))
# astype_jvp(t, ans) = t in ans's dtype; transpose: back in t's shape and dtype
defvjp(astype_jvp, lambda ct, out, t, ans: astype_vjp(ct, t),
       lambda ct, out, t, ans: zeros_like(ans))
defjvp(astype_jvp, lambda tan, out, t, ans: astype_jvp(tan, ans),
       lambda tan, out, t, ans: zeros_like(out))
# array_jvp(t, ans, object) = np.array(t) in ans's dtype; transpose: split like object
defvjp(array_jvp, lambda ct, out, t, ans, object, copy=True, ndmin=0: array_vjp(ct, object),
       lambda ct, out, t, ans, object, copy=True, ndmin=0: zeros_like(ans),
       lambda ct, out, t, ans, object, copy=True, ndmin=0: zeros_like(object))
defjvp(array_jvp, lambda tan, out, t, ans, object, copy=True, ndmin=0:
       array_jvp(tan, ans, object, copy, ndmin),
       lambda tan, out, t, ans, object, copy=True, ndmin=0: zeros_like(out),
       lambda tan, out, t, ans, object, copy=True, ndmin=0: zeros_like(out))

# --- shape_vjps.py (linear in g; the transpose redoes the data movement) -------------------
defvjp(sort_vjp, lambda ct, out, g, a, axis=-1: sort_jvp(ct, a, axis),
       lambda ct, out, g, a, axis=-1: zeros_like(a))
defjvp(sort_vjp, lambda tan, out, g, a, axis=-1: sort_vjp(tan, a, axis),
       lambda tan, out, g, a, axis=-1: zeros_like(out))
defvjp(transpose_vjp, lambda ct, out, g, a, axes=None: np.transpose(ct, axes),
       lambda ct, out, g, a, axes=None: zeros_like(a))
defjvp(transpose_vjp, lambda tan, out, g, a, axes=None: transpose_vjp(tan, a, axes),
       lambda tan, out, g, a, axes=None: zeros_like(out))
defvjp(reshape_vjp, lambda ct, out, g, a, order="C": reshape_vjp(ct, g, order),
       lambda ct, out, g, a, order="C": zeros_like(a))
defjvp(reshape_vjp, lambda tan, out, g, a, order="C": reshape_vjp(tan, a, order),
       lambda tan, out, g, a, order="C": zeros_like(out))
defvjp(astype_vjp, lambda ct, out, g, x: astype_vjp(ct, g), lambda ct, out, g, x: zeros_like(x))
defjvp(astype_vjp, lambda tan, out, g, x: astype_vjp(tan, x),
       lambda tan, out, g, x: zeros_like(out))
# diag_vjp: diag of a vector <-> the diagonal of a matrix, each the other's transpose
defvjp(diag_vjp, lambda ct, out, g, v, k=0: np.diag(ct, k), lambda ct, out, g, v, k=0: zeros_like(v))
defjvp(diag_vjp, lambda tan, out, g, v, k=0: diag_vjp(tan, v, k),
       lambda tan, out, g, v, k=0: zeros_like(out))
defvjp(tile_vjp, lambda ct, out, g, a, reps: np.tile(ct, reps),
       lambda ct, out, g, a, reps: zeros_like(a))
defjvp(tile_vjp, lambda tan, out, g, a, reps: tile_vjp(tan, a, reps),
       lambda tan, out, g, a, reps: zeros_like(out))
defvjp(repeat_vjp, lambda ct, out, g, a, repeats, axis=None: np.repeat(ct, repeats, axis),
       lambda ct, out, g, a, repeats, axis=None: zeros_like(a))
defjvp(repeat_vjp, lambda tan, out, g, a, repeats, axis=None: repeat_vjp(tan, a, repeats, axis),
       lambda tan, out, g, a, repeats, axis=None: zeros_like(out))
defvjp(take_vjp, lambda ct, out, g, a, indices, axis=None, mode="raise":
       np.take(ct, indices, axis=axis, mode=mode),
       lambda ct, out, g, a, indices, axis=None, mode="raise": zeros_like(a))
defjvp(take_vjp, lambda tan, out, g, a, indices, axis=None, mode="raise":
       take_vjp(tan, a, indices, axis, mode),
       lambda tan, out, g, a, indices, axis=None, mode="raise": zeros_like(out))
defvjp(full_vjp, lambda ct, out, g, fill_value: broadcast_like(ct, g),
       lambda ct, out, g, fill_value: zeros_like(fill_value))
defjvp(full_vjp, lambda tan, out, g, fill_value: full_vjp(tan, fill_value),
       lambda tan, out, g, fill_value: zeros_like(out))
defvjp(hstack_vjp, lambda ct, out, g, tup: hstack_vjp_transpose(ct, g, tup),
       lambda ct, out, g, tup: zeros_like(tup),
       container_result=True)
defjvp(hstack_vjp, lambda tan, out, g, tup: hstack_vjp(tan, tup),
       lambda tan, out, g, tup: zeros_like(out))
defvjp(vstack_vjp, lambda ct, out, g, tup: vstack_vjp_transpose(ct, g, tup),
       lambda ct, out, g, tup: zeros_like(tup),
       container_result=True)
defjvp(vstack_vjp, lambda tan, out, g, tup: vstack_vjp(tan, tup),
       lambda tan, out, g, tup: zeros_like(out))

# --- the transposes above (third order): each is linear in ct, its transpose the helper ----
defvjp(getitem_vjp_transpose, lambda c, out, ct, g, x, index: getitem_vjp(c, x, index),
       lambda c, out, ct, g, x, index: zeros_like(g), lambda c, out, ct, g, x, index: zeros_like(x),
       lambda c, out, ct, g, x, index: zeros_like(index),
       container_result=True)
defjvp(getitem_vjp_transpose,
       lambda tan, out, ct, g, x, index: getitem_vjp_transpose(tan, g, x, index),
       lambda tan, out, ct, g, x, index: zeros_like(out),
       lambda tan, out, ct, g, x, index: zeros_like(out),
       lambda tan, out, ct, g, x, index: zeros_like(out))
defvjp(unreduce_transpose, lambda c, out, ct, g, x, axis=None, keepdims=False:
       unreduce(c, x, axis, keepdims),
       lambda c, out, ct, g, x, axis=None, keepdims=False: zeros_like(g),
       lambda c, out, ct, g, x, axis=None, keepdims=False: zeros_like(x))
defjvp(unreduce_transpose, lambda tan, out, ct, g, x, axis=None, keepdims=False:
       unreduce_transpose(tan, g, x, axis, keepdims),
       lambda tan, out, ct, g, x, axis=None, keepdims=False: zeros_like(out),
       lambda tan, out, ct, g, x, axis=None, keepdims=False: zeros_like(out))
defvjp(trace_vjp_transpose, lambda c, out, ct, g, offset=0, axis1=0, axis2=1:
       trace_vjp(c, ct, offset, axis1, axis2),
       lambda c, out, ct, g, offset=0, axis1=0, axis2=1: zeros_like(g))
defjvp(trace_vjp_transpose, lambda tan, out, ct, g, offset=0, axis1=0, axis2=1:
       trace_vjp_transpose(tan, g, offset, axis1, axis2),
       lambda tan, out, ct, g, offset=0, axis1=0, axis2=1: zeros_like(out))
defvjp(stack_vjp_transpose, lambda c, out, ct, g, xs, axis=0: stack_vjp(c, xs, axis),
       lambda c, out, ct, g, xs, axis=0: zeros_like(g),
       lambda c, out, ct, g, xs, axis=0: zeros_like(xs))
defjvp(stack_vjp_transpose, lambda tan, out, ct, g, xs, axis=0:
       stack_vjp_transpose(tan, g, xs, axis),
       lambda tan, out, ct, g, xs, axis=0: zeros_like(out),
       lambda tan, out, ct, g, xs, axis=0: zeros_like(out))
defvjp(concatenate_vjp_transpose, lambda c, out, ct, g, xs, axis=0: concatenate_vjp(c, xs, axis),
       lambda c, out, ct, g, xs, axis=0: zeros_like(g),
       lambda c, out, ct, g, xs, axis=0: zeros_like(xs))
defjvp(concatenate_vjp_transpose, lambda tan, out, ct, g, xs, axis=0:
       concatenate_vjp_transpose(tan, g, xs, axis),
       lambda tan, out, ct, g, xs, axis=0: zeros_like(out),
       lambda tan, out, ct, g, xs, axis=0: zeros_like(out))
defvjp(array_vjp_transpose, lambda c, out, ct, g, x: array_vjp(c, x),
       lambda c, out, ct, g, x: zeros_like(g), lambda c, out, ct, g, x: zeros_like(x))
defjvp(array_vjp_transpose, lambda tan, out, ct, g, x: array_vjp_transpose(tan, g, x),
       lambda tan, out, ct, g, x: zeros_like(out), lambda tan, out, ct, g, x: zeros_like(out))
defvjp(unpack_vjp_transpose, lambda c, out, ct, cts, x: unpack_vjp(c, x),
       lambda c, out, ct, cts, x: zeros_like(cts), lambda c, out, ct, cts, x: zeros_like(x),
       container_result=True)
defjvp(unpack_vjp_transpose, lambda tan, out, ct, cts, x: unpack_vjp_transpose(tan, cts, x),
       lambda tan, out, ct, cts, x: zeros_like(out), lambda tan, out, ct, cts, x: zeros_like(out))
defvjp(hstack_vjp_transpose, lambda c, out, ct, g, tup: hstack_vjp(c, tup),
       lambda c, out, ct, g, tup: zeros_like(g), lambda c, out, ct, g, tup: zeros_like(tup))
defjvp(hstack_vjp_transpose, lambda tan, out, ct, g, tup: hstack_vjp_transpose(tan, g, tup),
       lambda tan, out, ct, g, tup: zeros_like(out), lambda tan, out, ct, g, tup: zeros_like(out))
defvjp(vstack_vjp_transpose, lambda c, out, ct, g, tup: vstack_vjp(c, tup),
       lambda c, out, ct, g, tup: zeros_like(g), lambda c, out, ct, g, tup: zeros_like(tup))
defjvp(vstack_vjp_transpose, lambda tan, out, ct, g, tup: vstack_vjp_transpose(tan, g, tup),
       lambda tan, out, ct, g, tup: zeros_like(out), lambda tan, out, ct, g, tup: zeros_like(out))

# owned(x) is a copy when x is an array: the identity map
defvjp(owned, lambda ct, out, x: ct)
defjvp(owned, lambda tan, out, x: owned(tan))

from . import runtime_rules_nonlinear  # noqa: E402,F401  (registers the second-order helpers' rules)
