"""Two-operand contractions ``np.einsum(spec, a, b)`` as one ``np.matmul`` (BLAS) call
laid out on the operands' memory, without transposing copies.

``out[so] = sum over the other letters of a[sa] * b[sb]``.  Each letter is

* *stacked*: one matrix product per index (``np.matmul``'s broadcast axes, a loop of
  BLAS calls inside numpy): the letters both operands and the result share (a batch
  ``z`` on both operands), and a letter of one operand that its memory cannot merge
  with the operand's other free letters;
* a *row* letter (``M``: only ``a`` and the result), a *column* letter (``N``: only
  ``b`` and the result) or a *summed* letter (``K``: both operands, not the result).

A group of letters of one operand becomes one matrix dimension by a reshape that is
a view when, in the order of decreasing strides, each axis's stride is the next
one's stride times its size (the batch axis of a C-contiguous cotangent merges with
the rows that follow it: ``zik,jk->zij`` is one ``(z*i, k) @ (k, j)`` product).  The
plan (``layout``) is chosen for the operands' shapes and strides: no copy where one
exists, then the fewest matrix products, then a result already in ``so`` order
(otherwise the result is a transposed view).  ``matmul(A', B')`` with ``A' = (stack,
M, K)`` and ``B' = (stack, K, N)`` (either operand may be the left one); BLAS reads a
transposed matrix as it is (``A'`` with unit stride along ``M`` is ``A'^T`` for
BLAS).  Numbers agree with ``np.einsum`` up to rounding (the sums are BLAS's).
"""
from __future__ import annotations

import math

import numpy as np

_LETTER_KINDS = {}
_LAYOUTS = {}
_MAX_LAYOUTS = 4096


def letter_kinds(spec):
    """``(sa, sb, so, stacked, rows, cols, summed)`` of a two-operand ``spec`` (letters
    only, each at most once per operand, every operand letter in the other operand or
    the result), else None (then ``np.einsum`` runs it)."""
    hit = _LETTER_KINDS.get(spec, False)
    if hit is not False:
        return hit
    ins, _, so = spec.partition("->")
    parts = ins.split(",")
    hit = None
    if len(parts) == 2 and "." not in spec and "->" in spec:
        sa, sb = parts
        ok = len(set(sa)) == len(sa) and len(set(sb)) == len(sb) and \
            len(set(so)) == len(so) and all(c in sa + sb for c in so) and \
            all(c in sb or c in so for c in sa) and all(c in sa or c in so for c in sb)
        if ok:
            hit = (sa, sb, so, [c for c in so if c in sa and c in sb],
                   [c for c in sa if c in so and c not in sb],
                   [c for c in sb if c in so and c not in sa],
                   [c for c in sa if c in sb and c not in so])
    _LETTER_KINDS[spec] = hit
    return hit


def _mergeable(x, sub, letters):
    """Whether ``x``'s axes of ``letters`` (in that order) merge into one axis by a view."""
    prev = None
    for c in letters:
        k = sub.index(c)
        n, s = x.shape[k], x.strides[k]
        if n == 1:
            continue
        if prev is not None and prev != s * n:
            return False
        prev = s
    return True


def _by_stride(x, sub, letters):
    """``letters`` in the order of decreasing stride of ``x`` (outermost first)."""
    return sorted(letters, key=lambda c: -abs(x.strides[sub.index(c)]))


def _split_free(x, sub, free):
    """The free letters of ``x`` that merge into one matrix dimension (the run of
    contiguous axes ending at the smallest stride) and those left to stack."""
    order = _by_stride(x, sub, free)
    keep = []
    for c in reversed(order):  # innermost first
        if _mergeable(x, sub, [c] + keep):
            keep.insert(0, c)
        elif x.shape[sub.index(c)] != 1:
            break
    return keep, [c for c in order if c not in keep]


