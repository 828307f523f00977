"""Native dense linear algebra kernels in LLVM IR (no call back into numpy or LAPACK).

Each kernel is an internal LLVM function defined once per module and element
type (``double`` or ``float``), working in place on C-contiguous row-major
buffers whose rows are ``n`` (or ``m``) elements long:

* ``s2s.lu.<dt>(T* a, T* x, i64 n, i64 m) -> i64``: Gaussian elimination with
  partial pivoting (the row of largest ``|a_ik|``, the first one on a tie, as
  LAPACK's ``getrf``) of the ``n x n`` matrix ``a``, applying the same row swaps
  and eliminations to the ``n x m`` right-hand side ``x`` (``m`` may be 0).
  Afterwards ``a`` holds ``U`` on and above its diagonal (the multipliers of
  ``L`` below), ``x`` holds ``L^-1 P x``.  Returns the number of row swaps, or -1
  when a pivot is exactly zero (a singular matrix: that column is skipped, so
  the diagonal still holds a zero and ``det`` is 0).  NaN entries are no zero
  pivot: they propagate into the results, as with numpy.
* ``s2s.upper.<dt>(T* a, T* x, i64 n, i64 m)``: ``x := U^-1 x`` by back
  substitution with the upper triangle of ``a`` (after ``lu``: ``x = A^-1 b``).
* ``s2s.chol.<dt>(T* u, i64 n) -> i64``: the upper Cholesky factor ``U`` (``A = U^T
  U``, ``U = L^T``) of the symmetric matrix whose upper triangle ``u`` holds, written
  over ``u`` with zeros below the diagonal (right-looking, rows contiguous).  Returns 0, or 1 when a pivot ``a_jj - sum_k l_jk^2`` is zero or
  negative: the matrix is not positive definite (a NaN propagates, as with numpy).

Kernels are ``noinline``: compiled once per module whatever the number of call
sites.  The callers (``ops/linalg.py``) copy the user's (any-strided) arrays into the
buffers, raise ``numpy.linalg.LinAlgError`` from the status, and free the copies.
"""
from __future__ import annotations

from llvmlite import ir as ll

from ..typing import types as T

_ZERO, _ONE = ll.Constant(T.I64, 0), ll.Constant(T.I64, 1)


class _Builder:
    """The little of a ``FunctionLowering`` that ``arrays.loop`` uses (``b``, ``fn``)."""

    def __init__(self, fn):
        self.fn = fn
        self.entry = fn.append_basic_block("entry")
        self.b = ll.IRBuilder(fn.append_basic_block("start"))

    def slot(self, ty, init):
        b = ll.IRBuilder(self.entry)
        s = b.alloca(ty)
        self.b.store(init, s)
        return s

    def finish(self):
        ll.IRBuilder(self.entry).branch(self.fn.basic_blocks[1])


def _loop(K, start, stop, body):
    """``for i in range(start, stop): body(i)`` with a phi counter."""
    b = K.b
    pre = b.block
    head, inner, end = (K.fn.append_basic_block(x) for x in ("k.head", "k.body", "k.end"))
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(T.I64)
    i.add_incoming(start, pre)
    b.cbranch(b.icmp_signed("<", i, stop), inner, end)
    b.position_at_end(inner)
    body(i)
    i.add_incoming(b.add(i, _ONE), b.block)
    b.branch(head)
    b.position_at_end(end)


def _at(K, base, row, col, width):
    """Pointer to element ``[row, col]`` of a row-major buffer with rows of ``width``."""
    return K.b.gep(base, [K.b.add(K.b.mul(row, width), col)])


def _fabs(K, module, x):
    name = "llvm.fabs.f64" if x.type == T.F64 else "llvm.fabs.f32"
    fn = module.globals.get(name) or ll.Function(module, ll.FunctionType(x.type, [x.type]), name)
    return K.b.call(fn, [x])


def _sqrt(K, module, x):
    name = "llvm.sqrt.f64" if x.type == T.F64 else "llvm.sqrt.f32"
    fn = module.globals.get(name) or ll.Function(module, ll.FunctionType(x.type, [x.type]), name)
    return K.b.call(fn, [x])


