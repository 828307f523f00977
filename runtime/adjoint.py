"""Run-time helpers for adjoint (reverse-mode) code.

Cotangents of containers may hold ``None`` for a symbolically-zero entry;
``add`` treats ``None`` as zero and ``densify`` replaces it by real zeros.
"""
from __future__ import annotations

import numbers

import numpy as np

from .records import field_names, is_record, record_map, with_field
from .tree import _registry, tree_flatten, tree_unflatten


def _is_container(x) -> bool:
    return isinstance(x, (tuple, list, dict))


def add(a, b):
    """``a + b`` for cotangents: numbers, arrays, or containers of them (None is zero)."""
    if type(a) in _PLAIN_ADDENDS and type(b) in _PLAIN_ADDENDS:
        return a + b  # the common cases (arrays, numbers), before the container checks
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = add(out.get(k), v)
        return out
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        items = [add(x, y) for x, y in zip(a, b)]
        if hasattr(a, "_fields"):
            return type(a)(*items)
        return type(a)(items)
    if is_record(a) and type(b) is type(a):  # dataclass cotangents: field by field
        return record_map(add, a, b)
    if type(b) is type(a) and _is_registered_node(a):  # register_pytree_node classes
        la, ta = tree_flatten(a, is_leaf=lambda x: x is not a)
        lb, _ = tree_flatten(b, is_leaf=lambda x: x is not b)
        return tree_unflatten(ta, [add(x, y) for x, y in zip(la, lb)])
    return a + b


#: types whose cotangents add with ``+`` (none of the container cases below applies)
_PLAIN_ADDENDS = frozenset({np.ndarray, float, int, complex, np.float64, np.float32,
                            np.complex128, np.complex64})


def _is_registered_node(x) -> bool:
    return type(x) in _registry


def zeros_like(x):
    """A zero cotangent shaped like the primal ``x`` (containers recurse)."""
    if type(x) is np.ndarray and x.dtype == np.float64:
        return np.zeros(x.shape)  # the common case, without the dtype checks
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=_inexact(x.dtype))
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (int, np.integer)):
        return 0
    if isinstance(x, np.generic):
        return x.dtype.type(0)
    if isinstance(x, complex):
        return 0j
    if isinstance(x, numbers.Number):
        return 0.0
    if x is None:
        return None
    if type(x) is dict:  # the common container, without the pytree machinery
        return {k: zeros_like(x[k]) for k in _sorted_keys(x)}
    if type(x) in (tuple, list):
        return type(x)(zeros_like(v) for v in x)
    if isinstance(x, (tuple, list, dict)):
        leaves, tree = tree_flatten(x)
        return tree_unflatten(tree, [zeros_like(v) for v in leaves])
    leaves, tree = tree_flatten(x)
    if len(leaves) == 1 and leaves[0] is x:
        return None  # a non-numeric leaf (string, object) has no cotangent
    return tree_unflatten(tree, [zeros_like(v) for v in leaves])


def _sorted_keys(d):
    """Dict keys in pytree order (sorted, like JAX), insertion order if unsortable."""
    try:
        return sorted(d)
    except TypeError:
        return list(d)


def _is_integral(x) -> bool:
    if isinstance(x, (bool, int, np.integer, np.bool_)):
        return True
    return isinstance(x, np.ndarray) and not np.issubdtype(x.dtype, np.inexact)


def _inexact(dtype):
    return dtype if np.issubdtype(dtype, np.inexact) else dtype


def densify(ct, like):
    """``ct`` with every ``None`` replaced by zeros shaped like ``like``.

    Integer and boolean leaves of ``like`` get zero cotangents whatever ``ct``
    holds for them (they are not differentiated).
    """
    t = type(like)
    if t is np.ndarray and type(ct) is np.ndarray and like.dtype == np.float64:
        return ct  # the common case: a float64 array's cotangent
    if ct is None or _is_integral(like):
        return zeros_like(like)
    if isinstance(like, dict) and isinstance(ct, dict):
        keys = _sorted_keys(like) if type(like) is dict else list(like)
        return {k: densify(ct.get(k), like[k]) for k in keys}
    if isinstance(like, (tuple, list)) and isinstance(ct, (tuple, list)):
        items = [densify(c, v) for c, v in zip(ct, like)]
        if hasattr(like, "_fields"):
            return type(like)(*items)
        return type(like)(items)
    if is_record(like) and type(ct) is type(like):
        return record_map(densify, ct, like)
    return ct


