"""The run-time helpers s2s reads as code (``registry.definline``).

Each helper here is plain numpy Python: a transform that has no rule of its own
for it (``vmap`` without a batching rule, ``jit`` without a lowering, forward or
reverse mode without templates) inlines its source (``passes/helpers.py``), so
that mode comes from the primitives the helper calls.  Where a transform has its
own rule, the call stays and the generated Python calls the helper.  A helper is
listed here when reading it as code was measured to work in the transforms that
lack a rule (``tests/unit/test_helper_code.py``, ``tests/compose/test_helper_rules.py``:
each against a loop over the batch, the Python result, finite differences).
"""
import numpy as np
from s2s_runtime import (batching, batching_numpy, batching_writes, helper_rules, index_writes, jvps_arrays, linalg,
                         second_order)
from s2s_runtime.adjoint import getitem_vjp

from .registry import definline

definline(jvps_arrays.max_jvp)
# math.remainder of every example (vmap's form of it): its derivatives, its batching under
# an outer vmap and its compilation come from the numpy functions it calls
definline(batching_numpy.batch_remainder)
definline(linalg.as_columns, linalg.from_columns, batching.batch_select_replayed,
          batching_numpy.batch_solve, batching_numpy.batch_diag, batching_numpy.batch_tile)
definline(batching.batch_setitem, batching.batch_index, batching_writes.batch_inplace)
# batched code's view of a per-example rank and of per-example axes, as an outer vmap of
# batched code (vmap of the derivative of code that calls vmap) reads it: each is a
# function of one example's shape, so its batched form comes from np.ndim and reshape
definline(batching.batch_align, batching.per_example_ndim, batching.batch_axes,
          batching.batch_axis, batching.batch_axis_in, batching.batch_axis_of)
# the same for the pad widths and shape stand-ins of batched code (the jit lowers the pad
# widths, ``backend/llvm/batching/axes.py``, and gets a stand-in of an array from numpy,
# ``backend/llvm/ops/host_calls.py``)
definline(batching_numpy.batch_pad_width, batching_numpy.batch_stand_in, modes=("vmap",))
# np.broadcast_to of every example, as the jit compiles it (jit(vmap(f)) of np.broadcast_to)
definline(batching_numpy.batch_broadcast_to, modes=("jit",))
# helpers of derivative code that other modes meet (grad of grad, vmap of hessian...)
definline(helper_rules.add_vjp, helper_rules.add_jvp, index_writes.index_set_vjp_value_transpose,
          index_writes.scattered_values)
definline(*(getattr(second_order, f"{product}_vjp_{mode}")
            for product in ("dot", "inner", "tensordot") for mode in ("jvp", "vjp", "transpose")))
# the builtin sum of every example (over the rows of an array, or the batched items of a
# list): plain code, so grad(vmap(f)) and jit(vmap(f)) of sum(list) come from np.sum and sum
definline(batching_numpy.batch_sum_items, batching_numpy.batch_sum_builtin_vjp)
# the builtin max/min of numbers of every example: plain code (np.where in a scan)
definline(batching_numpy.batch_extreme_items, batching_numpy.batch_extreme_position,
          batching_numpy.batch_extreme_ct,
          batching_numpy.batch_extreme_tangent)


def stack_examples(outs, name="a call"):
    """``rt.stack_examples`` as the jit reads it: the results of the loop over the examples
    (arrays or numbers, as compiled code's lists hold) stacked on a new axis 0."""
    return np.stack(outs)


def batch_example_vjp(g, x, k):
    """``rt.batch_example_vjp`` of an array as the jit reads it: ``g`` at row ``k`` of
    zeros shaped like ``x``."""
    return getitem_vjp(g, x, k)


def stack_examples_vjp(g, outs):
    """``rt.stack_examples_vjp`` as the jit reads it: row ``k`` of ``g`` for result ``k``."""
    parts = []
    for k in range(len(outs)):
        parts.append(g[k])
    return parts


# vmap's loop over the examples written out for a derivative (passes/per_example_loops.py)
# stacks its results with rt.stack_examples; compiled, they are a list of arrays or numbers
definline(batching.stack_examples, code=stack_examples, modes=("jit",))
definline(batching.stack_examples_vjp, code=stack_examples_vjp, modes=("jit",))
definline(batching.batch_example_vjp, code=batch_example_vjp, modes=("jit",))
