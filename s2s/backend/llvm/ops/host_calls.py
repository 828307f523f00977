"""numpy functions compiled code runs by calling numpy itself: FFTs, eigen- and singular
value decompositions, least squares, partitions (handlers of ``calls.TABLE``).

These are library algorithms (LAPACK, pocketfft) whose results s2s could not reproduce
bit for bit natively, and whose cost dwarfs a call into Python: ``s2s.jit`` compiles a
call of one of ``HOST_FUNCTIONS`` to a call back into the interpreter that runs numpy's
function on the operands, as JAX's ``pure_callback`` and Numba's object mode do.  The
results are numpy's, exactly.

Contract of a compiled call ``f(*args, **kwargs)``:

* operands are arrays (any layout: the callback sees views of the compiled arrays,
  read-only), numbers, tuples or lists of them, and compile-time constants (``None``,
  numbers, strings, tuples of them, dtypes) written at the call;
* the result type (``Array(dtype, ndim)``, a number, a tuple or a namedtuple of them)
  is what ``f`` returns on sample operands of the same types (``_probe``); numpy's
  result dtypes and ranks depend on the operands' dtypes and ranks and the constants,
  not on their values (``COMPLEX_RESULTS`` lists the exceptions).  A result of a dtype
  compiled code has no type for is widened (``int32`` to ``int64``, ``float16`` to
  ``float32``, ``complex64`` to ``complex128``: ``_WIDER``), else refused by name, as
  is a call ``f`` raises on for every sample;
* the call runs in two steps: ``s2s.host_call(key, operand words, result words)`` calls
  ``f`` and writes the results' shapes (and numbers) into the result words; the compiled
  code allocates the result arrays and ``s2s.host_fill(key, data pointers)`` copies
  numpy's results into them.  ``key`` (a hash of the call's layout, the same in every
  process, so object code cached on disk finds its layout again) names the call;
* an exception ``f`` raises (``LinAlgError``, a ``ValueError``) is raised by the compiled
  function as it is, with a note pointing at the user's line.  A call inside a
  ``try`` block is refused (the compiled ``except`` clauses choose by the exception's
  class when compiling), as are calls in GPU kernels (``s2s.cuda``: no interpreter
  there).

The same calls serve as the jit's fallback (``HostFallback``): a call of a numpy function,
or of a pure helper of derivative code, that its own handler refuses (``np.trace`` of a
stack, a matrix norm by ``ord=2``) or that has none runs in numpy -- not numpy's scalar
types, elementwise functions of numbers alone, functions that write into an operand or
whose result's rank depends on the values, nor calls with ``out=``.

A kernel with a host call has no fast entry (``driver/module.PYTHON_CALLBACKS``): the
callback can hand the GIL to another thread mid-call.
"""
from __future__ import annotations

import ctypes
import hashlib
import itertools
import os
import sys
import struct
import threading

import numpy as np
import s2s_runtime as rt
from llvmlite import binding
from llvmlite import ir as ll

from ....errors import UnsupportedSyntaxError
from ....ir import nodes as ir
from ....rules import registry
from ..typing import types as T
from ..values import arrays as A
from .calls import TABLE, maps_elements, name_of, register, set_fallback, unsupported

