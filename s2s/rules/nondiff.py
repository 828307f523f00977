"""Primitives with a zero derivative or a non-numeric result.

Constructors from shapes, index-valued functions, predicates and dtype
queries.  (``np.sort`` and ``np.full_like``'s ``fill_value`` are
differentiable: see ``shape.py``.)
"""
import numpy as np

from s2s_runtime import build

from .registry import defnondiff, defprops

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
# more index-valued and bitwise functions, floating-point queries
defnondiff(np.spacing, np.isneginf, np.isposinf, np.bitwise_and, np.bitwise_or,
           np.bitwise_xor, np.invert, np.left_shift, np.right_shift, np.gcd, np.lcm,
           np.nanargmax, np.nanargmin, np.lexsort, np.isin, np.ravel_multi_index, np.indices,
           np.array_equiv, np.shares_memory, np.may_share_memory)
# window functions of a length, dtype queries, einsum's contraction path
defnondiff(np.bartlett, np.blackman, np.hamming, np.hanning, np.issubdtype, np.isdtype,
           np.can_cast, np.promote_types, np.iterable)
defnondiff(np.einsum_path, container_result=True)
defnondiff(np.unravel_index, np.tril_indices, np.triu_indices, np.diag_indices,
           np.tril_indices_from, np.triu_indices_from, np.diag_indices_from,
           container_result=True)
defprops(np.nonzero, np.shape, np.unravel_index, np.tril_indices, np.triu_indices,
         np.diag_indices, np.tril_indices_from, np.triu_indices_from, np.diag_indices_from,
         sequence=True)
