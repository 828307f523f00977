"""``np.pad`` with the modes whose padding copies entries or a constant -- ``'constant'``
(``constant_values``), ``'edge'``, ``'reflect'``, ``'symmetric'`` and ``'wrap'`` -- and
its linear map and transpose for derivatives (``apply_linear``'s ``"pad"`` and
``"pad_T"``), as plain Python the jit compiles.

``pad_width`` (and ``constant_values``) take numpy's forms: a number, ``(n,)``, ``(before,
after)``, ``((before, after),)`` or one pair per axis.  Axes are padded in order, as
numpy does (a corner takes the later axis's padding): each on axis 0, which is then
moved last, so after every axis the order is the array's again.  Other modes numpy has
(``'linear_ramp'``, ``'maximum'``, ``'mean'``, ``'median'``, ``'minimum'``, ``'empty'``, a
callable) and ``reflect_type='odd'`` are refused when compiling, naming the mode; a
mode numpy does not have raises numpy's ``ValueError``."""
import numpy as np

from ...errors import UnsupportedSyntaxError
from ..registry import definline

def _pairs(v, ndim, dtype):
    """``v`` (a number, ``(n,)``, ``(b, a)``, ``((b, a),)`` or ``ndim`` pairs) as an
    ``(ndim, 2)`` array of ``dtype``: numpy's ``np.broadcast_to(v, (ndim, 2))``."""
    res = np.empty((ndim, 2), dtype=dtype)
    if isinstance(v, (tuple, list)):
        if len(v) == 0:
            raise ValueError(f"operands could not be broadcast together with remapped shapes "
                             f"[original->remapped]: (0,)  and requested shape ({ndim},2)")
        if isinstance(v[0], (tuple, list)):
            if len(v) != 1 and len(v) != ndim:
                raise ValueError(f"operands could not be broadcast together with remapped "
                                 f"shapes [original->remapped]: ({len(v)},{len(v[0])})  and "
                                 f"requested shape ({ndim},2)")
            for k in range(ndim):
                pair = v[0] if len(v) == 1 else v[k]
                if len(pair) == 1:
                    res[k, 0] = pair[0]
                    res[k, 1] = pair[0]
                elif len(pair) == 2:
                    res[k, 0] = pair[0]
                    res[k, 1] = pair[1]
                else:
                    raise ValueError(f"operands could not be broadcast together with remapped "
                                     f"shapes [original->remapped]: ({len(v)},{len(pair)})  "
                                     f"and requested shape ({ndim},2)")
            return res
        if len(v) == 1:
            res[:, 0] = v[0]
            res[:, 1] = v[0]
            return res
        if len(v) == 2:
            res[:, 0] = v[0]
            res[:, 1] = v[1]
            return res
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: ({len(v)},)  and requested shape ({ndim},2)")
    res[:, 0] = v
    res[:, 1] = v
    return res


def _widths(pad_width, ndim):
    """``pad_width`` as ``(ndim, 2)`` integers (numpy's ``TypeError`` for other numbers,
    its ``ValueError`` for a negative width)."""
    if isinstance(pad_width, (tuple, list)):
        if len(pad_width) > 0:
            if isinstance(pad_width[0], (tuple, list)):
                if len(pad_width[0]) > 0:
                    if not isinstance(pad_width[0][0], (int, np.integer)):
                        raise TypeError("`pad_width` must be of integral type.")
            elif not isinstance(pad_width[0], (int, np.integer)):
                raise TypeError("`pad_width` must be of integral type.")
    elif not isinstance(pad_width, (int, np.integer)):
        raise TypeError("`pad_width` must be of integral type.")
    w = _pairs(pad_width, ndim, np.int64)
    for k in range(ndim):
        if w[k, 0] < 0 or w[k, 1] < 0:
            raise ValueError("index can't contain negative values")
    return w


def _source(p, m, mode):
    """The index along an axis of length ``m > 0`` whose entry position ``p`` (counted
    from the axis's first original entry; ``p < 0`` or ``p >= m``) copies."""
    if mode == "edge":
        return 0 if p < 0 else m - 1
    if mode == "wrap":
        return p % m
    if mode == "symmetric":
        q = p % (2 * m)
        return q if q < m else 2 * m - 1 - q
    # reflect (a single entry is its own reflection: numpy pads it as 'edge')
    if m == 1:
        return 0
    q = p % (2 * m - 2)
    return q if q < m else 2 * m - 2 - q


def _compiled_mode(mode):
    """Whether the jit compiles ``np.pad``'s ``mode``."""
    return mode == "constant" or mode == "edge" or mode == "reflect" or mode == "symmetric" \
        or mode == "wrap"