def _summed_order(a, sa, b, sb, summed):
    """The order of the summed letters: one in which both operands merge them, if any."""
    for x, sub in ((a, sa), (b, sb)):
        order = _by_stride(x, sub, summed)
        if _mergeable(a, sa, order) and _mergeable(b, sb, order):
            return order, 0
    order = _by_stride(a, sa, summed)
    copies = (0 if _mergeable(a, sa, order) else a.size) + \
        (0 if _mergeable(b, sb, order) else b.size)
    return order, copies


def layout(spec, kinds, a, b):
    """The plan of ``matmul`` for ``a`` and ``b`` (see the module docstring):
    ``(swap, perm_l, shape_l, perm_r, shape_r, out_shape, out_perm)``."""
    key = (spec, a.shape, a.strides, b.shape, b.strides)
    hit = _LAYOUTS.get(key)
    if hit is not None:
        return hit
    sa, sb, so, stacked, rows, cols, summed = kinds
    rows_kept, rows_stacked = _split_free(a, sa, rows)
    cols_kept, cols_stacked = _split_free(b, sb, cols)
    k_order, copies = _summed_order(a, sa, b, sb, summed)
    stack = [c for c in so if c in stacked or c in rows_stacked or c in cols_stacked]
    size = dict(zip(sa, a.shape))
    size.update(zip(sb, b.shape))
    best = None
    for swap in (False, True):
        m, n = (cols_kept, rows_kept) if swap else (rows_kept, cols_kept)
        order = stack + m + n
        identity = order == list(so)
        score = (copies, not identity)
        if best is None or score < best[0]:
            best = (score, swap, m, n, order)
    _, swap, m, n, order = best

    def operand(x, sub, group, first):
        perm = [sub.index(c) for c in stack if c in sub]
        shape = [size[c] if c in sub else 1 for c in stack]
        perm += [sub.index(c) for c in group + k_order] if first else \
            [sub.index(c) for c in k_order + group]
        inner = [math.prod(size[c] for c in group), math.prod(size[c] for c in k_order)]
        return perm, tuple(shape + (inner if first else inner[::-1]))

    left, right = ((b, sb), (a, sa)) if swap else ((a, sa), (b, sb))
    perm_l, shape_l = operand(left[0], left[1], m, True)
    perm_r, shape_r = operand(right[0], right[1], n, False)
    out_shape = tuple(size[c] for c in order)
    out_perm = None if order == list(so) else tuple(order.index(c) for c in so)
    hit = (swap, perm_l, shape_l, perm_r, shape_r, out_shape, out_perm)
    if len(_LAYOUTS) >= _MAX_LAYOUTS:
        _LAYOUTS.clear()
    _LAYOUTS[key] = hit
    return hit


def contract(spec, a, b):
    """``np.einsum(spec, a, b)`` as one ``np.matmul`` call on views of ``a`` and ``b``
    (``np.einsum`` itself for specs ``letter_kinds`` does not describe, or where a
    letter's sizes differ between the operands, i.e. broadcast)."""
    kinds = letter_kinds(spec)
    a, b = np.asarray(a), np.asarray(b)
    if kinds is None or a.ndim != len(kinds[0]) or b.ndim != len(kinds[1]) or \
            a.dtype == object or b.dtype == object:
        return np.einsum(spec, a, b, optimize=True)
    sa, sb = kinds[0], kinds[1]
    for c, n in zip(sa, a.shape):
        k = sb.find(c)
        if k >= 0 and b.shape[k] != n:
            return np.einsum(spec, a, b, optimize=True)
    swap, perm_l, shape_l, perm_r, shape_r, out_shape, out_perm = layout(spec, kinds, a, b)
    left, right = (b, a) if swap else (a, b)
    out = np.matmul(left.transpose(perm_l).reshape(shape_l),
                    right.transpose(perm_r).reshape(shape_r)).reshape(out_shape)
    if out_perm is not None:
        out = out.transpose(out_perm)
    return out if out.ndim else out[()]
