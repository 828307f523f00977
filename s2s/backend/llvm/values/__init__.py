"""Values in LLVM IR: memory and the element-level emitters every lowering builds on.

``abi`` (the context block shared with the Python wrapper, allocation and reference
counts of blocks), ``scalars`` (arithmetic, comparisons, casts, math functions),
``arrays`` (views, indexing, allocation, loops over elements), ``fancy`` (advanced
indexing: one integer array or boolean mask), ``overlap`` (writes whose value shares
memory with the target), ``lists`` (lists of numbers that grow).
"""