def _check_mode(mode, reflect_type):
    """numpy's ``ValueError`` for a mode it lacks; a compile-time refusal naming a mode
    numpy has and the jit does not compile (the tests fold when compiling)."""
    compiled = _compiled_mode(mode)
    if not compiled and mode != "linear_ramp" and mode != "maximum" and mode != "mean" and \
            mode != "median" and mode != "minimum" and mode != "empty":
        raise ValueError(f"mode '{mode}' is not supported")
    if not compiled:
        raise UnsupportedSyntaxError(f"jit does not compile np.pad with mode='{mode}' "
                                     "(it compiles the modes constant, edge, reflect, symmetric "
                                     "and wrap)")
    if reflect_type != "even":
        raise UnsupportedSyntaxError(f"jit does not compile np.pad with "
                                     f"reflect_type='{reflect_type}' (only 'even')")


def pad(array, pad_width, mode="constant", constant_values=None, end_values=None,
        reflect_type=None, stat_length=None):
    """``array`` padded by ``pad_width`` (numpy's forms) in ``mode``: ``'constant'``
    (``constant_values``, 0 by default, cast to ``array``'s dtype), ``'edge'``,
    ``'reflect'``, ``'symmetric'`` or ``'wrap'`` (``reflect_type='even'``); a new
    array.  Other modes and ``reflect_type='odd'`` are refused when compiling; numpy's
    ``ValueError`` for a mode it lacks, a keyword the mode does not take, a negative
    width or an empty axis padded in a mode that copies entries."""
    _check_mode(mode, "even" if reflect_type is None else reflect_type)
    reflects = mode == "reflect" or mode == "symmetric"
    if end_values is not None or stat_length is not None or \
            (mode != "constant" and constant_values is not None) or \
            (not reflects and reflect_type is not None):
        raise ValueError(f"unsupported keyword arguments for mode '{mode}'")
    ndim = np.ndim(array)
    x = np.asarray(array)
    if ndim == 0:
        return np.copy(x)
    w = _widths(pad_width, ndim)
    if mode == "constant":
        values = _pairs(0 if constant_values is None else constant_values, ndim, x.dtype)
    for k in range(ndim):
        before = w[k, 0]
        after = w[k, 1]
        m = x.shape[0]
        res = np.empty((before + m + after,) + x.shape[1:], dtype=x.dtype)
        res[before:before + m] = x
        if mode == "constant":
            res[:before] = values[k, 0]
            res[before + m:] = values[k, 1]
        else:
            if m == 0 and before + after > 0:
                raise ValueError(f"can't extend empty axis {k} using modes other than "
                                 f"'constant' or 'empty'")
            for j in range(before):
                res[j] = x[_source(j - before, m, mode)]
            for j in range(after):
                res[before + m + j] = x[_source(m + j, m, mode)]
        x = np.moveaxis(res, 0, -1)
    return np.copy(x)


def pad_linear(x, like, pad_width, mode="constant", reflect_type="even"):
    """``apply_linear("pad", ...)``: ``np.pad`` with zero constants."""
    _check_mode(mode, reflect_type)
    reflects = mode == "reflect" or mode == "symmetric"
    if reflects:
        return np.pad(x, pad_width, mode=mode, reflect_type=reflect_type)
    return np.pad(x, pad_width, mode=mode)


def pad_transpose(g, like, pad_width, mode="constant", reflect_type="even"):
    """``apply_linear("pad_T", ...)``: each entry of ``like`` collects ``g`` from every
    padded position copied from it -- ``pad``'s axes undone in reverse order (each moved
    back first, its padding added into the entries it copies, then cut off)."""
    _check_mode(mode, reflect_type)
    ndim = np.ndim(like)
    x = np.asarray(g) * 1.0
    if ndim == 0:
        return x
    w = _widths(pad_width, ndim)
    shape = np.shape(like)
    for k in range(ndim - 1, -1, -1):
        before = w[k, 0]
        m = shape[k]
        y = np.moveaxis(x, -1, 0)
        res = np.copy(y[before:before + m])
        if mode != "constant":
            for j in range(before):
                res[_source(j - before, m, mode)] += y[j]
            for j in range(w[k, 1]):
                res[_source(m + j, m, mode)] += y[before + m + j]
        x = res
    return x


definline(np.pad, code=pad, modes=("jit",))
definline(_pairs, _widths, _source, _compiled_mode, _check_mode, pad_linear, pad_transpose,
          modes=("jit",))
