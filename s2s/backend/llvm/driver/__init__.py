"""From IR and argument values to a callable native kernel.

``compile`` (type the arguments, build, optimise, JIT, wrap), ``module`` (the LLVM module
of one signature and its C entry point), ``engine`` (llvmlite: verify, O3, MCJIT),
``disk_cache`` (``jit(f, cache=True)``), ``callpath`` (the ctypes call into a kernel and
the errors it reports), ``fastcall`` (the METH_FASTCALL entry for kernels of numbers),
``dump`` (``s2s dump --mode llvm|asm``).
"""
