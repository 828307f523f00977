"""Run-time helpers of forward mode over generated code (JVPs of gradients, Hessians).

* ``owned(x)``: ``x`` itself, or a fresh copy of an array (a tangent about to be
  updated in place must not share memory with another);
* ``dot_vjp_jvp(t, out, g, a, b, which, wrt)``: the tangent of ``dot_vjp(g, a, b,
  which)`` from factor ``wrt``'s tangent ``t``; ``dot_vjp`` is linear in the factor it
  does not differentiate and ignores the other, so it is ``dot_vjp(g, a <- t, which)``
  for ``wrt == 0 != which`` (``b <- t`` for ``wrt == 1``) and zeros like ``out`` for
  ``wrt == which`` (``s2s_runtime.second_order``);
* ``np.real(x)``, ``np.imag(x)`` on numbers and arrays (the JVP of ``abs`` reads
  ``np.real(np.conj(x) * t)``): a real ``x`` is its own real part and has a zero
  imaginary part; a complex128 one gives float64 parts.
"""
from __future__ import annotations

import s2s_runtime as rt
import numpy as np
from s2s_runtime.second_order import dot_vjp_jvp

from ...ir import nodes as ir
from . import arrays as A
from . import types as T
from .calls import TABLE, register


class Owned:
    def type(self, fn, types, kw, loc):
        return types[0] if isinstance(types[0], (T.Scalar, T.Array, T.NoneType)) else None

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        return A.copy(L, v, t) if isinstance(t, T.Array) else v


def _flags(atoms):
    """``(which, wrt)`` from the constant atoms after ``t, out, g, a, b``."""
    consts = [getattr(a, "value", None) for a in atoms[5:7]]
    consts += [0] * (2 - len(consts))
    return tuple(c if type(c) is int else None for c in consts)


class DotVjpJvp:
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if len(types) < 5 or kw:
            return None
        which, wrt = _flags(atoms)
        if which is None or wrt is None:
            return None
        if which == wrt:
            return TABLE[rt.zeros_like].type(rt.zeros_like, [types[1]], {}, loc)
        t, _, g, a, b = types[:5]
        factors = (t, b) if wrt == 0 else (a, t)
        return TABLE[rt.dot_vjp].type(rt.dot_vjp, [g, *factors, T.INT], {}, loc,
                                      [atoms[2], None, None, ir.Const(which)], {})

    def lower(self, L, fn, vals, kw, rtype):
        which, wrt = _flags(L.call_atoms[0])
        if which == wrt:
            return TABLE[rt.zeros_like].lower(L, rt.zeros_like, [vals[1]], {}, rtype)
        t, _, g, a, b = vals[:5]
        factors = (t, b) if wrt == 0 else (a, t)
        return TABLE[rt.dot_vjp].lower(L, rt.dot_vjp, [g, *factors, (L.const(which, T.INT),
                                                                     T.INT)], {}, rtype)


class RealImag:
    def type(self, fn, types, kw, loc):
        t = types[0] if len(types) == 1 and not kw else None
        if not isinstance(t, (T.Scalar, T.Array)):
            return None
        if t.dtype == "c16":
            return T.Array("f8", t.ndim) if isinstance(t, T.Array) else T.Scalar("f8")
        return t

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        if t.dtype != "c16":
            if fn is np.real:
                return v
            if isinstance(t, T.Array):
                return TABLE[rt.zeros_like].lower(L, rt.zeros_like, [(v, t)], {}, rtype)
            return L.const(0, rtype)
        part = 0 if fn is np.real else 1
        if isinstance(t, T.Scalar):
            return L.b.extract_value(v, part)
        return A.elementwise(L, lambda xs: (L.b.extract_value(xs[0][0], part), T.Scalar("f8")),
                             [(v, t)], "f8")


register(Owned(), rt.owned)
register(RealImag(), np.real, np.imag)
register(DotVjpJvp(), dot_vjp_jvp)
