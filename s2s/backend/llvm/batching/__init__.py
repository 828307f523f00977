"""The run-time helpers of ``vmap``'s batched code (``s2s_runtime.batching``) in LLVM IR,
so that ``jit(vmap(f))`` compiles the batched program (``s2s/core/vmap_jit.py``).

``axes`` (where the batch axis is: sizes, shapes, views, reshapes, moves, stacking),
``masks`` (masks and selection of batched branches and loops, logical functions),
``per_example`` (reductions over each example and their cotangents), ``lanes`` (loops
whose trip count differs per example), ``indexing``
(writes and reads whose index differs per example), ``values`` (``batch_value``: a
batched read made a value), ``contractions`` (batched products and two-operand einsum
as loop nests).
"""

# the call table first: it registers these modules' handlers (importing one of them
# alone, before the table, would meet the table's modules half-initialised)
from ..ops import calls  # noqa: E402,F401
