"""Kernel module text -> PTX (optimised, math linked from libdevice), cached.

Contract: ``ptx(text, kernels, arch)`` returns the PTX of the LLVM module
``text`` for ``arch`` (``sm_80`` default):

1. parse and verify; optimise (``O3`` with the NVPTX target's passes), so the
   device function is inlined and ``pow(x, 2.0)`` becomes ``x * x`` while the
   math calls are still LLVM intrinsics;
2. rename the remaining math calls to libdevice's (``libdevice.rename_math``)
   and, if there are any, link ``libdevice.10.bc`` (a missing libdevice raises
   ``ToolkitMissingError`` naming the extra to install);
3. optimise again (NVVM reflect folds libdevice's ``__nvvm_reflect`` queries;
   the unused libdevice functions, made internal, are dropped) and emit PTX.

``kernels`` names the functions that stay visible (the ``.entry`` points).
The result is a pure function of the arguments (deterministic text) and is
cached per process.
"""
from __future__ import annotations

from . import libdevice, target

_CACHE = {}


def optimised_ir(text: str, kernels, arch: str = target.DEFAULT_ARCH) -> str:
    """The module after both optimisation rounds, libdevice linked (LLVM IR text)."""
    mod = target.optimise(target.parse(text), arch)
    renamed, used = libdevice.rename_math(str(mod))
    if used:
        mod = target.parse(renamed)
        libdevice.link(mod, keep=kernels)
        target.optimise(target.drop_unused(mod, arch), arch)
    return str(mod)


def ptx(text: str, kernels, arch: str = target.DEFAULT_ARCH) -> str:
    target.check_arch(arch)
    key = (text, tuple(kernels), arch)
    hit = _CACHE.get(key)
    if hit is None:
        mod = target.parse(optimised_ir(text, kernels, arch))
        hit = _CACHE[key] = target.emit_ptx(mod, arch)
    return hit
