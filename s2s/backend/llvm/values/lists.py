"""Lists that grow, of numbers or of arrays, in LLVM IR (``types.List``).

A list value is ``{i8* data, i8* block, i64 len}``: ``len`` items of its
element type, contiguous from ``data`` (a number in numpy's memory layout of its
dtype; an array as its ``types.Array`` struct, data, block, shape and strides), in
the storage of ``block`` (an ``abi.alloc`` block, so variables and tapes holding
a list count references to it and it is freed, on every exit path, like an
array's).  A storage block starts with two words, ``end`` (the address after the
last item ever written to it) and ``limit`` (the end of its capacity), then the
items.  An array stored in a list is the array itself, not a copy (Python's
aliasing: a write through another name shows in the list): storing it adds a
reference to its block, which the list's storage holds until the call returns
(storage does not release what it holds when it is freed; every block is freed
on return, ``abi.free_all``).

The IR treats a list as a value (``acc = rt.list_append(acc, v)`` makes a new
one; ``runtime/containers.py``).  Contract: every operation gives the result
Python would, and no list value ever sees a number change:

* ``append`` writes in place, in amortised O(1), when the list ends at its
  storage's ``end`` (no other state of the list is longer: the number written
  lies beyond every other holder's ``len``) and there is room; otherwise it
  copies into new storage of twice the length (an older state, a prefix view,
  or a full block stay as they were);
* slices without a step are views sharing the storage (their numbers never
  change), other writes (``l[i] = v``, ``insert``, ``pop`` of an inner item)
  copy;
* a negative index counts from the end, out of range raises ``IndexError``
  ("list index out of range").
"""
from __future__ import annotations

from llvmlite import ir as ll

from ....errors import UnsupportedSyntaxError
from . import abi
from . import arrays as A
from . import scalars as S
from ..typing import types as T

LIST_HEAD = 16  # bytes: {end, limit} before the numbers


def elem_of(t: T.List):
    """The type of ``t``'s items (a ``Scalar`` or an ``Array``; float64 for ``[]``)."""
    return t.elem if t.elem is not None else T.F64T


def holds_arrays(t: T.List) -> bool:
    return isinstance(t.elem, T.Array)


def item_llvm(e):
    """How an item of type ``e`` (a number or an array) is laid out in a list's storage."""
    return e.llvm() if isinstance(e, T.Array) else T.memory_llvm(e)


def size_of(t: T.List) -> int:
    e = elem_of(t)
    return 8 * (2 + 2 * e.ndim) if isinstance(e, T.Array) else T.itemsize(e.dtype)


def same_items(a, b) -> bool:
    """Whether lists of element types ``a`` and ``b`` share their storage's layout."""
    return item_llvm(a) == item_llvm(b)


def join_list(a, b):
    """The list type that holds the values of types ``a`` and ``b`` (None: none)."""
    elems = []
    for t in (a, b):
        if isinstance(t, T.List):
            if t.elem is not None:
                elems.append(t.elem)
        elif T.plain_tuple(t) and (all(isinstance(i, T.Scalar) for i in t.items) or
                                   all(isinstance(i, T.Array) for i in t.items)):
            elems += list(t.items)
        else:
            return None
    out = None
    for e in elems:
        out = T.join(out, e)
        if out is None:
            return None
    return T.List(out)


# -- the value ------------------------------------------------------------------------------
def fields(L, v):
    return tuple(L.b.extract_value(v, k) for k in range(3))


def make(L, t, data, block, n):
    v = ll.Constant(t.llvm(), None)
    for k, x in enumerate((data, block, n)):
        v = L.b.insert_value(v, x, k)
    return v


_INHOMOGENEOUS = ("setting an array element with a sequence. The requested array has an "
                  "inhomogeneous shape after 1 dimensions.")


def array_type(t: T.List) -> T.Array:
    """The type of ``as_array`` of a list of type ``t``."""
    e = elem_of(t)
    return T.Array(e.dtype, e.ndim + 1) if isinstance(e, T.Array) else T.Array(e.dtype, 1)


