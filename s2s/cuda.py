"""``s2s.cuda``: GPU kernels from the same IR and lowering as ``s2s.jit``.

* ``vectorize(f)``: ``f`` a scalar function (or ``s2s.grad(f)``, or a function
  calling ``s2s.jvp``) mapped over arrays; ``.ptx(*examples, arch="sm_80")``
  gives its PTX, calling it launches it (``s2s_runtime.cuda``).
* ``assemble(ptx, arch)``: check PTX with ``ptxas`` (no GPU needed).
* ``available()``: whether a kernel can be launched here.

The PTX path needs ``libdevice`` when the code calls math functions (extra
``s2s[ptx]``); launching needs ``cuda-bindings`` (extra ``s2s[cuda]``), an
NVIDIA driver and a GPU.  Importing this module loads neither.
"""
from __future__ import annotations


def vectorize(fn=None, *, boundscheck: bool = True, arch: str = None):
    """``@s2s.cuda.vectorize``: map a scalar function over arrays on an NVIDIA GPU
    (see ``s2s.backend.cuda.vectorize``)."""
    from .backend.cuda.vectorize import vectorize as _vectorize
    return _vectorize(fn, boundscheck=boundscheck, arch=arch)


def assemble(ptx: str, arch: str = "sm_80"):
    """Assemble PTX with ``ptxas -v`` (``s2s.backend.cuda.ptxas.assemble``)."""
    from .backend.cuda.ptxas import assemble as _assemble
    return _assemble(ptx, arch)


def available() -> bool:
    """True when a kernel can be launched on this machine."""
    from s2s_runtime import cuda
    return cuda.available()


__all__ = ["vectorize", "assemble", "available"]
