"""numpy arrays in LLVM IR: views, indexing, allocation, loops over elements.

An array value is ``{i8* data, i8* block, [n x i64] shape, [n x i64] strides}``
(``types.Array``).  Contract of the helpers:

* ``getitem``/``setitem``: integer indices wrap around when negative and are
  bounds-checked unless ``boundscheck=False`` (``IndexError`` naming the index,
  axis and size, as numpy words it); slices follow Python's rules (any step);
  a read with fewer integer indices than dimensions, or with slices, is a view
  sharing the data; a write to a view copies a value broadcast to its shape;
* ``allocate``: a fresh C-contiguous array owned by the call (``abi.alloc``); inside a
  loop of the user's code, the block this site made at an earlier iteration when no one
  holds it any more and it is large enough (``abi.pooled_alloc``: the allocation hoisted
  out of the loop wherever the array does not outlive its iteration);
* ``elementwise(L, fn, inputs, dtype)``: numpy broadcasting of array and scalar
  operands (``ValueError`` when shapes do not broadcast), ``fn`` applied per
  element, into a new array or into ``out`` (an in-place operator);
* ``loop_nest``: the loops over a shape, C order, that every helper uses.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as ll

from ....errors import UnsupportedSyntaxError
from . import abi
from ..typing import types as T
from .scalars import convert

ZERO, ONE = ll.Constant(T.I64, 0), ll.Constant(T.I64, 1)
#: allocation sites in loops reuse their block (``poolable``); off only to measure
#: the difference (``benchmarks/jit_alloc.py``), like ``loop_versions.ENABLED``
POOL_LOOP_ALLOCATIONS = True


def i64(v):
    return ll.Constant(T.I64, v)


def shape_of(L, a, k):
    return L.b.extract_value(a, [2, k])


def stride_of(L, a, k):
    return L.b.extract_value(a, [3, k])


def make(L, t: T.Array, data, block, shape, strides):
    b = L.b
    v = ll.Constant(t.llvm(), None)
    v = b.insert_value(v, data, 0)
    v = b.insert_value(v, block, 1)
    for k in range(t.ndim):
        v = b.insert_value(v, shape[k], [2, k])
        v = b.insert_value(v, strides[k], [3, k])
    return v


def holds_none(L, a):
    """i1: whether array value ``a`` is the None an array variable starts as (a name a
    loop assigns later, typed as the array it becomes): a null data pointer (an
    allocation, even of no elements, and numpy's arrays never have one)."""
    return L.b.icmp_unsigned("==", L.b.ptrtoint(L.b.extract_value(a, 0), T.I64), ZERO)


def shape_list(L, a, t):
    return [shape_of(L, a, k) for k in range(t.ndim)]


def strides_list(L, a, t):
    return [stride_of(L, a, k) for k in range(t.ndim)]


def size(L, a, t):
    n = ONE
    for s in shape_list(L, a, t):
        n = L.b.mul(n, s)
    return n


def element_ptr(L, data, strides, indices, elem: T.Scalar):
    b = L.b
    offset = ZERO
    for i, s in zip(indices, strides):
        offset = b.add(offset, b.mul(i, s))
    return b.bitcast(b.gep(data, [offset]), T.memory_llvm(elem).as_pointer())


def load(L, ptr, elem: T.Scalar):
    v = L.b.load(ptr)
    return L.b.trunc(v, T.I1) if elem.dtype == "b1" else v


def store(L, value, ptr, elem: T.Scalar):
    L.b.store(L.b.zext(value, T.I8) if elem.dtype == "b1" else value, ptr)


def loop(L, n, body, start=ZERO):
    """``for i in range(start, n): body(i)`` (phi-based, no stack slots)."""
    b = L.b
    pre = b.block
    head, inner, end = (L.fn.append_basic_block(x) for x in ("l.head", "l.body", "l.end"))
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(T.I64)
    i.add_incoming(start, pre)
    b.cbranch(b.icmp_signed("<", i, n), inner, end)
    b.position_at_end(inner)
    depth = getattr(L, "helper_loops", 0)
    L.helper_loops = depth + 1  # allocations in here may live on together: never pooled
    body(i)
    L.helper_loops = depth
    i.add_incoming(b.add(i, ONE), b.block)
    b.branch(head)
    b.position_at_end(end)


def loop_nest(L, shape, body, prefix=()):
    if not shape:
        body(list(prefix))
        return
    loop(L, shape[0], lambda i: loop_nest(L, shape[1:], body, prefix + (i,)))


def contiguous_strides(L, shape, elem: T.Scalar):
    strides, acc = [], i64(T.itemsize(elem.dtype))
    for s in reversed(shape):
        strides.append(acc)
        acc = L.b.mul(acc, s)
    return list(reversed(strides)), acc


def allocate(L, t: T.Array, shape, zeroed=False):
    """A fresh C-contiguous array of ``shape`` (i64 values), its elements zero when
    ``zeroed``.  numpy's errors, raised before anything is written: a negative
    dimension (``ValueError``), a byte count over ``2**63 - 1`` (``ValueError: array is
    too big``), memory the C library cannot give (``MemoryError: Unable to allocate
    ...``, numpy's words)."""
    strides, _ = contiguous_strides(L, shape, t.elem)
    itemsize = T.itemsize(t.dtype)
    dtype = np.dtype(T.Scalar(t.dtype).numpy()).name
    if len(shape) <= abi.MESSAGE_INTS:
        message = abi.unable_to_allocate(dtype, len(shape), itemsize)
    else:
        message = abi.unable_to_allocate(dtype)
    pooled = poolable(L)
    if not pooled and not L.handlers:  # the checks in a helper called (abi.new_array_block)
        block, data = abi.new_array_block(L, shape, itemsize, zeroed, (MemoryError, message))
        return make(L, t, data, block, shape, strides)
    for s in shape:
        L.check(L.b.icmp_signed("<", s, ZERO), ValueError, "negative dimensions are not allowed")
    nbytes, overflow = abi.byte_count(L.b, shape, itemsize)
    failed = (MemoryError, message, list(shape) if len(shape) <= abi.MESSAGE_INTS else [nbytes])
    if pooled:
        block, data = abi.pooled_alloc(L, nbytes, zeroed, overflow, failed)
    else:
        block, data = abi.alloc(L, nbytes, zeroed=zeroed, overflow=overflow,
                                out_of_memory=failed)
    return make(L, t, data, block, shape, strides)


def poolable(L) -> bool:
    """Whether an allocation made now is one site of a loop the user wrote, run once per
    iteration: a kernel that pools (``L.pooled``), inside an IR loop (``L.loops``), and
    not inside a loop a helper emits (``loop``), whose allocations may be alive together
    while no variable holds them yet."""
    return bool(POOL_LOOP_ALLOCATIONS and getattr(L, "pooled", False)
                and getattr(L, "loops", None) and not getattr(L, "helper_loops", 0))


def fill(L, a, t: T.Array, value):
    data, strides = L.b.extract_value(a, 0), strides_list(L, a, t)
    loop_nest(L, shape_list(L, a, t),
              lambda idx: store(L, value, element_ptr(L, data, strides, idx, t.elem), t.elem))


def copy(L, a, t: T.Array, dtype=None):
    """A fresh C-contiguous copy of ``a`` (cast to ``dtype``)."""
    out_t = T.Array(dtype or t.dtype, t.ndim)
    return elementwise(L, lambda vals: vals[0], [(a, t)], out_t.dtype)


def astype(L, a, src: T.Array, dst: T.Array):
    return copy(L, a, src, dst.dtype)


def owned(L, a, t: T.Array):
    """``a`` itself if the call allocated it, else a copy (returned arrays own memory)."""
    b = L.b
    is_null = b.icmp_unsigned("==", b.ptrtoint(b.extract_value(a, 1), T.I64), ZERO)
    pre = b.block
    with b.if_then(is_null):
        fresh = copy(L, a, t)
        then_end = b.block
    out = b.phi(t.llvm())
    out.add_incoming(a, pre)
    out.add_incoming(fresh, then_end)
    return out


# -- indexing ---------------------------------------------------------------------
def index_parts(L, idx, it):
    """The components of an index: ``("int", v)``, ``("slice", v, present)``, ``("all",)``,
    ``("ellipsis",)`` (``...``), ``("new",)`` (``None``, a new axis of length 1)."""
    if isinstance(it, T.Tuple):
        parts = []
        for k, item in enumerate(it.items):
            parts += index_parts(L, L.b.extract_value(idx, k), item)
        return parts
    if isinstance(it, T.Scalar) and it.dtype in ("i8", "b1"):
        return [("int", convert(L, idx, it, T.INT))]
    if isinstance(it, T.Slice):
        return [("slice", idx, it.present)]
    if isinstance(it, T.NoneType):
        return [("new",)]
    if isinstance(it, T.Static) and it.value is Ellipsis:
        return [("ellipsis",)]
    raise UnsupportedSyntaxError(f"jit: indexing an array with a {it}", L.loc)


def expanded_parts(parts, ndim):
    """``parts`` with ``...`` replaced by whole axes (``("all",)``) up to ``ndim`` axes."""
    if not any(p[0] == "ellipsis" for p in parts):
        return list(parts)
    k = next(i for i, p in enumerate(parts) if p[0] == "ellipsis")
    used = sum(1 for p in parts if p[0] in ("int", "slice", "all"))
    return list(parts[:k]) + [("all",)] * (ndim - used) + list(parts[k + 1:])


def is_element(parts, ndim) -> bool:
    """Whether ``parts`` pick one element of an ``ndim``-d array (a number, not a view)."""
    parts = expanded_parts(parts, ndim)
    return len(parts) == ndim and all(p[0] == "int" for p in parts)


def wrap_index(L, i, n, axis):
    """``i`` with a negative index counted from the end, bounds-checked (``i`` itself
    while ``L.unchecked``: an access ``loop_versions`` proved in bounds)."""
    if getattr(L, "unchecked", False):
        return i
    b = L.b
    neg = b.icmp_signed("<", i, ZERO)
    j = b.select(neg, b.add(i, n), i)
    if L.boundscheck:
        bad = b.or_(b.icmp_signed("<", j, ZERO), b.icmp_signed(">=", j, n))
        L.check(bad, IndexError, "index {0} is out of bounds for axis {1} with size {2}",
                (i, i64(axis), n))
    return j


def slice_bounds(L, s, present, n):
    """``(start, step, length)`` of a slice over ``n`` items (Python's rules)."""
    b = L.b
    start, stop, step = (b.extract_value(s, k) for k in range(3))
    step = step if present[2] else ONE
    if present[2]:
        L.check(b.icmp_signed("==", step, ZERO), ValueError, "slice step cannot be zero")
    back = b.icmp_signed("<", step, ZERO)
    lower = b.select(back, i64(-1), ZERO)
    upper = b.select(back, b.sub(n, ONE), n)

    def clamp(v, default):
        if v is None:
            return default
        v = b.select(b.icmp_signed("<", v, ZERO), b.add(v, n), v)
        v = b.select(b.icmp_signed("<", v, lower), lower, v)
        return b.select(b.icmp_signed(">", v, upper), upper, v)

    start = clamp(start if present[0] else None, b.select(back, upper, ZERO))
    stop = clamp(stop if present[1] else None, b.select(back, i64(-1), n))
    span_up = b.sdiv(b.add(b.sub(stop, start), b.sub(step, ONE)), step)
    span_down = b.sdiv(b.add(b.sub(start, stop), b.sub(b.neg(step), ONE)), b.neg(step))
    length = b.select(back, span_down, span_up)
    length = b.select(b.icmp_signed("<", length, ZERO), ZERO, length)
    return start, step, length


def view(L, a, t: T.Array, parts):
    """``(data, shape, strides)`` of ``a[parts]`` (ints dropped, slices kept, new axes
    of length 1 and stride 0 inserted)."""
    b = L.b
    parts = expanded_parts(parts, t.ndim)
    real = [p for p in parts if p[0] != "new"]
    if len(real) > t.ndim:
        raise UnsupportedSyntaxError(
            f"jit: too many indices ({len(real)}) for an array of {t.ndim} dimensions", L.loc)
    data = b.extract_value(a, 0)
    offset, shape, strides = ZERO, [], []
    parts = parts + [("all",)] * (t.ndim - len(real))
    axis = 0
    for part in parts:
        if part[0] == "new":
            shape.append(ONE)
            strides.append(ZERO)
            continue
        n, st = shape_of(L, a, axis), stride_of(L, a, axis)
        if part[0] == "int":
            offset = b.add(offset, b.mul(wrap_index(L, part[1], n, axis), st))
        elif part[0] == "slice":
            start, step, length = slice_bounds(L, part[1], part[2], n)
            offset = b.add(offset, b.mul(start, st))
            shape.append(length)
            strides.append(b.mul(st, step))
        else:
            shape.append(n)
            strides.append(st)
        axis += 1
    return b.gep(data, [offset]), shape, strides


def getitem(L, a, t: T.Array, idx, it):
    from . import fancy
    if fancy.is_advanced(it):  # an integer array or a mask: a gathered copy
        return fancy.gather(L, a, t, idx, it), fancy.result_type(t, it)
    parts = index_parts(L, idx, it)
    data, shape, strides = view(L, a, t, parts)
    if is_element(parts, t.ndim):
        ptr = L.b.bitcast(data, T.memory_llvm(t.elem).as_pointer())
        return load(L, ptr, t.elem), t.elem
    out_t = T.Array(t.dtype, len(shape))
    return make(L, out_t, data, L.b.extract_value(a, 1), shape, strides), out_t


def setitem(L, a, t: T.Array, idx, it, value, vt):
    from . import fancy
    if fancy.is_advanced(it):
        return fancy.scatter(L, a, t, idx, it, value, vt)
    parts = index_parts(L, idx, it)
    data, shape, strides = view(L, a, t, parts)
    if is_element(parts, t.ndim):
        ptr = L.b.bitcast(data, T.memory_llvm(t.elem).as_pointer())
        store(L, convert(L, value, vt, t.elem), ptr, t.elem)
        return
    target_t = T.Array(t.dtype, len(shape))
    target = make(L, target_t, data, L.b.extract_value(a, 1), shape, strides)
    from .overlap import guarded  # y[1:] = y[:-1] reads a copy of the value (numpy)
    guarded(L, target, target_t, value, vt, lambda v: elementwise(
        L, lambda vals: vals[0], [(v, vt)], t.dtype, out=(target, target_t)))


def first_axis_item(L, a, t: T.Array, i):
    """``a[i]`` for ``for row in a`` (``i`` already in range)."""
    if t.ndim == 1:
        data, _, _ = view(L, a, t, [("int", i)])
        return load(L, L.b.bitcast(data, T.memory_llvm(t.elem).as_pointer()), t.elem), t.elem
    return leading_view(L, a, t, [i])


def leading_view(L, a, t: T.Array, idx):
    """``(a[idx], type)`` for leading indices ``idx`` (fewer than ``t.ndim``): a view
    sharing ``a``'s block (a matrix of a stack, a row)."""
    data, shape, strides = view(L, a, t, [("int", i) for i in idx])
    out_t = T.Array(t.dtype, t.ndim - len(idx))
    return make(L, out_t, data, L.b.extract_value(a, 1), shape, strides), out_t


def transpose(L, a, t: T.Array):
    shape, strides = shape_list(L, a, t), strides_list(L, a, t)
    return make(L, t, L.b.extract_value(a, 0), L.b.extract_value(a, 1), shape[::-1],
                strides[::-1])


# -- elementwise ------------------------------------------------------------------
def broadcast_shape(L, shapes, ndim):
    """The broadcast shape of several shapes (right-aligned); ValueError if they clash."""
    b = L.b
    out = []
    for d in range(ndim):
        sizes = [s[len(s) - ndim + d] for s in shapes if len(s) - ndim + d >= 0]
        n = ONE
        for s in sizes:
            n = b.select(b.icmp_signed("!=", s, ONE), s, n)
        bad = ll.Constant(T.I1, 0)
        for s in sizes:
            bad = b.or_(bad, b.and_(b.icmp_signed("!=", s, ONE), b.icmp_signed("!=", s, n)))
        if len(sizes) > 1:
            L.check(bad, ValueError, "operands could not be broadcast together "
                    "(a dimension of size {0} against {1})", (n, sizes[0]))
        out.append(n)
    return out


def elementwise(L, fn, inputs, dtype, out=None):
    """``fn([elements])`` over the broadcast of ``inputs`` (``(value, type)`` pairs)."""
    arrays = [(v, t) for v, t in inputs if isinstance(t, T.Array)]
    if out is not None:
        ndim = out[1].ndim
        shape = shape_list(L, *out)
        target = broadcast_shape(L, [shape] + [shape_list(L, v, t) for v, t in arrays], ndim)
        L.check(differs(L, target, shape), ValueError,
                "could not broadcast the value into the target (its first dimension: {0})",
                (shape[0] if shape else ONE,))
        result, out_t = out
    else:
        ndim = max((t.ndim for _, t in arrays), default=0)
        shape = broadcast_shape(L, [shape_list(L, v, t) for v, t in arrays], ndim)
        out_t = T.Array(dtype, ndim)
        result = allocate(L, out_t, shape)
    map_into(L, fn, inputs, result, out_t, shape)
    return result


def map_into(L, fn, inputs, result, out_t, shape):
    """``result[idx] = fn([elements of inputs at idx])`` over ``shape`` (``result``'s;
    every input broadcasts to it: not checked here)."""
    out_data, out_strides = L.b.extract_value(result, 0), strides_list(L, result, out_t)

    def write(idx, value, vt):
        store(L, convert(L, value, vt, out_t.elem),
              element_ptr(L, out_data, out_strides, idx, out_t.elem), out_t.elem)

    visit_elements(L, fn, inputs, shape, write)


def visit_elements(L, fn, inputs, shape, visit):
    """``visit(idx, *fn([elements of inputs at idx]))`` for every index of ``shape`` in C
    order (every input broadcasts to it: not checked here)."""
    b = L.b
    ndim = len(shape)
    readers = []
    for v, t in inputs:
        if isinstance(t, T.Array):
            strides = []
            for d in range(ndim):
                k = t.ndim - ndim + d
                if k < 0:
                    strides.append(ZERO)
                else:
                    n = shape_of(L, v, k)
                    strides.append(b.select(b.icmp_signed("==", n, ONE), ZERO, stride_of(L, v, k)))
            readers.append(("array", b.extract_value(v, 0), strides, t))
        else:
            readers.append(("scalar", v, None, t))

    def body(idx):
        vals = []
        for kind, v, strides, t in readers:
            if kind == "array":
                vals.append((load(L, element_ptr(L, v, strides, idx, t.elem), t.elem), t.elem))
            else:
                vals.append((v, t))
        visit(idx, *fn(vals))

    loop_nest(L, shape, body)


def differs(L, a, c):
    bad = ll.Constant(T.I1, 0)
    for x, y in zip(a, c):
        bad = L.b.or_(bad, L.b.icmp_signed("!=", x, y))
    return bad


def reduce_all(L, a, t: T.Array, combine, init, acc_t):
    """Fold every element of ``a`` (C order) into an accumulator of type ``acc_t``."""
    b = L.b
    slot = L.entry_alloca(acc_t.llvm())
    b.store(init, slot)
    data, strides = b.extract_value(a, 0), strides_list(L, a, t)

    def body(idx):
        x = load(L, element_ptr(L, data, strides, idx, t.elem), t.elem)
        b.store(combine(b.load(slot), convert(L, x, t.elem, acc_t)), slot)

    loop_nest(L, shape_list(L, a, t), body)
    return b.load(slot)


def element(L, a, t, idx):
    data, strides = L.b.extract_value(a, 0), strides_list(L, a, t)
    return load(L, element_ptr(L, data, strides, idx, t.elem), t.elem)
