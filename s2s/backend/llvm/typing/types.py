"""Value types of the LLVM backend and numpy's promotion rules (NEP 50).

Contract: every IR value the backend lowers has one of these types:

* ``Scalar(dtype, weak)``: ``dtype`` one of ``b1 i8 f4 f8 c16``; ``weak`` marks a
  Python ``bool/int/float/complex`` (NEP 50: a weak scalar takes the dtype of
  a numpy operand of the same or a higher category);
* ``Array(dtype, ndim)``: a numpy array, lowered as
  ``{i8* data, i8* block, [ndim x i64] shape, [ndim x i64] strides}`` (strides in
  bytes; ``block`` is the runtime allocation that owns the data, null for arrays
  the caller passed in);
* ``Tuple(items)``, ``Range`` (start, stop, step), ``Slice(present)``, ``NoneType``;
* ``Message`` (a string formatted at run time: its numbers) and ``Raised`` (an
  exception made with one).

``value_type(x)`` is the type of a run-time value (None when the backend
cannot take it); ``promote`` is numpy's result type of
an arithmetic operation; ``join`` the type of a variable assigned several types.
"""
from __future__ import annotations

import dataclasses

from dataclasses import dataclass
from typing import Tuple as TupleT

import numpy as np
from llvmlite import ir as ll

DTYPES = ("b1", "i8", "f4", "f8", "c16")
_CATEGORY = {"b1": 0, "i8": 1, "f4": 2, "f8": 2, "c16": 3}
_NP = {"b1": np.bool_, "i8": np.int64, "f4": np.float32, "f8": np.float64, "c16": np.complex128}
_PY = {"b1": bool, "i8": int, "f8": float, "c16": complex}
_WEAK_OF_CATEGORY = {0: "b1", 1: "i8", 2: "f8", 3: "c16"}

I1, I8, I32, I64 = ll.IntType(1), ll.IntType(8), ll.IntType(32), ll.IntType(64)
F32, F64 = ll.FloatType(), ll.DoubleType()
C128 = ll.LiteralStructType([F64, F64])
PTR = I8.as_pointer()


@dataclass(frozen=True)
class Scalar:
    dtype: str
    weak: bool = False

    def __str__(self):
        return _PY[self.dtype].__name__ if self.weak else f"np.{_NP[self.dtype].__name__}"

    @property
    def category(self):
        return _CATEGORY[self.dtype]

    def llvm(self):
        return {"b1": I1, "i8": I64, "f4": F32, "f8": F64, "c16": C128}[self.dtype]

    def numpy(self):
        return _NP[self.dtype]

    def python(self):
        """The Python type a result of this type is handed back as."""
        return _PY[self.dtype] if self.weak else _NP[self.dtype]


@dataclass(frozen=True)
class Array:
    dtype: str
    ndim: int

    def __str__(self):
        return f"{self.dtype}[{', '.join(':' * self.ndim)}]" if self.ndim else f"{self.dtype}[()]"

    @property
    def elem(self) -> Scalar:
        return Scalar(self.dtype)

    def llvm(self):
        dims = ll.ArrayType(I64, self.ndim)
        return ll.LiteralStructType([PTR, PTR, dims, dims])


@dataclass(frozen=True)
class Tuple:
    items: TupleT

    def __str__(self):
        return "(" + ", ".join(map(str, self.items)) + ("," if len(self.items) == 1 else "") + ")"

    def llvm(self):
        return ll.LiteralStructType([t.llvm() for t in self.items])


@dataclass(frozen=True)
class Dict(Tuple):
    """A dict with constant keys (``str`` or ``int``), lowered as the struct of its values
    in ``keys`` order (so everything that handles a tuple's layout handles it)."""

    keys: TupleT = ()

    def __str__(self):
        return "{" + ", ".join(f"{k!r}: {t}" for k, t in zip(self.keys, self.items)) + "}"


