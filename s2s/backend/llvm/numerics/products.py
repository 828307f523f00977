"""Matrix products with a 2-D operand, in loop orders that keep the CPU busy.

``product(L, a, ta, c, tc, rtype)`` computes ``a @ c`` for a 2-D ``a`` and/or a 2-D
``c`` (the other 1-D or 2-D; lengths already checked by ``reductions.dot``) into a
fresh C-contiguous array.  Every entry is the sum of the plain definition,
``((0 + a[i,0] c[0,j]) + a[i,1] c[1,j]) + ...`` in order of the contracted index;
only the order in which the entries are worked on changes (``stacked_product``: the
same per matrix of two stacks):

* ``c`` 2-D: ``out[i, :] += a[i, k] * c[k, :]`` (i, k, j order): the inner loop runs
  along rows of ``c`` and ``out`` with no dependence between iterations, so LLVM
  vectorises it;
* ``a`` 2-D and ``c`` 1-D (matrix-vector): when ``a``'s rows are closer in memory than
  its columns (a transposed view, e.g. ``W.T @ g`` in adjoint code), or when at least
  half of ``c`` is zeros (a basis vector, a one-hot cotangent), the same
  ``out[:] += a[:, k] * c[k]`` form; otherwise four rows at a time, four independent
  running sums sharing each load of ``c[k]``, then the remaining rows one by one.

In the ``+= a * x`` forms a term whose multiplier ``x`` is zero may be skipped (a
one-hot cotangent then costs one column, not the whole matrix), but only where that
changes nothing: when at most half of the multipliers are nonzero *and* every entry
they would scale is finite (one scan), since ``0 * inf`` and ``0 * nan`` are NaN in
numpy's products as in IEEE arithmetic.  The results are numpy's, NaNs included.
"""
from __future__ import annotations

from llvmlite import ir as ll

from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T

ROWS = 4


def product(L, a, ta: T.Array, c, tc: T.Array, rtype: T.Array):
    b = L.b
    acc_t = rtype.elem
    k_n = A.shape_of(L, a, ta.ndim - 1)
    rows = A.shape_of(L, a, 0) if ta.ndim == 2 else None
    cols = A.shape_of(L, c, 1) if tc.ndim == 2 else None
    shape = [n for n in (rows, cols) if n is not None]
    out = A.allocate(L, rtype, shape)
    data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)
    zero = L.const(0, acc_t)

    def at(v, t, idx):
        return S.convert(L, A.element(L, v, t, idx), t.elem, acc_t)

    def out_ptr(idx):
        return A.element_ptr(L, data, strides, idx, acc_t)

    def axpy(i_idx, scale_of, row_of, n, skip_zero=None):
        """``out[i_idx + [j]] += scale * row(j)`` for j < n (nothing when scale is 0 and
        ``skip_zero``, an i1, holds)."""
        def step(j):
            ptr = out_ptr(i_idx + [j])
            b.store(S.binary(L, "add", b.load(ptr), S.binary(L, "mul", scale_of, row_of(j), acc_t),
                             acc_t), ptr)
        if skip_zero is None:
            A.loop(L, n, step)
            return
        with b.if_then(b.or_(b.not_(skip_zero), _nonzero(L, scale_of, acc_t))):
            A.loop(L, n, step)

    if cols is not None:
        A.fill(L, out, rtype, zero)
        skip = None
        if rows is None:  # vector @ matrix: a sparse vector may skip the finite rows of c
            sparse_a = b.icmp_signed("<=", b.mul(_nonzeros(L, a, ta, acc_t), A.i64(2)), k_n)
            skip = _and_then(L, sparse_a, lambda: _all_finite(L, c, tc, acc_t))

        def per_row(i_idx):
            def per_k(k):
                x = at(a, ta, i_idx + [k])
                axpy(i_idx, x, lambda j: at(c, tc, [k, j]), cols, skip)
            A.loop(L, k_n, per_k)

        if rows is None:
            per_row([])
        else:
            A.loop(L, rows, lambda i: per_row([i]))
        return out

    by_column = b.icmp_signed("<", _abs(L, A.stride_of(L, a, 0)), _abs(L, A.stride_of(L, a, 1)))
    sparse = b.icmp_signed("<=", b.mul(_nonzeros(L, c, tc, acc_t), A.i64(2)), k_n)
    with b.if_else(b.or_(by_column, sparse)) as (columns, row_blocks):
        with columns:
            A.fill(L, out, rtype, zero)
            skip = _and_then(L, sparse, lambda: _all_finite(L, a, ta, acc_t))

            def per_k(k):
                ck = at(c, tc, [k])
                with b.if_then(b.or_(b.not_(skip), _nonzero(L, ck, acc_t))):
                    def step(i):
                        ptr = out_ptr([i])
                        b.store(S.binary(L, "add", b.load(ptr), S.binary(
                            L, "mul", at(a, ta, [i, k]), ck, acc_t), acc_t), ptr)
                    A.loop(L, rows, step)
            A.loop(L, k_n, per_k)
        with row_blocks:
            _row_blocks(L, a, ta, c, tc, rows, k_n, acc_t, out_ptr, at)
    return out


