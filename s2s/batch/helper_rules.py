"""Derivative rules of the run-time helpers batched code calls (``rt.batch_*``), so
that batched code is differentiated like any other code (``grad(vmap(f))``).

* ``batch_align``, ``batch_core_align``, ``batch_flat``: reshapes; the transpose reshapes back.
* ``batch_lift``/``batch_view`` (broadcast over the batch) and ``batch_unlift``
  (sum over the batch) are each other's transposes.
* ``batch_rows`` swaps the first two axes: its own transpose.
* ``batch_snapshot`` (a copy kept while the original changes in place): the identity.
* ``batch_select(c, a, b)``: the cotangent goes to ``a`` where ``c`` holds, to
  ``b`` elsewhere.
* ``batch_contract(spec, a, b)``: bilinear; ``batch_contract_vjp`` contracts the
  cotangent with the other factor.
* ``batch_gather``: its transpose scatters (adds) into zeros.
* ``batch_unbroadcast``: the transpose broadcasts back.
* ``batch_vstack``/``batch_hstack`` (a list of batched items joined): linear in the list;
  the transpose splits the cotangent back (``batch_vstack_vjp``/``batch_hstack_vjp``),
  whose own transpose joins again.
* ``batch_array`` (vmap's ``np.array``/``np.asarray`` of nested batched items): linear in
  the items; the transpose splits the cotangent back into the nesting
  (``batch_array_vjp``), whose own transpose is ``batch_array`` again.
The shape and index helpers are not differentiable (their results are not numbers
that carry derivatives).
"""
import numpy as np

import s2s_runtime as B
from s2s_runtime import (batch_align, batch_array, batch_array_jvp, batch_array_vjp, batch_core_align, batch_contract, batch_contract_vjp, batch_flat,
                         batch_hstack, batch_hstack_vjp, batch_vstack, batch_vstack_vjp,
                         batch_gather, batch_gather_vjp, batch_lift, batch_rows, batch_select,
                         batch_size, batch_snapshot, batch_unbroadcast, batch_unlift, batch_view,
                         zeros_like)

from ..rules.registry import defjvp, defno_mode, defnondiff, defvjp

defvjp(batch_align, lambda g, ans, x, other, other_batched: np.reshape(g, np.shape(x)),
       lambda g, ans, x, other, other_batched: zeros_like(other))
defjvp(batch_align, lambda t, ans, x, other, other_batched: batch_align(t, other, other_batched),
       lambda t, ans, x, other, other_batched: zeros_like(ans))
# batch_core_align(x, core, other, ...): a reshape of x, like batch_align
defvjp(batch_core_align,
       lambda g, ans, x, core, other, other_batched, other_core: np.reshape(g, np.shape(x)),
       None,
       lambda g, ans, x, core, other, other_batched, other_core: zeros_like(other))
defjvp(batch_core_align,
       lambda t, ans, x, core, other, other_batched, other_core:
       batch_core_align(t, core, other, other_batched, other_core),
       None,
       lambda t, ans, x, core, other, other_batched, other_core: zeros_like(ans))
defvjp(batch_flat, lambda g, ans, x: np.reshape(g, np.shape(x)))
defjvp(batch_flat, lambda t, ans, x: batch_flat(t))
defvjp(batch_lift, lambda g, ans, x, n: batch_unlift(g))
defjvp(batch_lift, lambda t, ans, x, n: batch_lift(t, n))
defvjp(batch_view, lambda g, ans, x, n: batch_unlift(g))
defjvp(batch_view, lambda t, ans, x, n: batch_view(t, n))
defvjp(batch_unlift, lambda g, ans, x: batch_view(g, batch_size(x)))
defjvp(batch_unlift, lambda t, ans, x: batch_unlift(t))
defvjp(batch_snapshot, lambda g, ans, x: g)
defjvp(batch_snapshot, lambda t, ans, x: batch_snapshot(t))
defvjp(batch_rows, lambda g, ans, x: batch_rows(g))
defjvp(batch_rows, lambda t, ans, x: batch_rows(t))
defvjp(batch_select, None,
       lambda g, ans, c, a, b: batch_select(c, g, zeros_like(g)),
       lambda g, ans, c, a, b: batch_select(c, zeros_like(g), g))
