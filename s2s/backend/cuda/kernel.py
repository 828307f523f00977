"""The elementwise kernel: a device function mapped over arrays, one element per step.

Contract: ``build_elementwise(func, types, layout, name)`` returns a
``KernelText`` whose ``text`` is an LLVM module (triple ``nvptx64-nvidia-cuda``)
holding

* the *device function*: ``func`` (a scalar function's IR, or the generated
  derivative code of one) lowered by the CPU backend's
  ``FunctionLowering`` for the parameter ``types`` -- the same lowering,
  statement for statement, as ``s2s.jit``;
* the *kernel* ``void @<name>(i64 n, <inputs>, <outputs>, i64* err)``, marked
  by ``!nvvm.annotations`` (``"kernel", 1``).  ``layout[k]`` says how
  parameter ``k`` arrives: ``"array"`` -- a pointer to ``n`` contiguous
  elements; ``"scalar"`` -- one value by value (broadcast; a complex number
  as two doubles).  Each thread starts at its global index
  ``ctaid.x * ntid.x + tid.x`` (the NVPTX special registers), strides by the
  grid size ``nctaid.x * ntid.x`` while the index is ``< n``, calls the
  device function on the loaded elements and stores each number it returns
  (a scalar, or a tuple of scalars flattened: one output array each) at the
  same index.

An element whose computation raises (a ``raise``, a domain check, an integer
division by zero) stores nothing; the first such thread writes the error
site number and its three integers to ``err[0..3]`` (compare-and-swap on
``err[0]``) and the launcher raises the exception of that site
(``sites``, as ``s2s.jit`` does).
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir as ll

from ...errors import UnsupportedSyntaxError
from ..llvm.values import abi
from ..llvm.typing import types as T
from ..llvm.lower.function import FunctionLowering
from .target import DEFAULT_ARCH, TRIPLE, data_layout

_SREG = ("tid", "ntid", "ctaid", "nctaid")


@dataclass
class KernelText:
    text: str
    name: str
    inputs: list   # per parameter: ("array" | "scalar", backend type)
    outputs: list  # the backend Scalar type of each output array
    sites: list
    return_type: object


def output_leaves(t, loc=None, out=None):
    """The scalar types of the numbers a result of type ``t`` flattens to."""
    out = [] if out is None else out
    if isinstance(t, T.Scalar):
        out.append(t)
    elif isinstance(t, T.Tuple):
        for it in t.items:
            output_leaves(it, loc, out)
    else:
        raise UnsupportedSyntaxError(
            f"cuda.vectorize: the function returns a {t}; an elementwise kernel returns a "
            "number or a tuple of numbers", loc)
    return out


def new_module(name: str, arch: str = DEFAULT_ARCH, cpu: bool = False):
    """An empty kernel module for ``arch`` (``cpu``: for the host, see ``build_elementwise``)."""
    module = ll.Module(name=name)
    if cpu:
        from ..llvm.driver.engine import triple_and_layout
        module.triple, module.data_layout = triple_and_layout()
        return module
    module.triple = TRIPLE
    module.data_layout = data_layout(arch)
    flags = module.add_metadata([ll.Constant(T.I32, 4), ll.MetaDataString(module, "nvvm-reflect-ftz"),
                                 ll.Constant(T.I32, 0)])
    module.add_named_metadata("llvm.module.flags").add(flags)
    return module


def mark_kernel(module, fn):
    if module.triple != TRIPLE:
        return
    module.add_named_metadata("nvvm.annotations", [fn, "kernel", ll.Constant(T.I32, 1)])


def global_index(b, module):
    """``(start, stride)`` (i64) of a grid-stride loop over the x dimension (on the
    host: ``(0, 1)``, one thread doing every element)."""
    if module.triple != TRIPLE:
        return ll.Constant(T.I64, 0), ll.Constant(T.I64, 1)
    regs = {}
    for reg in _SREG:
        name = f"llvm.nvvm.read.ptx.sreg.{reg}.x"
        fn = module.globals.get(name) or ll.Function(module, ll.FunctionType(T.I32, []), name)
        regs[reg] = b.zext(b.call(fn, []), T.I64)
    start = b.add(b.mul(regs["ctaid"], regs["ntid"]), regs["tid"])
    return start, b.mul(regs["nctaid"], regs["ntid"])


def param_llvm(kind, t):
    if kind == "array":
        return [T.memory_llvm(t).as_pointer()]
    if t.dtype == "c16":
        return [T.F64, T.F64]
    return [T.I8 if t.dtype == "b1" else t.llvm()]


def _load(b, ptr, t, i):
    v = b.load(b.gep(ptr, [i]))
    return b.icmp_unsigned("!=", v, ll.Constant(T.I8, 0)) if t.dtype == "b1" else v


def scalar_value(b, args, t):
    if t.dtype == "c16":
        z = ll.Constant(T.C128, None)
        return b.insert_value(b.insert_value(z, next(args), 0), next(args), 1)
    v = next(args)
    return b.trunc(v, T.I1) if t.dtype == "b1" else v


def new_ctx(b, return_type):
    """A zeroed context block (``abi.py``) for the device function's calls (``b`` is in
    the kernel's entry block)."""
    words = abi.RESULT + abi.result_layout(return_type)
    ctx = b.alloca(ll.ArrayType(T.I64, words), name="ctx")
    b.store(ll.Constant(ll.ArrayType(T.I64, words), None), ctx)
    return b.bitcast(ctx, T.I64.as_pointer())


