"""Advanced (numpy "fancy") indexing in LLVM IR: integer arrays or one boolean mask.

An index is *advanced* here when it is, or is a tuple holding, ``int64`` arrays of
any rank (one or more, each covering one axis: ``p[rows, cols]``,
``p[np.ix_(rows, cols)]``, ``p[i[:, None], j]``) or exactly one boolean array (a mask
of ``k`` dimensions covering ``k`` axes) -- or lists of integers or booleans standing
for them (a display ``[0, 2]``, made an array for the read; a grown list or a list
argument, read in place) -- beside any number of integers and slices.  Contract,
numpy's semantics:

* the integer arrays broadcast together (right-aligned; an axis of length 1 stretches,
  other lengths must agree, else ``IndexError``) to the *places' shape*; the place at
  position ``p`` of that shape takes, on each array's axis, that array's entry at ``p``
  (negative entries wrap, out-of-range ones raise ``IndexError`` naming the index, the
  axis and its size unless ``boundscheck=False``).  A mask's places are the positions
  where it is true, in C order (one axis of their count; a mask whose shape differs
  from the axes it covers raises ``IndexError``);
* the result has the places' axes where the advanced group (the arrays and the
  integers) stands when that group is contiguous in the index, else first; the
  slices' axes keep their order;
* ``gather`` reads ``a[index]`` into a fresh array (a copy, never a view);
  ``scatter`` writes a value broadcast to the selection's shape -- ``"set"``
  (a repeated place keeps the last write, numpy's order) or ``"add"``/``"sub"``
  (repeated places accumulate: ``np.add.at``, ``np.subtract.at``);
  ``last_writes_only`` zeroes in a gather every entry whose place a later entry
  writes again (the cotangent of a value written by ``y[idx] = v``).

No scratch buffers: the places are recomputed on each pass (a mask is read
twice, once to count), except ``last_writes_only``'s winner table, released
at once.
"""
from __future__ import annotations

from llvmlite import ir as ll

from . import abi
from . import arrays as A
from . import scalars as S
from ..typing import types as T


# -- types ----------------------------------------------------------------------------
def _part_kind(t):
    if isinstance(t, T.Scalar) and t.dtype in ("i8", "b1"):
        return "int"
    if isinstance(t, T.Slice):
        return "slice"
    if isinstance(t, T.Array) and t.dtype == "b1" and t.ndim >= 1:
        return "mask"
    if isinstance(t, T.Array) and t.dtype == "i8" and t.ndim >= 1:
        return "array"
    if isinstance(t, T.ListLiteral) and all(isinstance(i, T.Scalar) and i.dtype in ("i8", "b1")
                                            for i in t.items):  # numpy: a list is an array
        return "mask" if t.items and all(i.dtype == "b1" for i in t.items) else "array"
    if isinstance(t, T.List) and t.elem is not None and t.elem.dtype in ("i8", "b1"):
        return "mask" if t.elem.dtype == "b1" else "array"  # a grown list (lists.py)
    return None


def index_items(it):
    return list(it.items) if type(it) is T.Tuple else [it]


def is_advanced(it) -> bool:
    """Whether an index type holds an array (integer or boolean) or a list display."""
    return any(isinstance(t, (T.Array, T.ListLiteral, T.List)) for t in index_items(it))


def _as_array(L, v, t, kind):
    """A list display index as a 1-D array (freshly allocated), else ``(v, t)``."""
    if isinstance(t, T.List):  # its numbers, read in place
        from .lists import as_array
        return (*as_array(L, v, t), None)
    if not isinstance(t, T.ListLiteral):
        return v, t, None
    at = T.Array("b1" if kind == "mask" else "i8", 1)
    a = A.allocate(L, at, [A.i64(len(t.items))])
    data = L.b.extract_value(a, 0)
    for k, it in enumerate(t.items):
        A.store(L, S.convert(L, L.b.extract_value(v, k), it, at.elem),
                A.element_ptr(L, data, [A.i64(T.itemsize(at.dtype))], [A.i64(k)], at.elem),
                at.elem)
    return a, at, a


def _layout(base: T.Array, it):
    """``(kinds, result ndim, placement, places' ndim)`` of an advanced index on
    ``base``, or None."""
    items = index_items(it)
    kinds = [_part_kind(t) for t in items]
    arrays, masks = kinds.count("array"), kinds.count("mask")
    if None in kinds or not (masks == 1 and arrays == 0 or masks == 0 and arrays >= 1):
        return None
    covered = sum(getattr(t, "ndim", 1) if k == "mask" else 1 for k, t in zip(kinds, items))
    if covered > base.ndim:
        return None
    adv = [k for k, kind in enumerate(kinds) if kind != "slice"]
    contiguous = adv == list(range(adv[0], adv[-1] + 1))
    # the slices' axes and the axes the index does not name
    kept = sum(k == "slice" for k in kinds) + base.ndim - covered
    place = sum(1 for k in kinds[:adv[0]] if k == "slice") if contiguous else 0
    places_ndim = 1 if masks else max(getattr(t, "ndim", 1) for k, t in zip(kinds, items)
                                      if k == "array")
    return kinds, kept + places_ndim, place, places_ndim


