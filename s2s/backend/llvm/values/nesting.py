"""Regular nestings of tuples and list displays of arrays (``np.array((x, y))``,
``np.array([[a, b], [c, d]])`` of arrays), as one array: their structure (``regular_nesting``),
their leaves (``leaf_values``) and the copy of each leaf into its place
(``fill_nested``).  ``np.array`` of them in compiled code (``ops/arrays.py``) and
``jit(vmap)``'s batched form, whose leaves carry the batch on axis 0
(``batching/axes.py``), both read them here."""
from __future__ import annotations

from . import arrays as A
from ..typing import types as T


def regular_nesting(t, nones=False):
    """``(dims, leaf types)`` of a tuple nesting that is regular (every level of one
    length, ``dims``) with arrays of one rank >= 1 as its leaves (row-major; with
    ``nones``, None leaves too: zero tangents); None otherwise."""
    if isinstance(t, T.Array):
        return ([], [t]) if t.ndim >= 1 else None
    if nones and isinstance(t, T.NoneType):
        return [], [t]
    if not T.plain_tuple(t) or not t.items:
        return None
    parts = [regular_nesting(i, nones) for i in t.items]
    if None in parts or any(p[0] != parts[0][0] for p in parts):
        return None
    leaves = [leaf for p in parts for leaf in p[1]]
    arrays = [leaf for leaf in leaves if isinstance(leaf, T.Array)]
    if not arrays or any(a.ndim != arrays[0].ndim for a in arrays):
        return None
    return [len(t.items)] + parts[0][0], leaves


def leaf_values(L, value, t):
    """The ``(value, type)`` leaves of a nesting ``value`` of type ``t``, row-major."""
    if not isinstance(t, T.Tuple):
        return [(value, t)]
    return [leaf for k, it in enumerate(t.items)
            for leaf in leaf_values(L, L.b.extract_value(value, k), it)]


def fill_nested(L, out, rtype, items, dims, lead=1, message=None):
    """``out[<lead axes>, j_1, ..., j_d] = item`` for the row-major ``items`` of a nesting
    of ``dims`` (``lead``: the axes of ``out`` before the nesting's, 1 for a batch, 0 for
    plain ``np.array``), their shapes checked against the first array's (``ValueError
    (message)``; a None item is left as it is); the real part where ``out`` is real.
    Returns the first array's shape."""
    b = L.b
    arrays = [(v, t) for v, t in items if isinstance(t, T.Array)]
    shape = A.shape_list(L, *arrays[0])
    for v, t in arrays[1:]:
        L.check(A.differs(L, A.shape_list(L, v, t), shape), ValueError,
                message or "vmap: np.array of items of different shapes")
    strides = A.strides_list(L, out, rtype)
    row_t = T.Array(rtype.dtype, rtype.ndim - len(dims))
    for flat, (v, t) in enumerate(items):
        if not isinstance(t, T.Array):
            continue
        offset, rest = A.ZERO, flat
        for k in reversed(range(len(dims))):  # row-major position of item ``flat``
            offset = b.add(offset, b.mul(A.i64(rest % dims[k]), strides[lead + k]))
            rest //= dims[k]
        data = b.gep(b.extract_value(out, 0), [offset])
        row = A.make(L, row_t, data, b.extract_value(out, 1), shape,
                     strides[:lead] + strides[lead + len(dims):])

        def real(vs):
            (x, xt), = vs
            if xt.dtype == "c16" and rtype.dtype != "c16":
                return b.extract_value(x, 0), T.F64T
            return x, xt
        A.elementwise(L, real, [(v, t)], rtype.dtype, out=(row, row_t))
    return shape