def rows_type(at: T.Array) -> T.List:
    """The type of ``from_array`` of an array of type ``at``: its numbers or its rows."""
    return T.List(at.elem if at.ndim == 1 else T.Array(at.dtype, at.ndim - 1))


def as_array(L, v, t):
    """``(array, type)``: a list of numbers as a 1-D array view of its storage; a list of
    arrays as ``np.array`` of it, a fresh array of shape ``(len, *item shape)``
    (``ValueError``, numpy's words, when the items' shapes differ; an empty list gives
    zeros in every dimension)."""
    data, block, n = fields(L, v)
    e, at = elem_of(t), array_type(t)
    if not isinstance(e, T.Array):
        return A.make(L, at, data, block, [n], [A.i64(size_of(t))]), at
    b = L.b
    slot = L.entry_alloca(e.llvm())
    b.store(ll.Constant(e.llvm(), None), slot)  # an empty list: every dimension 0
    with b.if_then(b.icmp_signed(">", n, A.ZERO)):
        b.store(load(L, data, A.ZERO, t), slot)
    shape = A.shape_list(L, b.load(slot), e)
    out = A.allocate(L, at, [n] + shape)

    def place(i):
        item = load(L, data, i, t)
        L.check(A.differs(L, A.shape_list(L, item, e), shape), ValueError, _INHOMOGENEOUS)
        row = A.leading_view(L, out, at, [i])
        A.elementwise(L, lambda vals: vals[0], [(item, e)], e.dtype, out=row)

    A.loop(L, n, place)
    return out, at


def handed_back(L, v, t):
    """A returned list of arrays for Python to read item by item (its items may differ in
    shape): ``(data, block, len)`` as i64 words, of a fresh block holding ``len`` records
    of ``2 + 2 * ndim`` words, each item's data, block, shape and strides.  Each item
    owns its memory (``arrays.owned``: an argument's is copied, as a returned array's)
    and its block is kept for the caller; so is the records' block, which the caller
    frees once read (``callpath``)."""
    b = L.b
    data, _, n = fields(L, v)
    e = elem_of(t)
    width = 2 + 2 * e.ndim
    records = A.allocate(L, T.Array("i8", 1), [b.mul(n, A.i64(width))])
    words = b.bitcast(b.extract_value(records, 0), T.I64.as_pointer())

    def record(i):
        item = A.owned(L, load(L, data, i, t), e)
        abi.keep_for_caller(L, b.extract_value(item, 1))
        fields_ = [b.ptrtoint(b.extract_value(item, 0), T.I64),
                   b.ptrtoint(b.extract_value(item, 1), T.I64)]
        fields_ += [b.extract_value(item, [part, k]) for part in (2, 3) for k in range(e.ndim)]
        base = b.mul(i, A.i64(width))
        for k, f in enumerate(fields_):
            b.store(f, b.gep(words, [b.add(base, A.i64(k))]))

    A.loop(L, n, record)
    abi.keep_for_caller(L, b.extract_value(records, 1))
    return (b.ptrtoint(b.extract_value(records, 0), T.I64),
            b.ptrtoint(b.extract_value(records, 1), T.I64), n)


def element_ptr(L, data, i, t):
    b = L.b
    return b.bitcast(b.gep(data, [b.mul(i, A.i64(size_of(t)))]),
                     item_llvm(elem_of(t)).as_pointer())


def load(L, data, i, t):
    e = elem_of(t)
    if isinstance(e, T.Array):
        return L.b.load(element_ptr(L, data, i, t))
    return A.load(L, element_ptr(L, data, i, t), e)


def convert_item(L, value, vt, e):
    """An item ``value`` of type ``vt`` as an item of type ``e``: numbers convert; an
    array is stored as itself (``join_list`` gave the lists one array type)."""
    if isinstance(e, T.Array) or isinstance(vt, T.Array):
        if vt != e:
            raise UnsupportedSyntaxError(f"jit: a {vt} in a list of {e}", L.loc)
        return value
    return S.convert(L, value, vt, e)