def result_type(base, it):
    """The type of ``base[it]`` for an advanced index (None: not compiled)."""
    if not isinstance(base, T.Array):
        return None
    lay = _layout(base, it)
    return None if lay is None else T.Array(base.dtype, lay[1])


# -- the selection ----------------------------------------------------------------------
class Selection:
    """The places ``a[index]`` names: a base pointer, the kept axes (``rest``) and the
    advanced axes (the places' shape ``counts``, each place a byte offset from the
    base)."""

    def __init__(self, L, a, t: T.Array, idx, it):
        self.L, self.t = L, t
        b = L.b
        kinds, ndim, self.place, self.places_ndim = _layout(t, it)
        items = index_items(it)
        values = [b.extract_value(idx, k) for k in range(len(items))] \
            if type(it) is T.Tuple else [idx]
        data = b.extract_value(a, 0)
        offset, self.rest_shape, self.rest_strides = A.ZERO, [], []
        #: per integer array (or the mask): (value, type, array made of a display or None)
        self.indices, self.axes = [], []
        axis = 0
        for kind, v, vt in zip(kinds, values, items):
            if kind == "int":
                n, st = A.shape_of(L, a, axis), A.stride_of(L, a, axis)
                j = A.wrap_index(L, S.convert(L, v, vt, T.INT), n, axis)
                offset = b.add(offset, b.mul(j, st))
                axis += 1
            elif kind == "slice":
                n, st = A.shape_of(L, a, axis), A.stride_of(L, a, axis)
                start, step, length = A.slice_bounds(L, v, vt.present, n)
                offset = b.add(offset, b.mul(start, st))
                self.rest_shape.append(length)
                self.rest_strides.append(b.mul(st, step))
                axis += 1
            else:
                v, vt, temp = _as_array(L, v, vt, kind)
                width = vt.ndim if kind == "mask" else 1
                self.kind = kind
                self.indices.append((v, vt, temp))
                self.axes += [(A.shape_of(L, a, axis + m), A.stride_of(L, a, axis + m),
                               axis + m) for m in range(width)]
                axis += width
        self.index, self.index_t, _ = self.indices[0]
        for k in range(axis, t.ndim):
            self.rest_shape.append(A.shape_of(L, a, k))
            self.rest_strides.append(A.stride_of(L, a, k))
        self.base = b.gep(data, [offset])
        if self.kind == "mask":
            self._check_mask_shape()
        self.counts = self._counts()

    def _check_mask_shape(self):
        L = self.L
        for m, (n, _, axis) in enumerate(self.axes):
            size = A.shape_of(L, self.index, m)
            L.check(L.b.icmp_signed("!=", size, n), IndexError,
                    "boolean index did not match indexed array along axis {0}; size of axis "
                    "is {1} but size of corresponding boolean axis is {2}",
                    (A.i64(axis), n, size))

    def _counts(self):
        """The places' shape: the integer arrays' broadcast shape (checked), or the
        number of true entries of the mask."""
        L, b = self.L, self.L.b
        if self.kind == "array":
            return self._broadcast_shape()
        slot = L.entry_alloca(T.I64)
        b.store(A.ZERO, slot)

        def body(pos):
            hit = A.element(L, self.index, self.index_t, pos)
            b.store(b.add(b.load(slot), b.zext(hit, T.I64)), slot)

        A.loop_nest(L, A.shape_list(L, self.index, self.index_t), body)
        return [b.load(slot)]

    def _broadcast_shape(self):
        """The integer arrays' shapes broadcast together, right-aligned (an axis of length
        1 stretches); numpy's ``IndexError`` naming the shapes where two disagree."""
        L, b, nd = self.L, self.L.b, self.places_ndim
        shapes = [A.shape_list(L, v, vt) for v, vt, _ in self.indices]
        counts = []
        for d in range(nd):
            lengths = [s[d - (nd - len(s))] for s in shapes if d >= nd - len(s)]
            n = lengths[0]
            for m in lengths[1:]:
                n = b.select(b.icmp_signed("==", n, A.ONE), m, n)
            counts.append(n)
        if len(shapes) > 1 and sum(map(len, shapes)) <= abi.MESSAGE_INTS:
            bad, words, text = ll.Constant(T.I1, 0), [], []
            for s in shapes:
                for k, m in enumerate(s):
                    bad = b.or_(bad, self._disagrees(m, counts[nd - len(s) + k]))
                text.append("(" + ", ".join("{%d}" % (len(words) + k) for k in range(len(s)))
                            + ("," if len(s) == 1 else "") + ")")
                words.extend(s)
            L.check(bad, IndexError, "shape mismatch: indexing arrays could not be broadcast "
                    "together with shapes " + " ".join(text), tuple(words))
        elif len(shapes) > 1:  # (more lengths than an error message carries)
            for j, s in enumerate(shapes):
                for k, m in enumerate(s):
                    n = counts[nd - len(s) + k]
                    L.check(self._disagrees(m, n), IndexError, "shape mismatch: indexing "
                            f"arrays could not be broadcast together (axis {k} of index "
                            f"array {j} has length {{0}} where another has {{1}})", (m, n))
        return counts

    def _disagrees(self, m, n):
        """Whether an index array's length ``m`` does not broadcast to ``n``."""
        b = self.L.b
        return b.and_(b.icmp_signed("!=", m, n), b.icmp_signed("!=", m, A.ONE))

    def done(self):
        """Free the arrays made of list display indices (if any)."""
        for _, vt, temp in self.indices:
            if temp is not None:
                abi.release(self.L, temp, vt)

    def entries(self, pos):
        """The wrapped entries of the integer arrays for the place at ``pos`` (a position
        in the places' shape; one entry per array, each read at the trailing part of
        ``pos`` its rank covers, an axis of length 1 giving its one entry to every
        place)."""
        L, b, nd = self.L, self.L.b, self.places_ndim
        out = []
        for (v, vt, _), (n, _, axis) in zip(self.indices, self.axes):
            at = pos[nd - vt.ndim:]
            if len(self.indices) > 1:
                at = [b.select(b.icmp_signed("==", A.shape_of(L, v, d), A.ONE), A.ZERO, k)
                      for d, k in enumerate(at)]
            out.append(A.wrap_index(L, A.element(L, v, vt, list(at)), n, axis))
        return out

    def shape(self):
        """The shape of ``a[index]``."""
        r, p = self.rest_shape, self.place
        return r[:p] + list(self.counts) + r[p:]

    def place_count(self):
        """The number of places (the product of the places' shape)."""
        n = self.counts[0]
        for m in self.counts[1:]:
            n = self.L.b.mul(n, m)
        return n

    def place_number(self, pos):
        """The place at ``pos`` numbered in C order of the places' shape."""
        b, j = self.L.b, pos[0]
        for k, n in zip(pos[1:], self.counts[1:]):
            j = b.add(b.mul(j, n), k)
        return j

    def each_place(self, body):
        """``body(pos, offset)`` for each place, in C order (``pos``: its position in the
        places' shape; ``offset``: bytes from the base)."""
        L, b = self.L, self.L.b
        if self.kind == "array":
            def one(pos):
                terms = [b.mul(i, st) for i, (_, st, _) in zip(self.entries(pos), self.axes)]
                offset = terms[0]
                for t in terms[1:]:
                    offset = b.add(offset, t)
                body(pos, offset)

            A.loop_nest(L, self.counts, one)
            return
        slot = L.entry_alloca(T.I64)
        b.store(A.ZERO, slot)

        def visit(pos):
            with b.if_then(A.element(L, self.index, self.index_t, pos)):
                offset = A.ZERO
                for p, (_, st, _) in zip(pos, self.axes):
                    offset = b.add(offset, b.mul(p, st))
                j = b.load(slot)
                body([j], offset)
                b.store(b.add(j, A.ONE), slot)

        A.loop_nest(L, A.shape_list(L, self.index, self.index_t), visit)

    def each_element(self, body):
        """``body(result index, element pointer)`` over every element selected."""
        L, b, p = self.L, self.L.b, self.place

        def place(pos, offset):
            def inner(ridx):
                off = offset
                for i, st in zip(ridx, self.rest_strides):
                    off = b.add(off, b.mul(i, st))
                ptr = b.bitcast(b.gep(self.base, [off]), T.memory_llvm(self.t.elem).as_pointer())
                body(list(ridx[:p]) + list(pos) + list(ridx[p:]), ptr)
            A.loop_nest(L, self.rest_shape, inner)

        self.each_place(place)


