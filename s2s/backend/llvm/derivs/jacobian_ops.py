"""The helpers of compiled Jacobian kernels (``s2s/core/jit_jacobian.py``), and their lowering.

A Jacobian kernel pushes basis vectors through derivative code in a native loop and
writes each result into the Jacobian.  The helpers it calls, with the maths each one
implements (the Python functions state it; the LLVM handlers compute the same):

* ``leaf_size(x)``: the number of entries of ``x`` (1 for a number);
* ``basis_count(x)``: ``max(leaf_size(x), 1)`` (a basis loop runs at least once, so
  the values it computes exist even for an empty input);
* ``basis_vector(x, k)``: ``e_k`` shaped like ``x`` in ``x``'s floating dtype
  (float64 for integers): zeros with a one at flat (C-order) position ``k``; all
  zeros when ``k`` is out of range;
* ``jacobian_zeros(out, x)``: zeros of shape ``out.shape + x.shape`` in the dtype
  ``result_type`` of both (floating);
* ``jacobian_store(J, g, offset, stride)``: ``J.flat[offset + p * stride] = g.flat[p]``
  for every flat position ``p`` of ``g`` (nothing when ``J`` is empty); ``J`` is a
  C-contiguous array the kernel made;
* ``tape_mark(tape)``, ``tape_rewind(tape, mark)``: the height of a native tape
  (``stacks.py``) and resetting it to that height, so that an adjoint sweep can pop
  the same recorded values once per basis vector.  Pops of a rewound tape leave the
  tape's reference to an array in place (the values stay recorded until the kernel
  returns).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as ll

from ..values import arrays as A
from ..numerics import reductions as R
from ..values import scalars as S
from ..typing import types as T
from ....rules.registry import defno_mode
from ..ops.calls import register

_FLOAT = ("f4", "f8")


def _float(dtype) -> str:
    return dtype if dtype in _FLOAT else "f8"


# -- the Python meaning of each helper -------------------------------------------------
def leaf_size(x):
    return int(np.size(x))


def basis_count(x):
    return max(int(np.size(x)), 1)


def basis_vector(x, k):
    dtype = np.result_type(x) if np.issubdtype(np.result_type(x), np.floating) else np.float64
    e = np.zeros(np.shape(x), dtype=dtype)
    if 0 <= k < e.size:
        e.reshape(-1)[k] = 1
    return e if np.ndim(x) else e[()]


def jacobian_zeros(out, x):
    dtype = np.result_type(*(v if np.issubdtype(np.result_type(v), np.floating) else 0.0
                             for v in (out, x)))
    return np.zeros(np.shape(out) + np.shape(x), dtype=dtype)


def jacobian_store(J, g, offset, stride):
    if J.size:
        J.reshape(-1)[offset + stride * np.arange(np.size(g))] = np.ravel(g)


def tape_mark(tape):
    raise NotImplementedError("tape_mark exists only in compiled code")


def tape_rewind(tape, mark):
    raise NotImplementedError("tape_rewind exists only in compiled code")


# -- lowering ---------------------------------------------------------------------------
def _real_leaf(t) -> bool:
    return isinstance(t, (T.Scalar, T.Array)) and t.dtype != "c16"


class LeafSize:
    def type(self, fn, types, kw, loc):
        return T.INT if _real_leaf(types[0]) else None

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        n = A.size(L, v, t) if isinstance(t, T.Array) else A.ONE
        if fn is basis_count:
            n = L.b.select(L.b.icmp_signed("<", n, A.ONE), A.ONE, n)
        return n


class BasisVector:
    def type(self, fn, types, kw, loc):
        t, k = types
        if not (_real_leaf(t) and isinstance(k, T.Scalar) and k.dtype == "i8"):
            return None
        return T.Array(_float(t.dtype), t.ndim) if isinstance(t, T.Array) else \
            T.Scalar(_float(t.dtype))

    def lower(self, L, fn, vals, kw, rtype):
        (v, t), (k, _) = vals
        b = L.b
        if isinstance(t, T.Scalar):
            one, zero = L.const(1.0, rtype), L.const(0.0, rtype)
            return b.select(b.icmp_signed("==", k, A.ZERO), one, zero)
        e = R.create(L, rtype, A.shape_list(L, v, t), (L.const(0.0, rtype.elem), rtype.elem))
        inside = b.and_(b.icmp_signed(">=", k, A.ZERO), b.icmp_signed("<", k, A.size(L, e, rtype)))
        with b.if_then(inside):
            ptr = b.bitcast(b.gep(b.extract_value(e, 0), [b.mul(k, A.i64(T.itemsize(rtype.dtype)))]),
                            rtype.elem.llvm().as_pointer())
            b.store(L.const(1.0, rtype.elem), ptr)
        return e


class JacobianZeros:
    def type(self, fn, types, kw, loc):
        o, x = types
        if not (_real_leaf(o) and _real_leaf(x)):
            return None
        dtype = "f4" if _float(o.dtype) == _float(x.dtype) == "f4" else "f8"
        return T.Array(dtype, _ndim(o) + _ndim(x))

    def lower(self, L, fn, vals, kw, rtype):
        shape = [s for v, t in vals for s in
                 (A.shape_list(L, v, t) if isinstance(t, T.Array) else [])]
        return R.create(L, rtype, shape, (L.const(0.0, rtype.elem), rtype.elem))


def _ndim(t):
    return t.ndim if isinstance(t, T.Array) else 0


class JacobianStore:
    def type(self, fn, types, kw, loc):
        J, g, off, stride = types
        ints = all(isinstance(i, T.Scalar) and i.dtype == "i8" for i in (off, stride))
        return T.NONE if isinstance(J, T.Array) and _real_leaf(g) and ints else None

    def lower(self, L, fn, vals, kw, rtype):
        (J, jt), (g, gt), (off, _), (stride, _) = vals
        b = L.b
        total = A.size(L, J, jt)
        data = b.bitcast(b.extract_value(J, 0), jt.elem.llvm().as_pointer())
        with b.if_then(b.icmp_signed(">", total, A.ZERO)):
            if isinstance(gt, T.Scalar):
                b.store(S.convert(L, g, gt, jt.elem), b.gep(data, [off]))
            else:
                n = A.size(L, g, gt)
                last = b.add(off, b.mul(b.sub(n, A.ONE), stride))
                bad = b.and_(b.icmp_signed(">", n, A.ZERO),
                             b.or_(b.icmp_signed(">=", last, total),
                                   b.icmp_signed("<", off, A.ZERO)))
                L.check(bad, RuntimeError, "s2s internal error: a Jacobian entry out of range")
                slot = L.entry_alloca(T.I64)
                b.store(off, slot)

                def body(idx):
                    x = S.convert(L, A.element(L, g, gt, idx), gt.elem, jt.elem)
                    at = b.load(slot)
                    b.store(x, b.gep(data, [at]))
                    b.store(b.add(at, stride), slot)

                A.loop_nest(L, A.shape_list(L, g, gt), body)
        return ll.Constant(rtype.llvm(), None)


class TapeMark:
    def type(self, fn, types, kw, loc):
        return T.INT if isinstance(types[0], T.Stack) and not types[0].tagged else None

    def lower(self, L, fn, vals, kw, rtype):
        return L.b.extract_value(vals[0][0], 1)


class TapeRewind:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms, kwatoms):
        ok = isinstance(types[0], T.Stack) and not types[0].tagged and \
            isinstance(types[1], T.Scalar) and types[1].dtype == "i8"
        return T.NONE if ok else None

    def lower(self, L, fn, vals, kw, rtype):
        from ..lower.stacks import height_ptr
        L.b.store(vals[1][0], height_ptr(L, L.call_atoms[0][0].name))
        return ll.Constant(rtype.llvm(), None)


register(LeafSize(), leaf_size, basis_count)
register(BasisVector(), basis_vector)
register(JacobianZeros(), jacobian_zeros)
register(JacobianStore(), jacobian_store)
register(TapeMark(), tape_mark)
register(TapeRewind(), tape_rewind)
#: why the operations of native tapes have no derivative or batching rule
COMPILED_TAPES_ONLY = ("an operation on a native tape, written by jit's passes after every "
                       "transform has run: no transform meets it")
for _mode in ("jvp", "vjp", "vmap"):
    defno_mode(_mode, COMPILED_TAPES_ONLY, tape_mark, tape_rewind)