def store(L, value, vt, data, i, t):
    """Item ``i`` of storage ``data`` set to ``value``; an array is referenced by the
    storage from now on (see the module's contract)."""
    e = elem_of(t)
    value = convert_item(L, value, vt, e)
    if isinstance(e, T.Array):
        abi.retain(L, value, e)
        L.b.store(value, element_ptr(L, data, i, t))
    else:
        A.store(L, value, element_ptr(L, data, i, t), e)


def _header(L, block):
    """``i64*`` to ``{end, limit}`` of a block (a zero pair for a null block)."""
    b = L.b
    if getattr(L, "_list_no_block", None) is None:
        entry = L.fn.entry_basic_block
        eb = ll.IRBuilder(entry)
        eb.position_before(entry.terminator)
        pair = eb.alloca(ll.ArrayType(T.I64, 2), name="no.list")
        eb.store(ll.Constant(ll.ArrayType(T.I64, 2), None), pair)
        L._list_no_block = eb.bitcast(pair, T.I64.as_pointer())
    real = b.bitcast(b.gep(block, [ll.Constant(T.I32, abi.HEADER)]), T.I64.as_pointer())
    is_block = b.icmp_unsigned("!=", b.ptrtoint(block, T.I64), A.ZERO)
    return b.select(is_block, real, L._list_no_block), is_block


_NO_ROOM = "jit: no memory for a list of that many items"


def fresh(L, t, n, cap, fill):
    """A new list of ``n`` numbers ``fill(i) -> (value, type)`` with room for ``cap``."""
    b = L.b
    size = A.i64(size_of(t))
    nbytes, over = abi.byte_count(L.b, [cap], size_of(t))  # Python: MemoryError, never a wrap
    nbytes, over = abi.checked_sum(L, nbytes, A.i64(LIST_HEAD), over)
    block, data = abi.alloc(L, nbytes, overflow=b.or_(over, b.icmp_signed("<", cap, A.ZERO)),
                            too_big=(MemoryError, _NO_ROOM),
                            out_of_memory=(MemoryError, _NO_ROOM, []))
    elems = b.gep(data, [A.i64(LIST_HEAD)])
    head = b.bitcast(data, T.I64.as_pointer())
    b.store(b.ptrtoint(b.gep(elems, [b.mul(n, size)]), T.I64), head)
    b.store(b.ptrtoint(b.gep(elems, [b.mul(cap, size)]), T.I64),
            b.gep(head, [ll.Constant(T.I32, 1)]))
    if fill is not None:
        A.loop(L, n, lambda i: store(L, *fill(i), elems, i, t))
    return make(L, t, elems, block, n)


def room(L, n):
    """The capacity of new storage for ``n`` numbers that may grow: ``max(4, 2 n)`` (``n``
    itself past ``2**61``, so that the doubling never wraps)."""
    twice = L.b.select(L.b.icmp_signed(">", n, A.i64(1 << 61)), n, L.b.mul(n, A.i64(2)))
    return L.b.select(L.b.icmp_signed("<", twice, A.i64(4)), A.i64(4), twice)


def copy(L, v, vt, t, extra=0):
    """A copy of list ``v`` (type ``vt``) as type ``t``, in storage with room to grow."""
    data, _, n = fields(L, v)
    return fresh(L, t, n, room(L, L.b.add(n, A.i64(extra))),
                 lambda i: (load(L, data, i, vt), elem_of(vt)))


def from_items(L, items, t):
    """A list of the ``(value, type)`` pairs ``items`` (known at compile time)."""
    out = fresh(L, t, A.i64(0), A.i64(max(4, 2 * len(items))), None)
    for value, vt in items:
        out = append(L, out, t, value, vt, t)
    return out


def from_array(L, a, at, t):
    """``list(a)``: the numbers of the 1-D array ``a``, or the rows of an array of more
    dimensions (views of ``a``)."""
    return fresh(L, t, A.shape_of(L, a, 0), room(L, A.shape_of(L, a, 0)),
                 lambda i: A.first_axis_item(L, a, at, i))


