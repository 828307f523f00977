"""``s2s.cuda.vectorize``: a scalar function mapped over arrays on the GPU.

Contract: ``Vectorized(fn)`` wraps a function of numbers (``def f(x, y):
return ...``) or a transform of one (``s2s.grad(f, argnums=(0, 1))``, a
function calling ``s2s.jvp``): the derivative of an elementwise function is
an elementwise kernel, made from the generated derivative code by the same
lowering.

* ``kernel(*examples)`` / ``ptx(*examples, arch="sm_80")``: the kernel for
  arguments like ``examples`` -- a numpy array (or an object exposing
  ``__cuda_array_interface__``) stands for its elements, a number for itself
  (broadcast to every element); a numpy dtype or scalar type (``np.float64``)
  stands for an array of that dtype.  Specialised and cached per element
  types and layout.
* ``__call__(*args)``: broadcasts the arguments (numpy's rules; numbers and
  size-1 arrays are passed by value, other numpy arrays are made contiguous
  in the broadcast shape and copied to the device; device arrays must
  already be C-contiguous in that shape), launches the kernel through
  ``s2s_runtime.cuda`` and returns one array per number the function
  returns, nested as its result (a tuple for a tuple, ``(value, (gx, gy))``
  for ``value_and_grad``): numpy arrays when every argument was a
  host value, ``s2s_runtime.cuda.DeviceArray`` (with
  ``__cuda_array_interface__``) when an argument was on the device.  An error
  raised by an element (``math domain error``, a user ``raise``) is raised
  after the launch, as ``s2s.jit`` raises it.  Without cuda-bindings, a driver
  or a device: ``s2s_runtime.cuda.CudaUnavailableError`` saying which.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

from ..backend.llvm.typing import types as T
from ..backend.llvm.driver.compile import param_types
from ..backend.cuda import compile as ptx_compile
from ..backend.cuda.kernel import build_elementwise
from ..backend.cuda.target import DEFAULT_ARCH, check_arch

_SCALAR_TYPES = (bool, int, float, complex, np.generic)


def _example_element(dtype):
    """A number of ``dtype`` standing for an array's elements while the function is
    specialised (calls of transforms inside it run once on it: 0.5 is in the domain
    of log, sqrt, acos, atanh...; 1 divides)."""
    dtype = np.dtype(dtype)
    return np.array(0.5 if dtype.kind in "fc" else 1, dtype)[()]


def _element_example(x, where):
    """``(example value, layout)`` of one argument."""
    if isinstance(x, type) and issubclass(x, np.generic) or isinstance(x, np.dtype):
        return _example_element(x), "array"
    if hasattr(x, "__cuda_array_interface__"):
        return _example_element(x.__cuda_array_interface__["typestr"]), "array"
    if isinstance(x, np.ndarray):
        if x.size == 1:
            return x.reshape(())[()], "scalar"
        return _example_element(x.dtype), "array"
    if isinstance(x, _SCALAR_TYPES):
        return x, "scalar"
    raise TypeError(f"cuda.vectorize: {where} is a {type(x).__name__}; kernels take numbers, "
                    "numpy arrays and device arrays (__cuda_array_interface__)")


def _dtype_code(t):
    return t.dtype if isinstance(t, T.Scalar) else None


class Vectorized:
    def __init__(self, fn, boundscheck=True, arch=None):
        from .jit import Jitted
        self.jitted = Jitted(fn, boundscheck=boundscheck)
        self.fn = fn
        self.arch = arch
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn
        self._kernels = {}

    # -- compiling ------------------------------------------------------------------
    def kernel(self, *examples, cpu=False):
        """``(KernelText, free values)`` for arguments like ``examples`` (see the module's
        doc); ``cpu=True``: the same kernel built for the host (``kernel.py``)."""
        j = self.jitted
        if len(examples) != j.nargs:
            raise TypeError(f"cuda.vectorize: {self.__name__} takes {j.nargs} argument(s), "
                            f"got {len(examples)}")
        pairs = [_element_example(x, f"argument {name!r}")
                 for x, name in zip(examples, j.param_names)]
        values = [v for v, _ in pairs]
        layout = [kind for _, kind in pairs]
        func, load_free = j.source_ir(values)
        free = list(load_free())
        types = param_types(func, values + free, j.describe)
        for name, t in zip([p.var.name for p in func.params][len(values):], types[len(values):]):
            if not isinstance(t, T.Scalar):
                raise TypeError(f"cuda.vectorize: {self.__name__} reads the global {name!r}, a "
                                f"{t}; a kernel can read global numbers only (pass arrays as "
                                "arguments)")
        layout += ["scalar"] * len(free)
        key = (tuple(map(str, types)), tuple(layout), func.name, cpu)
        hit = self._kernels.get(key)
        if hit is None:
            digest = hashlib.sha1(repr(key[:-1]).encode()).hexdigest()[:10]
            name = "s2s_" + "".join(c if c.isalnum() else "_" for c in func.name) + "_" + digest
            hit = self._kernels[key] = build_elementwise(func, types, layout, name,
                                                         self.jitted.boundscheck, cpu=cpu)
        return hit, free

    def ptx(self, *examples, arch=None) -> str:
        """The PTX of the kernel for arguments like ``examples``."""
        kt, _ = self.kernel(*examples)
        return ptx_compile.ptx(kt.text, [kt.name], check_arch(arch or self.arch or DEFAULT_ARCH))

    # -- launching ------------------------------------------------------------------
    def __call__(self, *args, block=256):
        from s2s_runtime import cuda as rt
        kt, free = self.kernel(*args)
        shapes = [np.shape(a) if not rt.is_device_array(a) else
                  tuple(a.__cuda_array_interface__["shape"]) for a in args]
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError as e:
            raise ValueError(f"cuda.vectorize: {self.__name__}: the arguments' shapes "
                             f"{shapes} do not broadcast: {e}") from None
        n = math.prod(shape)
        outputs = [np.dtype(t.numpy()) for t in kt.outputs]
        on_device = any(rt.is_device_array(a) for a in args)
        if n == 0:
            outs = [np.empty(shape, dt) for dt in outputs]
            return _pack(outs if not on_device else [rt.to_device(o) for o in outs],
                         kt.return_type)
        ctx = rt.context()
        params, keep = [("i64", n)], []
        for (kind, t), a in zip(kt.inputs, list(args) + free):
            if kind == "scalar":
                params += scalar_params(a, t)
                continue
            dev = device_input(a, shape, t, rt)
            keep.append(dev)
            params.append(("ptr", dev.ptr))
        outs = [rt.empty(shape, dt) for dt in outputs]
        params += [("ptr", o.ptr) for o in outs]
        err = rt.to_device(np.zeros(4, np.int64))
        params.append(("ptr", err.ptr))
        arch = self.arch or ptx_arch(ctx.arch)
        fn = rt.load(ptx_compile.ptx(kt.text, [kt.name], arch), kt.name)
        rt.launch(fn, n, params, block=block)
        raise_kernel_error(err.copy_to_host(), kt.sites)
        del keep
        if not on_device:
            outs = [o.copy_to_host() for o in outs]
            if shape == ():
                outs = [o[()] for o in outs]
        return _pack(outs, kt.return_type)


def _pack(outs, t):
    """The output arrays nested as the function's result (``value_and_grad``: a value
    and a tuple of gradients)."""
    it = iter(outs)

    def build(t):
        if isinstance(t, T.Tuple):
            return tuple(build(item) for item in t.items)
        return next(it)

    return build(t)


def ptx_arch(device_arch: str) -> str:
    """The PTX target for a device: its own architecture (``sm_90`` for an H200)."""
    try:
        return check_arch(device_arch)
    except ValueError:
        return DEFAULT_ARCH


def scalar_params(value, t):
    """The kernel parameters of a number passed by value as type ``t``."""
    code = _dtype_code(t)
    if code == "c16":
        z = complex(value)
        return [("f64", z.real), ("f64", z.imag)]
    if isinstance(value, np.ndarray):
        value = value.reshape(())[()]
    if code in ("f8", "f4"):
        return [("f64" if code == "f8" else "f32", float(value))]
    if code == "b1":
        return [("i8", int(bool(value)))]
    return [("i64", int(value))]


def device_input(a, shape, t, rt):
    """The device array holding argument ``a`` as ``len(shape)`` contiguous elements."""
    if rt.is_device_array(a):
        dev = rt.as_device(a)
        if dev.shape != tuple(shape) or not dev.is_c_contiguous():
            raise ValueError(
                f"cuda.vectorize: a device array argument of shape {dev.shape} must be "
                f"C-contiguous with the broadcast shape {tuple(shape)} (broadcast it on "
                "the host, or make it contiguous on the device)")
        return dev
    host = np.asarray(a)
    if host.shape != tuple(shape):
        host = np.broadcast_to(host, shape)
    return rt.to_device(np.ascontiguousarray(host, dtype=t.numpy()))


def raise_kernel_error(words, sites):
    """Raise the exception of the error site in ``words[0]`` (0: no error)."""
    site = int(words[0])
    if site == 0:
        return
    exc, template, loc, user = sites[site - 1]
    message = template.format(*[int(v) for v in words[1:4]])
    if not user and loc is not None and getattr(loc, "line", 0):
        message += f" (in a GPU kernel, at {loc.file}:{loc.line}: {loc.text.strip()})"
    raise exc(message) if message else exc()


def vectorize(fn=None, *, boundscheck=True, arch=None):
    """``@s2s.cuda.vectorize``: map a scalar function over arrays on an NVIDIA GPU."""
    if fn is None:
        return lambda f: vectorize(f, boundscheck=boundscheck, arch=arch)
    if arch is not None:
        check_arch(arch)
    return Vectorized(fn, boundscheck=boundscheck, arch=arch)