# -- operations ---------------------------------------------------------------------------
def gather(L, a, t: T.Array, idx, it):
    """``a[idx]``: a fresh C-contiguous array."""
    sel = Selection(L, a, t, idx, it)
    out_t = T.Array(t.dtype, len(sel.rest_shape) + sel.places_ndim)
    out = A.allocate(L, out_t, sel.shape())
    data, strides = L.b.extract_value(out, 0), A.strides_list(L, out, out_t)
    sel.each_element(lambda ridx, ptr: A.store(
        L, A.load(L, ptr, t.elem), A.element_ptr(L, data, strides, ridx, t.elem), t.elem))
    sel.done()
    return out


def _value_reader(L, value, vt, shape):
    """``read(result index) -> (element, type)`` of ``value`` broadcast to ``shape``."""
    b = L.b
    if not isinstance(vt, T.Array):
        return lambda idx: (value, vt)
    if vt.ndim > len(shape):
        from ....errors import UnsupportedSyntaxError
        raise UnsupportedSyntaxError(
            f"jit: writing a {vt} into a selection of {len(shape)} dimensions", L.loc)
    strides = []
    off = len(shape) - vt.ndim
    for d in range(vt.ndim):
        n, target = A.shape_of(L, value, d), shape[off + d]
        bad = b.and_(b.icmp_signed("!=", n, A.ONE), b.icmp_signed("!=", n, target))
        L.check(bad, ValueError, "shape mismatch: value array of dimension {0} could not be "
                "broadcast to indexing result of dimension {1}", (n, target))
        strides.append(b.select(b.icmp_signed("==", n, A.ONE), A.ZERO, A.stride_of(L, value, d)))
    data = b.extract_value(value, 0)

    def read(idx):
        ptr = A.element_ptr(L, data, strides, idx[off:], vt.elem)
        return A.load(L, ptr, vt.elem), vt.elem

    return read


