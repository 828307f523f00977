"""Primitives with a zero derivative or a non-numeric result.

Constructors from shapes, index-valued functions, predicates and dtype
queries.  (``np.sort`` and ``np.full_like``'s ``fill_value`` are
differentiable: see ``shape.py``.)
"""
import numpy as np

from s2s_runtime import build

from .registry import defnondiff

# constructors from a shape (their values do not depend on differentiable inputs)
defnondiff(np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like,
           np.arange, np.eye, np.identity, np.tri)
# integer / index results
defnondiff(np.argmax, np.argmin, np.argsort, np.argwhere, np.flatnonzero,
           np.searchsorted, np.count_nonzero, np.argpartition, np.digitize)
# shape, dtype and truth queries
defnondiff(np.nonzero, np.shape, container_result=True)
defnondiff(np.ndim, np.size, np.all, np.any, np.iscomplexobj, np.isrealobj,
           np.iscomplex, np.isreal, np.isscalar, np.result_type, np.dtype, np.broadcast_shapes,
           build.dtype_of)
# strings
defnondiff(build.format_percent, build.format_string)

# stop_gradient(x) = x for any pytree x, d/dx = 0 in every mode (JAX's lax.stop_gradient):
# JVP 0, VJP 0; batching and lowering the identity.  Its result is the argument itself
# (container_result: a write into it would be a write into the argument, refused as shared)
from s2s_runtime import stop_gradient  # noqa: E402

defnondiff(stop_gradient, container_result=True, identity=True)

# checkpoint_loop(r, levels) = r and range_bounds(r, levels) = (start, stop, step, levels):
# a range and ints, nothing to differentiate (reverse mode replaces the marked loop)
from s2s_runtime.markers import checkpoint_loop, range_bounds  # noqa: E402

defnondiff(checkpoint_loop, range_bounds)
