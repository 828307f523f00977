"""Matrix products with a 2-D operand, in loop orders that keep the CPU busy.

``product(L, a, ta, c, tc, rtype)`` computes ``a @ c`` for a 2-D ``a`` and/or a 2-D
``c`` (the other 1-D or 2-D; lengths already checked by ``reductions.dot``) into a
fresh C-contiguous array.  Every entry is the sum of the plain definition,
``((0 + a[i,0] c[0,j]) + a[i,1] c[1,j]) + ...`` in order of the contracted index;
only the order in which the entries are worked on changes:

* ``c`` 2-D: ``out[i, :] += a[i, k] * c[k, :]`` (i, k, j order): the inner loop runs
  along rows of ``c`` and ``out`` with no dependence between iterations, so LLVM
  vectorises it;
* ``a`` 2-D and ``c`` 1-D (matrix-vector): when ``a``'s rows are closer in memory than
  its columns (a transposed view, e.g. ``W.T @ g`` in adjoint code), or when at least
  half of ``c`` is zeros (a basis vector, a one-hot cotangent), the same
  ``out[:] += a[:, k] * c[k]`` form; otherwise four rows at a time, four independent
  running sums sharing each load of ``c[k]``, then the remaining rows one by one.

In the ``+= a * x`` forms a term whose multiplier ``x`` is zero is skipped, as the
reference BLAS ``dgemv``/``dgemm`` do: the result is the same, except that a zero
times an infinite or NaN entry contributes nothing instead of NaN.
"""
from __future__ import annotations

from llvmlite import ir as ll

from . import arrays as A
from . import scalars as S
from . import types as T

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

    def axpy(i_idx, scale_of, row_of, n):
        """``out[i_idx + [j]] += scale * row(j)`` for j < n (nothing when scale is 0)."""
        def step(j):
            ptr = out_ptr(i_idx + [j])
            b.store(S.binary(L, "add", b.load(ptr), S.binary(L, "mul", scale_of, row_of(j), acc_t),
                             acc_t), ptr)
        with b.if_then(_nonzero(L, scale_of, acc_t)):
            A.loop(L, n, step)

    if cols is not None:
        A.fill(L, out, rtype, zero)

        def per_row(i_idx):
            def per_k(k):
                x = at(a, ta, i_idx + [k])
                axpy(i_idx, x, lambda j: at(c, tc, [k, j]), cols)
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

            def per_k(k):
                ck = at(c, tc, [k])
                with b.if_then(_nonzero(L, ck, acc_t)):
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


_ = ll