def record_error(b, ctx, err):
    """The first failing thread copies its error site and integers to ``err``."""
    site = b.load(b.gep(ctx, [ll.Constant(T.I32, abi.STATUS)]))
    pair = b.cmpxchg(err, ll.Constant(T.I64, 0), site, "monotonic", "monotonic")
    with b.if_then(b.extract_value(pair, 1)):
        for k in (1, 2, 3):
            word = b.load(b.gep(ctx, [ll.Constant(T.I32, abi.STATUS + k)]))
            b.store(word, b.gep(err, [ll.Constant(T.I32, k)]))


def _store_outputs(b, ctx, outputs, out_ptrs, i):
    k = abi.RESULT
    for t, ptr in zip(outputs, out_ptrs):
        slot = b.gep(ctx, [ll.Constant(T.I32, k)])
        if t.dtype == "c16":
            re = b.load(b.bitcast(slot, T.F64.as_pointer()))
            im = b.load(b.bitcast(b.gep(ctx, [ll.Constant(T.I32, k + 1)]), T.F64.as_pointer()))
            z = b.insert_value(b.insert_value(ll.Constant(T.C128, None), re, 0), im, 1)
            b.store(z, b.gep(ptr, [i]))
            k += 2
            continue
        if t.dtype == "b1":
            v = b.trunc(b.load(slot), T.I8)
        else:
            v = b.load(b.bitcast(slot, t.llvm().as_pointer()))
        b.store(v, b.gep(ptr, [i]))
        k += 1


def build_elementwise(func, types, layout, name, boundscheck=True, arch=DEFAULT_ARCH,
                      cpu=False):
    """The kernel module mapping ``func`` over arrays (see the module's docstring).

    ``cpu=True`` builds the same kernel for the host (one thread, the special
    registers replaced by ``(0, 1)``): tests run it to check the kernel's
    loads, stores, outputs and error words where there is no GPU."""
    module = new_module(name, arch, cpu)
    device = FunctionLowering(module, func, types, name + ".device", boundscheck).build()
    outputs = output_leaves(device.return_type, func.loc)
    inputs = list(zip(layout, types))
    for kind, t in inputs:
        if not isinstance(t, T.Scalar):
            raise UnsupportedSyntaxError(
                f"cuda.vectorize: a parameter of type {t}; elementwise kernels take numbers",
                func.loc)
    params = [T.I64] + [p for kind, t in inputs for p in param_llvm(kind, t)]
    params += [T.memory_llvm(t).as_pointer() for t in outputs] + [T.I64.as_pointer()]
    kernel = ll.Function(module, ll.FunctionType(ll.VoidType(), params), name)
    mark_kernel(module, kernel)
    for arg in kernel.args:
        if isinstance(arg.type, ll.PointerType):
            arg.add_attribute("noalias")  # outputs are fresh; inputs are only read
    entry = kernel.append_basic_block("entry")
    head, body, fail, done, step = (kernel.append_basic_block(n) for n in
                                    ("head", "body", "fail", "done", "step"))
    exit_ = kernel.append_basic_block("exit")
    b = ll.IRBuilder(entry)
    n = kernel.args[0]
    args = iter(kernel.args[1:])
    arrays, scalars = [], {}
    for k, (kind, t) in enumerate(inputs):
        if kind == "array":
            arrays.append((k, next(args), t))
        else:
            scalars[k] = scalar_value(b, args, t)
    out_ptrs = [next(args) for _ in outputs]
    err = next(args)
    ctx = new_ctx(b, device.return_type)
    start, stride = global_index(b, module)
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(T.I64, name="i")
    i.add_incoming(start, entry)
    b.cbranch(b.icmp_signed("<", i, n), body, exit_)
    b.position_at_end(body)
    values = dict(scalars)
    for k, ptr, t in arrays:
        values[k] = _load(b, ptr, t, i)
    status = b.call(device.fn, [ctx] + [values[k] for k in range(len(inputs))])
    b.cbranch(b.icmp_unsigned("!=", status, ll.Constant(T.I32, 0)), fail, done)
    b.position_at_end(fail)
    record_error(b, ctx, err)
    b.branch(step)
    b.position_at_end(done)
    _store_outputs(b, ctx, outputs, out_ptrs, i)
    b.branch(step)
    b.position_at_end(step)
    nxt = b.add(i, stride)
    i.add_incoming(nxt, step)
    b.branch(head)
    b.position_at_end(exit_)
    b.ret_void()
    return KernelText(str(module), name, inputs, outputs, device.sites, device.return_type)