def _define(module, name, ret, args):
    fn = ll.Function(module, ll.FunctionType(ret, args), name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")  # O(n^3) loops: a call costs nothing, a copy per call site
    return fn                      # would cost compile time


def _fty(dtype):
    return T.F64 if dtype == "f8" else T.F32


def lu(module, dtype):
    """The module's ``s2s.lu.<dtype>`` (defined on first use)."""
    name = f"s2s.lu.{dtype}"
    if name in module.globals:
        return module.globals[name]
    ft = _fty(dtype)
    fn = _define(module, name, T.I64, [ft.as_pointer(), ft.as_pointer(), T.I64, T.I64])
    a, x, n, m = fn.args
    K = _Builder(fn)
    b = K.b
    zero = ll.Constant(ft, 0.0)
    swaps = K.slot(T.I64, _ZERO)
    singular = K.slot(T.I1, ll.Constant(T.I1, 0))
    piv_row = K.slot(T.I64, _ZERO)
    best = K.slot(ft, zero)

    def swap_rows(base, width, r1, r2):
        def one(j):
            p, q = _at(K, base, r1, j, width), _at(K, base, r2, j, width)
            u, v = b.load(p), b.load(q)
            b.store(v, p)
            b.store(u, q)
        _loop(K, _ZERO, width, one)

    def column(k):
        b.store(k, piv_row)
        b.store(_fabs(K, module, b.load(_at(K, a, k, k, n))), best)

        def search(i):
            v = _fabs(K, module, b.load(_at(K, a, i, k, n)))
            with b.if_then(b.fcmp_ordered(">", v, b.load(best))):
                b.store(v, best)
                b.store(i, piv_row)
        _loop(K, b.add(k, _ONE), n, search)
        zero_pivot = b.fcmp_ordered("==", b.load(best), zero)  # a NaN pivot propagates
        with b.if_else(zero_pivot) as (then, other):
            with then:
                b.store(ll.Constant(T.I1, 1), singular)
            with other:
                p = b.load(piv_row)
                with b.if_then(b.icmp_signed("!=", p, k)):
                    swap_rows(a, n, k, p)
                    swap_rows(x, m, k, p)
                    b.store(b.add(b.load(swaps), _ONE), swaps)
                pivot = b.load(_at(K, a, k, k, n))

                def eliminate(i):
                    f = b.fdiv(b.load(_at(K, a, i, k, n)), pivot)
                    b.store(f, _at(K, a, i, k, n))

                    def update(base, width, start):
                        def one(j):
                            q = _at(K, base, i, j, width)
                            b.store(b.fsub(b.load(q), b.fmul(f, b.load(_at(K, base, k, j, width)))), q)
                        _loop(K, start, width, one)
                    update(a, n, b.add(k, _ONE))
                    update(x, m, _ZERO)
                _loop(K, b.add(k, _ONE), n, eliminate)

    _loop(K, _ZERO, n, column)
    b.ret(b.select(b.load(singular), ll.Constant(T.I64, -1), b.load(swaps)))
    K.finish()
    return fn


def upper(module, dtype):
    """The module's ``s2s.upper.<dtype>``: back substitution ``x := U^-1 x``, row by row
    from the last (``x_i -= u_ik x_k`` for ``k > i``, then ``/ u_ii``): every inner loop
    runs along a row of ``x`` (contiguous)."""
    name = f"s2s.upper.{dtype}"
    if name in module.globals:
        return module.globals[name]
    ft = _fty(dtype)
    fn = _define(module, name, ll.VoidType(), [ft.as_pointer(), ft.as_pointer(), T.I64, T.I64])
    a, x, n, m = fn.args
    K = _Builder(fn)
    b = K.b

    def row(r):
        i = b.sub(b.sub(n, _ONE), r)  # n-1 down to 0

        def term(k):
            f = b.load(_at(K, a, i, k, n))

            def one(j):
                p = _at(K, x, i, j, m)
                b.store(b.fsub(b.load(p), b.fmul(f, b.load(_at(K, x, k, j, m)))), p)
            _loop(K, _ZERO, m, one)
        _loop(K, b.add(i, _ONE), n, term)
        d = b.load(_at(K, a, i, i, n))

        def scale(j):
            p = _at(K, x, i, j, m)
            b.store(b.fdiv(b.load(p), d), p)
        _loop(K, _ZERO, m, scale)

    _loop(K, _ZERO, n, row)
    b.ret_void()
    K.finish()
    return fn


def cholesky(module, dtype):
    """The module's ``s2s.chol.<dtype>``: ``u := U`` (upper, ``A = U^T U``), 1 if not
    positive definite.  Right-looking: row ``j`` is scaled, then the trailing upper
    triangle loses its outer product -- every inner loop runs along a row (contiguous)."""
    name = f"s2s.chol.{dtype}"
    if name in module.globals:
        return module.globals[name]
    ft = _fty(dtype)
    fn = _define(module, name, T.I64, [ft.as_pointer(), T.I64])
    u, n = fn.args
    K = _Builder(fn)
    b = K.b
    zero = ll.Constant(ft, 0.0)
    fail = fn.append_basic_block("not_pd")

    def step(j):
        s = b.load(_at(K, u, j, j, n))
        ok = fn.append_basic_block("pd")
        b.cbranch(b.fcmp_unordered(">", s, zero), ok, fail)  # NaN propagates (numpy too)
        b.position_at_end(ok)
        d = _sqrt(K, module, s)
        b.store(d, _at(K, u, j, j, n))
        after = b.add(j, _ONE)

        def scale(k):
            p = _at(K, u, j, k, n)
            b.store(b.fdiv(b.load(p), d), p)
        _loop(K, after, n, scale)

        def update(i):
            f = b.load(_at(K, u, j, i, n))

            def one(k):
                p = _at(K, u, i, k, n)
                b.store(b.fsub(b.load(p), b.fmul(f, b.load(_at(K, u, j, k, n)))), p)
            _loop(K, i, n, one)
            b.store(zero, _at(K, u, i, j, n))  # below the diagonal
        _loop(K, after, n, update)

    _loop(K, _ZERO, n, step)
    b.ret(_ZERO)
    b.position_at_end(fail)
    b.ret(_ONE)
    K.finish()
    return fn
