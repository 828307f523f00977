"""Running the elementwise kernels on the host, where there is no GPU.

``Vectorized.kernel(..., cpu=True)`` builds the same kernel module for the
host (one thread: the special registers are ``(0, 1)``).  ``run_on_host``
compiles it with LLVM (its own MCJIT engine, so kernel names never clash
with ``s2s.jit``'s) and calls it on numpy arrays with ctypes: it checks the
kernel's loads, stores, outputs and error words, i.e. everything but the
NVPTX-specific lines.  ``FakeDriver`` is a stand-in for
``cuda.bindings.driver`` that keeps "device" memory on the host and runs
``cuLaunchKernel`` with these host kernels, so the launcher of
``s2s_runtime.cuda`` and ``Vectorized.__call__`` run end to end.
"""
from __future__ import annotations

import ctypes
import itertools
import types

import llvmlite.binding as llvm
import numpy as np

from s2s.backend.llvm.driver import engine

_ENGINES = {}


def compile_host(kt):
    """``(ctypes function, argtypes)`` of the host build ``kt`` of a kernel."""
    hit = _ENGINES.get(kt.text)
    if hit is None:
        text = engine.optimise(kt.text)
        engine._target()
        mod = llvm.parse_assembly(text)
        ee = llvm.create_mcjit_compiler(mod, engine._STATE["tm"])
        ee.finalize_object()
        c_of = {"i64": ctypes.c_int64, "double": ctypes.c_double, "float": ctypes.c_float,
                "i8": ctypes.c_int8, "ptr": ctypes.c_void_p}
        argtypes = [c_of[str(a.type)] for a in mod.get_function(kt.name).arguments]
        fn = ctypes.CFUNCTYPE(None, *argtypes)(ee.get_function_address(kt.name))
        hit = _ENGINES[kt.text] = (fn, argtypes, ee, mod)
    return hit[0], hit[1]


def run_on_host(vectorized, *args):
    """``(outputs, error words)`` of the host build of ``vectorized``'s kernel on
    1-d arrays (or numbers) ``args``."""
    kt, free = vectorized.kernel(*args, cpu=True)
    fn, _ = compile_host(kt)
    n = max([np.size(a) for a in args if isinstance(a, np.ndarray)] or [1])
    keep, cargs = [], [n]
    for (kind, t), a in zip(kt.inputs, list(args) + list(free)):
        if kind == "array":
            arr = np.ascontiguousarray(a, dtype=t.numpy())
            keep.append(arr)
            cargs.append(arr.ctypes.data)
        elif t.dtype == "c16":
            cargs += [complex(a).real, complex(a).imag]
        else:
            cargs.append(a.item() if isinstance(a, np.ndarray) else a)
    outs = [np.full(n, -12345, dtype=np.dtype(t.numpy())) if t.dtype != "b1"
            else np.zeros(n, np.bool_) for t in kt.outputs]
    err = np.zeros(4, np.int64)
    fn(*cargs, *[o.ctypes.data for o in outs], err.ctypes.data)
    return outs, err


class FakeDriver(types.SimpleNamespace):
    """A host stand-in for ``cuda.bindings.driver`` (see the module's docstring).

    ``kernels`` maps kernel names to host builds (``KernelText`` with
    ``cpu=True``); ``calls`` records (name, arguments) of every driver call."""

    def __init__(self, kernels=None, device_count=1, init_error=None):
        super().__init__()
        self.kernels = dict(kernels or {})
        self.device_count = device_count
        self.init_error = init_error
        self.calls = []
        self.memory = {}
        self.modules = {}
        self._ids = itertools.count(1)

        class CUresult(int):
            @property
            def name(self):
                return {0: "CUDA_SUCCESS", 100: "CUDA_ERROR_NO_DEVICE",
                        218: "CUDA_ERROR_INVALID_PTX"}.get(int(self), "CUDA_ERROR_UNKNOWN")

        class Attr:
            CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
            CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36
            CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37

        self.CUresult = CUresult
        self.CUdevice_attribute = Attr
        self.CUdeviceptr = int
        self.CUstream = int

    def _ok(self, *values):
        return (self.CUresult(0),) + values

    def _log(self, name, *args):
        self.calls.append((name, args))

    def cuInit(self, flags):
        self._log("cuInit", flags)
        if isinstance(self.init_error, Exception):
            raise self.init_error
        return (self.CUresult(self.init_error or 0),)

    def cuDeviceGetCount(self):
        return self._ok(self.device_count)

    def cuDeviceGet(self, k):
        return self._ok(k)

    def cuDevicePrimaryCtxRetain(self, dev):
        return self._ok("ctx")

    def cuCtxSetCurrent(self, ctx):
        return self._ok()

    def cuDeviceGetAttribute(self, attr, dev):
        return self._ok({16: 4, 75: 9, 76: 0, 36: 2_619_000, 37: 6144}[attr])

    def cuDeviceGetName(self, n, dev):
        return self._ok(b"Fake GPU\0\0")

    def cuGetErrorName(self, code):
        return self._ok(self.CUresult(code).name.encode())

    def cuGetErrorString(self, code):
        return self._ok(b"a fake driver error")

    def cuModuleLoadData(self, image):
        self._log("cuModuleLoadData", image)
        if not image.endswith(b"\0") or b".entry" not in image:
            return (self.CUresult(218), None)
        handle = next(self._ids)
        self.modules[handle] = image
        return self._ok(handle)

    def cuModuleGetFunction(self, module, name):
        self._log("cuModuleGetFunction", module, name)
        if name.decode() not in self.kernels or b".entry " + name not in self.modules[module]:
            return (self.CUresult(500), None)
        return self._ok(name.decode())

    def cuMemAlloc(self, nbytes):
        buf = np.zeros(nbytes + 8, np.uint8)
        self.memory[buf.ctypes.data] = buf
        return self._ok(buf.ctypes.data)

    def cuMemFree(self, ptr):
        self.memory.pop(int(ptr), None)
        return self._ok()

    def cuMemcpyHtoD(self, dst, src, nbytes):
        self._log("cuMemcpyHtoD", int(dst), nbytes)
        ctypes.memmove(int(dst), int(src), nbytes)
        return self._ok()

    def cuMemcpyDtoH(self, dst, src, nbytes):
        self._log("cuMemcpyDtoH", int(src), nbytes)
        ctypes.memmove(int(dst), int(src), nbytes)
        return self._ok()

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        self._log("cuLaunchKernel", f, (gx, gy, gz), (bx, by, bz))
        fn, argtypes = compile_host(self.kernels[f])
        pointers = (ctypes.c_void_p * len(argtypes)).from_address(params)
        values = [ctypes.cast(p, ctypes.POINTER(t)).contents.value
                  for p, t in zip(pointers, argtypes)]
        fn(*values)
        return self._ok()

    def cuCtxSynchronize(self):
        return self._ok()

    def cuMemcpyDtoD(self, dst, src, nbytes):
        ctypes.memmove(int(dst), int(src), nbytes)
        return self._ok()

    def cuEventCreate(self, flags):
        return self._ok([0.0])

    def cuEventRecord(self, event, stream):
        import time
        event[0] = time.perf_counter()
        return self._ok()

    def cuEventSynchronize(self, event):
        return self._ok()

    def cuEventElapsedTime(self, start, end):
        return self._ok(max(end[0] - start[0], 1e-9) * 1e3)