def _nonzero(L, x, t):
    """i1: ``x != 0`` (NaN counts as nonzero)."""
    return L.b.fcmp_unordered("!=", x, L.const(0, t)) if t.dtype in ("f4", "f8") else \
        L.b.icmp_signed("!=", x, L.const(0, t))


def _and_then(L, first, second):
    """i1: ``first and second()``, ``second`` evaluated only when ``first`` holds."""
    b = L.b
    slot = L.entry_alloca(T.BOOL.llvm())
    b.store(first, slot)
    with b.if_then(first):
        b.store(second(), slot)
    return b.load(slot)


def _all_finite(L, x, tx, acc_t):
    """i1: every entry of the 1-D or 2-D ``x`` is finite (always, for integers).  An
    entry is infinite or NaN exactly when its exponent bits are all ones; the test is
    an integer OR over the entries, run along memory when ``x`` is contiguous in C or
    Fortran order (LLVM vectorises it), entry by entry otherwise."""
    if tx.dtype not in ("f4", "f8"):
        return ll.Constant(T.BOOL.llvm(), 1)
    b = L.b
    width = 64 if tx.dtype == "f8" else 32
    bits_t = ll.IntType(width)
    exponent = ll.Constant(bits_t, 0x7FF0000000000000 if tx.dtype == "f8" else 0x7F800000)
    slot = L.entry_alloca(bits_t)
    b.store(ll.Constant(bits_t, 0), slot)

    def note(bits):
        special = b.icmp_unsigned("==", b.and_(bits, exponent), exponent)
        b.store(b.or_(b.load(slot), b.zext(special, bits_t)), slot)

    item = A.i64(width // 8)
    shape = [A.shape_of(L, x, k) for k in range(tx.ndim)]
    strides = [A.stride_of(L, x, k) for k in range(tx.ndim)]
    if tx.ndim == 1:
        flat = b.icmp_signed("==", strides[0], item)
    else:
        c_order = b.and_(b.icmp_signed("==", strides[1], item),
                         b.icmp_signed("==", strides[0], b.mul(item, shape[1])))
        f_order = b.and_(b.icmp_signed("==", strides[0], item),
                         b.icmp_signed("==", strides[1], b.mul(item, shape[0])))
        flat = b.or_(c_order, f_order)
    size = shape[0] if tx.ndim == 1 else b.mul(shape[0], shape[1])
    with b.if_else(flat) as (along_memory, by_entry):
        with along_memory:
            words = b.bitcast(b.extract_value(x, 0), bits_t.as_pointer())
            A.loop(L, size, lambda i: note(b.load(b.gep(words, [i]))))
        with by_entry:
            def entry(idx):
                note(b.bitcast(A.element(L, x, tx, idx), bits_t))
            if tx.ndim == 1:
                A.loop(L, shape[0], lambda i: entry([i]))
            else:
                A.loop(L, shape[0], lambda i: A.loop(L, shape[1], lambda k: entry([i, k])))
    return b.icmp_unsigned("==", b.load(slot), ll.Constant(bits_t, 0))


def _nonzeros(L, c, tc, acc_t):
    """The number of nonzero entries of the 1-D ``c``."""
    b = L.b
    slot = L.entry_alloca(T.I64)
    b.store(A.ZERO, slot)
    A.loop(L, A.shape_of(L, c, 0), lambda k: b.store(b.add(b.load(slot), b.zext(_nonzero(
        L, S.convert(L, A.element(L, c, tc, [k]), tc.elem, acc_t), acc_t), T.I64)), slot))
    return b.load(slot)


def _abs(L, v):
    b = L.b
    return b.select(b.icmp_signed("<", v, A.ZERO), b.neg(v), v)


def _row_blocks(L, a, ta, c, tc, rows, k_n, acc_t, out_ptr, at):
    b = L.b
    slots = [L.entry_alloca(acc_t.llvm()) for _ in range(ROWS)]
    blocks = b.sdiv(rows, A.i64(ROWS))

    def block(q):
        i0 = b.mul(q, A.i64(ROWS))
        for s in slots:
            b.store(L.const(0, acc_t), s)

        def step(k):
            ck = at(c, tc, [k])
            for r, s in enumerate(slots):
                x = at(a, ta, [b.add(i0, A.i64(r)), k])
                b.store(S.binary(L, "add", b.load(s), S.binary(L, "mul", x, ck, acc_t), acc_t), s)
        A.loop(L, k_n, step)
        for r, s in enumerate(slots):
            b.store(b.load(s), out_ptr([b.add(i0, A.i64(r))]))

    A.loop(L, blocks, block)

    def one_row(i):
        s = slots[0]
        b.store(L.const(0, acc_t), s)
        A.loop(L, k_n, lambda k: b.store(S.binary(L, "add", b.load(s), S.binary(
            L, "mul", at(a, ta, [i, k]), at(c, tc, [k]), acc_t), acc_t), s))
        b.store(b.load(s), out_ptr([i]))

    A.loop(L, rows, one_row, start=b.mul(blocks, A.i64(ROWS)))



def stacked_product(L, a, ta: T.Array, c, tc: T.Array, rtype: T.Array):
    """``np.matmul(a, c)`` of stacks of matrices (both 2-D or more, one of them 3-D or
    more): the leading axes broadcast as numpy's (aligned from the right, a length 1
    read at 0), each matrix product as ``product`` into the fresh result (shape: the
    broadcast leading axes, then ``a``'s rows and ``c``'s columns)."""
    from ..values import abi
    b = L.b
    lead = rtype.ndim - 2

    def lead_dims(v, t):
        dims = A.shape_list(L, v, t)[:t.ndim - 2]
        return [None] * (lead - len(dims)) + dims

    da, dc = lead_dims(a, ta), lead_dims(c, tc)
    shape = []
    for x, y in zip(da, dc):
        if x is None or y is None:
            shape.append(y if x is None else x)
            continue
        L.check(b.and_(b.icmp_signed("!=", x, y), b.and_(b.icmp_signed("!=", x, A.ONE),
                                                         b.icmp_signed("!=", y, A.ONE))),
                ValueError, "matmul: the stacks' leading axes do not broadcast ({0} against {1})",
                (x, y))
        shape.append(b.select(b.icmp_signed("==", x, A.ONE), y, x))
    k_a, k_c = A.shape_of(L, a, ta.ndim - 1), A.shape_of(L, c, tc.ndim - 2)
    L.check(b.icmp_signed("!=", k_a, k_c), ValueError,
            "matmul: Input operand 1 has a mismatch in its core dimension 0 (size {0} is "
            "different from {1})", (k_c, k_a))
    rows, cols = A.shape_of(L, a, ta.ndim - 2), A.shape_of(L, c, tc.ndim - 1)
    out = A.allocate(L, rtype, shape + [rows, cols])
    mt = T.Array(rtype.dtype, 2)

    def matrix(v, t, dims, idx):
        picks = [b.select(b.icmp_signed("==", d, A.ONE), A.ZERO, i)
                 for d, i in zip(dims, idx) if d is not None]
        return A.leading_view(L, v, t, picks)

    def body(idx):
        m = product(L, *matrix(a, ta, da, idx), *matrix(c, tc, dc, idx), mt)
        target, _ = A.leading_view(L, out, rtype, idx)
        A.elementwise(L, lambda v: v[0], [(m, mt)], rtype.dtype, out=(target, mt))
        abi.release(L, m, mt)

    A.loop_nest(L, shape, body)
    return out