@dataclass(frozen=True)
class NamedTuple(Tuple):
    """An instance of a ``collections.namedtuple`` class ``cls``, or of a dataclass made in
    the compiled code (``record_fields``): laid out and read as a tuple; ``x.field`` reads
    the item of that field, and a result is rebuilt as ``cls`` (``cls(*items)``)."""

    cls: type = tuple

    def __str__(self):
        return f"{self.cls.__name__}{Tuple.__str__(self)}"

    def field(self, name):
        """The position of field ``name`` (None: not a field)."""
        fields = record_fields(self.cls)
        return fields.index(name) if name in fields else None


def record_fields(cls):
    """The field names of a namedtuple class, or of a dataclass whose fields are all
    ``__init__`` parameters (so ``cls(*items)`` rebuilds it); None for other classes."""
    if isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return tuple(cls._fields)
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        fields = dataclasses.fields(cls)
        if all(f.init for f in fields) and getattr(cls, "__post_init__", None) is None:
            return tuple(f.name for f in fields)
    return None


@dataclass(frozen=True)
class ListLiteral(Tuple):
    """A list display ``[a, b]`` that is only read: laid out and used as a tuple, except
    where numpy reads a list differently from a tuple (an index: ``fancy.py``)."""

    def __str__(self):
        return "[" + ", ".join(map(str, self.items)) + "]"


def tuple_like(t: Tuple, items) -> Tuple:
    """A tuple of ``items`` of ``t``'s kind: a namedtuple of ``t``'s class, else a tuple."""
    return NamedTuple(tuple(items), t.cls) if isinstance(t, NamedTuple) else Tuple(tuple(items))


def same_kind(t: Tuple, items) -> Tuple:
    """A container of ``items`` of ``t``'s kind: a namedtuple of ``t``'s class, a list
    display, a dict with ``t``'s keys, else a tuple."""
    if isinstance(t, ListLiteral):
        return ListLiteral(tuple(items))
    if isinstance(t, Dict):
        return Dict(tuple(items), t.keys)
    return tuple_like(t, items)


def plain_tuple(t) -> bool:
    """A tuple or a list display (not a dict, whose layout is also a tuple's)."""
    return isinstance(t, Tuple) and not isinstance(t, Dict)


@dataclass(frozen=True)
class List:
    """A list of numbers that may grow (``lists.py``): ``{i8* data, i8* block, i64 len}``
    (``block`` as an array's, its storage shared by the list's states); ``elem`` a
    ``Scalar``, or None for ``[]`` before anything is appended."""

    elem: object = None

    def __str__(self):
        return f"list[{self.elem if self.elem is not None else ''}]"

    def llvm(self):
        return ll.LiteralStructType([PTR, PTR, I64])


@dataclass(frozen=True)
class Range:
    def __str__(self):
        return "range"

    def llvm(self):
        return ll.LiteralStructType([I64, I64, I64])


@dataclass(frozen=True)
class Slice:
    """A slice; ``present`` says which of start, stop, step are given (not None)."""

    present: TupleT = (True, True, True)

    def __str__(self):
        return "slice"

    def llvm(self):
        return ll.LiteralStructType([I64, I64, I64])


@dataclass(frozen=True)
class NoneType:
    def __str__(self):
        return "None"

    def llvm(self):
        return ll.LiteralStructType([])


NONE = NoneType()
BOOL, INT, FLOAT, COMPLEX = (Scalar("b1", True), Scalar("i8", True), Scalar("f8", True),
                             Scalar("c16", True))
I64T, F64T = Scalar("i8"), Scalar("f8")

_DTYPE_STR = {"|b1": "b1", "<i8": "i8", "<f4": "f4", "<f8": "f8", "<c16": "c16"}
_PY_SCALARS = {float: FLOAT, int: INT, bool: BOOL, complex: COMPLEX}


def numpy_type(code: str):
    """The numpy scalar type of a dtype code (``"f8"`` -> ``np.float64``)."""
    return _NP[code]


