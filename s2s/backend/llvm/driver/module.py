"""One compiled signature: the LLVM module of a kernel and its C entry point.

Contract: ``build_module(func, param_types, boundscheck)`` returns a
``ModuleText`` with the unoptimised LLVM IR text (deterministic: a pure
function of the IR and the types), the entry symbol, the C argument list of
the entry (``leaves``) and the error sites.  The entry is

    i32 entry(i64* ctx, leaf0, leaf1, ...)

with one C argument per scalar leaf of the (flattened) parameters (double,
float, int64, bool as a byte, complex as two doubles) and one ``PyObject*``
per numpy array, whose data pointer, shape and strides it reads from the
``PyArrayObject`` (numpy's stable C layout; ``s2s_runtime.native`` checks the
offsets once per process).  It returns the kernel's status (``abi.py``).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from llvmlite import ir as ll

from . import fastcall
from ..typing import types as T
from .engine import triple_and_layout
from ..lower.function import FunctionLowering
from ..passes.writes import written_params
from ..ops import host_calls
from ..ops.messages import KEEP_SYMBOL
from ..ops.printing import CALLBACK_SYMBOL

#: the symbols of the Python functions compiled code may call (ctypes callbacks)
PYTHON_CALLBACKS = (CALLBACK_SYMBOL, KEEP_SYMBOL) + host_calls.SYMBOLS

#: offsets in a PyArrayObject (numpy >= 1.7, numpy 2): data, nd, dimensions, strides
ARRAY_DATA, ARRAY_DIMS, ARRAY_STRIDES, ARRAY_FLAGS = 16, 32, 40, 64
#: the status an entry point reports for a misaligned array argument (callpath.py)
MISALIGNED, READONLY = -2, -3
#: a kernel without loops of at least this many instructions is compiled unoptimised
#: (``unoptimised_if_straight``)
STRAIGHT_UNOPTIMISED_FROM = 2000


@dataclass
class ModuleText:
    text: str
    entry: str
    leaves: list  # ("f8" | "f4" | "i8" | "b1" | "c16" | "array", type) per parameter leaf
    sites: list
    return_type: object
    fast_entry: str = None  # fastcall.py: a direct entry from Python (numbers only)


def _leaves(t, out):
    if isinstance(t, T.Tuple):
        for it in t.items:
            _leaves(it, out)
    elif isinstance(t, T.Array):
        out.append(("array", t))
    elif isinstance(t, T.List):  # passed as a contiguous array (callpath.convert_leaves)
        out.append(("list", t))
    elif isinstance(t, T.Scalar):
        out.append((t.dtype, t))
    elif isinstance(t, T.NoneType):
        pass
    elif isinstance(t, T.Range):
        out += [("i8", T.INT)] * 3
    elif isinstance(t, T.Stack):
        out.append(("stack", t))
    else:
        raise TypeError(t)
    return out


def _c_types(leaf):
    kind = leaf[0]
    return {"f8": [T.F64], "f4": [T.F32], "i8": [T.I64], "b1": [T.I8], "c16": [T.F64, T.F64],
            "array": [T.PTR], "list": [T.PTR], "stack": [T.PTR, T.I64]}[kind]


def symbol_for(func, param_types) -> str:
    key = repr((func.name, [str(t) for t in param_types])).encode()
    return "s2s_" + "".join(c if c.isalnum() else "_" for c in func.name) + "_" + \
        hashlib.sha1(key).hexdigest()[:10]


def build_module(func, param_types, boundscheck=True, name=None) -> ModuleText:
    name = name or symbol_for(func, param_types)
    module = ll.Module(name=name, context=ll.Context())  # its own named types (outline.py)
    module.triple, module.data_layout = triple_and_layout()
    kernel = FunctionLowering(module, func, param_types, name + ".kernel", boundscheck,
                              pooled=True, outline=True).build()
    leaves = []
    for t in param_types:
        _leaves(t, leaves)
    c_args = [ll.IntType(64).as_pointer()] + [c for leaf in leaves for c in _c_types(leaf)]
    entry = ll.Function(module, ll.FunctionType(T.I32, c_args), name)
    b = ll.IRBuilder(entry.append_basic_block("entry"))
    args = iter(entry.args[1:])
    objects = []
    written = written_params(func, param_types)
    values = []
    for p, t in zip(func.params, param_types):
        before = len(objects)
        values.append(_unflatten(b, t, args, objects))
        if p.var.name in written:  # numpy refuses writes to read-only arrays; so do we
            for obj in objects[before:]:
                with b.if_then(b.not_(writeable(b, obj)), likely=False):
                    b.store(ll.Constant(T.I64, READONLY), entry.args[0])
                    b.ret(ll.Constant(T.I32, 1))
    if objects:  # a misaligned array (np.frombuffer at an odd offset) is refused, not read
        ok = ll.Constant(T.I1, 1)
        for obj in objects:
            ok = b.and_(ok, aligned(b, obj))
        with b.if_then(b.not_(ok), likely=False):
            b.store(ll.Constant(T.I64, MISALIGNED), entry.args[0])
            b.ret(ll.Constant(T.I32, 1))
    b.ret(b.call(kernel.fn, [entry.args[0]] + values))
    fast = None
    # a kernel that calls back into Python (print, long messages, numpy) may hand the GIL to
    # another thread mid-call: it runs under the Caller's lock, so not from a fast entry
    calls_python = any(symbol in module.globals for symbol in PYTHON_CALLBACKS)
    if fastcall.eligible(param_types, kernel.return_type) and not calls_python:
        fast = fastcall.add_fast_entry(module, kernel.fn, param_types, kernel.return_type,
                                       name + "_fast",
                                       {k for k, p in enumerate(func.params)
                                        if p.var.name in written})
        # two callers now: LLVM's inliner decides (a big kernel is not compiled twice)
        kernel.fn.attributes.discard("alwaysinline")
    unoptimised_if_straight(kernel.fn)
    return ModuleText(str(module), name, leaves, kernel.sites, kernel.return_type, fast)


def unoptimised_if_straight(fn, least=None) -> bool:
    """Mark ``fn`` ``optnone noinline`` when it has no loop and at least ``least``
    (default ``STRAIGHT_UNOPTIMISED_FROM``) instructions; say whether it did.

    Without a cycle in its control flow, each instruction of ``fn`` runs at most once
    per call, so optimising it saves at most a few cycles per instruction, while LLVM's
    O3 pipeline and instruction selection cost more than linear time in its size: the
    glue of a long kernel whose array loops were outlined (``lower/outline.py``), a
    call and a slot update per statement, took most of the compile time of a
    500-statement gradient (benchmarks/README.md).  The functions it calls are still
    optimised."""
    least = STRAIGHT_UNOPTIMISED_FROM if least is None else least
    if sum(len(block.instructions) for block in fn.blocks) < least or has_cycle(fn):
        return False
    fn.attributes.discard("alwaysinline")
    fn.attributes.add("noinline")
    fn.attributes.add("optnone")
    return True


def has_cycle(fn) -> bool:
    """Whether the control-flow graph of ``fn`` (an ``llvmlite.ir.Function``) has a
    cycle reachable from its entry (depth-first search, iterative)."""
    def successors(block):
        term = block.terminator
        if isinstance(term, ll.SwitchInstr):
            return [term.default] + [target for _, target in term.cases]
        return [op for op in getattr(term, "operands", ()) if isinstance(op, ll.Block)]

    state = {}  # block -> 1 on the current path, 2 done
    entry = fn.blocks[0]
    state[entry] = 1
    stack = [(entry, iter(successors(entry)))]
    while stack:
        block, rest = stack[-1]
        nxt = next(rest, None)
        if nxt is None:
            state[block] = 2
            stack.pop()
        elif state.get(nxt) == 1:
            return True
        elif nxt not in state:
            state[nxt] = 1
            stack.append((nxt, iter(successors(nxt))))
    return False


def writeable(b, obj):
    """i1: numpy's WRITEABLE flag of the array at ``obj``."""
    flags = b.load(b.bitcast(b.gep(obj, [ll.Constant(T.I64, ARRAY_FLAGS)]), T.I32.as_pointer()))
    return b.icmp_unsigned("!=", b.and_(flags, ll.Constant(T.I32, 0x0400)),
                           ll.Constant(T.I32, 0))


