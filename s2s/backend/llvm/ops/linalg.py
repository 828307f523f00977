"""``numpy.linalg`` in compiled code: handlers of ``calls.TABLE`` over the native kernels.

Contract (numpy's results and errors, for one real matrix -- a 2-D array of
float64, float32, int64 or bool; ints and bools compute in float64, float32
stays float32; complex matrices are refused by name, and so are stacks (3-D+)
except for ``det``/``slogdet``/``solve``/``inv``/``cholesky``, which compute each
matrix of a stack):

* ``solve(a, b)``: ``b`` a vector (1-D) or a matrix of right-hand sides (2-D);
  LU with partial pivoting (``linalg.lu``), then back substitution;
* ``inv(a)``: ``solve(a, I)``; ``det(a)``: the product of ``U``'s diagonal times
  the permutation's sign (0.0 for a singular matrix);
  ``slogdet(a)``: ``(sign, log|det|)`` from the same factors (``(0, -inf)`` when
  singular), a tuple;
* ``cholesky(a, upper=False)``: ``L`` with ``A = L L^T`` from ``a``'s lower
  triangle (``upper=True``: ``U = L^T`` from ``a``'s upper triangle, as numpy;
  ``upper`` a constant or a run-time bool);
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


def _matrix(name, t, loc, stacks=False):
    """``t`` if it is a real matrix (``stacks``: or a stack of them, 3-d and up), None if
    it is not an array; refused naming the construct otherwise."""
    if not isinstance(t, T.Array):
        return None
    if t.ndim != 2 and not (stacks and t.ndim > 2):
        raise refuse(name, f"a {t.ndim}-d array (jit compiles one 2-d matrix, not a stack)"
                     if t.ndim > 2 else "a 1-d array (it needs a square matrix)", loc)
    if t.dtype == "c16":
        raise refuse(name, "a complex matrix (jit compiles real matrices)", loc)
    return t


def flag_value(L, atom, value):
    """An i1 of a flag operand (``upper=``): a constant where the value is known when
    compiling (absent: False), else the run-time truth of ``value`` (``(v, type)``)."""
    known = constant(atom, None if value is None else value[1], False)
    if known is not RUNTIME:
        return ll.Constant(T.I1, int(bool(known)))
    return S.truth(L, *value)


def is_flag(t) -> bool:
    """A type a run-time flag operand may have (a bool or int number)."""
    return isinstance(t, T.Scalar) and t.dtype in ("b1", "i8")


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


def each_matrix(L, a, at: T.Array, body):
    """``body(idx, matrix, matrix type)`` for every matrix of the stack ``a`` (in C
    order of its leading indices), after checking the matrices are square."""
    lead = at.ndim - 2
    n = A.shape_of(L, a, lead)
    L.check(L.b.icmp_signed("!=", n, A.shape_of(L, a, lead + 1)), np.linalg.LinAlgError,
            NOT_SQUARE)
    A.loop_nest(L, A.shape_list(L, a, at)[:lead],
                lambda idx: body(idx, *A.leading_view(L, a, at, idx)))


class Solve:
    """``solve(a, b)``: ``a`` a matrix and ``b`` a vector or matrix of right-hand sides, or
    ``a`` a stack of matrices and ``b`` one vector or matrix for all, or a stack of
    matrices of the same leading shape (or 1 on an axis, broadcast); numpy's rules (a
    stack of ``b`` broadcasting ``a``'s stack is refused at run time)."""
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if kw or len(types) != 2:
            return None
        a, c = types
        if _matrix("solve", a, loc, stacks=True) is None or not isinstance(c, T.Array):
            return None
        wanted = (1, 2) if a.ndim == 2 else (1, 2, a.ndim)
        if c.ndim not in wanted or c.dtype == "c16":
            raise refuse("solve", f"a right-hand side {c} for a {a} (jit compiles a real "
                         "vector or matrix for all, or one matrix per matrix)", loc)
        return T.Array(float_dtype(a, c), a.ndim - 1 if c.ndim == 1 else a.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (a, at), (c, ct) = vals
        if at.ndim == 2:
            x = A.copy(L, c, ct, rtype.dtype)
            return self.one_matrix(L, a, at, x, ct.ndim, rtype.dtype)
        b = L.b
        lead = at.ndim - 2
        shape = A.shape_list(L, a, at)[:lead]
        stacked = ct.ndim == at.ndim
        if stacked:
            for k in range(lead):
                ck = A.shape_of(L, c, k)
                L.check(b.and_(b.icmp_signed("!=", ck, shape[k]), b.icmp_signed("!=", ck, A.ONE)),
                        ValueError,
                        "solve under jit: the right-hand sides' stack has {0} items on axis "
                        "{1}, the matrices' {2} (jit does not broadcast stacks)",
                        (ck, A.i64(k), shape[k]))
        tail = A.shape_list(L, c, ct)[lead:] if stacked else A.shape_list(L, c, ct)
        out = A.allocate(L, rtype, shape + tail)

        def body(idx, m, mt):
            x, xt = A.leading_view(L, out, rtype, idx)
            if stacked:  # (an axis of length 1 read at 0 for every matrix)
                rhs = A.leading_view(L, c, ct, [
                    b.select(b.icmp_signed("==", A.shape_of(L, c, k), A.ONE), A.ZERO, i)
                    for k, i in enumerate(idx)])
            else:
                rhs = (c, ct)
            A.elementwise(L, lambda v: v[0], [rhs], rtype.dtype, out=(x, xt))
            self.one_matrix(L, m, mt, x, len(tail), rtype.dtype)

        each_matrix(L, a, at, body)
        return out

    def one_matrix(self, L, a, at, x, rhs_ndim, dtype):
        """``x := a^-1 x`` for one matrix ``a`` (``x`` its right-hand side(s), contiguous)."""
        b = L.b
        n = A.shape_of(L, a, 0)
        L.check(b.icmp_signed("!=", n, A.shape_of(L, a, 1)), np.linalg.LinAlgError, NOT_SQUARE)
        rows = A.shape_of(L, x, 0)
        L.check(b.icmp_signed("!=", rows, n), ValueError,
                "solve: the right-hand side has {0} rows, the matrix {1}", (rows, n))
        m = A.ONE if rhs_ndim == 1 else A.shape_of(L, x, 1)
        return factor_solve(L, a, at, x, dtype, n, m)


class Inv:
    """``inv(a)`` of a matrix or a stack of them: ``solve(a, I)`` per matrix."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or _matrix("inv", types[0], loc, stacks=True) is None:
            return None
        return T.Array(float_dtype(types[0]), types[0].ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (a, at), = vals
        if at.ndim == 2:
            n = A.shape_of(L, a, 0)
            L.check(L.b.icmp_signed("!=", n, A.shape_of(L, a, 1)), np.linalg.LinAlgError,
                    NOT_SQUARE)
            x = A.allocate(L, rtype, [n, n])
            return self.one_matrix(L, a, at, x, rtype)
        out = A.allocate(L, rtype, A.shape_list(L, a, at))
        xt = T.Array(rtype.dtype, 2)
        each_matrix(L, a, at, lambda idx, m, mt: self.one_matrix(
            L, m, mt, A.leading_view(L, out, rtype, idx)[0], xt))
        return out

    def one_matrix(self, L, a, at, x, xt):
        """``x := a^-1`` (``x`` a contiguous ``n x n`` buffer)."""
        b = L.b
        n = A.shape_of(L, a, 0)
        A.fill(L, x, xt, L.const(0, xt.elem))
        xp = ptr(L, x, xt.dtype)
        A.loop(L, n, lambda i: b.store(L.const(1, xt.elem), b.gep(xp, [b.mul(i, b.add(n, A.ONE))])))
        return factor_solve(L, a, at, x, xt.dtype, n, n)


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


#: the class of numpy's ``slogdet`` result: the namedtuple ``SlogdetResult`` (numpy 2), whose
#: fields ``sign`` and ``logabsdet`` compiled code reads by name too, or a plain tuple
_SLOGDET = type(np.linalg.slogdet(np.eye(1)))


class Det:
    """``det(a)`` and ``slogdet(a)`` of a matrix, or of a stack of them (``a.shape[:-2]``
    results, each of its matrix as numpy computes it); ``slogdet``'s is numpy's
    ``(sign, logabsdet)`` namedtuple."""

    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or _matrix(fn.__name__, types[0], loc, stacks=True) is None:
            return None
        lead = types[0].ndim - 2
        st = T.Scalar(float_dtype(types[0]))
        one = st if lead == 0 else T.Array(st.dtype, lead)
        if fn is np.linalg.det:
            return one
        return T.Tuple((one, one)) if _SLOGDET is tuple else T.NamedTuple((one, one), _SLOGDET)

    def lower(self, L, fn, vals, kw, rtype):
        (a, at), = vals
        if at.ndim == 2:
            return self.one_matrix(L, fn, a, at, rtype)
        return self.stack(L, fn, a, at, rtype)

    def stack(self, L, fn, a, at, rtype):
        """Each matrix of the stack ``a`` in turn, into fresh arrays of its leading shape."""
        b = L.b
        out_ts = [rtype] if fn is np.linalg.det else list(rtype.items)
        outs = [A.allocate(L, t, A.shape_list(L, a, at)[:at.ndim - 2]) for t in out_ts]
        st = out_ts[0].elem
        one_t = st if fn is np.linalg.det else T.tuple_like(rtype, (st, st))

        def body(idx, m, mt):
            value = self.one_matrix(L, fn, m, mt, one_t)
            parts = [value] if fn is np.linalg.det else \
                [b.extract_value(value, k) for k in range(2)]
            for out, t, v in zip(outs, out_ts, parts):
                A.store(L, v, A.element_ptr(L, b.extract_value(out, 0), A.strides_list(L, out, t),
                                            idx, t.elem), t.elem)

        each_matrix(L, a, at, body)
        if fn is np.linalg.det:
            return outs[0]
        pair = ll.Constant(rtype.llvm(), None)
        return b.insert_value(b.insert_value(pair, outs[0], 0), outs[1], 1)

    def one_matrix(self, L, fn, a, at, rtype):
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
        if len(types) != 1 or set(kw) - {"upper"} or \
                _matrix("cholesky", types[0], loc, stacks=True) is None:
            return None
        upper = constant((kw_atoms or {}).get("upper"), kw.get("upper"), False)
        if upper is RUNTIME and not is_flag(kw["upper"]):
            raise refuse("cholesky", f"upper= of type {kw['upper']}", loc)
        return T.Array(float_dtype(types[0]), types[0].ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (a, at), = vals
        upper = flag_value(L, dict(L.call_atoms[1]).get("upper"), kw.get("upper"))
        if at.ndim == 2:
            n = A.shape_of(L, a, 0)
            L.check(L.b.icmp_signed("!=", n, A.shape_of(L, a, 1)), np.linalg.LinAlgError,
                    NOT_SQUARE)
            return self.one_matrix(L, a, at, upper, rtype.dtype, None)
        out = A.allocate(L, rtype, A.shape_list(L, a, at))
        each_matrix(L, a, at, lambda idx, m, mt: self.one_matrix(
            L, m, mt, upper, rtype.dtype, A.leading_view(L, out, rtype, idx)))
        return out

    @staticmethod
    def one_matrix(L, a, at, upper, dtype, out):
        """The factor of the square matrix ``a`` (``upper`` an i1): a fresh matrix, or
        written into the matrix view ``out``."""
        b = L.b
        mt = T.Array(dtype, 2)
        n = A.shape_of(L, a, 0)
        # the kernel factors the upper triangle of its copy: a's own for upper=True (numpy
        # reads that one then), else a's lower one, transposed
        u = A.copy(L, b.select(upper, a, A.transpose(L, a, at)), at, dtype)
        status = b.call(K.cholesky(L.module, dtype), [ptr(L, u, dtype), n])
        L.check(b.icmp_signed("!=", status, A.ZERO), np.linalg.LinAlgError,
                "Matrix is not positive definite")
        factor = b.select(upper, u, A.transpose(L, u, mt))
        if out is None:
            if getattr(upper, "constant", None) == 1:
                return u
            low = A.copy(L, factor, mt)
        else:
            A.elementwise(L, lambda v: v[0], [(factor, mt)], dtype, out=out)
        _release(L, u, mt)
        return None if out is not None else low


register(Solve(), np.linalg.solve)
register(Inv(), np.linalg.inv)
register(Det(), np.linalg.det, np.linalg.slogdet)
register(Cholesky(), np.linalg.cholesky)