def dtype_code(dtype) -> str:
    """``b1 i8 f4 f8 c16`` of a numpy dtype (or dtype-like), None if unsupported."""
    try:
        return _DTYPE_STR.get(np.dtype(dtype).str)
    except TypeError:
        return None


def value_type(x):
    """The backend type of a run-time value (tuples nested), None if unsupported."""
    t = type(x)
    if x is None:
        return NONE
    if t is range:
        return Range()
    if t is tuple or isinstance(x, tuple) and hasattr(t, "_fields"):
        items = tuple(value_type(v) for v in x)
        if any(i is None for i in items):
            return None
        return Tuple(items) if t is tuple else NamedTuple(items, t)
    if dataclasses.is_dataclass(t) and record_fields(t) is not None:  # read by field
        items = tuple(value_type(getattr(x, f)) for f in record_fields(t))
        return None if None in items else NamedTuple(items, t)
    if t is list:  # a list of numbers (lists.py); else a list only read, as a tuple
        from ..values.lists import list_type
        out = list_type(x)
        if out is None and x:
            items = tuple(value_type(v) for v in x)
            out = None if None in items else ListLiteral(items)
        return out
    if t is dict:
        keys, items = tuple(x), tuple(value_type(v) for v in x.values())
        ok = all(type(k) in (str, int) for k in keys) and None not in items
        return Dict(items, keys) if ok else None
    if t is np.ndarray:
        code = _DTYPE_STR.get(x.dtype.str)
        return Array(code, x.ndim) if code else None
    if t in (float, int, bool, complex):
        return _PY_SCALARS[t]
    if isinstance(x, np.generic):
        code = _DTYPE_STR.get(x.dtype.str)
        return Scalar(code) if code else None
    return None


def from_category(category: int, weak: bool) -> Scalar:
    return Scalar(_WEAK_OF_CATEGORY[category], weak)


def promote(*types: Scalar) -> Scalar:
    """numpy's (NEP 50) result type of combining these scalar types."""
    strong = [t for t in types if not t.weak]
    if not strong:  # Python scalars: the highest category, still weak
        return from_category(max(t.category for t in types), True)
    dt = np.result_type(*[_NP[t.dtype] for t in strong])
    top = max(t.category for t in types)
    code = dtype_code(dt)
    if _CATEGORY[code] < top:  # a weak scalar of a higher category
        if top == 3:
            code = "c16"
        elif top == 2:
            code = "f8" if code in ("b1", "i8") else code
        else:
            code = "i8"
    return Scalar(code, False)


def runtime_type(t):
    """``t``, or the run-time type of a compile-time number (``Static``) where a run-time
    value is wanted: an ``int`` or flag, a ``range``, a tuple of ints (axes computed from
    ``np.ndim``, ``rt.batch_axes``) or a slice of ints."""
    if isinstance(t, Static):
        v = t.value
        if type(v) in (int, bool):
            return INT if type(v) is int else BOOL
        if type(v) is range:
            return Range()
        if is_int_tuple(v):
            return Tuple((INT,) * len(v))
        if is_int_slice(v):
            return Slice(tuple(x is not None for x in (v.start, v.stop, v.step)))
    return t


def is_int_slice(value) -> bool:
    """A slice whose bounds are Python ints or None (``shape[:ax]`` of a known ``ax``)."""
    return type(value) is slice and all(x is None or type(x) is int
                                        for x in (value.start, value.stop, value.step))


def is_int_tuple(value) -> bool:
    """A tuple of Python ints (axes), the empty tuple included."""
    return type(value) is tuple and all(type(v) is int for v in value)


