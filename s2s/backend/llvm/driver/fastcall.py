"""A direct entry from Python for kernels of numbers: a builtin function, no ctypes.

For a signature whose arguments are Python floats (or ``np.float64``), Python ints,
bools or numpy arrays and whose result is a number, ``add_fast_entry`` adds

    PyObject* <name>.fast(PyObject* ctx_object, PyObject* const* args, Py_ssize_t n)

(CPython's ``METH_FASTCALL`` convention) that unboxes the arguments with the C
API (an array: its dtype's scalar type, byte order and ndim are checked against
the signature's; a mismatch returns ``NotImplemented`` before anything runs, and
the wrapper takes the general path; so does a call while ``abi.BUSY`` says a
general-path call holds the block), runs the kernel with the context block of
``ctx_object`` (a ctypes array: its buffer pointer sits right after the object
header) and boxes the result (a numpy scalar by calling its type, whose address
``set_type_objects`` writes into the module's ``<name>.types`` table at load).
On an error it returns a tuple of the status words (``abi.STATUS`` to
``abi.HEAD``), which it clears, and the wrapper raises from that tuple
(``Caller.fail``): read before the call returns, the error is this call's even
when another thread calls the same signature at once; an int that does not fit
in int64 sets the status to ``OVERFLOW`` and the next word to its position.
``builtin(address, ctx)`` wraps the entry as a Python builtin function, the
call path of the common scalar case (about 0.1 us against ctypes' ~1 us).
"""
from __future__ import annotations

import ctypes

from llvmlite import ir as ll

from ..values import abi
from ..typing import types as T

OVERFLOW = -1
_BOX = {"f8": ("PyFloat_FromDouble", T.F64), "i8": ("PyLong_FromLongLong", T.I64),
        "b1": ("PyBool_FromLong", T.I64)}


def eligible(param_types, return_type) -> bool:
    return (all(isinstance(t, T.Array) or isinstance(t, T.Scalar) and t.dtype in ("f8", "i8", "b1")
                and (t.weak or t.dtype == "f8") for t in param_types)
            and isinstance(return_type, T.Scalar) and return_type.dtype in _BOX)


def types_table(name):
    return name + ".types"


def set_type_objects(address):
    """Write the addresses of numpy's scalar types (``T.DTYPES`` order) at ``address``."""
    import numpy as np
    table = (ctypes.c_void_p * len(T.DTYPES)).from_address(address)
    for k, code in enumerate(T.DTYPES):
        table[k] = id(T.Scalar(code).numpy())
    _ = np


def _array_ok(b, obj, t, table):
    """i1: the ndarray ``obj`` has the dtype (scalar type, native byte order) and ndim of ``t``."""
    descr = b.load(b.bitcast(b.gep(obj, [ll.Constant(T.I64, 56)]), T.PTR.as_pointer()))
    typeobj = b.load(b.bitcast(b.gep(descr, [ll.Constant(T.I64, 16)]), T.PTR.as_pointer()))
    order = b.load(b.gep(descr, [ll.Constant(T.I64, 26)]))
    nd = b.load(b.bitcast(b.gep(obj, [ll.Constant(T.I64, 24)]), T.I32.as_pointer()))
    want = b.load(b.gep(table, [ll.Constant(T.I32, 0), ll.Constant(T.I32, T.DTYPES.index(t.dtype))]))
    ok = b.icmp_unsigned("==", b.ptrtoint(typeobj, T.I64), b.ptrtoint(want, T.I64))
    ok = b.and_(ok, b.icmp_signed("==", nd, ll.Constant(T.I32, t.ndim)))
    return b.and_(ok, b.icmp_unsigned("!=", order, ll.Constant(T.I8, ord(">"))))


def _declare(module, name, ret, args):
    fn = module.globals.get(name)
    return fn if fn is not None else ll.Function(module, ll.FunctionType(ret, args), name)


