"""Array builders and reshapes: ``np.arange``, ``np.linspace``, ``np.full``, ``np.eye``,
``np.outer``, ``np.cross`` (``Cross``), ``np.diag``, ``np.reshape``/``np.ravel`` (``a.reshape``, ``a.ravel()``): handlers of
``calls.TABLE``, numpy's semantics (a reshape is a view of a C-contiguous array and a
copy otherwise; a size mismatch raises ``ValueError``)."""
from __future__ import annotations

import numpy as np
from llvmlite import ir as ll

import s2s_runtime as rt

from ..values import arrays as A
from ..numerics import reductions as R
from ..values import scalars as S
from ..typing import types as T
from .calls import elem_type, register
from .linalg import constant

_INTS = ("i8", "b1")


def _number(t):
    return isinstance(t, T.Scalar) and t.dtype != "c16"


class Arange:
    def type(self, fn, types, kw, loc):
        if set(kw) - {"dtype"} or not 1 <= len(types) <= 3 or not all(map(_number, types)):
            return None
        if "dtype" in kw:
            return None
        ints = all(t.dtype in _INTS for t in types)
        return T.Array("i8" if ints else "f8", 1)

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        et = rtype.elem
        parts = [S.convert(L, v, t, et) for v, t in vals]
        if len(parts) == 1:
            parts = [L.const(0, et)] + parts
        if len(parts) == 2:
            parts.append(L.const(1, et))
        start, stop, step = parts
        if et.dtype == "i8":
            L.check(b.icmp_signed("==", step, A.ZERO), ZeroDivisionError, "arange: step is 0")
            span = b.sub(stop, start)
            n = b.sdiv(b.add(span, b.sub(step, b.select(b.icmp_signed(">", step, A.ZERO),
                                                         A.ONE, b.neg(A.ONE)))), step)
        else:
            L.check(b.fcmp_ordered("==", step, ll.Constant(T.F64, 0.0)), ZeroDivisionError,
                    "arange: step is 0")
            count = S.math1(L, "ceil", b.fdiv(b.fsub(stop, start), step), et)
            L.check(b.fcmp_unordered("!=", count, count), ValueError,
                    "arange: cannot compute length")
            L.check(b.fcmp_ordered(">=", count, ll.Constant(count.type, 2.0 ** 63)), ValueError,
                    "Maximum allowed size exceeded")
            n = b.fptosi(b.select(b.fcmp_ordered("<", count, ll.Constant(count.type, 0.0)),
                                  ll.Constant(count.type, 0.0), count), T.I64)
        n = b.select(b.icmp_signed("<", n, A.ZERO), A.ZERO, n)
        out = A.allocate(L, rtype, [n])
        data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)

        def body(i):
            k = S.convert(L, i, T.INT, et)
            A.store(L, S.binary(L, "add", start, S.binary(L, "mul", k, step, et), et),
                    A.element_ptr(L, data, strides, [i], et), et)

        A.loop(L, n, body)
        return out