def join(a, b):
    """The type of a variable assigned values of types ``a`` and ``b`` (None: none)."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if runtime_type(a) is not a or runtime_type(b) is not b:  # compile-time numbers that differ
        return join(runtime_type(a), runtime_type(b))
    if isinstance(a, NoneType):
        return b
    if isinstance(b, NoneType):
        return a
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        weak = a.weak and b.weak
        if a.category == b.category and a.category == 2 and not weak:
            return Scalar("f8" if "f8" in (a.dtype, b.dtype) else "f4")
        return from_category(max(a.category, b.category), weak) if weak else \
            promote(Scalar(a.dtype), Scalar(b.dtype))
    if isinstance(a, List) or isinstance(b, List):
        from ..values.lists import join_list
        return join_list(a, b)
    if isinstance(a, Dict) or isinstance(b, Dict):
        if not (isinstance(a, Dict) and isinstance(b, Dict) and set(a.keys) == set(b.keys)):
            return None  # (the same keys; in ``a``'s order, ``scalars.convert`` reorders)
        other = dict(zip(b.keys, b.items))
        items = tuple(join(x, other[k]) for k, x in zip(a.keys, a.items))
        return None if any(i is None for i in items) else Dict(items, a.keys)
    if isinstance(a, Tuple) and isinstance(b, Tuple) and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
        return None if any(i is None for i in items) else Tuple(items)
    if isinstance(a, Slice) and isinstance(b, Slice):
        return Slice(tuple(x or y for x, y in zip(a.present, b.present)))
    return None


def memory_llvm(t: Scalar):
    """How an element of dtype ``t`` is stored in an array (numpy's bool is a byte)."""
    return I8 if t.dtype == "b1" else t.llvm()


def itemsize(dtype: str) -> int:
    return np.dtype(_NP[dtype]).itemsize


@dataclass(frozen=True, eq=False)
class Static:
    """A compile-time constant that is not a run-time value: not a number (a dtype, a
    class, a string), an operand some calls read (``dtype=np.float32``); a flag
    (``isinstance``'s answer: an ``if`` on it compiles the branch taken); or an ``int``
    known when compiling (``np.ndim``), which folds through arithmetic and comparisons
    and is a run-time constant to every other call (``runtime_type``)."""

    value: object

    def _key(self):
        v = self.value
        if type(v) in (bool, int, range) or is_int_tuple(v):
            return type(v), v
        if is_int_slice(v):
            return type(v), (v.start, v.stop, v.step)
        return (type(v), v.args) if isinstance(v, BaseException) else id(v)

    def __eq__(self, other):
        return isinstance(other, Static) and other._key() == self._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        return repr(self.value)

    def llvm(self):
        return ll.LiteralStructType([])


@dataclass(frozen=True)
class Message:
    """A string formatted at run time (an f-string, ``"...".format(...)``): the
    compile-time ``template`` and ``parts``, one per value formatted -- a number's type
    (``Scalar``: its value is carried) or ``Static`` (a constant, in the type) -- lowered
    as the struct of the numbers.  The text is made in Python where it is shown: the
    message of an exception raised, or a line printed (``ops/messages.py``)."""

    template: str
    parts: TupleT
    percent: bool = False  # ``template % values`` rather than ``template.format(*values)``

    def __str__(self):
        return "str"

    def numbers(self):
        return tuple(p for p in self.parts if isinstance(p, Scalar))

    def llvm(self):
        return ll.LiteralStructType([t.llvm() for t in self.numbers()])


@dataclass(frozen=True)
class Raised:
    """An exception made with a ``Message`` (``ValueError(f"bad n: {n}")``): its class
    and message, lowered as the message's numbers."""

    cls: type
    message: Message

    def __str__(self):
        return f"{self.cls.__name__}(str)"

    def llvm(self):
        return self.message.llvm()


@dataclass(frozen=True)
class Stack:
    """A tape (``tape = (x, tape)`` pushes, ``x, tape = tape`` pops) as a native stack
    ``{i8* base, i64 top, i64 capacity}`` (bytes).  ``tagged``: a tape handed in by
    Python (a ``vjp`` residual), one ``{tag, word, word}`` slot per item."""

    tagged: bool = False

    def __str__(self):
        return "tape"

    def llvm(self):
        return ll.LiteralStructType([PTR, I64, I64])