def add_fast_entry(module, kernel, param_types, return_type, name, written=()):
    fn = ll.Function(module, ll.FunctionType(T.PTR, [T.PTR, T.PTR.as_pointer(), T.I64]), name)
    self_obj, args, _ = fn.args
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    none = module.globals.get("_Py_NoneStruct") or ll.GlobalVariable(module, T.I64, "_Py_NoneStruct")
    table = ll.GlobalVariable(module, ll.ArrayType(T.PTR, len(T.DTYPES)), types_table(name))
    table.initializer = ll.Constant(table.type.pointee, None)
    wrong = fn.append_basic_block("wrong_signature")
    ctx_field = b.bitcast(b.gep(self_obj, [ll.Constant(T.I64, 16)]), T.I64.as_pointer().as_pointer())
    ctx = b.load(ctx_field)
    free = fn.append_basic_block("block_free")
    busy = b.load(b.gep(ctx, [ll.Constant(T.I32, abi.BUSY)]))
    b.cbranch(b.icmp_signed("!=", busy, ll.Constant(T.I64, 0)), wrong, free)
    b.position_at_end(free)
    fail = fn.append_basic_block("error_status")
    values = []
    for k, t in enumerate(param_types):
        obj = b.load(b.gep(args, [ll.Constant(T.I64, k)]))
        if isinstance(t, T.Array):
            from .module import array_from_object
            ok = fn.append_basic_block("array_ok")
            from .module import aligned, writeable
            fits = b.and_(_array_ok(b, obj, t, table), aligned(b, obj))
            if k in written:  # read-only: the general path raises numpy's error
                fits = b.and_(fits, writeable(b, obj))
            b.cbranch(fits, ok, wrong)
            b.position_at_end(ok)
            values.append(array_from_object(b, obj, t))
        elif t.dtype == "f8":  # PyFloatObject.ob_fval (float and its subclasses)
            values.append(b.load(b.bitcast(b.gep(obj, [ll.Constant(T.I64, 16)]),
                                           T.F64.as_pointer())))
        elif t.dtype == "i8":
            ovf = b.alloca(T.I32)
            conv = _declare(module, "PyLong_AsLongLongAndOverflow", T.I64,
                            [T.PTR, T.I32.as_pointer()])
            v = b.call(conv, [obj, ovf])
            bad = b.icmp_signed("!=", b.load(ovf), ll.Constant(T.I32, 0))
            ok = fn.append_basic_block("ok")
            over = fn.append_basic_block("overflow")
            b.cbranch(bad, over, ok)
            b.position_at_end(over)
            b.store(ll.Constant(T.I64, OVERFLOW), b.gep(ctx, [ll.Constant(T.I32, abi.STATUS)]))
            b.store(ll.Constant(T.I64, k), b.gep(ctx, [ll.Constant(T.I32, abi.STATUS + 1)]))
            b.branch(fail)
            b.position_at_end(ok)
            values.append(v)
        else:
            truth = _declare(module, "PyObject_IsTrue", T.I32, [T.PTR])
            values.append(b.icmp_signed("!=", b.call(truth, [obj]), ll.Constant(T.I32, 0)))
    rc = b.call(kernel, [ctx] + values)
    done = fn.append_basic_block("done")
    b.cbranch(b.icmp_signed("!=", rc, ll.Constant(T.I32, 0)), fail, done)
    b.position_at_end(done)
    box, arg_t = _BOX[return_type.dtype]
    slot = b.gep(ctx, [ll.Constant(T.I32, abi.RESULT)])
    if return_type.dtype == "f8":
        result = b.load(b.bitcast(slot, T.F64.as_pointer()))
    else:
        result = b.load(slot)
    if return_type.dtype == "b1":
        result = b.and_(result, ll.Constant(T.I64, 1))
    boxed = b.call(_declare(module, box, T.PTR, [arg_t]), [result])
    if return_type.weak:
        b.ret(boxed)
    else:  # np.float64(x), np.int64(x), np.bool_(x)
        typeobj = b.load(b.gep(table, [ll.Constant(T.I32, 0), ll.Constant(
            T.I32, T.DTYPES.index(return_type.dtype))]))
        scalar = b.call(_declare(module, "PyObject_CallOneArg", T.PTR, [T.PTR, T.PTR]),
                        [typeobj, boxed])
        b.call(_declare(module, "Py_DecRef", ll.VoidType(), [T.PTR]), [boxed])
        b.ret(scalar)
    b.position_at_end(fail)  # the status words as a tuple, the block's status cleared
    status = b.call(_declare(module, "PyTuple_New", T.PTR, [T.I64]),
                    [ll.Constant(T.I64, abi.HEAD - abi.STATUS)])
    for k in range(abi.HEAD - abi.STATUS):
        word = b.gep(ctx, [ll.Constant(T.I32, abi.STATUS + k)])
        item = b.call(_declare(module, "PyLong_FromLongLong", T.PTR, [T.I64]), [b.load(word)])
        b.call(_declare(module, "PyTuple_SetItem", T.I32, [T.PTR, T.I64, T.PTR]),
               [status, ll.Constant(T.I64, k), item])
        b.store(ll.Constant(T.I64, 0), word)
    b.ret(status)
    b.position_at_end(wrong)
    obj = module.globals.get("_Py_NotImplementedStruct") or ll.GlobalVariable(
        module, T.I64, "_Py_NotImplementedStruct")
    count = b.bitcast(obj, T.I64.as_pointer())
    b.store(b.add(b.load(count), ll.Constant(T.I64, 1)), count)
    b.ret(b.bitcast(obj, T.PTR))
    return name


class _MethodDef(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p), ("flags", ctypes.c_int),
                ("doc", ctypes.c_char_p)]


_new = ctypes.pythonapi.PyCFunction_NewEx
_new.restype = ctypes.py_object
_new.argtypes = [ctypes.POINTER(_MethodDef), ctypes.py_object, ctypes.py_object]
METH_FASTCALL = 0x80


def ctypes_layout_ok() -> bool:
    """Whether a context block keeps its buffer pointer right after the object header."""
    from .callpath import context_block
    probe = context_block(abi.RESULT + 1)
    return ctypes.c_void_p.from_address(id(probe) + 16).value == ctypes.addressof(probe)


def builtin(address, ctx, name="jitted"):
    """A builtin function calling the fast entry at ``address`` with the context block
    ``ctx`` (``callpath.context_block``) as its ``self``.

    The function points at its method definition (a ctypes structure) without owning
    it, and CPython reads the definition when the function is called and again when it
    is deallocated (before releasing ``self``).  So the definition is kept on ``ctx``
    (its ``fast_methods``): it lives as long as the function.  (Kept on the wrapper
    instead, it was freed first when a ``Jitted`` went away, and the function's
    deallocation then read freed memory: the crash at interpreter exit.)"""
    method = _MethodDef(name.encode(), address, METH_FASTCALL, None)
    ctx.__dict__.setdefault("fast_methods", []).append(method)
    return _new(ctypes.byref(method), ctx, None)