#: the functions compiled code calls numpy for
HOST_FUNCTIONS = (
    np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn,
    np.fft.rfft, np.fft.irfft, np.fft.rfft2, np.fft.irfft2, np.fft.rfftn, np.fft.irfftn,
    np.fft.hfft, np.fft.ihfft, np.fft.fftshift, np.fft.ifftshift, np.fft.fftfreq,
    np.fft.rfftfreq,
    np.linalg.eig, np.linalg.eigh, np.linalg.eigvals, np.linalg.eigvalsh, np.linalg.svd,
    np.linalg.qr, np.linalg.pinv, np.linalg.lstsq, np.linalg.cond, np.linalg.matrix_rank,
    np.linalg.multi_dot, np.linalg.tensorsolve, np.linalg.tensorinv,
    np.partition, np.argpartition, np.gradient, np.sort_complex, np.lexsort, np.frexp,
    np.unravel_index, np.ravel_multi_index, np.indices, np.diag_indices,
    np.diag_indices_from,
) + tuple(getattr(np.linalg, name) for name in ("svdvals", "matrix_norm")
          if hasattr(np.linalg, name)) + (  # numpy >= 2
    # the helpers their derivatives call (s2s_runtime.linalg)
    rt.degenerate_nan, rt.eye_like, rt.strict_lower_mask, rt.nonempty_or_zeros,
    rt.nonempty_or_zeros_t, rt.tensorinv_shapes, rt.tensorsolve_matrix,
    rt.tensorsolve_matrix_t, rt.svd_checked, rt.qr_checked, rt.flat_axes, rt.unflat_axes,
    rt.fit_to, rt.fft_axes, rt.fft_rest_axes, rt.fft_last_axis, rt.rfftn_sizes, rt.fft_size,
    rt.irfft_weights, rt.multi_dot_jvp, rt.multi_dot_jvp2, rt.multi_dot_vjp,
    rt.multi_dot_vjp_dx,
    # derivative helpers of reductions and norms that have no native form yet: jit(grad)
    # and jit(hessian) of np.prod, np.average, np.linalg.norm, np.full, np.linspace
    rt.prod_vjp, rt.prod_jvp, rt.prod_hvp, rt.cumprod_hvp, rt.average_vjp, rt.average_jvp,
    rt.average_vjp_jvp, rt.average_vjp_transpose, rt.average_vjp_vjp, rt.inner_vjp,
    rt.norm_vjp_dans, rt.norm_vjp_dans_transpose, rt.norm_vjp_dx, rt.full_vjp,
    rt.linspace_vjp, rt.linspace_vjp_transpose,
    # the layouts np.interp's and np.convolve's derivatives read (knots, pads)
    rt.interp_layout, rt.conv_pad,
    # vmap's per-example fallback (``batch/table.per_example``): jit(vmap(f)) of a call
    # batched that way; vmap's joins of batched items (their transposes: derivs/pieces.py)
    rt.batch_loop, rt.batch_vstack, rt.batch_hstack,
    # one example of a batched array, for a helper that reads only its shape
    rt.batch_stand_in)

#: functions whose result dtype depends on the values (numpy's ``eig`` is real where every
#: eigenvalue is): compiled code gives their float results as complex128 always, as JAX does
COMPLEX_RESULTS = (np.linalg.eig, np.linalg.eigvals)

CALL_SYMBOL = "s2s.host_call"
FILL_SYMBOL = "s2s.host_fill"

_WORDS = ctypes.POINTER(ctypes.c_int64)
_CALL_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, _WORDS, _WORDS)
_FILL_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, _WORDS)

#: key -> the call's ``_Layout`` (registered when the call is lowered)
_LAYOUTS = {}
#: per thread: the results of the last ``host_call`` waiting for ``host_fill``, and the
#: exception of the last one that raised (read by its error site)
_PENDING = threading.local()


def _word_to_float(w):
    return struct.unpack("<d", struct.pack("<q", w))[0]


def _float_to_word(x):
    return struct.unpack("<q", struct.pack("<d", float(x)))[0]


# -- operand and result layouts ---------------------------------------------------------
# A layout is a nested tuple: ("const", value) | ("scalar", dtype, weak) | ("array", dtype,
# ndim) | ("tuple", kind, items) (kind: "tuple", "list" or a namedtuple class).

_CONST_TYPES = (type(None), bool, int, float, complex, str)


def _constant_ok(value) -> bool:
    """A constant the layout's key can name (``_stable``): numbers, strings, None, dtypes,
    functions (``rt.batch_loop``'s), tuples and lists of them."""
    if isinstance(value, (tuple, list)):
        return all(map(_constant_ok, value))
    if isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic):
        return True
    return type(value) in _CONST_TYPES or callable(value) and not isinstance(value, type)