def scatter(L, a, t: T.Array, idx, it, value, vt, mode="set"):
    """``a[idx] = value`` (``mode="set"``), ``np.add.at(a, idx, value)`` (``"add"``) or
    ``np.subtract.at`` (``"sub"``), in place, ``value`` broadcast to the selection's
    shape."""
    from .overlap import guarded  # a value sharing memory with ``a`` is read from a copy
    return guarded(L, a, t, value, vt, lambda v: _scatter(L, a, t, idx, it, v, vt, mode))


def _scatter(L, a, t, idx, it, value, vt, mode):
    sel = Selection(L, a, t, idx, it)
    read = _value_reader(L, value, vt, sel.shape())

    def write(ridx, ptr):
        v, et = read(ridx)
        if mode in ("add", "sub"):
            old = A.load(L, ptr, t.elem)
            st = S.arith_type(mode, t.elem, et)
            v = S.binary(L, mode, S.convert(L, old, t.elem, st), S.convert(L, v, et, st), st)
            et = st
        A.store(L, S.convert(L, v, et, t.elem), ptr, t.elem)

    sel.each_element(write)
    sel.done()


def last_writes_only(L, g, gt: T.Array, idx, it):
    """``g[idx]`` with zeros where a later entry of an integer index names the same place
    (only the last of repeated writes ``y[idx] = v`` reaches ``y``)."""
    out = gather(L, g, gt, idx, it)
    sel = Selection(L, g, gt, idx, it)
    if sel.kind == "mask":
        sel.done()
        return out
    b = L.b
    places = sel.axes[0][0]  # the indexed axes' places, numbered in C order
    for n, _, _ in sel.axes[1:]:
        places = b.mul(places, n)
    table_t = T.Array("i8", 1)
    table = A.allocate(L, table_t, [places])
    A.fill(L, table, table_t, ll.Constant(T.I64, -1))
    tdata = b.extract_value(table, 0)

    def position(pos):
        entries = sel.entries(pos)
        k = entries[0]
        for i, (n, _, _) in zip(entries[1:], sel.axes[1:]):
            k = b.add(b.mul(k, n), i)
        return b.bitcast(b.gep(tdata, [b.mul(k, A.i64(8))]), T.I64.as_pointer())

    A.loop_nest(L, sel.counts, lambda pos: b.store(sel.place_number(pos), position(pos)))
    out_t = T.Array(gt.dtype, len(sel.rest_shape) + sel.places_ndim)
    odata, ostrides = b.extract_value(out, 0), A.strides_list(L, out, out_t)
    p = sel.place

    def clear(pos):
        with b.if_then(b.icmp_signed("!=", b.load(position(pos)), sel.place_number(pos))):
            def zero(ridx):
                full = list(ridx[:p]) + list(pos) + list(ridx[p:])
                A.store(L, ll.Constant(gt.elem.llvm(), None),
                        A.element_ptr(L, odata, ostrides, full, gt.elem), gt.elem)
            A.loop_nest(L, sel.rest_shape, zero)

    A.loop_nest(L, sel.counts, clear)
    abi.release(L, table, table_t)
    sel.done()
    return out