defjvp(batch_select, None,
       lambda t, ans, c, a, b: batch_select(c, t, zeros_like(t)),
       lambda t, ans, c, a, b: batch_select(c, zeros_like(t), t))
defvjp(batch_contract, None,
       lambda g, ans, spec, a, b: batch_contract_vjp(spec, 0, g, a, b),
       lambda g, ans, spec, a, b: batch_contract_vjp(spec, 1, g, a, b))
defjvp(batch_contract, None,
       lambda t, ans, spec, a, b: batch_contract(spec, t, b),
       lambda t, ans, spec, a, b: batch_contract(spec, a, t))
defvjp(batch_gather, lambda g, ans, x, index, x_batched, index_batched:
       batch_gather_vjp(g, x, index, x_batched, index_batched))
defjvp(batch_gather, lambda t, ans, x, index, x_batched, index_batched:
       batch_gather(t, index, x_batched, index_batched))
defvjp(batch_unbroadcast, lambda c, ans, g, x, g_batched, x_batched:
       np.broadcast_to(batch_align(c, g, True), np.shape(g)),
       lambda c, ans, g, x, g_batched, x_batched: zeros_like(x))
defjvp(batch_unbroadcast, lambda t, ans, g, x, g_batched, x_batched:
       batch_unbroadcast(t, x, g_batched, x_batched),
       lambda t, ans, g, x, g_batched, x_batched: zeros_like(ans))
# the VJP helpers are linear in the cotangent (and bilinear with the other factor)
defvjp(batch_contract_vjp, None, None,
       lambda c, ans, spec, which, g, a, b: B.batch_contract_vjp_vjp(c, spec, which, g, a, b, "g"),
       lambda c, ans, spec, which, g, a, b: B.batch_contract_vjp_vjp(c, spec, which, g, a, b, "a"),
       lambda c, ans, spec, which, g, a, b: B.batch_contract_vjp_vjp(c, spec, which, g, a, b, "b"))
defjvp(batch_contract_vjp, None, None,
       lambda t, ans, spec, which, g, a, b: B.batch_contract_vjp_jvp(t, spec, which, g, a, b, "g"),
       lambda t, ans, spec, which, g, a, b: B.batch_contract_vjp_jvp(t, spec, which, g, a, b, "a"),
       lambda t, ans, spec, which, g, a, b: B.batch_contract_vjp_jvp(t, spec, which, g, a, b, "b"))
defvjp(batch_gather_vjp, lambda c, ans, g, x, index, x_batched, index_batched:
       batch_gather(c, index, x_batched, index_batched),
       lambda c, ans, g, x, index, x_batched, index_batched: zeros_like(x))
defjvp(batch_gather_vjp, lambda t, ans, g, x, index, x_batched, index_batched:
       batch_gather_vjp(t, x, index, x_batched, index_batched),
       lambda t, ans, g, x, index, x_batched, index_batched: zeros_like(ans))
defnondiff(B.batch_check_index, B.batch_size, B.batch_axes, B.batch_axis, B.batch_index, B.batch_shape,
           B.batch_len, B.batch_ndim, B.batch_size_of, B.batch_reshape_arg,
           B.batch_transpose_axes, B.batch_mask, B.batch_spec, B.batch_axis_in,
           B.batch_pad_width, B.batch_stand_in)
# batch_example(x, k): row k of every leaf of x (the operands of one example: the values a
# raising branch runs with, control.raising_if, and each call of vmap's loop over the
# examples written out, passes/per_example_loops.py): linear in x, its transpose puts the
# cotangent at row k of zeros.  An outer vmap batches the raising branch as one example's
# code, so it never meets a batched argument (the jit lowers it)
defvjp(B.batch_example, lambda g, ans, x, k: B.batch_example_vjp(g, x, k))
defjvp(B.batch_example, lambda t, ans, x, k: B.batch_example(t, k))
defno_mode("vmap", "an outer vmap runs the raising branch as one example's code",
           B.batch_example)
