"""The run-time helpers of ``vmap``'s batched code (``s2s_runtime.batching``) in LLVM IR,
so that ``jit(vmap(f))`` compiles the batched program.

``helpers``, ``batching_more``, ``indexing`` (writes and reads whose index differs per
example), ``values`` (``batch_value``: a batched read made a value), ``contractions``
(batched products and two-operand einsum as loop nests).
"""
