"""Run-time helpers of forward mode over generated code (JVPs of gradients, Hessians).

* ``dot_vjp_jvp(t, out, g, a, b, which, wrt)``: the tangent of ``dot_vjp(g, a, b,
  which)`` from factor ``wrt``'s tangent ``t``; ``dot_vjp`` is linear in the factor it
  does not differentiate and ignores the other, so it is ``dot_vjp(g, a <- t, which)``
  for ``wrt == 0 != which`` (``b <- t`` for ``wrt == 1``) and zeros like ``out`` for
  ``wrt == which`` (``s2s_runtime.second_order``);

(``rt.owned`` is lowered in ``derivs_more.py``, ``np.real``/``np.imag`` in
``derivs/linalg.py``.)
"""
from __future__ import annotations

import s2s_runtime as rt
from s2s_runtime.second_order import dot_vjp_jvp

from ....ir import nodes as ir
from ..typing import types as T
from ..ops.calls import TABLE, register


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


register(DotVjpJvp(), dot_vjp_jvp)
