"""The reductions and running reductions of numpy's ufuncs as the numpy functions they
equal: ``np.add.reduce(a, axis)`` is ``np.sum(a, axis)`` with ``axis=0`` by default, and
so on (``UFUNC_METHODS``).  The frontend reads ``np.add.reduce`` as the function here
(``frontend/expressions.py``), plain Python that every transform and the jit read
(``definline``), so their derivatives, batching and compilation are those of ``np.sum``,
``np.prod``, ``np.max``, ``np.min``, ``np.all``, ``np.any``, ``np.cumsum`` and
``np.cumprod`` (``np.logaddexp.reduce``: the shifted log-sum-exp of ``np.max``,
``np.exp``, ``np.sum`` and ``np.log``).  ``out=`` is written as for any call (``passes/out_args.py``);
``initial=`` and ``where=`` are refused by name (``NotImplementedError``); a method
with no entry (``np.add.outer``, ``np.add.at``, ``np.maximum.accumulate``) stays the
ufunc's own, which has no rule."""
import numpy as np

from ..registry import definline


def _refuse_initial_and_where(initial, where):
    """``initial=`` and ``where=`` of a ufunc reduction are not read: refused by name."""
    if initial is not None:
        raise NotImplementedError("s2s: a ufunc reduction (np.add.reduce...) with initial=")
    if where is not True:
        raise NotImplementedError("s2s: a ufunc reduction (np.add.reduce...) with where=")


def add_reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """``np.add.reduce``: ``np.sum`` along ``axis`` (0 by default)."""
    _refuse_initial_and_where(initial, where)
    return np.sum(array, axis=axis, dtype=dtype, keepdims=keepdims)


def multiply_reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                    where=True):
    """``np.multiply.reduce``: ``np.prod`` along ``axis`` (0 by default)."""
    _refuse_initial_and_where(initial, where)
    return np.prod(array, axis=axis, dtype=dtype, keepdims=keepdims)


def _extreme(reducer, array, axis, dtype, keepdims):
    """``reducer`` (``np.max``/``np.min``) along ``axis`` of ``array`` as ``dtype``."""
    if dtype is not None:
        return reducer(np.asarray(array, dtype=dtype), axis=axis, keepdims=keepdims)
    return reducer(array, axis=axis, keepdims=keepdims)


def maximum_reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                   where=True):
    """``np.maximum.reduce``: ``np.max`` along ``axis`` (0 by default)."""
    _refuse_initial_and_where(initial, where)
    return _extreme(np.max, array, axis, dtype, keepdims)


def minimum_reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                   where=True):
    """``np.minimum.reduce``: ``np.min`` along ``axis`` (0 by default)."""
    _refuse_initial_and_where(initial, where)
    return _extreme(np.min, array, axis, dtype, keepdims)


def logical_and_reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                       where=True):
    """``np.logical_and.reduce``: ``np.all`` along ``axis`` (0 by default)."""
    _refuse_initial_and_where(initial, where)
    return np.all(array, axis=axis, keepdims=keepdims)


def logical_or_reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                      where=True):
    """``np.logical_or.reduce``: ``np.any`` along ``axis`` (0 by default)."""
    _refuse_initial_and_where(initial, where)
    return np.any(array, axis=axis, keepdims=keepdims)


def _log_sum_exp(log, exp, array, axis, dtype, keepdims):
    """``log(sum(exp(a)))`` along ``axis``, ``exp``/``log`` of one base, shifted by the
    largest item so no ``exp`` overflows (an axis whose largest item is not finite is
    not shifted: all ``-inf`` gives ``-inf``, as numpy's reduction does).  The shift
    cancels in the value and so in every derivative: the gradient is the softmax."""
    a = array if dtype is None else np.asarray(array, dtype=dtype)
    kept = np.max(a, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(kept), kept, 0.0)
    out_shift = shift if keepdims else np.max(shift, axis=axis)
    return log(np.sum(exp(a - shift), axis=axis, keepdims=keepdims)) + out_shift


def logaddexp_reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                     where=True):
    """``np.logaddexp.reduce``: ``log(sum(exp(a)))`` along ``axis`` (0 by default)."""
    _refuse_initial_and_where(initial, where)
    return _log_sum_exp(np.log, np.exp, array, axis, dtype, keepdims)


def logaddexp2_reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                      where=True):
    """``np.logaddexp2.reduce``: ``log2(sum(2 ** a))`` along ``axis`` (0 by default)."""
    _refuse_initial_and_where(initial, where)
    return _log_sum_exp(np.log2, np.exp2, array, axis, dtype, keepdims)


def add_accumulate(array, axis=0, dtype=None, out=None):
    """``np.add.accumulate``: ``np.cumsum`` along ``axis`` (0 by default)."""
    return np.cumsum(array, axis=axis, dtype=dtype)


def multiply_accumulate(array, axis=0, dtype=None, out=None):
    """``np.multiply.accumulate``: ``np.cumprod`` along ``axis`` (0 by default)."""
    return np.cumprod(array, axis=axis, dtype=dtype)


#: (ufunc, method name) -> the plain function read in its place
UFUNC_METHODS = {
    (np.add, "reduce"): add_reduce,
    (np.multiply, "reduce"): multiply_reduce,
    (np.maximum, "reduce"): maximum_reduce,
    (np.minimum, "reduce"): minimum_reduce,
    (np.logical_and, "reduce"): logical_and_reduce,
    (np.logical_or, "reduce"): logical_or_reduce,
    (np.logaddexp, "reduce"): logaddexp_reduce,
    (np.logaddexp2, "reduce"): logaddexp2_reduce,
    (np.add, "accumulate"): add_accumulate,
    (np.multiply, "accumulate"): multiply_accumulate,
}
definline(_refuse_initial_and_where, _extreme, _log_sum_exp, *UFUNC_METHODS.values())
