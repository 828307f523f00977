"""The LLVM backend of ``s2s.jit``: IR to native code through llvmlite.

Layers, top to bottom (a package imports the ones below it; the few upward imports
are deferred to a function and marked):

* ``driver/``  -- from IR and argument values to a callable kernel: compile, module,
  engine (MCJIT), disk_cache, callpath (ctypes), fastcall, dump;
* ``passes/``  -- IR rewrites and analyses run before lowering: dict_versions,
  lean_tapes, remat_pops, local_copies, write_statements, writes;
* ``lower/``   -- statements to LLVM IR: function (``FunctionLowering``), loops,
  loop_versions, scalar_windows, window_accesses, inplace, unique_adjoints, stacks;
* ``ops/``     -- the call table (``ops.calls``) and its handlers for Python and numpy
  callables;
* ``derivs/``  -- handlers of the run-time helpers of derivative code;
* ``batching/``-- handlers of the run-time helpers of ``vmap``'s batched code;
* ``numerics/``-- loops over whole arrays: reductions, axis reductions, matrix
  products, native linear algebra kernels;
* ``values/``  -- values in LLVM IR: abi (memory, the context block), scalars, arrays,
  fancy indexing, overlap, lists;
* ``typing/``  -- the backend's types, their inference, compile-time constants.

Importing ``lower.function`` (or ``driver.compile``) registers every handler.
"""
