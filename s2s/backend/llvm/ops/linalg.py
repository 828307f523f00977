"""``numpy.linalg`` in compiled code: handlers of ``calls.TABLE`` over the native kernels.

Contract (numpy's results and errors, for one real matrix -- a 2-D array of
float64, float32, int64 or bool; ints and bools compute in float64, float32
stays float32; complex and stacked (3-D+) matrices are refused by name):

* ``solve(a, b)``: ``b`` a vector (1-D) or a matrix of right-hand sides (2-D);
  LU with partial pivoting (``linalg.lu``), then back substitution;
* ``inv(a)``: ``solve(a, I)``; ``det(a)``: the product of ``U``'s diagonal times
  the permutation's sign (0.0 for a singular matrix);
  ``slogdet(a)``: ``(sign, log|det|)`` from the same factors (``(0, -inf)`` when
  singular), a tuple;
* ``cholesky(a, upper=False)``: ``L`` with ``A = L L^T`` from ``a``'s lower
  triangle (``upper=True``: ``U = L^T`` from ``a``'s upper triangle, as numpy);
* a non-square ``a`` raises ``LinAlgError('Last 2 dimensions of the array must be
  square')``, a singular one in ``solve``/``inv`` ``LinAlgError('Singular
  matrix')``, a non-positive-definite one in ``cholesky`` ``LinAlgError('Matrix is
  not positive definite')``; a right-hand side of the wrong length ``ValueError``;
* ``norm(x, ord=None)``, whole array (``axis=None``, ``keepdims=False``): ord None
  (the 2-norm of all entries, any ndim), vectors ``ord`` 2, 1, inf, -inf, 0 or
  another number ``p``; matrices ``'fro'``, 1, -1, inf, -inf.  ord 2/-2/'nuc' of a
  matrix (singular values) are refused by name.

Every copy the kernels work on is released as soon as the result is made.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir as ll

from ....errors import UnsupportedSyntaxError
from ..values import abi
from ..values import arrays as A
from ..numerics import linalg as K
from ..values import scalars as S
from ..typing import types as T
from .calls import register

NOT_SQUARE = "Last 2 dimensions of the array must be square"


def float_dtype(*types):
    """The dtype numpy.linalg computes in for these operands (None: refused)."""
    elems = [t.elem if isinstance(t, T.Array) else t for t in types]
    if any(e.dtype == "c16" for e in elems):
        return None
    return "f4" if all(e.dtype == "f4" for e in elems) else "f8"


def constant(atom, t, default=None):
    """The compile-time value of an operand (``default`` when absent); a run-time
    value gives the marker ``RUNTIME``."""
    if atom is None:
        return default
    if hasattr(atom, "value"):
        return atom.value
    if isinstance(t, T.Static):
        return t.value
    if isinstance(t, T.NoneType):
        return None
    return RUNTIME


RUNTIME = object()


def refuse(name, why, loc):
    return UnsupportedSyntaxError(f"jit does not compile np.linalg.{name}: {why}", loc)


def _matrix(name, t, loc):
    if not isinstance(t, T.Array):
        return None
    if t.ndim != 2:
        raise refuse(name, f"a {t.ndim}-d array (jit compiles one 2-d matrix, not a stack)"
                     if t.ndim > 2 else "a 1-d array (it needs a square matrix)", loc)
    if t.dtype == "c16":
        raise refuse(name, "a complex matrix (jit compiles real matrices)", loc)
    return t


def ptr(L, arr, dtype):
    return L.b.bitcast(L.b.extract_value(arr, 0), (T.F64 if dtype == "f8" else T.F32).as_pointer())


def square_copy(L, a, at, dtype):
    """``(copy, n)``: ``a`` as a fresh C-contiguous ``dtype`` matrix, after checking
    that it is square (``LinAlgError``)."""
    n = A.shape_of(L, a, 0)
    L.check(L.b.icmp_signed("!=", n, A.shape_of(L, a, 1)), np.linalg.LinAlgError, NOT_SQUARE)
    return A.copy(L, a, at, dtype), n


def _release(L, arr, t):
    abi.release(L, arr, t)


def factor_solve(L, a, at, x, dtype, n, m):
    """``x := a^-1 x`` in place (``x`` a fresh contiguous ``n x m`` buffer)."""
    b = L.b
    acopy, _ = square_copy(L, a, at, dtype)
    mt = T.Array(dtype, 2)
    status = b.call(K.lu(L.module, dtype), [ptr(L, acopy, dtype), ptr(L, x, dtype), n, m])
    L.check(b.icmp_signed("<", status, A.ZERO), np.linalg.LinAlgError, "Singular matrix")
    b.call(K.upper(L.module, dtype), [ptr(L, acopy, dtype), ptr(L, x, dtype), n, m])
    _release(L, acopy, mt)
    return x


class Solve:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 2:
            return None
        a, c = types
        if _matrix("solve", a, loc) is None or not isinstance(c, T.Array):
            return None
        if c.ndim not in (1, 2) or c.dtype == "c16":
            raise refuse("solve", f"a right-hand side {c} (jit compiles a real vector or "
                         "matrix)", loc)
        return T.Array(float_dtype(a, c), c.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (a, at), (c, ct) = vals
        b = L.b
        n = A.shape_of(L, a, 0)
        L.check(b.icmp_signed("!=", n, A.shape_of(L, a, 1)), np.linalg.LinAlgError, NOT_SQUARE)
        rows = A.shape_of(L, c, 0)
        L.check(b.icmp_signed("!=", rows, n), ValueError,
                "solve: the right-hand side has {0} rows, the matrix {1}", (rows, n))
        x = A.copy(L, c, ct, rtype.dtype)
        m = A.ONE if ct.ndim == 1 else A.shape_of(L, c, 1)
        return factor_solve(L, a, at, x, rtype.dtype, n, m)


class Inv:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or _matrix("inv", types[0], loc) is None:
            return None
        return T.Array(float_dtype(types[0]), 2)

    def lower(self, L, fn, vals, kw, rtype):
        (a, at), = vals
        b = L.b
        n = A.shape_of(L, a, 0)
        L.check(b.icmp_signed("!=", n, A.shape_of(L, a, 1)), np.linalg.LinAlgError, NOT_SQUARE)
        x = A.allocate(L, rtype, [n, n])
        A.fill(L, x, rtype, L.const(0, rtype.elem))
        xp = ptr(L, x, rtype.dtype)
        A.loop(L, n, lambda i: b.store(L.const(1, rtype.elem), b.gep(xp, [b.mul(i, b.add(n, A.ONE))])))
        return factor_solve(L, a, at, x, rtype.dtype, n, n)


def _factors(L, a, at, dtype, diag_fn, init):
    """Fold ``diag_fn(acc, u_ii)`` over the diagonal of ``a``'s LU factors:
    ``(acc, swaps)``, ``swaps`` -1 for a singular matrix."""
    b = L.b
    acopy, n = square_copy(L, a, at, dtype)
    ft = T.F64 if dtype == "f8" else T.F32
    status = b.call(K.lu(L.module, dtype), [ptr(L, acopy, dtype), ll.Constant(ft.as_pointer(), None),
                                           n, A.ZERO])
    slot = L.entry_alloca(init.type)
    b.store(init, slot)
    data = ptr(L, acopy, dtype)
    A.loop(L, n, lambda i: b.store(diag_fn(b.load(slot), b.load(b.gep(data, [b.mul(i, b.add(n, A.ONE))]))),
                                   slot))
    _release(L, acopy, T.Array(dtype, 2))
    return b.load(slot), status


def _odd(L, swaps):
    return L.b.icmp_signed("==", L.b.and_(swaps, A.ONE), A.ONE)


class Det:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or _matrix(fn.__name__, types[0], loc) is None:
            return None
        st = T.Scalar(float_dtype(types[0]))
        return st if fn is np.linalg.det else T.Tuple((st, st))

    def lower(self, L, fn, vals, kw, rtype):
        (a, at), = vals
        b = L.b
        st = rtype if fn is np.linalg.det else rtype.items[0]
        zero, one = L.const(0, st), L.const(1, st)
        if fn is np.linalg.det:
            prod, swaps = _factors(L, a, at, st.dtype, b.fmul, one)
            value = b.select(_odd(L, swaps), b.fneg(prod), prod)
            return b.select(b.icmp_signed("<", swaps, A.ZERO), zero, value)
        # slogdet: sign and log|det| accumulated together as {sign, log}
        pair = ll.LiteralStructType([st.llvm(), st.llvm()])

        def step(acc, u):
            sign = b.extract_value(acc, 0)
            neg = b.fcmp_ordered("<", u, zero)
            sign = b.select(neg, b.fneg(sign), sign)
            log = b.fadd(b.extract_value(acc, 1), S.math1(L, "log", S.absolute(L, u, st), st))
            return b.insert_value(b.insert_value(acc, sign, 0), log, 1)

        init = ll.Constant(pair, [one, zero])
        acc, swaps = _factors(L, a, at, st.dtype, step, init)
        sign = b.extract_value(acc, 0)
        sign = b.select(_odd(L, swaps), b.fneg(sign), sign)
        singular = b.icmp_signed("<", swaps, A.ZERO)
        sign = b.select(singular, zero, sign)
        log = b.select(singular, L.const(-math.inf, st), b.extract_value(acc, 1))
        out = ll.Constant(rtype.llvm(), None)
        return b.insert_value(b.insert_value(out, sign, 0), log, 1)


class Cholesky:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if len(types) != 1 or set(kw) - {"upper"} or _matrix("cholesky", types[0], loc) is None:
            return None
        upper = constant((kw_atoms or {}).get("upper"), kw.get("upper"), False)
        if upper is RUNTIME:
            raise refuse("cholesky", "upper= that is not a constant", loc)
        return T.Array(float_dtype(types[0]), 2)

    def lower(self, L, fn, vals, kw, rtype):
        (a, at), = vals
        b = L.b
        n = A.shape_of(L, a, 0)
        L.check(b.icmp_signed("!=", n, A.shape_of(L, a, 1)), np.linalg.LinAlgError, NOT_SQUARE)
        # the kernel factors the upper triangle of its copy: a's own for upper=True (numpy
        # reads that one then), else a's lower one, transposed
        atom = dict(L.call_atoms[1]).get("upper")
        upper = atom is not None and constant(atom, kw["upper"][1])
        u = A.copy(L, a if upper else A.transpose(L, a, at), at, rtype.dtype)
        status = b.call(K.cholesky(L.module, rtype.dtype), [ptr(L, u, rtype.dtype), n])
        L.check(b.icmp_signed("!=", status, A.ZERO), np.linalg.LinAlgError,
                "Matrix is not positive definite")
        if upper:
            return u
        low = A.copy(L, A.transpose(L, u, rtype), rtype)
        _release(L, u, rtype)
        return low


register(Solve(), np.linalg.solve)
register(Inv(), np.linalg.inv)
register(Det(), np.linalg.det, np.linalg.slogdet)
register(Cholesky(), np.linalg.cholesky)
