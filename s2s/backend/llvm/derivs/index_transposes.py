"""``index_set_vjp_value_transpose`` in LLVM IR (forward mode over the adjoint of an
indexed write: ``jvp(grad(f))``, Hessians of code writing ``y[i] = v``).

``index_set_vjp_value_transpose(ct, g, index, v)`` for a basic index (ints, slices and one ``...``):
zeros shaped like ``g`` (``g``'s and ``ct``'s promoted dtype) with ``ct`` written
(broadcast) at ``index`` -- a basic index writes each place once, so every place it
names is the last write there, as the Python helper's ``_last_writes`` would say.
Any other index (arrays, masks) is refused by the call table with the types.  Of a
number ``g`` at ``...`` (``x += v`` of a number, which rebinds): ``ct`` itself, in the
promoted dtype.
"""
from __future__ import annotations

import s2s_runtime as rt

from ..values import arrays as A
from ..values import scalars as S
from ..numerics import reductions as R
from ..typing import types as T
from ..ops.arrays import index_types
from ..ops.calls import register


class IndexSetVjpValueTranspose:
    def type(self, fn, types, kw, loc):
        if kw or len(types) != 4:
            return None
        ct, g, index = types[:3]
        if isinstance(g, T.Scalar) and isinstance(ct, T.Scalar) and \
                isinstance(index, T.Static) and index.value is Ellipsis:
            return T.promote(g, ct)
        parts = index_types(index, views=True)  # ints, slices and one Ellipsis (x[...] = v)
        if not isinstance(g, T.Array) or parts is None or "new" in parts or \
                parts.count("ellipsis") > 1 or not isinstance(ct, (T.Array, T.Scalar)):
            return None
        elem = ct.elem if isinstance(ct, T.Array) else ct
        return T.Array(T.promote(g.elem, elem).dtype, g.ndim)

    def lower(self, L, fn, vals, kw, rtype):
        (ct, ctt), (g, gt), (idx, it) = vals[:3]
        if isinstance(gt, T.Scalar):
            return S.convert(L, ct, ctt, rtype)
        out = R.create(L, rtype, A.shape_list(L, g, gt), (L.const(0, T.INT), T.INT))
        A.setitem(L, out, rtype, idx, it, ct, ctt)
        return out


register(IndexSetVjpValueTranspose(), rt.index_set_vjp_value_transpose)