# batch_example_vjp(g, x, k): linear in g, its transpose reads row k again
defvjp(B.batch_example_vjp, lambda c, ans, g, x, k: B.batch_example(c, k),
       lambda c, ans, g, x, k: zeros_like(x))
defjvp(B.batch_example_vjp, lambda t, ans, g, x, k: B.batch_example_vjp(t, x, k),
       lambda t, ans, g, x, k: zeros_like(ans))
# stack_examples(outs) (the results of the loop over the examples stacked, leaf by leaf):
# linear in the list; its transpose gives each result its row of the cotangent
defvjp(B.stack_examples, lambda g, ans, outs, name="a call": B.stack_examples_vjp(g, outs))
defjvp(B.stack_examples, lambda t, ans, outs, name="a call": B.stack_examples(t, name))
defvjp(B.stack_examples_vjp, lambda c, ans, g, outs: B.stack_examples(c),
       lambda c, ans, g, outs: zeros_like(outs), container_result=True)
defjvp(B.stack_examples_vjp, lambda t, ans, g, outs: B.stack_examples_vjp(t, outs),
       lambda t, ans, g, outs: zeros_like(ans))
# batch_loop(f, flags, n, *args): vmap's loop over the examples of a call it has no batched
# form for.  Differentiated code has it written out as that loop where f has a derivative
# rule (passes/per_example_loops.py, before reverse and forward mode), so what is left
# here is a call of a function without one
for _mode in ("jvp", "vjp"):
    defno_mode(_mode, "vmap runs this call once per example (it has no batched form), and "
               "the function it calls has no derivative rule, so neither has the loop",
               B.batch_loop)

# batch_vstack(xs) / batch_hstack(xs): linear in xs; their transposes split g back into the
# items (a list), and those are linear in g with the joins (reshaped like g) as transposes
defvjp(batch_vstack, lambda g, ans, xs: batch_vstack_vjp(g, xs))
defjvp(batch_vstack, lambda t, ans, xs: batch_vstack(t))
defvjp(batch_hstack, lambda g, ans, xs: batch_hstack_vjp(g, xs))
defjvp(batch_hstack, lambda t, ans, xs: batch_hstack(t))
defvjp(batch_vstack_vjp, lambda ct, out, g, xs: np.reshape(batch_vstack(ct), np.shape(g)),
       lambda ct, out, g, xs: zeros_like(xs), container_result=True)
defjvp(batch_vstack_vjp, lambda tan, out, g, xs: batch_vstack_vjp(tan, xs),
       lambda tan, out, g, xs: zeros_like(out))
defvjp(batch_hstack_vjp, lambda ct, out, g, xs: np.reshape(batch_hstack(ct), np.shape(g)),
       lambda ct, out, g, xs: zeros_like(xs), container_result=True)
defjvp(batch_hstack_vjp, lambda tan, out, g, xs: batch_hstack_vjp(tan, xs),
       lambda tan, out, g, xs: zeros_like(out))

# batch_array(fn, x, ...) (fn np.array or np.asarray, vmap's as_array rule): linear in x
defvjp(batch_array, None,
       lambda g, ans, fn, x, dtype=None, copy=True, order=None, subok=False, ndmin=0, ndmax=0,
       like=None, device=None: batch_array_vjp(g, x))
defjvp(batch_array, None,
       lambda t, ans, fn, x, dtype=None, copy=True, order=None, subok=False, ndmin=0, ndmax=0,
       like=None, device=None: batch_array_jvp(t, ans, x, copy, ndmin))
defvjp(batch_array_vjp, lambda ct, out, g, x: np.reshape(batch_array(np.array, ct), np.shape(g)),
       lambda ct, out, g, x: zeros_like(x), container_result=True)
defjvp(batch_array_vjp, lambda tan, out, g, x: batch_array_vjp(tan, x),
       lambda tan, out, g, x: zeros_like(out))