def aligned(b, obj):
    """i1: numpy's ALIGNED flag of the array at ``obj``."""
    flags = b.load(b.bitcast(b.gep(obj, [ll.Constant(T.I64, ARRAY_FLAGS)]), T.I32.as_pointer()))
    return b.icmp_unsigned("!=", b.and_(flags, ll.Constant(T.I32, 0x0100)),
                           ll.Constant(T.I32, 0))


def _unflatten(b, t, args, objects):
    """The kernel argument of type ``t`` from the entry's C arguments (the array objects
    are collected in ``objects``)."""
    if isinstance(t, T.Tuple):
        out = ll.Constant(t.llvm(), None)
        for k, it in enumerate(t.items):
            out = b.insert_value(out, _unflatten(b, it, args, objects), k)
        return out
    if isinstance(t, T.NoneType):
        return ll.Constant(t.llvm(), None)
    if isinstance(t, (T.Range, T.Stack)):  # range: 3 ints; tape: buffer, bytes (= capacity)
        out = ll.Constant(t.llvm(), None)
        parts = [next(args) for _ in range(3 if isinstance(t, T.Range) else 2)]
        if isinstance(t, T.Stack):
            parts.append(parts[1])
        for k, v in enumerate(parts):
            out = b.insert_value(out, v, k)
        return out
    if isinstance(t, T.Scalar):
        if t.dtype == "c16":
            out = ll.Constant(T.C128, None)
            out = b.insert_value(out, next(args), 0)
            return b.insert_value(out, next(args), 1)
        v = next(args)
        return b.trunc(v, T.I1) if t.dtype == "b1" else v
    obj = next(args)
    objects.append(obj)
    if isinstance(t, T.List):  # no block: an append copies (lists.py)
        from ..values.lists import elem_of, make
        a = array_from_object(b, obj, T.Array(elem_of(t).dtype, 1))
        return make(_Builder(b), t, b.extract_value(a, 0), ll.Constant(T.PTR, None),
                    b.extract_value(a, [2, 0]))
    return array_from_object(b, obj, t)


class _Builder:
    """What ``lists.make`` reads of a lowering: its builder."""

    def __init__(self, b):
        self.b = b


def array_from_object(b, obj, t):
    """The array value of type ``t`` of the numpy array at ``obj`` (a ``PyObject*``)."""

    def field(offset, ty):
        return b.load(b.bitcast(b.gep(obj, [ll.Constant(T.I64, offset)]), ty.as_pointer()))

    dims = field(ARRAY_DIMS, T.I64.as_pointer())
    strides = field(ARRAY_STRIDES, T.I64.as_pointer())
    out = ll.Constant(t.llvm(), None)
    out = b.insert_value(out, field(ARRAY_DATA, T.PTR), 0)
    out = b.insert_value(out, ll.Constant(T.PTR, None), 1)
    for k in range(t.ndim):
        out = b.insert_value(out, b.load(b.gep(dims, [ll.Constant(T.I64, k)])), [2, k])
        out = b.insert_value(out, b.load(b.gep(strides, [ll.Constant(T.I64, k)])), [3, k])
    return out
