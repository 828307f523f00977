"""``np.linalg.norm(x, ord=None, axis=None, keepdims=False)`` of a real array in compiled code.

Contract (numpy's values; the result is float32 for a float32 array, else float64):

* ``ord=None``: ``sqrt(sum x^2)`` over every entry, any ndim (numpy's ravel-and-dot);
* vectors: ``ord`` 2 (as None), 1 (``sum |x|``), ``inf``/``-inf`` (``max``/``min |x|``;
  an empty vector raises ``ValueError``), 0 (the count of non-zero entries), another
  number ``p`` (``(sum |x|^p)^(1/p)``);
* matrices: ``'fro'`` (as None), 1/-1 (the largest/smallest column sum of ``|x|``),
  ``inf``/``-inf`` (rows);
* ``axis=k`` (one integer): the vector norms along axis ``k``, any vector ``ord``;
  ``keepdims=True`` keeps a length-1 axis there (or every axis, without ``axis``);
* refused by name: a tuple of two axes, complex arrays, a run-time ``ord``/``axis``, a
  matrix ``ord`` 2/-2/'nuc' (singular values), any ``ord`` on 3-d+ arrays.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir as ll

from ..values import abi
from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T
from .calls import register
from .linalg import RUNTIME, constant, refuse

_VECTOR_ORDS = (None, 2, 1, 0, math.inf, -math.inf)
_MATRIX_ORDS = (None, "fro", 1, -1, math.inf, -math.inf)


class NormSpec:
    """What a ``norm`` call computes: ``ord``, ``vector`` (else a matrix norm), ``axis``
    (None: the whole array; else the one axis, in ``0..ndim-1``, of vector norms) and
    ``keepdims``."""

    def __init__(self, ord_, vector, axis, keepdims):
        self.ord, self.vector, self.axis, self.keepdims = ord_, vector, axis, keepdims

    def result(self, xt):
        st = T.Scalar("f4" if xt.dtype == "f4" else "f8")
        if self.keepdims:
            return T.Array(st.dtype, xt.ndim)
        return st if self.axis is None else T.Array(st.dtype, xt.ndim - 1)


def _is_vector_ord(ord_):
    return ord_ in _VECTOR_ORDS or isinstance(ord_, (int, float)) and not isinstance(ord_, bool)


def norm_options(name, atoms, kw_atoms, types, kw_types, loc):
    """The ``NormSpec`` of a ``norm(x, ord, axis, keepdims)`` call (or of its helpers
    ``norm_vjp(g, ans, x, ord, axis, keepdims)``, ``atoms`` then starting at ``x``)."""
    names = ("x", "ord", "axis", "keepdims")
    given = dict(zip(names, zip(atoms, types)))
    for k, atom in (kw_atoms or {}).items():
        given[k] = (atom, kw_types.get(k))
    xt = given["x"][1]
    opts = {}
    for k in ("ord", "axis", "keepdims"):
        v = constant(*given[k]) if k in given else None
        if v is RUNTIME:
            raise refuse(name, f"{k}= that is not a constant", loc)
        opts[k] = v
    if xt.dtype == "c16":
        raise refuse(name, "a complex array", loc)
    ord_, axis, keepdims = opts["ord"], opts["axis"], bool(opts["keepdims"])
    if isinstance(axis, tuple) and len(axis) == 1:
        axis = axis[0]
    if axis is not None:
        if type(axis) is not int or not -xt.ndim <= axis < xt.ndim:
            raise refuse(name, f"axis={axis!r} of a {xt.ndim}-d array (jit compiles one "
                         "integer axis: vector norms along it)", loc)
        if not _is_vector_ord(ord_):
            raise refuse(name, f"ord={ord_!r} along an axis (a vector norm)", loc)
        return NormSpec(ord_, True, axis % xt.ndim, keepdims)
    if ord_ is None:
        return NormSpec(None, True, None, keepdims)
    if xt.ndim == 1 and _is_vector_ord(ord_):
        return NormSpec(ord_, True, None, keepdims)
    if xt.ndim == 2 and ord_ in _MATRIX_ORDS:
        return NormSpec(ord_, False, None, keepdims)
    raise refuse(name, f"ord={ord_!r} of a {xt.ndim}-d array (jit compiles ord None; "
                 "vector ord 2, 1, inf, -inf, 0, p; matrix ord 'fro', 1, -1, inf, -inf)", loc)


def vector_norm(L, x, xt, ord_, rt):
    """The vector (or Frobenius, ``ord`` None) norm of every entry of ``x``."""
    b = L.b
    zero = L.const(0, rt)

    def absolute(v):
        return S.absolute(L, v, rt)

    if ord_ in (None, 2, "fro"):
        total = A.reduce_all(L, x, xt, lambda acc, v: b.fadd(acc, b.fmul(v, v)), zero, rt)
        return S.math1(L, "sqrt", total, rt)
    if ord_ == 1:
        return A.reduce_all(L, x, xt, lambda acc, v: b.fadd(acc, absolute(v)), zero, rt)
    if ord_ == 0:
        return A.reduce_all(L, x, xt, lambda acc, v: b.fadd(acc, b.uitofp(
            b.fcmp_unordered("!=", v, zero), rt.llvm())), zero, rt)
    if ord_ in (math.inf, -math.inf):
        which = "max" if ord_ > 0 else "min"
        L.check(b.icmp_signed("==", A.size(L, x, xt), A.ZERO), ValueError,
                f"zero-size array to reduction operation {which}imum which has no identity")
        first = absolute(S.convert(L, A.element(L, x, xt, [A.ZERO]), xt.elem, rt))
        return A.reduce_all(L, x, xt, lambda acc, v: S.min_max(L, which, acc, absolute(v), rt,
                                                               True), first, rt)
    p = L.const(float(ord_), rt)
    total = A.reduce_all(L, x, xt, lambda acc, v: b.fadd(acc, S.math2(L, "pow", absolute(v), p,
                                                                       rt)), zero, rt)
    return S.math2(L, "pow", total, L.const(1.0 / float(ord_), rt), rt)


def line_sums(L, x, xt, axis, rt):
    """The sums of ``|x|`` along ``axis`` (0: column sums) as a fresh 1-d array."""
    b = L.b
    other = 1 - axis
    out_t = T.Array(rt.dtype, 1)
    out = A.allocate(L, out_t, [A.shape_of(L, x, other)])
    A.fill(L, out, out_t, L.const(0, rt))
    data = b.bitcast(b.extract_value(out, 0), rt.llvm().as_pointer())

    def body(idx):
        v = S.absolute(L, S.convert(L, A.element(L, x, xt, idx), xt.elem, rt), rt)
        slot = b.gep(data, [idx[other]])
        b.store(b.fadd(b.load(slot), v), slot)

    A.loop_nest(L, A.shape_list(L, x, xt), body)
    return out, out_t


def matrix_norm(L, x, xt, ord_, rt):
    """Matrix norms 1/-1 (column sums) and inf/-inf (row sums); 'fro' is a vector norm."""
    sums, st = line_sums(L, x, xt, 0 if ord_ in (1, -1) else 1, rt)
    which = "max" if ord_ > 0 else "min"
    b = L.b
    L.check(b.icmp_signed("==", A.shape_of(L, sums, 0), A.ZERO), ValueError,
            f"zero-size array to reduction operation {which}imum which has no identity")
    first = A.element(L, sums, st, [A.ZERO])
    out = A.reduce_all(L, sums, st, lambda acc, v: S.min_max(L, which, acc, v, rt, True),
                       first, rt)
    abi.release(L, sums, st)
    return out


def entry_term(L, ord_, rt):
    """``v -> f(v)`` summed (or maxed) by a vector norm: ``v^2``, ``|v|``, ``v != 0``, ``|v|^p``."""
    b = L.b
    if ord_ in (None, 2, "fro"):
        return lambda v: b.fmul(v, v)
    if ord_ == 0:
        return lambda v: b.uitofp(b.fcmp_unordered("!=", v, L.const(0, rt)), rt.llvm())
    if ord_ in (1, math.inf, -math.inf):
        return lambda v: S.absolute(L, v, rt)
    return lambda v: S.math2(L, "pow", S.absolute(L, v, rt), L.const(float(ord_), rt), rt)


def finish(L, ord_, total, rt):
    """The norm from the reduced terms: ``sqrt``, ``^(1/p)`` or the value itself."""
    if ord_ in (None, 2, "fro"):
        return S.math1(L, "sqrt", total, rt)
    if ord_ in (0, 1, math.inf, -math.inf):
        return total
    return S.math2(L, "pow", total, L.const(1.0 / float(ord_), rt), rt)


def axis_norm(L, x, xt, spec, rtype):
    """Vector norms of ``x`` along ``spec.axis``: an array (keepdims: length 1 there)."""
    from ..numerics.axis import reduce_axis
    rt = rtype.elem
    term = entry_term(L, spec.ord, rt)
    mt = T.Array(rt.dtype, xt.ndim)
    terms = A.elementwise(L, lambda v: (term(S.convert(L, v[0][0], v[0][1], rt)), rt),
                          [(x, xt)], rt.dtype)
    op = "sum" if spec.ord not in (math.inf, -math.inf) else ("max" if spec.ord > 0 else "min")
    out = reduce_axis(L, terms, mt, spec.axis, spec.keepdims, op, rtype)
    abi.release(L, terms, mt)
    return A.elementwise(L, lambda v: (finish(L, spec.ord, v[0][0], rt), rt), [(out, rtype)],
                         rt.dtype, out=(out, rtype))


class Norm:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if not types or not isinstance(types[0], T.Array):
            return None
        return norm_options("norm", atoms, kw_atoms, types, kw, loc).result(types[0])

    def lower(self, L, fn, vals, kw, rtype):
        x, xt = vals[0]
        args, kwargs = L.call_atoms
        spec = norm_options("norm", args, kwargs, [t for _, t in vals],
                            {k: t for k, (_, t) in kw.items()}, L.loc)
        if spec.axis is not None:
            return axis_norm(L, x, xt, spec, rtype)
        st = T.Scalar(rtype.dtype)
        copied = xt.elem != st
        if copied:  # ints, bools: the norm of their float64 values
            x, xt = A.copy(L, x, xt, st.dtype), T.Array(st.dtype, xt.ndim)
        if spec.vector or spec.ord == "fro":
            out = vector_norm(L, x, xt, spec.ord, st)
        else:
            out = matrix_norm(L, x, xt, spec.ord, st)
        if copied:
            abi.release(L, x, xt)
        if spec.keepdims:
            from ..numerics.reductions import create
            return create(L, rtype, [A.ONE] * rtype.ndim, (out, st))
        return out


register(Norm(), np.linalg.norm)
_ = ll
