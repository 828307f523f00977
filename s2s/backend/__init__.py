"""Native code generation backends (``llvm/``: CPU JIT through llvmlite)."""
