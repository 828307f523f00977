"""Launching PTX kernels through the CUDA driver API (``cuda-bindings``, extra ``s2s[cuda]``).

Contract:

* ``driver()`` is the ``cuda.bindings.driver`` module, or raises
  ``CudaUnavailableError`` saying to install the extra ``s2s[cuda]``;
  ``context()`` initialises the driver once (``cuInit``, device 0, its primary
  context made current) or raises ``CudaUnavailableError`` saying that no CUDA
  driver or device was found.
* Every driver call goes through ``check``: a ``CUresult`` other than
  ``CUDA_SUCCESS`` raises ``CudaDriverError`` (its ``code``, its name such as
  ``CUDA_ERROR_INVALID_PTX``, the driver's description, the call).
* ``load(ptx, name)`` is the ``CUfunction`` of kernel ``name`` of a PTX module
  (``cuModuleLoadData``; loaded once per text).
* ``DeviceArray`` is memory on the device with a shape and a dtype; it exposes
  ``__cuda_array_interface__`` (version 3, so CuPy/Numba/PyTorch can wrap it
  without a copy) and ``copy_to_host()``.  ``to_device(numpy array)`` copies
  one over; ``as_device(obj)`` views any object exposing
  ``__cuda_array_interface__`` (e.g. a CuPy array) without copying.
* ``grid_for(n, block, max_blocks)`` is the launch grid of an ``n``-element
  grid-stride kernel; ``pack_params(params)`` is the ``void**`` array
  ``cuLaunchKernel`` takes, from ``(kind, value)`` pairs (``"i64" "i32" "i8"
  "f64" "f32" "ptr"``); ``launch(function, n, params)`` and
  ``launch_grid(function, grid, block, params)`` launch and wait.

Nothing here imports ``s2s``; ``cuda-bindings`` is imported on first use, so
importing this module works on any machine.
"""
from __future__ import annotations

import ctypes
import math
import threading

import numpy as np

INSTALL_HINT = "install the extra s2s[cuda] (pip install 'cuda-bindings')"


class CudaError(RuntimeError):
    """An error of the CUDA path at run time."""


class CudaUnavailableError(CudaError):
    """No CUDA: cuda-bindings is not installed, or no driver / device was found."""


class CudaDriverError(CudaError):
    """A CUDA driver call returned an error code."""

    def __init__(self, call, code, name, description):
        self.call, self.code, self.name = call, code, name
        super().__init__(f"{call} failed: {name} ({code}): {description}")


_STATE = {}
_LOCK = threading.Lock()


def use_driver(module):
    """Use ``module`` as the driver API (tests: a fake one); None: back to cuda-bindings."""
    with _LOCK:
        _STATE.clear()
        if module is not None:
            _STATE["driver"] = module


def driver():
    d = _STATE.get("driver")
    if d is None:
        try:
            from cuda.bindings import driver as d
        except ImportError as e:
            raise CudaUnavailableError(
                f"cuda: the CUDA driver bindings are not installed ({e}); {INSTALL_HINT}, "
                "on a machine with an NVIDIA GPU and its driver") from None
        _STATE["driver"] = d
    return d


def _result_code(result):
    return result[0] if isinstance(result, tuple) else result


def check(result, call="CUDA driver call"):
    """The values after the ``CUresult`` of a driver call's result tuple (one value: the
    value itself; none: None); an error code raises ``CudaDriverError``."""
    d = driver()
    code = _result_code(result)
    if int(code) != 0:
        name = description = "?"
        try:
            err, text = d.cuGetErrorName(code)
            if int(err) == 0 and text:
                name = text.decode() if isinstance(text, bytes) else str(text)
            err, text = d.cuGetErrorString(code)
            if int(err) == 0 and text:
                description = text.decode() if isinstance(text, bytes) else str(text)
        except Exception:  # the error's own description is best effort
            pass
        raise CudaDriverError(call, int(code), name, description)
    rest = result[1:] if isinstance(result, tuple) else ()
    return None if not rest else rest[0] if len(rest) == 1 else rest