class Linspace:
    """``np.linspace(start, stop, num=50, endpoint=True)`` of numbers: ``start + i * step``
    with ``step = (stop - start) / (num - 1)`` and the last sample ``stop`` exactly
    (``endpoint=False``: ``step = (stop - start) / num``, ``stop`` left out), numpy's
    formula; a constant ``endpoint`` only."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if set(kw) - {"endpoint"} or len(types) not in (2, 3) or not all(map(_number, types)):
            return None
        if len(types) == 3 and types[2].dtype not in _INTS:
            return None
        if type(self.endpoint(kw, kw_atoms or {})) is not bool:
            return None
        return T.Array("f8", 1)

    @staticmethod
    def endpoint(kw, kw_atoms):
        return constant(kw_atoms.get("endpoint"), kw.get("endpoint"), True)

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        et = T.F64T
        endpoint = self.endpoint(kw, L.call_atoms[1])
        start, stop = (S.convert(L, v, t, et) for v, t in vals[:2])
        n = S.convert(L, vals[2][0], vals[2][1], T.INT) if len(vals) == 3 else A.i64(50)
        L.check(b.icmp_signed("<", n, A.ZERO), ValueError,
                "Number of samples, {0}, must be non-negative.", (n,))
        out = A.allocate(L, rtype, [n])
        data, strides = b.extract_value(out, 0), A.strides_list(L, out, rtype)
        if endpoint:
            div = b.select(b.icmp_signed(">", n, A.ONE), b.sub(n, A.ONE), A.ONE)
        else:
            div = b.select(b.icmp_signed(">", n, A.ZERO), n, A.ONE)
        step = b.fdiv(b.fsub(stop, start), b.sitofp(div, T.F64))

        def body(i):
            v = b.fadd(start, b.fmul(b.sitofp(i, T.F64), step))
            if endpoint:
                last = b.and_(b.icmp_signed("==", i, b.sub(n, A.ONE)),
                              b.icmp_signed(">", n, A.ONE))
                v = b.select(last, stop, v)
            A.store(L, v, A.element_ptr(L, data, strides, [i], et), et)

        A.loop(L, n, body)
        return out


class Full:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not _number(types[1]):
            return None
        dims = [types[0]] if isinstance(types[0], T.Scalar) else list(getattr(types[0], "items", [None]))
        if not all(isinstance(d, T.Scalar) and d.dtype in _INTS for d in dims):
            return None
        code = types[1].dtype if not types[1].weak else {"b1": "b1", "i8": "i8"}.get(
            types[1].dtype, "f8")
        return T.Array(code, len(dims))

    def lower(self, L, fn, vals, kw, rtype):
        (shape, st), (v, vt) = vals
        return R.create(L, rtype, R.shape_values(L, shape, st), (v, vt))


class Eye:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 1 or not (isinstance(types[0], T.Scalar) and types[0].dtype in _INTS):
            return None
        return T.Array("f8", 2)

    def lower(self, L, fn, vals, kw, rtype):
        n = S.convert(L, vals[0][0], vals[0][1], T.INT)
        out = R.create(L, rtype, [n, n], (L.const(0, T.INT), T.INT))
        data, strides = L.b.extract_value(out, 0), A.strides_list(L, out, rtype)
        A.loop(L, n, lambda i: A.store(L, L.const(1.0, rtype.elem),
                                       A.element_ptr(L, data, strides, [i, i], rtype.elem),
                                       rtype.elem))
        return out


class Outer:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 2 or not all(isinstance(t, T.Array) and t.ndim == 1 for t in types):
            return None
        st = T.promote(elem_type(types[0]), elem_type(types[1]))
        return T.Array(st.dtype, 2)

    def lower(self, L, fn, vals, kw, rtype):
        from ..derivs.products import outer_or_scale
        (u, ut), (v, vt) = vals
        return outer_or_scale(L, u, ut, v, vt, rtype, 2)


class Cross:
    """``np.cross(a, b)`` over the last axis, broadcast over the leading ones as numpy does:
    ``c = (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0)`` for 3-vectors, a 2-vector taken
    with a zero third component where the other is a 3-vector (the terms of that zero
    left out, numpy's arithmetic: ``(a1 b2, -(a0 b2), a0 b1 - a1 b0)``), in the promoted
    dtype.  Vectors of a length other than 2 or 3 raise numpy's ``ValueError``; leading
    shapes that do not broadcast a ``ValueError``.  Two 2-vectors (a scalar z component
    in numpy, deprecated since NumPy 2.0) change the result's rank, which jit fixes at
    compile time from the ranks alone: a clear error at run time.  The axes arguments
    (the derivative rules pass them positionally) must be the defaults."""

    wants_atoms = True
    _DEFAULTS = (-1, -1, -1, None)

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if len(types) < 2 or not all(isinstance(t, T.Array) for t in types[:2]):
            return None
        given = list(atoms[2:]) + list((kw_atoms or {}).values())
        names = list(("axisa", "axisb", "axisc", "axis")[:len(atoms) - 2]) + list(kw_atoms or {})
        if len(atoms) > 6 or set(names) - {"axisa", "axisb", "axisc", "axis"}:
            return None
        for name, atom in zip(names, given):
            want = None if name == "axis" else -1
            if getattr(atom, "value", "?") not in (want, -1):
                from ....errors import UnsupportedSyntaxError
                raise UnsupportedSyntaxError(
                    f"jit: np.cross with {name}={getattr(atom, 'value', atom)!r} (jit compiles "
                    "the cross product over the last axes)", loc)
        st = T.promote(elem_type(types[0]), elem_type(types[1]))
        if st.dtype == "b1":
            return None  # numpy: TypeError (boolean subtract)
        return T.Array(st.dtype, max(types[0].ndim, types[1].ndim))

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        (a, at), (c, ct) = vals[:2]
        et = rtype.elem
        na, nc = A.shape_of(L, a, at.ndim - 1), A.shape_of(L, c, ct.ndim - 1)
        for n in (na, nc):
            bad = b.and_(b.icmp_signed("!=", n, A.i64(2)), b.icmp_signed("!=", n, A.i64(3)))
            L.check(bad, ValueError,
                    "incompatible dimensions for cross product\n(dimension must be 2 or 3)")
        from ....errors import UnsupportedSyntaxError
        a3, c3 = b.icmp_signed("==", na, A.i64(3)), b.icmp_signed("==", nc, A.i64(3))
        L.check(b.not_(b.or_(a3, c3)), UnsupportedSyntaxError,
                "jit: np.cross of two 2-vectors (numpy returns their z component, a result of "
                "one rank fewer, deprecated since NumPy 2.0): pass 3-vectors with a zero z")
        lead = A.broadcast_shape(L, [A.shape_list(L, a, at)[:-1], A.shape_list(L, c, ct)[:-1]],
                                 rtype.ndim - 1)
        out = A.allocate(L, rtype, lead + [A.i64(3)])
        od, ost = b.extract_value(out, 0), A.strides_list(L, out, rtype)

        def reader(v, vt, has3):
            data, strides = b.extract_value(v, 0), A.strides_list(L, v, vt)
            shape = A.shape_list(L, v, vt)
            strides = [b.select(b.icmp_signed("==", n, A.ONE), A.ZERO, s)
                       for n, s in zip(shape[:-1], strides[:-1])] + [strides[-1]]

            def component(idx, k):
                k = A.i64(k) if k < 2 else b.select(has3, A.i64(2), A.ZERO)
                at_ = idx[len(idx) - (vt.ndim - 1):] if vt.ndim > 1 else []
                x = A.load(L, A.element_ptr(L, data, strides, at_ + [k], vt.elem), vt.elem)
                return S.convert(L, x, vt.elem, et)
            return component

        ra, rc = reader(a, at, a3), reader(c, ct, c3)

        def body(idx):
            x = [ra(idx, k) for k in range(3)]
            y = [rc(idx, k) for k in range(3)]

            def mul(p, q):
                return S.binary(L, "mul", p, q, et)

            def sub(p, q):
                return S.binary(L, "sub", p, q, et)

            full = [sub(mul(x[1], y[2]), mul(x[2], y[1])), sub(mul(x[2], y[0]), mul(x[0], y[2])),
                    sub(mul(x[0], y[1]), mul(x[1], y[0]))]
            a_short = [mul(x[1], y[2]), S.negate(L, mul(x[0], y[2]), et), full[2]]
            c_short = [S.negate(L, mul(x[2], y[1]), et), mul(x[2], y[0]), full[2]]
            for k in range(3):
                v = b.select(a3, b.select(c3, full[k], c_short[k]), a_short[k])
                A.store(L, v, A.element_ptr(L, od, ost, idx + [A.i64(k)], et), et)

        A.loop_nest(L, lead, body)
        return out


class Diag:
    """``np.diag(v, k=0)``: for 1-D ``v`` a fresh square matrix of side ``len(v) + |k|``,
    zeros with ``v`` on diagonal ``k``; for 2-D ``v`` its diagonal ``k`` (a view, as
    numpy's, of length ``max(0, min(rows, cols - k))`` for ``k >= 0``).
    ``rt.diag_vjp(g, v, k)``, its cotangent: ``diag(g, k)`` copied for 1-D ``v``, zeros
    shaped like ``v`` with ``g`` on diagonal ``k`` for 2-D ``v``."""

    def type(self, fn, types, kw, loc):
        n = 2 if fn is rt.diag_vjp else 1
        if kw or not n <= len(types) <= n + 1 or not isinstance(types[n - 1], T.Array):
            return None
        if len(types) == n + 1 and not (isinstance(types[n], T.Scalar)
                                        and types[n].dtype in _INTS):
            return None
        v = types[n - 1]
        if v.ndim not in (1, 2):
            return None
        if fn is rt.diag_vjp:
            return T.Array(types[0].dtype, v.ndim) if isinstance(types[0], T.Array) else None
        return T.Array(v.dtype, 3 - v.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        n = 2 if fn is rt.diag_vjp else 1
        k = S.convert(L, *vals[n], T.INT) if len(vals) > n else A.ZERO
        src, st = vals[0]
        pos = b.icmp_signed(">=", k, A.ZERO)
        row0, col0 = b.select(pos, A.ZERO, b.neg(k)), b.select(pos, k, A.ZERO)
        if fn is rt.diag_vjp and vals[1][1].ndim == 2:  # zeros like v, g on diagonal k
            v, vt = vals[1]
            out = R.create(L, rtype, A.shape_list(L, v, vt), (L.const(0, T.INT), T.INT))
            self._diagonal_loop(L, out, rtype, row0, col0, lambda i, p: A.store(
                L, S.convert(L, A.element(L, src, st, [i]), st.elem, rtype.elem), p,
                rtype.elem))
            return out
        if st.ndim == 1:  # build: zeros with src on diagonal k
            side = b.add(A.shape_of(L, src, 0), b.select(pos, k, b.neg(k)))
            out = R.create(L, rtype, [side, side], (L.const(0, T.INT), T.INT))
            self._diagonal_loop(L, out, rtype, row0, col0, lambda i, p: A.store(
                L, A.element(L, src, st, [i]), p, rtype.elem))
            return out
        rows, cols = A.shape_of(L, src, 0), A.shape_of(L, src, 1)
        s0, s1 = A.stride_of(L, src, 0), A.stride_of(L, src, 1)
        length = b.select(pos, b.sub(cols, k), b.add(rows, k))
        length = b.select(b.icmp_signed("<", length, rows), length, rows)
        length = b.select(b.icmp_signed("<", length, cols), length, cols)
        length = b.select(b.icmp_signed("<", length, A.ZERO), A.ZERO, length)
        offset = b.select(b.icmp_signed(">", length, A.ZERO),
                          b.add(b.mul(row0, s0), b.mul(col0, s1)), A.ZERO)
        view_t = T.Array(st.dtype, 1)
        view = A.make(L, view_t, b.gep(b.extract_value(src, 0), [offset]),
                      b.extract_value(src, 1), [length], [b.add(s0, s1)])
        return A.copy(L, view, view_t, rtype.dtype) if fn is rt.diag_vjp else view

    @staticmethod
    def _diagonal_loop(L, out, t, row0, col0, store):
        """``store(i, pointer)`` for each place ``(row0 + i, col0 + i)`` inside ``out``."""
        b = L.b
        data, strides = b.extract_value(out, 0), A.strides_list(L, out, t)
        n = b.sub(A.shape_of(L, out, 0), row0)
        m = b.sub(A.shape_of(L, out, 1), col0)
        n = b.select(b.icmp_signed("<", m, n), m, n)
        A.loop(L, n, lambda i: store(i, A.element_ptr(
            L, data, strides, [b.add(row0, i), b.add(col0, i)], t.elem)))


class Reshape:
    """``np.reshape(a, shape)`` (one dimension may be -1) and ``np.ravel(a)``, in C order
    (``order='C'``, numpy's default, given or not); of a number, of its one-element
    array."""

    @staticmethod
    def _c_order(types, kw, at):
        """``(types, ok)``: ``types`` without a constant ``order='C'`` (at position ``at``)."""
        order = kw.get("order", types[at] if len(types) > at else None)
        if set(kw) - {"order"} or (order is not None and
                                   getattr(order, "value", None) != "C"):
            return types, False
        return types[:at], True

    def type(self, fn, types, kw, loc):
        if not types or not isinstance(types[0], (T.Array, T.Scalar)):
            return None
        if isinstance(types[0], T.Scalar):  # a number: numpy's 0-d array of one element
            types = [T.Array(types[0].dtype, 1)] + list(types[1:])
        types, ok = self._c_order(types, kw, 1 if fn is np.ravel else 2)
        if not ok:
            return None
        if fn is np.ravel:
            return T.Array(types[0].dtype, 1) if len(types) == 1 else None
        if len(types) != 2:
            return None
        shape = types[1]
        dims = [shape] if isinstance(shape, T.Scalar) else list(getattr(shape, "items", [None]))
        if not all(isinstance(d, T.Scalar) and d.dtype in _INTS for d in dims):
            return None
        return T.Array(types[0].dtype, len(dims))

    def lower(self, L, fn, vals, kw, rtype):
        b = L.b
        a, at = vals[0]
        if isinstance(at, T.Scalar):
            at = T.Array(at.dtype, 1)
            a = R.create(L, at, [A.ONE], vals[0])
        dims = [A.size(L, a, at)] if fn is np.ravel else R.shape_values(L, *vals[1])
        size = A.size(L, a, at)
        known, unknown = A.ONE, None
        for d in dims:
            is_free = b.icmp_signed("==", d, b.neg(A.ONE))
            known = b.mul(known, b.select(is_free, A.ONE, d))
        fixed = []
        for d in dims:
            is_free = b.icmp_signed("==", d, b.neg(A.ONE))
            nonzero = b.icmp_signed("==", known, A.ZERO)
            # divide by a nonzero (LLVM's select runs both arms: size / 0 would trap)
            guess = b.select(nonzero, A.ZERO, b.sdiv(size, b.select(nonzero, A.ONE, known)))
            fixed.append(b.select(is_free, guess, d))
        total = A.ONE
        for d in fixed:
            total = b.mul(total, d)
        L.check(b.icmp_signed("!=", total, size), ValueError,
                "cannot reshape array of size {0} into a shape of size {1}", (size, total))
        _ = unknown
        # C-contiguous: a view; otherwise a contiguous copy first
        strides, _n = A.contiguous_strides(L, A.shape_list(L, a, at), at.elem)
        contiguous = A.differs(L, strides, A.strides_list(L, a, at))
        slot = L.entry_alloca(at.llvm())
        b.store(a, slot)
        with b.if_then(contiguous):
            b.store(A.copy(L, a, at), slot)
        src = b.load(slot)
        new_strides, _n = A.contiguous_strides(L, fixed, at.elem)
        return A.make(L, rtype, b.extract_value(src, 0), b.extract_value(src, 1), fixed,
                      new_strides)


register(Arange(), np.arange)
register(Linspace(), np.linspace)
register(Full(), np.full)
register(Eye(), np.eye)
register(Outer(), np.outer)
register(Cross(), np.cross)
register(Diag(), np.diag, rt.diag_vjp)
register(Reshape(), np.reshape, np.ravel)


class ShapeVjps:
    """``reshape_vjp(g, a)``: ``g`` reshaped to ``a``'s shape; ``transpose_vjp(g, a,
    axes)``: ``g`` transposed by the inverse of the permutation ``axes`` (reversed for
    None; constant axes, which ``np.transpose`` checked); ``clip_inside(a, lo, hi)``: 1.0
    inside the bounds."""

    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        import s2s_runtime as rt
        if fn is rt.transpose_vjp and len(types) == 3 and self.inverse(types, atoms):
            return T.Array(types[0].dtype, types[1].ndim)
        if fn is rt.clip_inside:
            if kw or len(types) != 3 or not isinstance(types[0], (T.Array, T.Scalar)):
                return None
            if not all(isinstance(t, T.NoneType) or _number(t) for t in types[1:]):
                return None
            return T.Array("f8", types[0].ndim) if isinstance(types[0], T.Array) else T.FLOAT
        if kw or len(types) not in (2, 3) or not isinstance(types[0], T.Array) \
                or not isinstance(types[1], T.Array):
            return None
        if len(types) == 3:  # order="C" (reshape_vjp) / axes=None (transpose_vjp)
            extra = types[2]
            ok = isinstance(extra, T.NoneType) or (
                fn is rt.reshape_vjp and isinstance(extra, T.Static)
                and extra.value in ("C", "A", "K"))
            if not ok:
                return None
        return T.Array(types[0].dtype, types[1].ndim)

    def lower(self, L, fn, vals, kw, rtype):
        import s2s_runtime as rt
        b = L.b
        if fn is rt.clip_inside:
            (a, at) = vals[0]

            def scalar(x, xt):
                inside = ll.Constant(T.I1, 1)
                for (v, vt), op in zip(vals[1:], (">=", "<=")):
                    if isinstance(vt, T.NoneType):
                        continue
                    ct = T.promote(xt, vt)
                    inside = b.and_(inside, S.compare(L, op, S.convert(L, x, xt, ct),
                                                      S.convert(L, v, vt, ct), ct))
                return S.convert(L, inside, T.BOOL, T.F64T)

            if isinstance(at, T.Scalar):
                return scalar(a, at)
            return A.elementwise(L, lambda xs: (scalar(*xs[0]), T.F64T), [(a, at)], "f8")
        (g, gt), (a, at) = vals[:2]
        if fn is rt.transpose_vjp:
            order = self.inverse([t for _, t in vals], L.call_atoms[0])
            if not order:
                return A.transpose(L, g, gt)
            shape, strides = A.shape_list(L, g, gt), A.strides_list(L, g, gt)
            return A.make(L, rtype, b.extract_value(g, 0), b.extract_value(g, 1),
                          [shape[k] for k in order], [strides[k] for k in order])
        shape = A.shape_list(L, a, at)
        dims = ll.Constant(T.Tuple((T.INT,) * at.ndim).llvm(), None)
        for k, d in enumerate(shape):
            dims = b.insert_value(dims, d, k)
        return Reshape().lower(L, np.reshape, [(g, gt), (dims, T.Tuple((T.INT,) * at.ndim))],
                               {}, rtype)


    @staticmethod
    def inverse(types, atoms):
        """The inverse of the constant permutation ``axes`` of ``transpose_vjp(g, a,
        axes)`` (None if it is not one of ``g``'s axes)."""
        if len(atoms) < 3 or not isinstance(types[0], T.Array):
            return None
        axes = constant(atoms[2], types[2])
        nd = types[0].ndim
        if type(axes) not in (tuple, list) or len(axes) != nd or \
                not all(type(k) is int and -nd <= k < nd for k in axes) or \
                len({k % nd for k in axes}) != nd:
            return None
        return [int(k) for k in np.argsort([k % nd for k in axes])]


def _register_shape_vjps():
    import s2s_runtime as rt
    register(ShapeVjps(), rt.reshape_vjp, rt.transpose_vjp, rt.clip_inside)


_register_shape_vjps()
