"""The LLVM backend of ``s2s.jit``: IR to native code through llvmlite.

Packages, top to bottom: each imports those below it, at module level, except that
``ops.calls`` imports ``derivs`` and ``batching`` at its end so that their handlers
register (they import ``ops.calls``), and ``passes`` reads ``lower.stacks`` and
``lower.inplace``; imports upward otherwise are deferred to a function.

* ``driver/``  -- from IR and argument values to a callable kernel: compile, module,
  engine (MCJIT), disk_cache, callpath (ctypes), fastcall, dump;
* ``passes/``  -- IR rewrites and analyses run before lowering: type_versions,
  lean_tapes, remat_pops, frozen_arrays, split_records, local_copies, write_statements,
  writes;
* ``lower/``   -- statements to LLVM IR: function (``FunctionLowering``), loops,
  loop_versions, scalar_windows, window_accesses, inplace, unique_adjoints, stacks;
* ``ops/``     -- the call table (``ops.calls``) and its handlers for Python and numpy
  callables: numbers, arrays, build, fancy, lists, dicts, linalg, norm, printing;
* ``derivs/``  -- handlers of the run-time helpers of derivative code: adjoints,
  products, linalg, norm, lists, tuples, custom_checks, remat_calls, jacobian_ops;
* ``batching/``-- handlers of the run-time helpers of ``vmap``'s batched code: axes,
  masks, per_example, indexing, values, contractions;
* ``numerics/``-- loops over whole arrays: reductions, axis reductions, matrix
  products, native linear algebra kernels;
* ``values/``  -- values in LLVM IR: abi (memory, the context block), scalars, arrays,
  fancy indexing, overlap, lists;
* ``typing/``  -- the backend's types, their inference, compile-time constants.

Importing ``lower.function`` (or ``driver.compile``) registers every handler.
"""
