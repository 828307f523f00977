"""Lowering of IR statements to LLVM IR.

``function`` (``FunctionLowering``: variables, control flow, errors, the kernel
function), ``loops`` (``for``/``while``, a mixin of it), ``loop_versions`` (bounds
checks of affine indices hoisted out of ``range`` loops), ``scalar_windows`` and
``window_accesses`` (a stencil adjoint's array elements kept in registers),
``inplace`` and ``unique_adjoints`` (adjoint accumulations done in place where no one
can see), ``stacks`` (reverse mode's tapes as native stacks).
"""