def append(L, v, vt, x, xt, t):
    """``v`` (of type ``vt``) with ``x`` appended, as type ``t`` (see the module's contract)."""
    b = L.b
    if not same_items(elem_of(vt), elem_of(t)) and vt.elem is not None:
        v, vt = copy(L, v, vt, t, 1), t
    data, block, n = fields(L, v)
    size = A.i64(size_of(t))
    end = b.ptrtoint(b.gep(data, [b.mul(n, size)]), T.I64)
    head, is_block = _header(L, block)
    limit = b.load(b.gep(head, [ll.Constant(T.I32, 1)]))
    ok = b.and_(is_block, b.and_(b.icmp_unsigned("==", end, b.load(head)),
                                 b.icmp_unsigned("<", end, limit)))
    slot = L.entry_alloca(t.llvm())
    with b.if_else(ok, likely=True) as (fast, slow):
        with fast:
            store(L, x, xt, data, n, t)
            b.store(b.add(end, size), head)
            b.store(make(L, t, data, block, b.add(n, A.ONE)), slot)
        with slow:
            grown = copy(L, v, vt, t, 1)
            gdata, gblock, _ = fields(L, grown)
            store(L, x, xt, gdata, n, t)
            ghead, _ = _header(L, gblock)
            b.store(b.ptrtoint(b.gep(gdata, [b.mul(b.add(n, A.ONE), size)]), T.I64), ghead)
            b.store(make(L, t, gdata, gblock, b.add(n, A.ONE)), slot)
    return b.load(slot)


def convert_list(L, value, src, dst):
    """``value`` of type ``src`` (a list, ``[]``, a tuple of numbers, None) as list ``dst``."""
    if isinstance(src, T.NoneType) or (isinstance(src, T.List) and src.elem is None):
        return ll.Constant(dst.llvm(), None)
    if isinstance(src, T.List):
        if same_items(elem_of(src), elem_of(dst)):
            return value
        return copy(L, value, src, dst)
    if T.plain_tuple(src) and join_list(T.List(None), src) is not None:
        return from_items(L, [(L.b.extract_value(value, k), it)
                              for k, it in enumerate(src.items)], dst)
    raise UnsupportedSyntaxError(f"jit: a {src} where a {dst} is expected", L.loc)


# -- positions ------------------------------------------------------------------------------
def item_position(L, i, it, n):
    """``i`` as a position ``0 <= p < n`` (Python's rules; ``IndexError`` outside)."""
    b = L.b
    i = S.convert(L, i, it, T.INT)
    p = b.select(b.icmp_signed("<", i, A.ZERO), b.add(i, n), i)
    if L.boundscheck:
        bad = b.or_(b.icmp_signed("<", p, A.ZERO), b.icmp_signed(">=", p, n))
        L.check(bad, IndexError, "list index out of range")
    return p


def insert_position(L, i, it, n):
    """Where ``insert(i, v)`` puts ``v``: ``i`` (from the end when negative) clamped to
    ``0..n``."""
    b = L.b
    i = S.convert(L, i, it, T.INT)
    p = b.select(b.icmp_signed("<", i, A.ZERO), b.add(i, n), i)
    p = b.select(b.icmp_signed("<", p, A.ZERO), A.ZERO, p)
    return b.select(b.icmp_signed(">", p, n), n, p)


def sliced(L, v, t, s, st):
    """``v[s]``: a view without a step, else a copy."""
    b = L.b
    data, block, n = fields(L, v)
    start, step, length = A.slice_bounds(L, s, st.present, n)
    if not st.present[2]:
        return make(L, t, b.gep(data, [b.mul(start, A.i64(size_of(t)))]), block, length)
    return fresh(L, t, length, room(L, length),
                 lambda i: (load(L, data, b.add(start, b.mul(i, step)), t), elem_of(t)))


def list_type(x):
    """The type of a Python list argument: numbers of one kind (None: not compiled)."""
    items = [T.value_type(v) for v in x]
    out = T.List(None)
    for t in items:
        if not isinstance(t, T.Scalar):
            return None
        out = join_list(out, T.Tuple((t,)))
        if out is None:
            return None
    return out
