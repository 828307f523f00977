"""The call from Python into a compiled entry point (ctypes, prepared once per signature).

Contract: ``Caller(module_text, address)`` is called with the flattened C
argument values (``convert_leaves``) and returns the kernel's result as Python
values: a weak scalar as a Python number, a numpy scalar type otherwise,
arrays wrapped without copying (``s2s_runtime.native``), tuples as tuples.
A kernel error becomes the Python exception of its site: the message (index,
axis, size filled in) and, for the checks jit adds, the user's line.

The ctypes function type is built with ``PYFUNCTYPE`` (the GIL is held while the
kernel runs).  A signature's context block is reused by every call, so a call and
the reading of its result (or of its error) from that block hold ``Caller.lock``
and set ``abi.BUSY``: another thread may run between the kernel's return and the
read, and a kernel's ``print`` hands the GIL to Python in the middle of a call.

The context block (``context_block``) owns what the kernel keeps in it between
calls: it frees the tape buffers (``abi.TAPES``) and the blocks on its free lists
(``abi.FREE_LISTS``) when it is itself deallocated,
which is after the last thing that can run the kernel with it is gone (the
``Caller``, and the builtin of the fast entry, whose ``self`` it is: fastcall.py).
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from s2s_runtime.native import NativeBlock, free_block, wrap

from ....errors import MisalignedArrayError
from ..values import abi
from ..typing import types as T

_C = {"f8": ctypes.c_double, "f4": ctypes.c_float, "i8": ctypes.c_int64, "b1": ctypes.c_bool,
      "array": ctypes.py_object, "list": ctypes.py_object}
_TYPESTR = {"b1": "|b1", "i8": "<i8", "f4": "<f4", "f8": "<f8", "c16": "<c16"}


def c_argtypes(leaves):
    out = [ctypes.c_void_p]
    for kind, _ in leaves:
        if kind == "c16":
            out += [ctypes.c_double, ctypes.c_double]
        elif kind == "stack":
            out += [ctypes.c_void_p, ctypes.c_int64]
        else:
            out.append(_C[kind])
    return out


def _free_kept(ctx, free_block=free_block, first=abi.TAPES, count=abi.CACHED_TAPES,
               lists=abi.FREE_LISTS, held=abi.FREE_BYTES, classes=abi.SIZE_CLASSES,
               word=ctypes.c_int64):
    """``__del__`` of a context block: free the tape buffers and the blocks of the free
    lists the kernel kept in it (the defaults keep what it needs reachable while the
    interpreter shuts down)."""
    for k in range(count):
        address = ctx[first + 2 * k]
        if address:
            ctx[first + 2 * k] = 0
            free_block(address)
    for c in range(classes):
        address, ctx[lists + c], ctx[held + c] = ctx[lists + c], 0, 0
        while address:  # each block's first word links the next
            following = word.from_address(address).value
            free_block(address)
            address = following


_CONTEXT_TYPES = {}


def context_block(nwords):
    """A zeroed context block of ``nwords`` int64 words (``abi.py``): a ctypes array
    (its buffer pointer right after the object header, as the fast entry reads it) that
    frees its tape buffers and free lists when deallocated and takes attributes
    (fastcall.py keeps the fast entry's method definition on it)."""
    cls = _CONTEXT_TYPES.get(nwords)
    if cls is None:
        cls = _CONTEXT_TYPES[nwords] = type(f"ContextBlock{nwords}", (ctypes.c_int64 * nwords,),
                                            {"__del__": _free_kept, "__module__": __name__})
    return cls()


class Caller:
    def __init__(self, mt, address):
        self.sites = mt.sites
        self.return_type = mt.return_type
        nwords = abi.RESULT + abi.result_layout(mt.return_type)
        self.ctx = context_block(nwords)
        self.ctx_address = ctypes.addressof(self.ctx)
        proto = ctypes.PYFUNCTYPE(ctypes.c_int32, *c_argtypes(mt.leaves))
        self.cfunc = proto(address)
        self.words = np.frombuffer(self.ctx, dtype=np.int64)
        self.read = _reader(mt.return_type, self)
        #: held from the kernel's entry until its result or error is read (see above)
        self.lock = threading.Lock()

    def __call__(self, *leaves):
        return self.run(leaves)

    def run(self, leaves):
        """The kernel's result for the C argument values ``leaves``, or its error raised;
        the context block is this call's until the result is read (``lock``, and the
        ``BUSY`` word that keeps a fast entry out)."""
        ctx = self.ctx
        with self.lock:
            ctx[abi.BUSY] = 1
            try:
                if self.cfunc(self.ctx_address, *leaves):
                    self.fail()
                return self.read()
            finally:
                ctx[abi.BUSY] = 0

    def fail(self, status=None):
        """Raise the error the kernel reported: from ``status``, the status words a fast
        entry returned (fastcall.py), or else from the context block's, which it clears
        (called with ``lock`` held)."""
        if status is None:
            status = [int(w) for w in self.words[abi.STATUS:abi.HEAD]]
            self.words[abi.STATUS] = 0
        site = status[0]
        if site < 0:
            if site == -3:  # module.READONLY
                raise ValueError("assignment destination is read-only")
            if site == -2:  # module.MISALIGNED (Jitted calls again with aligned copies)
                raise MisalignedArrayError("jit: an array argument is not aligned for its "
                                           "dtype (numpy's ALIGNED flag is off); pass a copy "
                                           "(x.copy())")
            from .compile import int_overflow  # the fast entry's (fastcall.OVERFLOW)
            k = status[1]
            names = getattr(self, "arg_names", ())
            raise int_overflow(f"the argument {names[k]!r}" if 0 <= k < len(names)
                               else f"argument number {k + 1}")
        exc, template, loc, user = self.sites[site - 1]
        ints = status[1:]
        message = template(*ints) if callable(template) else template.format(*ints)
        located = loc is not None and getattr(loc, "line", 0)
        if not user and located:  # a check jit adds: the message says where
            message += f" (in jit-compiled code at {loc.file}:{loc.line}: {loc.text.strip()})"
        error = exc(message) if message else exc()
        if not located:
            raise error
        note = where(loc)  # a user's raise keeps its message; the note says where
        if hasattr(error, "add_note"):
            error.add_note(note)
        else:  # Python 3.10: the attribute (PEP 678) without the traceback's printing
            error.__notes__ = [*getattr(error, "__notes__", []), note]
        raise_at(error, loc, getattr(self, "function", "") or "<jit>")


def where(loc) -> str:
    """``in jit-compiled code at FILE:LINE:COL``, the line quoted and a caret under the
    construct (``errors.S2SError``'s form)."""
    head = f"in jit-compiled code at {loc.file}:{loc.line}:{loc.col + 1}"
    text = loc.text.rstrip("\n")
    stripped = text.lstrip()
    if not stripped:
        return head
    caret = " " * max(loc.col - (len(text) - len(stripped)), 0) + "^"
    return f"{head}\n    {stripped}\n    {caret}"


_FRAMES = {}


def raise_at(error, loc, function):
    """Raise ``error`` from a frame at the user's ``loc`` (a function named ``function``
    whose one statement sits at that file, line and column), so that the traceback
    ends at the user's line, quoted from the file as Python quotes it."""
    text = loc.text.rstrip("\n")
    key = (loc.file, loc.line, loc.col, len(text), function)
    fn = _FRAMES.get(key)
    if fn is None:
        indent = max(loc.col, 1)
        gap = max(len(text) - indent - len("raisee"), 1)  # the span reaches the line's end
        outer = compile(f"def f(e):\n{' ' * indent}raise{' ' * gap}e\n", loc.file, "exec")
        code = next(c for c in outer.co_consts if hasattr(c, "co_code"))
        names = {"co_name": function}
        if hasattr(code, "co_qualname"):  # Python 3.11+
            names["co_qualname"] = function
        code = code.replace(co_firstlineno=loc.line - 1, **names)
        fn = _FRAMES[key] = type(raise_at)(code, {})
        if len(_FRAMES) > 4096:
            _FRAMES.pop(next(iter(_FRAMES)))
    fn(error)


def _reader(t, caller):
    """A function of no arguments reading a result of type ``t`` from the result words."""
    words = caller.words
    as_float = words.view(np.float64)
    pos = [abi.RESULT]

    def build(t):
        k = pos[0]
        if isinstance(t, T.Scalar):
            pos[0] += 2 if t.dtype == "c16" else 1
            py = t.python()
            if t.dtype == "f8":
                cell = ctypes.c_double.from_buffer(caller.ctx, 8 * k)
                return (lambda: cell.value) if t.weak else (lambda: as_float[k])
            if t.dtype == "f4":
                cell = ctypes.c_float.from_buffer(caller.ctx, 8 * k)
                return lambda: np.float32(cell.value)
            if t.dtype == "c16":
                return lambda: py(complex(as_float[k], as_float[k + 1]))
            if t.dtype == "b1":
                return lambda: py(bool(words[k]))
            return lambda: py(int(words[k]))
        if isinstance(t, T.List) and isinstance(t.elem, T.Array):  # lists.handed_back
            pos[0] += 3
            nd, width, typestr = t.elem.ndim, 2 + 2 * t.elem.ndim, _TYPESTR[t.elem.dtype]
            ctx = caller.ctx

            def read_arrays(blocks):
                data, records, n = ctx[k], NativeBlock(ctx[k + 1]), ctx[k + 2]
                got = list((ctypes.c_int64 * (n * width)).from_address(data)) if n else []
                out = []
                for r in range(0, n * width, width):
                    block = got[r + 1]
                    owner = blocks.get(block)
                    if owner is None:
                        owner = blocks[block] = NativeBlock(block)
                    out.append(wrap(got[r], owner, tuple(got[r + 2:r + 2 + nd]),
                                    tuple(got[r + 2 + nd:r + width]), typestr))
                del records  # read: its block is freed
                return out

            read_arrays.needs_blocks = True
            return read_arrays
        if isinstance(t, T.List):  # read as an array (lists.as_array), handed back as a list
            from ..values.lists import array_type, elem_of
            e = elem_of(t)
            items = build(array_type(t))
            as_list = (lambda a: a.tolist()) if getattr(e, "weak", False) else list

            def read_list(blocks):
                return as_list(items(blocks))

            read_list.needs_blocks = True
            return read_list
        if isinstance(t, T.Array):
            nd = t.ndim
            pos[0] += 2 + 2 * nd
            typestr = _TYPESTR[t.dtype]

            ctx = caller.ctx  # ctypes reads give Python ints at once (numpy's are slower)

            def read_array(blocks):
                data, block = ctx[k], ctx[k + 1]
                owner = blocks.get(block)
                if owner is None:
                    owner = blocks[block] = NativeBlock(block)
                return wrap(data, owner, tuple(ctx[k + 2:k + 2 + nd]),
                            tuple(ctx[k + 2 + nd:k + 2 + 2 * nd]), typestr)

            read_array.needs_blocks = True
            return read_array
        if isinstance(t, T.Tuple):
            parts = [build(it) for it in t.items]
            make = (lambda items, keys=t.keys: dict(zip(keys, items))) \
                if isinstance(t, T.Dict) else list if isinstance(t, T.ListLiteral) else \
                (lambda items, cls=t.cls: cls(*items)) if isinstance(t, T.NamedTuple) else tuple
            if not any(getattr(p, "needs_blocks", False) for p in parts):
                return lambda: make([p() for p in parts])

            def read_tuple(blocks):
                return make([p(blocks) if getattr(p, "needs_blocks", False) else p()
                             for p in parts])

            read_tuple.needs_blocks = True
            return read_tuple
        return lambda: None

    top = build(t)
    if getattr(top, "needs_blocks", False):
        return lambda: top({})
    return top


def convert_leaves(leaves):
    """A function turning the flat leaf values into the C arguments of the entry
    (complex -> two doubles; numpy scalars -> Python numbers); None when none needs it."""
    kinds = [k for k, _ in leaves]
    if all(k in ("f8", "i8", "array") for k in kinds):
        return None

    tapes = {}  # id(tape) -> (tape, its encoding): a vjp closure's tape is encoded once

    def convert(values):
        out = []
        for (kind, t), v in zip(leaves, values):
            if kind == "stack":
                hit = tapes.get(id(v))
                if hit is None or hit[0] is not v:
                    from ..lower.stacks import encode_tape
                    hit = tapes[id(v)] = (v, encode_tape(v))
                    if len(tapes) > 16:
                        tapes.pop(next(iter(tapes)))
                out += [hit[1].ctypes.data, hit[1].nbytes]
            elif kind == "list":  # a list of numbers: a contiguous array (lists.py)
                from ..values.lists import elem_of
                out.append(np.array(v, dtype=elem_of(t).numpy()))
            elif kind == "c16":
                z = complex(v)
                out += [z.real, z.imag]
            elif kind in ("f8", "f4"):
                out.append(float(v))
            elif kind == "b1":
                out.append(bool(v))
            elif kind == "i8":
                out.append(int(v))
            else:
                out.append(v)
        return out

    return convert
