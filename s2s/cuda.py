"""``s2s.cuda``: GPU kernels from the same IR and lowering as ``s2s.jit``.

* ``vectorize(f)``: ``f`` a scalar function (or ``s2s.grad(f)``, or a function
  calling ``s2s.jvp``) mapped over arrays; ``.ptx(*examples, arch="sm_80")``
  gives its PTX, calling it launches it (``s2s_runtime.cuda``).
* ``kernel(f)``: the index form -- ``f`` reads its thread's global index
  ``grid(1)`` (``gridsize(1)``: the number of threads) and writes its array
  arguments in place; ``k(*args)`` or ``k[blocks, threads](*args)`` launches it.
* ``assemble(ptx, arch)``: check PTX with ``ptxas`` (no GPU needed).
* ``to_device(array)``: a numpy array copied to the GPU (kernels called with
  device arrays return device arrays).
* ``available()``: whether a kernel can be launched here.

The PTX path needs ``libdevice`` when the code calls math functions (extra
``s2s[ptx]``); launching needs ``cuda-bindings`` (extra ``s2s[cuda]``), an
NVIDIA driver and a GPU.  Importing this module loads neither.
"""
from __future__ import annotations

from s2s_runtime.cuda import grid, gridsize  # noqa: F401  (markers a kernel reads its index with)



def vectorize(fn=None, *, boundscheck: bool = True, arch: str = None):
    """``@s2s.cuda.vectorize``: map a scalar function over arrays on an NVIDIA GPU
    (see ``s2s.core.cuda_vectorize``)."""
    from .core.cuda_vectorize import vectorize as _vectorize
    return _vectorize(fn, boundscheck=boundscheck, arch=arch)


def kernel(fn=None, *, boundscheck: bool = True, arch: str = None):
    """``@s2s.cuda.kernel``: a function that reads ``grid(1)`` and writes arrays in place
    (see ``s2s.core.cuda_kernel``)."""
    from .core.cuda_kernel import kernel as _kernel
    return _kernel(fn, boundscheck=boundscheck, arch=arch)


def assemble(ptx: str, arch: str = "sm_80"):
    """Assemble PTX with ``ptxas -v`` (``s2s.backend.cuda.ptxas.assemble``)."""
    from .backend.cuda.ptxas import assemble as _assemble
    return _assemble(ptx, arch)


def to_device(array):
    """A copy of the numpy array on the GPU (``s2s_runtime.cuda.DeviceArray``: it has
    ``__cuda_array_interface__`` and ``copy_to_host()``); kernels called with device
    arrays return device arrays, so data can stay on the GPU between calls."""
    from s2s_runtime import cuda
    return cuda.to_device(array)


def available() -> bool:
    """True when a kernel can be launched on this machine."""
    from s2s_runtime import cuda
    return cuda.available()


__all__ = ["vectorize", "kernel", "grid", "gridsize", "assemble", "to_device", "available"]