def _function_name(fn) -> str:
    """``module:qualname`` of a function that name finds again (the same in every
    process), else a name of this process only (a lambda, a closure: the call's key, part
    of the LLVM IR the disk cache's key hashes, then differs in a new process, which
    compiles again)."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if module and qualname and "<" not in qualname:
        found = sys.modules.get(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if found is fn:
            return f"{module}:{qualname}"
    return f"process {os.getpid()} object {id(fn)}"


def operand_layout(atom, t):
    """The layout of one operand (``atom`` its IR atom, ``t`` its type), or None."""
    if isinstance(atom, ir.Const):
        return ("const", atom.value) if _constant_ok(atom.value) else None
    if isinstance(t, T.Static):
        return ("const", t.value) if _constant_ok(t.value) else None
    if isinstance(t, T.NoneType):
        return ("const", None)
    if isinstance(t, T.Scalar):
        return ("scalar", t.dtype, t.weak)
    if isinstance(t, T.Array):
        return ("array", t.dtype, t.ndim)
    if type(t) in (T.Tuple, T.ListLiteral, T.NamedTuple):
        items = tuple(operand_layout(None, i) for i in t.items)
        if None in items:
            return None
        kind = {T.Tuple: "tuple", T.ListLiteral: "list", T.NamedTuple: getattr(t, "cls", None)}
        return ("tuple", kind[type(t)], items)
    return None


def _sequence(kind, items):
    """``items`` as a list, a tuple or a namedtuple (``kind``: a tuple layout's)."""
    if kind == "list":
        return items
    return tuple(items) if kind == "tuple" else kind(*items)


def _sample(layout, ints, size):
    """A value of ``layout`` for ``_probe``: arrays of ``size`` along every axis, well
    conditioned (a dominant diagonal), positive, distinct entries; numbers ``ints``."""
    kind = layout[0]
    if kind == "const":
        return layout[1]
    if kind == "tuple":
        return _sequence(layout[1], [_sample(i, ints, size) for i in layout[2]])
    if kind == "scalar":
        return T.Scalar(*layout[1:]).python()(
            {"b1": True, "i8": ints, "f4": 0.5, "f8": 0.5, "c16": 0.5 + 0.25j}[layout[1]])
    dtype = T.Scalar(layout[1]).numpy()
    ndim = layout[2]
    shape = (size,) * ndim
    values = 1.0 + np.arange(int(np.prod(shape)), dtype=float).reshape(shape) / 7.0
    if ndim >= 2:
        values = values + size * np.eye(size)
    if layout[1] == "b1":
        return np.ones(shape, bool)
    if layout[1] == "i8":
        return (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(np.int64)
    return values.astype(dtype)


#: result dtypes compiled code has no type for, widened to one it has (their values kept):
#: smaller integers to int64 (numpy's ``lstsq`` rank and ``frexp`` exponents are int32),
#: float16 to float32, complex64 to complex128 (an FFT of float32 data)
_WIDER = {"i1": np.int64, "i2": np.int64, "i4": np.int64, "u1": np.int64, "u2": np.int64,
          "u4": np.int64, "f2": np.float32, "c8": np.complex128}


def result_layout(value, fn, loc):
    """The layout of a result ``value`` of ``fn``: its dtypes widened (``_WIDER``) where
    compiled code has no type for them, refused by name where none is wider."""
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return ("tuple", type(value), tuple(result_layout(v, fn, loc) for v in value))
    if isinstance(value, (tuple, list)):
        return ("tuple", "list" if isinstance(value, list) else "tuple",
                tuple(result_layout(v, fn, loc) for v in value))
    if isinstance(value, (np.ndarray, np.generic, bool, int, float, complex)):
        dtype = np.asarray(value).dtype
        code = T.dtype_code(_WIDER.get(dtype.kind + str(dtype.itemsize), dtype))
        if code is None:
            raise UnsupportedSyntaxError(
                f"jit does not compile {name_of(fn)} here: its result has dtype {dtype}, "
                "which compiled code has no type for", loc)
        if isinstance(value, np.ndarray):
            return ("array", code, value.ndim)
        return ("scalar", code, type(value) in (bool, int, float, complex))
    raise UnsupportedSyntaxError(f"jit does not compile {name_of(fn)} here: it returns a "
                                 f"{type(value).__name__}", loc)


def result_type(layout):
    kind = layout[0]
    if kind == "array":
        return T.Array(layout[1], layout[2])
    if kind == "scalar":
        return T.Scalar(layout[1], layout[2])
    items = tuple(result_type(i) for i in layout[2])
    if layout[1] not in ("tuple", "list"):
        return T.NamedTuple(items, cls=layout[1])
    return T.Tuple(items)


def _probe(fn, layouts, kw_layouts, loc):
    """``fn``'s result layout on sample operands of these layouts: arrays of 4, then 17
    along every axis, then of each small integer constant among the operands (a helper
    whose array's length must be its count, ``linspace_vjp(g, a, b, num)``); run-time
    integers 1, then 0, then 2 (an axis, a count, an index)."""
    errors = []
    sizes = (4, 17) + tuple(sorted(_small_constants(list(layouts) + list(kw_layouts.values()))
                                   - {4, 17}))
    for size, ints in itertools.product(sizes, (1, 0, 2)):
        if size == 17 and all(a[0] != "array" or a[2] > 2
                              for a in _arrays(layouts, kw_layouts)):
            continue  # (no big samples of 3-d arrays and up)
        args = [_sample(a, ints, size) for a in layouts]
        kwargs = {k: _sample(a, ints, size) for k, a in kw_layouts.items()}
        try:
            with np.errstate(all="ignore"):
                value = fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 -- any error of numpy's: try other samples
            errors.append(e)
            continue
        layout = result_layout(value, fn, loc)
        return _complex(layout) if fn in COMPLEX_RESULTS else layout
    raise UnsupportedSyntaxError(
        f"jit does not compile {name_of(fn)} with these operands: called on sample "
        f"operands of their types it raises {type(errors[0]).__name__}: {errors[0]}", loc)


def _small_constants(layouts) -> set:
    """The integer constants from 1 to 64 among these layouts (in tuples too)."""
    out = set()
    for layout in layouts:
        if layout[0] == "tuple":
            out |= _small_constants(layout[2])
        elif layout[0] == "const" and type(layout[1]) is int and 1 <= layout[1] <= 64:
            out.add(layout[1])
    return out


def _complex(layout):
    """``layout`` with its float arrays and numbers complex."""
    if layout[0] == "tuple":
        return ("tuple", layout[1], tuple(map(_complex, layout[2])))
    return layout[:1] + ("c16",) + layout[2:] if layout[1] in ("f4", "f8") else layout


def _arrays(layouts, kw_layouts):
    """The array layouts among these operands' (in tuples too)."""
    out, todo = [], list(layouts) + list(kw_layouts.values())
    while todo:
        layout = todo.pop()
        if layout[0] == "tuple":
            todo.extend(layout[2])
        elif layout[0] == "array":
            out.append(layout)
    return out


class _Layout:
    """One compiled call: the function, its operands' and its result's layouts."""

    def __init__(self, fn, args, kwargs, result):
        self.fn, self.args, self.kwargs, self.result = fn, args, kwargs, result
        self.name = name_of(fn)  # (for the errors of a call: not looked up per call)

    def key(self) -> int:
        text = repr((name_of(self.fn), getattr(self.fn, "__module__", ""),
                     tuple(map(_stable, self.args)),
                     tuple((k, _stable(v)) for k, v in self.kwargs), _stable(self.result)))
        return int(hashlib.sha1(text.encode()).hexdigest()[:15], 16)


def _stable(layout):
    """``layout`` with namedtuple classes and functions named (their reprs hold ids)."""
    if layout[0] == "const":
        return ("const", _named_constant(layout[1]))
    if layout[0] == "tuple":
        kind = layout[1] if layout[1] in ("tuple", "list") else \
            f"{layout[1].__module__}.{layout[1].__qualname__}"
        return ("tuple", kind, tuple(map(_stable, layout[2])))
    return layout


def _named_constant(value):
    if isinstance(value, (tuple, list)):
        return type(value)(map(_named_constant, value))
    if callable(value) and not isinstance(value, type):
        return ("function", _function_name(value))
    return value


# -- the callbacks ----------------------------------------------------------------------
class _View:
    """An ``__array_interface__`` over compiled memory (numpy reads it, no copy)."""

    def __init__(self, pointer, shape, strides, dtype, readonly):
        self.__array_interface__ = {"version": 3, "shape": tuple(shape), "typestr": dtype.str,
                                    "data": (pointer, readonly),
                                    "strides": None if strides is None else tuple(strides)}


#: the numpy dtype and the Python number type of each compiled dtype code (read per call)
_DTYPES = {code: np.dtype(T.Scalar(code).numpy()) for code in T.DTYPES}
_PYTHON = {"b1": bool, "i8": int, "f8": float, "f4": float, "c16": complex}


def _read(layout, words, k):
    """``(operand, next word)`` of the operand of ``layout`` at ``words[k]``."""
    kind = layout[0]
    if kind == "const":
        return layout[1], k
    if kind == "tuple":
        items = []
        for item in layout[2]:
            value, k = _read(item, words, k)
            items.append(value)
        return _sequence(layout[1], items), k
    dtype = _DTYPES[layout[1]]
    if kind == "scalar":  # a Python number where the compiled one is weak (``x is True``)
        make = _PYTHON[layout[1]] if layout[2] else dtype.type
        w = words[k]
        if layout[1] == "c16":
            return make(complex(_word_to_float(w), _word_to_float(words[k + 1]))), k + 2
        if layout[1] in ("f8", "f4"):
            return make(_word_to_float(w)), k + 1
        return make(w), k + 1
    ndim = layout[2]
    shape = [words[k + 1 + j] for j in range(ndim)]
    strides = [words[k + 1 + ndim + j] for j in range(ndim)]
    # (an array of no elements may have a null data pointer, which numpy refuses)
    view = np.asarray(_View(words[k] or dtype.itemsize, shape, strides, dtype, True))
    return view, k + 1 + 2 * ndim


def _flatten(layout, value, out, name):
    """The result's arrays and numbers, in layout order, as the layout's dtypes; a result
    of another structure, rank or kind than the sample call's (a type that depends on
    the values) raises ``TypeError`` naming the call ``name``."""
    kind = layout[0]
    if kind == "tuple":
        if not isinstance(value, (tuple, list)) or len(value) != len(layout[2]):
            raise _retyped(name, f"{len(value) if isinstance(value, (tuple, list)) else 'no'} "
                           f"items where the sample call gave {len(layout[2])}")
        for item, v in zip(layout[2], value):
            _flatten(item, v, out, name)
        return out
    array = np.asarray(value)
    dtype = _DTYPES[layout[1]]
    if array.dtype != dtype and not np.can_cast(array.dtype, dtype):
        raise _retyped(name, f"{array.dtype} where the sample call gave {np.dtype(dtype)}")
    if array.ndim != (layout[2] if kind == "array" else 0):
        raise _retyped(name, f"a {array.ndim}-d result where the sample call gave "
                       f"{layout[2] if kind == 'array' else 0}-d")
    out.append((layout, array.astype(dtype, copy=False)))
    return out


def _retyped(name, what):
    return TypeError(f"s2s.jit: {name} returned {what}: compiled code has one type per "
                     "variable, and this result's type depends on the values; call it "
                     "outside the compiled function")


def _host_call(key, in_words, out_words):
    _PENDING.results = None
    try:
        entry = _LAYOUTS[key]
        k, args = 0, []
        for layout in entry.args:
            value, k = _read(layout, in_words, k)
            args.append(value)
        kwargs = {}
        for name, layout in entry.kwargs:
            kwargs[name], k = _read(layout, in_words, k)
        flat = _flatten(entry.result, entry.fn(*args, **kwargs), [], entry.name)
    except BaseException as e:  # noqa: BLE001 -- raised again by the compiled code's caller
        _PENDING.error = e
        return 1
    k, arrays = 0, []
    for layout, array in flat:
        if layout[0] == "array":
            for j, n in enumerate(array.shape):
                out_words[k + j] = n
            k += array.ndim
            arrays.append(array)
        elif layout[1] == "c16":
            out_words[k] = _float_to_word(array.real)
            out_words[k + 1] = _float_to_word(array.imag)
            k += 2
        elif layout[1] in ("f8", "f4"):
            out_words[k] = _float_to_word(array)
            k += 1
        else:
            out_words[k] = int(array)
            k += 1
    _PENDING.results = arrays
    return 0


def _host_fill(key, pointers):
    arrays, _PENDING.results = _PENDING.results, None
    for k, array in enumerate(arrays or ()):
        if array.size:
            np.copyto(np.asarray(_View(pointers[k], array.shape, None, array.dtype, False)),
                      array)
    return 0


def raised_in_host_call(_message=None):
    """The exception the last host call of this thread raised (its error site's class)."""
    error = getattr(_PENDING, "error", None)
    _PENDING.error = None
    return error if error is not None else RuntimeError("s2s internal error: a host call "
                                                        "failed without an exception")


_CALL = _CALL_TYPE(_host_call)
_FILL = _FILL_TYPE(_host_fill)
binding.add_symbol(CALL_SYMBOL, ctypes.cast(_CALL, ctypes.c_void_p).value)
binding.add_symbol(FILL_SYMBOL, ctypes.cast(_FILL, ctypes.c_void_p).value)
SYMBOLS = (CALL_SYMBOL, FILL_SYMBOL)


# -- typing and lowering ----------------------------------------------------------------
def _callee(module, symbol):
    """``i64 s2s.host_call(i64 key, i64* operands, i64* results)`` or
    ``i64 s2s.host_fill(i64 key, i64* data pointers)``."""
    words = [T.I64.as_pointer()] * (2 if symbol == CALL_SYMBOL else 1)
    return module.globals.get(symbol) or ll.Function(
        module, ll.FunctionType(T.I64, [T.I64] + words), symbol)


class HostCall:
    """A call of one of ``HOST_FUNCTIONS``, run by numpy (see the module docstring)."""
    wants_atoms = True

    def layouts(self, types, kw, atoms, kw_atoms):
        args = tuple(operand_layout(a, t) for a, t in zip(atoms, types))
        kwargs = tuple((k, operand_layout(kw_atoms.get(k), t)) for k, t in sorted(kw.items()))
        if None in args or any(layout is None for _, layout in kwargs):
            return None
        return args, kwargs

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        layouts = self.layouts(types, kw, atoms, kw_atoms or {})
        if layouts is None:
            return None
        args, kwargs = layouts
        return result_type(_probe(fn, args, dict(kwargs), loc))

    def lower(self, L, fn, vals, kw, rtype):
        if "nvptx" in (L.b.module.triple or ""):
            raise UnsupportedSyntaxError(f"{name_of(fn)} in a GPU kernel (s2s.cuda): compiled "
                                         "code calls numpy for it, which only CPU code "
                                         "compiled by s2s.jit can", L.loc)
        if L.handlers:
            raise UnsupportedSyntaxError(
                f"jit does not compile {name_of(fn)} inside a try block: compiled code calls "
                "numpy for it, whose exceptions the compiled except clauses cannot choose "
                "between (call it outside the try)", L.loc)
        atoms, kw_atoms = L.call_atoms
        types = [t for _, t in vals]
        layouts = self.layouts(types, {k: t for k, (_, t) in kw.items()}, atoms, kw_atoms)
        if layouts is None:
            raise unsupported(fn, types, L.loc)
        args, kwargs = layouts
        result = _probe(fn, args, dict(kwargs), L.loc)
        entry = _Layout(fn, args, kwargs, result)
        key = entry.key()
        _LAYOUTS[key] = entry
        b = L.b
        words = []
        for layout, (v, t) in list(zip(args, vals)) + [(layout, kw[k]) for k, layout in kwargs]:
            _operand_words(L, layout, v, t, words)
        in_buf = _buffer(L, words)
        out_buf = b.alloca(T.I64, size=max(_words_of_result(result), 1))
        status = b.call(_callee(L.module, CALL_SYMBOL),
                        [ll.Constant(T.I64, key), in_buf, out_buf])
        L.check(b.icmp_signed("!=", status, A.ZERO), raised_in_host_call, "")
        arrays = []
        value, _ = _result_value(L, result, rtype, out_buf, 0, arrays)
        pointers = _buffer(L, [b.ptrtoint(b.extract_value(a, 0), T.I64) for a in arrays])
        b.call(_callee(L.module, FILL_SYMBOL), [ll.Constant(T.I64, key), pointers])
        return value


def _buffer(L, words):
    buf = L.b.alloca(T.I64, size=max(len(words), 1))
    for k, w in enumerate(words):
        L.b.store(w, L.b.gep(buf, [ll.Constant(T.I64, k)]))
    return buf


def _float_word(L, v, t):
    d = v if t.dtype == "f8" else L.b.fpext(v, T.F64)
    return L.b.bitcast(d, T.I64)


def _operand_words(L, layout, v, t, words):
    """Append the words of operand ``v`` (of type ``t``) to ``words``."""
    b = L.b
    kind = layout[0]
    if kind == "const":
        return
    if kind == "tuple":
        for k, item in enumerate(layout[2]):
            _operand_words(L, item, b.extract_value(v, k), t.items[k], words)
        return
    if kind == "array":
        words.append(b.ptrtoint(b.extract_value(v, 0), T.I64))
        words.extend(A.shape_list(L, v, t))
        words.extend(A.strides_list(L, v, t))
        return
    dtype = layout[1]
    if dtype == "c16":
        words.extend(b.bitcast(b.extract_value(v, k), T.I64) for k in (0, 1))
    elif dtype in ("f8", "f4"):
        words.append(_float_word(L, v, t))
    elif dtype == "b1":
        words.append(b.zext(v, T.I64))
    else:
        words.append(v)


def _words_of_result(layout) -> int:
    kind = layout[0]
    if kind == "tuple":
        return sum(map(_words_of_result, layout[2]))
    if kind == "array":
        return layout[2]
    return 2 if layout[1] == "c16" else 1


def _result_value(L, layout, t, out_buf, k, arrays):
    """``(value, next word)``: the result of ``layout`` read from the result words at
    ``k``, its arrays allocated (appended to ``arrays``, which ``host_fill`` fills)."""
    b = L.b

    def word(j):
        return b.load(b.gep(out_buf, [ll.Constant(T.I64, j)]))

    kind = layout[0]
    if kind == "tuple":
        value = ll.Constant(t.llvm(), None)
        for j, item in enumerate(layout[2]):
            v, k = _result_value(L, item, t.items[j], out_buf, k, arrays)
            value = b.insert_value(value, v, j)
        return value, k
    if kind == "array":
        array = A.allocate(L, t, [word(k + j) for j in range(layout[2])])
        arrays.append(array)
        return array, k + layout[2]
    dtype = layout[1]
    if dtype == "c16":
        value = ll.Constant(T.C128, None)
        for j in (0, 1):
            value = b.insert_value(value, b.bitcast(word(k + j), T.F64), j)
        return value, k + 2
    if dtype in ("f8", "f4"):
        d = b.bitcast(word(k), T.F64)
        return (d if dtype == "f8" else b.fptrunc(d, T.F32)), k + 1
    if dtype == "b1":
        return b.icmp_signed("!=", word(k), A.ZERO), k + 1
    return word(k), k + 1


register(HostCall(), *HOST_FUNCTIONS)


#: numpy functions that write into an operand: never run on the compiled code's views
WRITES_OPERANDS = frozenset({np.copyto, np.put, np.put_along_axis, np.place, np.putmask,
                             np.fill_diagonal})


#: numpy functions whose result's rank or number of parts depends on the values (a
#: compiled variable has one type): their own handlers' refusals stand
VALUE_DEPENDENT_RANKS = frozenset({np.squeeze, np.split, np.array_split, np.hsplit, np.vsplit,
                                   np.dsplit} | ({np.unstack} if hasattr(np, "unstack") else set()))


#: the modules of s2s_runtime whose helpers (derivative rules' helpers) only read their
#: operands and return new values: the fallback may run them (``norm_vjp`` of a matrix
#: norm by ``ord=2``, which the native lowering refuses; the layouts ``shape_helpers``
#: computes from shapes and constants: ``np.trapezoid``'s weights, ``np.polyder``'s factors)
PURE_HELPER_MODULES = frozenset({"s2s_runtime.vjps", "s2s_runtime.jvps_arrays",
                                 "s2s_runtime.second_order", "s2s_runtime.second_order_norm",
                                 "s2s_runtime.shape_vjps", "s2s_runtime.linalg",
                                 "s2s_runtime.order_stats", "s2s_runtime.shape_helpers"})


class HostFallback(HostCall):
    """A call of a numpy function (or a pure helper of derivative code) that its own jit
    handler refuses, or that has none
    (``calls._resolve``): numpy runs it as a host call (``np.exp`` of a complex array).
    Not for elementwise functions of numbers alone (the fused loops type and lower
    elements with the functions' own handlers), for numpy's scalar
    types (``np.float16(x)``: its result would be widened), for functions that write
    into an operand or whose result's rank depends on the values, nor for calls with
    ``out=``."""

    def accepts(self, fn, types, kw) -> bool:
        module = getattr(fn, "__module__", None) or ""
        # an elementwise function only on arrays: the fused loops type it on elements,
        # which must stay refused there (they lower elements with its own handler)
        elementwise = maps_elements(fn) and not any(isinstance(t, T.Array) for t in types)
        return (module == "numpy" or module.startswith("numpy.")
                or module in PURE_HELPER_MODULES) and "out" not in kw \
            and not isinstance(fn, type) and fn not in WRITES_OPERANDS \
            and fn not in VALUE_DEPENDENT_RANKS and not elementwise \
            and getattr(fn, "__self__", None) is None  # (a ufunc's method: np.add.at)


set_fallback(HostFallback())


def compiled_natively(fn) -> bool:
    """Whether the jit compiles calls of ``fn`` itself (a native lowering, or its code
    read), not by calling numpy (``passes/per_example_loops.py`` writes vmap's loops of
    such calls out).  (The lowerings are registered: the jit imported them before its
    passes run.)"""
    if registry.inlined(fn, "jit"):
        return True
    handler = TABLE.get(fn)
    return handler is not None and not isinstance(handler, HostCall)
