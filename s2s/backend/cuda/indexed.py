"""The index form: a kernel body that reads its global thread index and writes arrays.

Contract: ``build_indexed(func, types, name)`` returns a ``KernelText`` whose
module holds ``func`` lowered by ``FunctionLowering`` (it must return None:
it writes its array arguments in place) and the kernel
``void @<name>(i64 n, <params>, i64* err)``.  Parameters arrive flattened: an
array of ``ndim`` dimensions as its data pointer, ``ndim`` extents and
``ndim`` strides (bytes, any layout), a number by value (complex: two doubles,
bool: a byte).  Each thread calls the body once; inside it
``s2s.cuda.grid(1)`` is the thread's global index ``ctaid.x * ntid.x +
tid.x`` and ``s2s.cuda.gridsize(1)`` the number of threads
``nctaid.x * ntid.x`` (for grid-stride loops).  The body does its own
bounds test (``if i < n``); array accesses are bounds-checked like
``s2s.jit``'s (``boundscheck=False`` turns that off) and an error is
reported through ``err`` as for elementwise kernels.

``cpu=True`` builds it for the host: the kernel loops over ``0 <= i < n``,
storing ``i`` where ``grid(1)`` reads it (``gridsize(1)`` is ``n``), so tests
can run it where there is no GPU.
"""
from __future__ import annotations

from llvmlite import ir as ll

from s2s_runtime import cuda

from ...errors import UnsupportedSyntaxError
from ..llvm.typing import types as T
from ..llvm.ops.calls import register
from ..llvm.lower.function import FunctionLowering
from .kernel import (KernelText, param_llvm, scalar_value, global_index, mark_kernel,
                     new_ctx, new_module, record_error)
from .target import DEFAULT_ARCH, TRIPLE

THREAD, THREADS = "s2s.cuda.thread", "s2s.cuda.threads"


class _GridIndex:
    """``s2s.cuda.grid(1)`` / ``s2s.cuda.gridsize(1)``: an int (i64)."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms, kw_atoms=None):
        name = fn.__name__
        if kw or len(atoms) != 1 or getattr(atoms[0], "value", None) != 1:
            raise UnsupportedSyntaxError(
                f"s2s.cuda.{name}(ndim): only {name}(1), a one-dimensional grid, is supported",
                loc)
        return T.INT

    def lower(self, L, fn, vals, kw, rtype):
        module = L.module
        if module.triple == TRIPLE:
            start, stride = global_index(L.b, module)
            return start if fn.__name__ == "grid" else stride
        slot = module.globals.get(THREAD if fn.__name__ == "grid" else THREADS)
        if slot is None:
            raise UnsupportedSyntaxError(
                f"s2s.cuda.{fn.__name__}(1) is only defined inside a kernel "
                "(@s2s.cuda.kernel), not in code compiled for the CPU", L.loc)
        return L.b.load(slot)


_GRID = _GridIndex()


def register_grid_functions():
    """Register the lowering of ``cuda.grid``/``cuda.gridsize`` (idempotent)."""
    register(_GRID, cuda.grid, cuda.gridsize)


def _params(t, where):
    """The kernel parameters (LLVM types) of one parameter of type ``t``."""
    if isinstance(t, T.Array):
        return [T.memory_llvm(t.elem).as_pointer()] + [T.I64] * (2 * t.ndim)
    if isinstance(t, T.Scalar):
        return param_llvm("scalar", t)
    raise UnsupportedSyntaxError(
        f"cuda.kernel: the parameter {where} is a {t}; kernels take numpy/device arrays "
        "and numbers", None)


def _array_value(b, args, t):
    out = ll.Constant(t.llvm(), None)
    out = b.insert_value(out, b.bitcast(next(args), T.PTR), 0)
    out = b.insert_value(out, ll.Constant(T.PTR, None), 1)
    for part in (2, 3):
        for k in range(t.ndim):
            out = b.insert_value(out, next(args), [part, k])
    return out


def build_indexed(func, types, name, boundscheck=True, arch=DEFAULT_ARCH, cpu=False):
    """The index-form kernel module of ``func`` (see the module's docstring)."""
    register_grid_functions()
    module = new_module(name, arch, cpu)
    if cpu:
        for slot in (THREAD, THREADS):
            g = ll.GlobalVariable(module, T.I64, slot)
            g.linkage = "internal"
            g.initializer = ll.Constant(T.I64, 0)
    device = FunctionLowering(module, func, types, name + ".device", boundscheck).build()
    if device.return_type != T.NONE:
        raise UnsupportedSyntaxError(
            f"cuda.kernel: {func.name} returns a {device.return_type}; a kernel writes its "
            "results into array arguments and returns nothing", func.loc)
    names = [p.var.name for p in func.params]
    params = [T.I64] + [p for t, nm in zip(types, names) for p in _params(t, repr(nm))]
    kernel = ll.Function(module, ll.FunctionType(ll.VoidType(), params + [T.I64.as_pointer()]),
                         name)
    mark_kernel(module, kernel)
    b = ll.IRBuilder(kernel.append_basic_block("entry"))
    n = kernel.args[0]
    args = iter(kernel.args[1:])
    values = [_array_value(b, args, t) if isinstance(t, T.Array) else scalar_value(b, args, t)
              for t in types]
    err = next(args)
    ctx = new_ctx(b, T.NONE)
    if not cpu:
        _call(b, kernel, device, ctx, values, err)
        b.ret_void()
    else:
        head, body, done = (kernel.append_basic_block(s) for s in ("head", "body", "done"))
        b.store(n, module.globals[THREADS])
        entry = b.block
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(T.I64)
        i.add_incoming(ll.Constant(T.I64, 0), entry)
        b.cbranch(b.icmp_signed("<", i, n), body, done)
        b.position_at_end(body)
        b.store(i, module.globals[THREAD])
        _call(b, kernel, device, ctx, values, err)
        i.add_incoming(b.add(i, ll.Constant(T.I64, 1)), b.block)
        b.branch(head)
        b.position_at_end(done)
        b.ret_void()
    inputs = [("array" if isinstance(t, T.Array) else "scalar", t) for t in types]
    return KernelText(str(module), name, inputs, [], device.sites, device.return_type)


def _call(b, kernel, device, ctx, values, err):
    status = b.call(device.fn, [ctx] + values)
    fail = kernel.append_basic_block("fail")
    ok = kernel.append_basic_block("ok")
    b.cbranch(b.icmp_unsigned("!=", status, ll.Constant(T.I32, 0)), fail, ok)
    b.position_at_end(fail)
    record_error(b, ctx, err)
    b.branch(ok)
    b.position_at_end(ok)