class Context:
    """Device 0 and its primary context, current on the calling thread."""

    def __init__(self, d):
        try:
            code = _result_code(d.cuInit(0))
        except Exception as e:  # cuda-bindings raises when libcuda.so is not found
            raise CudaUnavailableError(
                f"cuda: no CUDA driver was found ({type(e).__name__}: {e}); launching a "
                "kernel needs an NVIDIA GPU and its driver (s2s.cuda can still make and "
                "check PTX without one)") from None
        if int(code) != 0:
            name = getattr(code, "name", str(code))
            raise CudaUnavailableError(
                f"cuda: no CUDA device was found (cuInit: {name}); launching a kernel needs "
                "an NVIDIA GPU (s2s.cuda can still make and check PTX without one)")
        count = check(d.cuDeviceGetCount(), "cuDeviceGetCount")
        if int(count) < 1:
            raise CudaUnavailableError("cuda: no CUDA device was found (the driver reports 0)")
        self.device = check(d.cuDeviceGet(0), "cuDeviceGet")
        self.handle = check(d.cuDevicePrimaryCtxRetain(self.device), "cuDevicePrimaryCtxRetain")
        check(d.cuCtxSetCurrent(self.handle), "cuCtxSetCurrent")
        attr = d.CUdevice_attribute
        self.sm_count = int(check(d.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self.device), "cuDeviceGetAttribute"))
        major = check(d.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device), "cuDeviceGetAttribute")
        minor = check(d.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device), "cuDeviceGetAttribute")
        self.arch = f"sm_{int(major)}{int(minor)}"
        name = check(d.cuDeviceGetName(256, self.device), "cuDeviceGetName")
        self.name = (name.split(b"\0")[0].decode() if isinstance(name, bytes) else str(name))
        self.functions = {}

    def make_current(self):
        check(driver().cuCtxSetCurrent(self.handle), "cuCtxSetCurrent")


def context() -> Context:
    """The process's CUDA context (made on first use)."""
    ctx = _STATE.get("context")
    if ctx is None:
        d = driver()
        with _LOCK:
            ctx = _STATE.get("context")
            if ctx is None:
                ctx = _STATE["context"] = Context(d)
    else:
        ctx.make_current()
    return ctx


def available() -> bool:
    """True when a kernel can be launched here (bindings, driver and a device)."""
    try:
        context()
        return True
    except CudaError:
        return False


def load(ptx: str, name: str):
    """The ``CUfunction`` ``name`` of the PTX module ``ptx`` (loaded once)."""
    ctx = context()
    key = (ptx, name)
    fn = ctx.functions.get(key)
    if fn is None:
        d = driver()
        module = check(d.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData")
        fn = ctx.functions[key] = check(d.cuModuleGetFunction(module, name.encode()),
                                        f"cuModuleGetFunction({name!r})")
    return fn


# -- memory ------------------------------------------------------------------------------
class DeviceBuffer:
    """``nbytes`` of device memory (freed when the object is collected)."""

    def __init__(self, nbytes: int):
        context()
        self.nbytes = int(nbytes)
        self._ptr = check(driver().cuMemAlloc(max(self.nbytes, 1)), "cuMemAlloc")
        self.ptr = int(self._ptr)

    def __del__(self):
        ptr, self._ptr = getattr(self, "_ptr", None), None
        if ptr is not None and _STATE.get("context") is not None:
            try:
                driver().cuMemFree(ptr)
            except Exception:
                pass


class DeviceArray:
    """A C-contiguous array in device memory (``owner`` keeps the memory alive)."""

    def __init__(self, ptr: int, shape, dtype, owner=None, strides=None):
        self.ptr, self.shape, self.dtype = int(ptr), tuple(shape), np.dtype(dtype)
        self.strides, self.owner = strides, owner
        self.size = math.prod(self.shape)
        self.nbytes = self.size * self.dtype.itemsize

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "strides": self.strides, "version": 3}

    def is_c_contiguous(self) -> bool:
        return self.strides is None or tuple(self.strides) == c_strides(self.shape, self.dtype)

    def copy_to_host(self, out=None):
        if not self.is_c_contiguous():
            raise CudaError("cuda: copy_to_host of a non-contiguous device array")
        out = np.empty(self.shape, self.dtype) if out is None else out
        if self.nbytes:
            check(driver().cuMemcpyDtoH(out.ctypes.data, driver().CUdeviceptr(self.ptr),
                                        self.nbytes), "cuMemcpyDtoH")
        return out

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x})"