_REAL_SCALARS = (float, np.float64)
#: the float64 dtype: ``x.dtype is _F64`` is a cheap test that holds for the float64
#: arrays numpy makes (a dtype equal to it but not it only takes a slower path)
_F64 = np.dtype(np.float64)
#: ``x.sum()`` without the method's Python wrapper (the same reduction)
_add_reduce = np.add.reduce


def unbroadcast(g, x):
    """The cotangent ``g`` of a broadcast result, summed back to the shape of ``x``.

    Maths: if ``y = broadcast(x)`` then ``x_bar = sum of y_bar over the
    broadcast axes``.  Also drops the imaginary part when ``x`` is real
    (JAX's convention for real inputs of complex computations) and returns a
    Python/numpy scalar when ``x`` is a scalar.
    """
    tg, tx = type(g), type(x)
    if tg is np.ndarray:  # the common cases first, without the general checks below
        if tx is np.ndarray and g.shape == x.shape and g.dtype == x.dtype:
            return g
        if tx in _REAL_SCALARS and g.dtype is _F64:
            return _add_reduce(g, None)  # a float64 array summed onto a real scalar
    elif tg in _REAL_SCALARS and tx in _REAL_SCALARS:
        return g
    if isinstance(g, (list, tuple)) and isinstance(x, (list, tuple)):
        # the cotangent of a list made by + or * of lists (concatenation, repetition):
        # the numeric rule does not apply (s2s rewrites the cases it can see)
        raise TypeError("s2s: cannot differentiate '+' or '*' of lists or tuples here (an "
                        "argument whose type s2s does not know); write list(a) + list(b)")
    gshape = np.shape(g)
    xshape = np.shape(x)
    if gshape != xshape:
        g = np.asarray(g)
        extra = g.ndim - len(xshape)
        if extra > 0:
            g = g.sum(axis=tuple(range(extra)))
        axes = tuple(i for i, n in enumerate(xshape) if n == 1 and g.shape[i] != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
        if not xshape:
            g = g[()]
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        g = np.real(g)
    xdtype = getattr(x, "dtype", None)
    if xdtype is not None and xdtype.kind in "fc" and getattr(g, "dtype", xdtype) != xdtype:
        g = np.asarray(g).astype(xdtype)[()] if not xshape else g.astype(xdtype)
    return g


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the cotangent of a reduction over ``axis`` back to ``x``'s shape.

    Returns a writable array (a scalar for a scalar ``x``).
    """
    shape = np.shape(x)
    if axis is not None and not keepdims and shape:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        ndim = len(shape)
        axes = sorted(a % ndim for a in axes)
        g = np.expand_dims(g, tuple(axes))
    out = np.array(np.broadcast_to(g, shape))
    return out[()] if not shape else out


def getitem_vjp(g, x, index):
    """Cotangent of ``x`` for ``y = x[index]``: ``g`` scattered into zeros.

    Arrays: ``np.add.at`` for advanced indices so repeated integer indices
    accumulate.  Tuples, lists and dicts: zeros shaped like ``x`` with ``g``
    at ``index``.
    """
    if isinstance(x, dict):
        out = zeros_like(x)
        out[index] = g
        return out
    if type(x) is tuple and type(index) is int:  # the common case: an item of a tuple
        out = [zeros_like(v) for v in x]
        out[index] = g
        return tuple(out)
    if isinstance(x, (tuple, list)):
        out = [zeros_like(v) for v in x]
        if isinstance(index, slice):
            for i, v in zip(range(*index.indices(len(x))), g):
                out[i] = v
        else:
            out[index] = g
        return type(x)(*out) if hasattr(x, "_fields") else type(x)(out)
    if (type(x) is np.ndarray and x.dtype is _F64 and x.ndim and _is_float64(g)
            and _is_basic_index(index)):
        out = np.zeros(x.shape)  # the common case: float64 into float64, a basic index
        out[index] = g
        return out
    xa = np.asarray(x)
    dtype = np.result_type(xa.dtype, np.asarray(g).dtype)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.float64
    out = np.zeros(xa.shape, dtype=dtype)
    if _is_basic_index(index):
        out[index] += g
    else:
        np.add.at(out, index, g)
    if np.ndim(x) == 0:
        return unbroadcast(out, x)
    return _real_if_real(out, x)


def add_at(acc, g, x, index):
    """``add(acc, getitem_vjp(g, x, index))``: the cotangent ``acc`` of ``x`` plus that of
    one read ``x[index]`` (``g``), without building the zeros of ``getitem_vjp``.

    Maths: ``acc + S(g)``, ``S`` the scatter of ``g`` into zeros shaped like ``x`` at
    ``index`` (repeated fancy indices accumulate).  A new value; ``acc`` is not changed.
    """
    if type(acc) is tuple and type(x) is tuple and type(index) is int and len(acc) == len(x):
        items = [zeros_like(v) if a is None else a for a, v in zip(acc, x)]
        items[index] = add(items[index], g)
        return tuple(items)
    if (type(acc) is np.ndarray and type(x) is np.ndarray and acc.dtype is _F64
            and acc.shape == x.shape and _is_float64(g) and _is_basic_index(index)):
        out = acc.copy()
        out[index] += g
        return out
    return add(acc, getitem_vjp(g, x, index))


def unpack_vjp(cts, x):
    """Cotangent of ``x`` for ``a, b, ... = x`` given the targets' cotangents.

    A ``None`` cotangent is zero.  Tuples and lists give a container, arrays
    the cotangents stacked along the first axis.
    """
    tx = type(x)
    if tx is tuple or tx is list:  # the common case: no zero (None) cotangent to fill in
        for ct in cts:
            if ct is None:
                break
        else:
            return tx(cts)
    parts = [zeros_like(v) if ct is None else ct for ct, v in zip(cts, x)]
    if isinstance(x, (tuple, list)):
        return type(x)(*parts) if hasattr(x, "_fields") else type(x)(parts)
    return np.stack([np.broadcast_to(p, np.shape(x)[1:]) for p in parts])


def _real_if_real(g, x):
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        return np.real(g)
    return g


def _is_float64(g) -> bool:
    """A float, a float64 scalar or a float64 array."""
    t = type(g)
    return t is float or t is np.float64 or (t is np.ndarray and g.dtype == np.float64)


#: index parts that select without copying (basic indexing), by type
_BASIC_PARTS = frozenset({int, slice, type(None), type(Ellipsis), np.int64, np.int32,
                          np.intp, np.int16, np.int8, np.uint64, np.uint32, np.uint16,
                          np.uint8})


def _is_basic_index(index) -> bool:
    """``index`` is basic indexing: integers, slices, None and Ellipsis (not bool)."""
    if type(index) is tuple:
        for p in index:
            if type(p) not in _BASIC_PARTS:
                return False
        return True
    return type(index) in _BASIC_PARTS


def grad_seed(out, holomorphic=False):
    """The cotangent 1 for ``grad``: checks that ``out`` is a real scalar.

    Raises TypeError like JAX for a non-scalar output, or for a complex
    output without ``holomorphic=True``.
    """
    if not holomorphic:  # the common cases first
        if type(out) is float:
            return 1.0
        if type(out) is np.float64:
            return np.float64(1.0)
    if is_record(out):
        raise TypeError("Gradient only defined for scalar-output functions. Output was a "
                        f"{type(out).__name__}.")
    if isinstance(out, (list, tuple)):
        raise TypeError("Gradient only defined for scalar-output functions. Output was a "
                        f"{type(out).__name__} of {len(out)}.")
    if not isinstance(out, (numbers.Number, np.generic, np.ndarray)):
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was {out!r}.")
    shape = np.shape(out)
    if shape != ():
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output had shape: {shape}.")
    if isinstance(out, (bool, int, np.integer, np.bool_)) or (
            isinstance(out, np.ndarray) and not np.issubdtype(out.dtype, np.inexact)):
        raise TypeError(
            "grad requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {np.result_type(out).name}")
    if np.iscomplexobj(out):
        if not holomorphic:
            raise TypeError(
                "grad requires real-valued outputs (output dtype that is a sub-dtype of "
                f"np.floating), but got {np.result_type(out).name}. For holomorphic "
                "differentiation, pass holomorphic=True.")
        return np.result_type(out).type(1.0) if isinstance(out, (np.generic, np.ndarray)) else 1.0 + 0j
    elif holomorphic:
        raise TypeError(
            "grad with holomorphic=True requires complex-valued outputs, but got "
            f"{np.result_type(out).name}")
    if isinstance(out, (np.generic, np.ndarray)):
        return np.result_type(out).type(1.0)
    return 1.0


def getattr_vjp(g, obj, name):
    """Cotangent of ``obj`` for ``y = obj.name``: zeros like ``obj`` with ``g`` at ``name``.

    Fields of namedtuples, dataclasses and the children of classes registered
    with ``register_pytree_node`` (``_registered_node_vjp``): other objects passed into
    differentiated code come with the classes work (objects created inside it
    are inlined by s2s).
    """
    fields = getattr(type(obj), "_fields", None)
    if fields is None:
        ct = _registered_node_vjp(g, obj, name)
        if ct is not None:
            return ct
    if fields is None and is_record(obj):  # a dataclass
        fields = field_names(type(obj))
        if name in fields:
            return with_field(zeros_like(obj), name, g)
    if fields is None or name not in fields:
        what = "it is not a field" if fields is not None else \
            "only fields of namedtuples and dataclasses are"
        raise TypeError(f"s2s: cannot differentiate attribute {name!r} of a "
                        f"{type(obj).__name__} object ({what}; a property or method "
                        "of an argument is not differentiated)")
    return type(obj)(*[g if f == name else zeros_like(v) for f, v in zip(fields, obj)])


def _registered_node_vjp(g, obj, name):
    """``getattr_vjp`` for an instance of a class registered with
    ``register_pytree_node``: the child that ``obj.name`` reads is found by
    unflattening markers in place of the children and reading ``name`` of that;
    ``g`` goes there, zeros elsewhere.  None if ``obj`` is not such an instance or
    ``name`` is not a child (a property, a method, auxiliary data)."""
    from .tree import _registry

    kind = _registry.get(type(obj))
    if kind is None:
        return None
    children, aux = kind.flatten(obj)
    markers = tuple(object() for _ in children)
    try:
        got = getattr(kind.unflatten(aux, markers), name)
    except Exception:
        return None
    for i, m in enumerate(markers):
        if got is m:
            return kind.unflatten(aux, tuple(g if j == i else zeros_like(c)
                                             for j, c in enumerate(children)))
    return None


def sum_builtin_vjp(g, iterable):
    """Cotangent of ``iterable`` for ``y = sum(iterable)``: ``g`` for every item (of an
    array, over its rows: an array of its shape)."""
    if isinstance(iterable, np.ndarray):
        if iterable.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        rows = [unbroadcast(g, v) for v in iterable]
        dtype = np.result_type(*rows) if rows else np.result_type(g, iterable)
        return np.array(rows, dtype=dtype).reshape(iterable.shape)
    items = [unbroadcast(g, v) for v in iterable]
    return type(iterable)(items) if isinstance(iterable, (list, tuple)) else items


def cast_vjp(g, x):
    """Cotangent of ``x`` for a dtype cast ``y = dtype(x)``: ``g`` in ``x``'s type."""
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        g = np.real(g)
    dtype = getattr(x, "dtype", None)
    if dtype is not None and dtype.kind in "fc":
        return np.asarray(g).astype(dtype)[()] if np.ndim(x) == 0 else np.asarray(g).astype(dtype)
    if isinstance(x, (float, complex)):
        return type(x)(g)
    return g


def broadcast_like(t, ans):
    """The tangent ``t`` broadcast to the shape of ``ans`` (a no-op when they agree)."""
    shape = np.shape(ans)
    if np.shape(t) == shape:
        return t
    return np.broadcast_to(t, shape).copy() if shape else t


def owned(x):
    """``x`` itself, or a copy if it is an array: a tangent that will be updated in
    place must not share memory with another tangent unless its primal does."""
    return x.copy() if isinstance(x, np.ndarray) else x
