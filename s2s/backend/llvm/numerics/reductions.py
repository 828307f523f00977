"""Array creation, copies, reductions and products in LLVM IR.

Contract (numpy's semantics, whole-array forms only; an ``axis`` argument is
refused with a clear error by ``calls.py``): ``np.zeros/ones/empty(shape,
dtype)`` and their ``*_like`` forms, ``np.copy``; ``np.sum``/``np.prod`` (int
and bool arrays sum as int64), ``np.max``/``np.min`` (an empty array raises
``ValueError``), ``np.mean``; ``np.dot``/``np.matmul``/``@`` on 1-D and 2-D
arrays (a shape mismatch raises ``ValueError``; stacks of matrices under ``matmul``:
``products.stacked_product``).
"""
from __future__ import annotations

from llvmlite import ir as ll

from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T


def create(L, t: T.Array, shape, fill):
    """A new array of ``shape`` filled with ``fill`` (``(value, type)``; None: not
    filled); a constant zero fill is ``calloc``'s (pages untouched, as numpy's)."""
    zero = fill is not None and isinstance(fill[0], ll.Constant) and fill[0].constant == 0
    a = A.allocate(L, t, shape, zeroed=zero)
    if fill is not None and not zero:
        A.fill(L, a, t, S.convert(L, fill[0], fill[1], t.elem))
    return a


def shape_values(L, value, t):
    """The dimensions given to ``np.zeros``: an int or a tuple of ints."""
    if isinstance(t, T.Scalar):
        return [S.convert(L, value, t, T.INT)]
    return [S.convert(L, L.b.extract_value(value, k), it, T.INT) for k, it in enumerate(t.items)]


def sum_type(t: T.Array) -> T.Scalar:
    return T.Scalar("i8") if t.dtype in ("b1", "i8") else t.elem


def sum_all(L, a, t: T.Array, op="add"):
    acc_t = sum_type(t)
    init = L.const(0 if op == "add" else 1, acc_t)
    return A.reduce_all(L, a, t, lambda acc, x: S.binary(L, "add" if op == "add" else "mul",
                                                          acc, x, acc_t), init, acc_t)


def mean_all(L, a, t: T.Array):
    acc_t = T.Scalar("f4" if t.dtype == "f4" else ("c16" if t.dtype == "c16" else "f8"))
    total = S.convert(L, sum_all(L, a, t), sum_type(t), acc_t)
    n = S.convert(L, A.size(L, a, t), T.INT, acc_t)
    return S.binary(L, "truediv", total, n, acc_t)


def min_max_all(L, a, t: T.Array, which):
    """``np.min``/``np.max`` over every element (nan propagates; empty -> ValueError)."""
    b = L.b
    n = A.size(L, a, t)
    L.check(b.icmp_signed("==", n, A.ZERO), ValueError,
            f"zero-size array to reduction operation {which}imum which has no identity")
    first = A.element(L, a, t, [A.ZERO] * t.ndim)
    return A.reduce_all(L, a, t, lambda acc, x: S.min_max(L, which, acc, x, t.elem, True),
                        first, t.elem)


def dot(L, a, ta: T.Array, c, tc: T.Array, rtype):
    """``a @ c`` for 1-D/2-D operands (the contracted lengths must agree)."""
    b = L.b
    acc_t = rtype.elem if isinstance(rtype, T.Array) else rtype
    k_a = A.shape_of(L, a, ta.ndim - 1)
    k_c = A.shape_of(L, c, 0 if tc.ndim == 1 else tc.ndim - 2)
    L.check(b.icmp_signed("!=", k_a, k_c), ValueError,
            "shapes not aligned: {0} (dim {1}) != {2}", (k_a, A.i64(ta.ndim - 1), k_c))
    if ta.ndim == 2 or tc.ndim == 2:  # the same sums, in a faster order (products.py)
        from .products import product
        return product(L, a, ta, c, tc, rtype)
    rows = [A.shape_of(L, a, 0)] if ta.ndim == 2 else []
    cols = [A.shape_of(L, c, 1)] if tc.ndim == 2 else []
    slot = L.entry_alloca(acc_t.llvm())

    def inner(idx):
        i = idx[:len(rows)]
        j = idx[len(rows):]
        b.store(L.const(0, acc_t), slot)

        def step(k):
            x = S.convert(L, A.element(L, a, ta, i + [k]), ta.elem, acc_t)
            y = S.convert(L, A.element(L, c, tc, [k] + j), tc.elem, acc_t)
            b.store(S.binary(L, "add", b.load(slot), S.binary(L, "mul", x, y, acc_t), acc_t),
                    slot)

        A.loop(L, k_a, step)
        return b.load(slot)

    if not rows and not cols:
        return inner([])
    out = A.allocate(L, rtype, rows + cols)
    data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)
    A.loop_nest(L, rows + cols, lambda idx: A.store(
        L, inner(idx), A.element_ptr(L, data, strides, idx, acc_t), acc_t))
    return out


_ = ll