def c_strides(shape, dtype):
    strides, step = [], np.dtype(dtype).itemsize
    for n in reversed(tuple(shape)):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def empty(shape, dtype) -> DeviceArray:
    dtype = np.dtype(dtype)
    buf = DeviceBuffer(math.prod(tuple(shape)) * dtype.itemsize)
    return DeviceArray(buf.ptr, shape, dtype, owner=buf)


def to_device(array) -> DeviceArray:
    """A device copy of the numpy array ``array`` (made C-contiguous)."""
    host = np.ascontiguousarray(array)
    out = empty(host.shape, host.dtype)
    if host.nbytes:
        check(driver().cuMemcpyHtoD(driver().CUdeviceptr(out.ptr), host.ctypes.data,
                                    host.nbytes), "cuMemcpyHtoD")
    return out


def is_device_array(obj) -> bool:
    return hasattr(obj, "__cuda_array_interface__")


def as_device(obj) -> DeviceArray:
    """A view of an object exposing ``__cuda_array_interface__`` (no copy)."""
    cai = obj.__cuda_array_interface__
    ptr = cai["data"][0] or 0
    strides = cai.get("strides")
    view = DeviceArray(ptr, cai["shape"], np.dtype(cai["typestr"]), owner=obj,
                       strides=tuple(strides) if strides is not None else None)
    if cai.get("mask") is not None:
        raise CudaError("cuda: masked device arrays are not supported")
    return view


# -- launching ---------------------------------------------------------------------------
_CTYPES = {"i64": ctypes.c_int64, "i32": ctypes.c_int32, "i8": ctypes.c_int8,
           "f64": ctypes.c_double, "f32": ctypes.c_float, "ptr": ctypes.c_uint64}


def pack_params(params):
    """``(keep_alive, address)``: the ``void*[]`` of pointers to each parameter value."""
    values = [_CTYPES[kind](value) for kind, value in params]
    array = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])
    return (values, array), ctypes.addressof(array)


def grid_for(n: int, block: int = 256, max_blocks: int = None):
    """``(grid, block)`` for ``n`` elements: enough blocks for one element per thread,
    at most ``max_blocks`` (the kernels stride over the rest), at least one."""
    blocks = max(1, -(-int(n) // block))
    if max_blocks is not None:
        blocks = min(blocks, max(1, int(max_blocks)))
    return min(blocks, 2 ** 31 - 1), block


def launch(function, n: int, params, block: int = 256, sync: bool = True,
           grid_stride: bool = True):
    """Launch a kernel over ``n`` elements and (by default) wait for it: ``grid_stride``
    kernels get at most 32 blocks per multiprocessor (their threads loop over the
    rest), others one thread per element."""
    ctx = context()
    grid, block = grid_for(n, block, max_blocks=ctx.sm_count * 32 if grid_stride else None)
    launch_grid(function, grid, block, params, sync)


def launch_grid(function, grid: int, block: int, params, sync: bool = True):
    """Launch ``function`` on ``grid`` blocks of ``block`` threads (x dimension)."""
    context()
    d = driver()
    keep, address = pack_params(params)
    check(d.cuLaunchKernel(function, int(grid), 1, 1, int(block), 1, 1, 0, d.CUstream(0),
                           address, 0), "cuLaunchKernel")
    if sync:
        check(d.cuCtxSynchronize(), "cuCtxSynchronize (the kernel's execution)")
    del keep


# ``s2s.cuda.grid``/``s2s.cuda.gridsize``: markers the GPU lowering replaces with the
# thread's index (``s2s/backend/cuda/indexed.py``); called from Python they raise.

def grid(ndim: int) -> int:
    """Inside an ``s2s.cuda.kernel``: the thread's global index (``ndim`` must be 1)."""
    raise RuntimeError("s2s.cuda.grid(1) is only defined inside an @s2s.cuda.kernel "
                       "function compiled for the GPU")


def gridsize(ndim: int) -> int:
    """Inside an ``s2s.cuda.kernel``: the number of threads launched (``ndim`` must be 1)."""
    raise RuntimeError("s2s.cuda.gridsize(1) is only defined inside an @s2s.cuda.kernel "
                       "function compiled for the GPU")
