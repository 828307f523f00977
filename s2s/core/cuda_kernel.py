"""``s2s.cuda.kernel``: the index form, a function that reads ``s2s.cuda.grid(1)``
and writes its array arguments in place (``indexed.py`` builds the kernel).

Contract: ``Kernel(fn)``:

* ``ptx(*examples, arch="sm_80")``: the PTX for arguments like ``examples``
  (numpy arrays, device arrays, numbers; specialised on dtype and ndim);
* ``kernel(*args, n=None)``: launch one thread per index ``0 <= i < n`` (``n``
  defaults to the size of the first array argument; threads are launched in
  blocks of 256, so ``grid(1)`` may exceed ``n - 1``: the body tests it);
  ``kernel[blocks, threads](*args)``: launch that grid, as Numba's CUDA
  kernels are launched;
* numpy array arguments are copied to the device, and back into the same
  arrays after the launch (the kernel writes them in place); arrays
  exposing ``__cuda_array_interface__`` (CuPy, ``DeviceArray``) are used in
  place.  Returns None.  An error in the body (an index out of bounds, a
  ``raise``) is raised after the launch.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ..backend.llvm.typing import types as T
from ..backend.llvm.driver.compile import param_types
from ..backend.cuda import compile as ptx_compile
from ..backend.cuda.indexed import build_indexed
from ..backend.cuda.target import DEFAULT_ARCH, check_arch
from .cuda_vectorize import ptx_arch, raise_kernel_error, scalar_params


def _example(x, where):
    if hasattr(x, "__cuda_array_interface__"):
        cai = x.__cuda_array_interface__
        return np.zeros((1,) * len(cai["shape"]), np.dtype(cai["typestr"]))
    if isinstance(x, (np.ndarray, bool, int, float, complex, np.generic)):
        return x
    raise TypeError(f"cuda.kernel: {where} is a {type(x).__name__}; kernels take numpy "
                    "arrays, device arrays (__cuda_array_interface__) and numbers")


class Kernel:
    def __init__(self, fn, boundscheck=True, arch=None):
        from .jit import Jitted
        self.jitted = Jitted(fn, boundscheck=boundscheck)
        self.fn = fn
        self.arch = arch
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn
        self._kernels = {}

    def kernel(self, *examples, cpu=False):
        """``KernelText`` for arguments like ``examples`` (``cpu``: the host build)."""
        j = self.jitted
        if len(examples) != j.nargs:
            raise TypeError(f"cuda.kernel: {self.__name__} takes {j.nargs} argument(s), "
                            f"got {len(examples)}")
        values = [_example(x, f"argument {n!r}") for x, n in zip(examples, j.param_names)]
        func, load_free = j.source_ir(values)
        free = list(load_free())
        if free:
            names = [p.var.name for p in func.params][len(values):]
            raise TypeError(f"cuda.kernel: {self.__name__} reads the global(s) "
                            f"{', '.join(map(repr, names))}; pass them as arguments")
        types = param_types(func, values, j.describe)
        key = (tuple(map(str, types)), func.name)
        hit = self._kernels.get((key, cpu))
        if hit is None:
            digest = hashlib.sha1(repr(key).encode()).hexdigest()[:10]
            name = "s2s_" + "".join(c if c.isalnum() else "_" for c in func.name) + "_" + digest
            hit = self._kernels[(key, cpu)] = build_indexed(func, types, name,
                                                            j.boundscheck, cpu=cpu)
        return hit

    def ptx(self, *examples, arch=None) -> str:
        kt = self.kernel(*examples)
        return ptx_compile.ptx(kt.text, [kt.name], check_arch(arch or self.arch or DEFAULT_ARCH))

    def __getitem__(self, config):
        blocks, threads = config
        return lambda *args: self._launch(args, int(blocks), int(threads))

    def __call__(self, *args, n=None):
        if n is None:
            sizes = [np.size(a) for a in args if isinstance(a, np.ndarray)] + \
                [int(np.prod(a.__cuda_array_interface__["shape"])) for a in args
                 if hasattr(a, "__cuda_array_interface__")]
            if not sizes:
                raise TypeError(f"cuda.kernel: {self.__name__}: give n= (the number of "
                                "threads) when no argument is an array")
            n = sizes[0]
        block = 256
        return self._launch(args, max(1, -(-int(n) // block)), block)

    def _launch(self, args, blocks, threads):
        from s2s_runtime import cuda as rt
        kt = self.kernel(*args)
        ctx = rt.context()
        params, copies, keep = [("i64", blocks * threads)], [], []
        for (kind, t), a in zip(kt.inputs, args):
            if kind == "scalar":
                params += scalar_params(a, t)
                continue
            if rt.is_device_array(a):
                dev = rt.as_device(a)
            else:
                dev = rt.to_device(a)
                copies.append((a, dev))
            keep.append(dev)
            strides = dev.strides or rt.c_strides(dev.shape, dev.dtype)
            params += [("ptr", dev.ptr)] + [("i64", s) for s in dev.shape] + \
                [("i64", s) for s in strides]
        err = rt.to_device(np.zeros(4, np.int64))
        params.append(("ptr", err.ptr))
        arch = self.arch or ptx_arch(ctx.arch)
        fn = rt.load(ptx_compile.ptx(kt.text, [kt.name], arch), kt.name)
        rt.launch_grid(fn, blocks, threads, params)
        for host, dev in copies:
            if host.flags.writeable:
                np.copyto(host, dev.copy_to_host())
        raise_kernel_error(err.copy_to_host(), kt.sites)


def kernel(fn=None, *, boundscheck=True, arch=None):
    """``@s2s.cuda.kernel``: a function that reads ``s2s.cuda.grid(1)`` and writes arrays."""
    if fn is None:
        return lambda f: kernel(f, boundscheck=boundscheck, arch=arch)
    if arch is not None:
        check_arch(arch)
    return Kernel(fn, boundscheck=boundscheck, arch=arch)


_ = T
