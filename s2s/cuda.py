"""``s2s.cuda``: GPU kernels from the same IR and lowering as ``s2s.jit``.

* ``vectorize(f)``: ``f`` a scalar function (or ``s2s.grad(f)``, or a function
  calling ``s2s.jvp``) mapped over arrays; ``.ptx(*examples, arch="sm_80")``
  gives its PTX, calling it launches it (``s2s_runtime.cuda``).
* ``assemble(ptx, arch)``: check PTX with ``ptxas`` (no GPU needed).
* ``available()``: whether a kernel can be launched here.

The PTX path needs ``libdevice`` when the code calls math functions (extra
``s2s[ptx]``); launching needs ``cuda-bindings`` (extra ``s2s[cuda]``), an
NVIDIA driver and a GPU.
"""
from __future__ import annotations

from .backend.cuda.ptxas import assemble
from .backend.cuda.toolkit import ToolkitMissingError
from .backend.cuda.vectorize import Vectorized, vectorize


def available() -> bool:
    """True when a kernel can be launched on this machine."""
    from s2s_runtime import cuda
    return cuda.available()


__all__ = ["vectorize", "Vectorized", "assemble", "available", "ToolkitMissingError"]
