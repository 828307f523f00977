"""Tables the frontend uses to desugar Python syntax into calls.

Operators become ``operator`` functions; attributes and methods of arrays
become numpy functions (``x.T`` -> ``np.transpose(x)``, ``x.sum(axis=0)`` ->
``np.sum(x, axis=0)``).  Array methods are recognised by name on local
values; methods of user classes arrive with the control-flow/classes work.
"""
from __future__ import annotations

import operator

import libcst as cst
import numpy as np

from s2s_runtime import build

from ..ir import nodes as ir

from ..rules.containers import contains, not_contains  # what ``in`` / ``not in`` become

BINARY_OPS = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.Divide: operator.truediv,
    cst.FloorDivide: operator.floordiv,
    cst.Modulo: operator.mod,
    cst.Power: operator.pow,
    cst.MatrixMultiply: operator.matmul,
    cst.BitAnd: operator.and_,
    cst.BitOr: operator.or_,
    cst.BitXor: operator.xor,
    cst.LeftShift: operator.lshift,
    cst.RightShift: operator.rshift,
}

AUG_OPS = {
    cst.AddAssign: operator.add,
    cst.SubtractAssign: operator.sub,
    cst.MultiplyAssign: operator.mul,
    cst.DivideAssign: operator.truediv,
    cst.FloorDivideAssign: operator.floordiv,
    cst.ModuloAssign: operator.mod,
    cst.PowerAssign: operator.pow,
    cst.MatrixMultiplyAssign: operator.matmul,
    cst.BitAndAssign: operator.and_,
    cst.BitOrAssign: operator.or_,
    cst.BitXorAssign: operator.xor,
    cst.LeftShiftAssign: operator.lshift,
    cst.RightShiftAssign: operator.rshift,
}

#: ``x op= v`` on a name: Python calls the in-place operator (numpy arrays are
#: updated in place, so every view or other name of the array sees the change)
INPLACE_OPS = {
    cst.AddAssign: operator.iadd,
    cst.SubtractAssign: operator.isub,
    cst.MultiplyAssign: operator.imul,
    cst.DivideAssign: operator.itruediv,
    cst.FloorDivideAssign: operator.ifloordiv,
    cst.ModuloAssign: operator.imod,
    cst.PowerAssign: operator.ipow,
    cst.MatrixMultiplyAssign: operator.imatmul,
    cst.BitAndAssign: operator.iand,
    cst.BitOrAssign: operator.ior,
    cst.BitXorAssign: operator.ixor,
    cst.LeftShiftAssign: operator.ilshift,
    cst.RightShiftAssign: operator.irshift,
}

#: the value-producing operator of each in-place operator
PLAIN_OF_INPLACE = {INPLACE_OPS[k]: AUG_OPS[k] for k in INPLACE_OPS}

UNARY_OPS = {
    cst.Minus: operator.neg,
    cst.Plus: operator.pos,
    cst.Not: operator.not_,
    cst.BitInvert: operator.invert,
}

COMPARE_OPS = {
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
    cst.Is: operator.is_,
    cst.IsNot: operator.is_not,
}


#: membership tests call these with the operands swapped: ``contains(b, a)``
MEMBERSHIP_OPS = {cst.In: contains, cst.NotIn: not_contains}

def _name_readers():
    import builtins
    import inspect
    import sys

    out = {id(getattr(builtins, n)): n for n in ("eval", "exec", "locals", "globals", "vars")}
    for mod, names in ((sys, ("_getframe", "_getframemodulename")),
                       (inspect, ("currentframe", "stack", "trace", "getouterframes",
                                  "getinnerframes"))):
        for n in names:
            if hasattr(mod, n):
                out[id(getattr(mod, n))] = f"{mod.__name__}.{n}"
    return out


#: callables that read variables by name (or frames) while the code runs: what they read
#: is invisible to s2s (and would be the generated code's variables), so they are refused
_NAME_READERS = _name_readers()


def reads_names(fn):
    """The name of ``fn`` when it reads variables by name at run time (``eval``,
    ``exec``, ``locals``, ``globals``, ``vars``, frame inspection), else None."""
    return _NAME_READERS.get(id(fn))


#: ``x.<attr>`` on a local value -> ``fn(x)``
ARRAY_ATTRIBUTES = {
    "T": np.transpose,
    "shape": np.shape,
    "ndim": np.ndim,
    "size": np.size,
    "real": np.real,
    "imag": np.imag,
    "dtype": build.dtype_of,
}

#: ``x.<method>(*args, **kw)`` on a local value -> ``fn(x, *args, **kw)``
ARRAY_METHODS = {
    "sum": np.sum,
    "mean": np.mean,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "std": np.std,
    "var": np.var,
    "cumsum": np.cumsum,
    "cumprod": np.cumprod,
    "argmax": np.argmax,
    "argmin": np.argmin,
    "all": np.all,
    "any": np.any,
    "dot": np.dot,
    "conj": np.conj,
    "conjugate": np.conjugate,
    "round": np.round,
    "clip": np.clip,
    "trace": np.trace,
    "diagonal": np.diagonal,
    "ravel": np.ravel,
    "flatten": build.flatten,
    "squeeze": np.squeeze,
    "copy": np.copy,
    "astype": build.astype,
    "reshape": np.reshape,
    "transpose": np.transpose,
    "swapaxes": np.swapaxes,
    "item": build.item,
    "nonzero": np.nonzero,
    "repeat": np.repeat,
    "take": np.take,
}

#: the method name a desugared call came from (to call a user class's own method instead)
METHOD_OF = {fn: name for name, fn in ARRAY_METHODS.items()}
ATTRIBUTE_OF = {fn: name for name, fn in ARRAY_ATTRIBUTES.items()}


def _svd_values_only(args, kwargs):
    """``np.linalg.svd(a, compute_uv=False)`` (a constant ``False``, by keyword or third
    positional): the singular values, ``np.linalg.svdvals(a)`` (``full_matrices`` does
    not change them).  Not with ``hermitian`` other than a constant ``False``: numpy
    then reads one triangle of ``a`` only."""
    given = dict(zip(("a", "full_matrices", "compute_uv", "hermitian"), args))
    given.update(kwargs)
    flag = given.get("compute_uv")
    hermitian = given.get("hermitian", ir.Const(False))
    if "a" in given and isinstance(flag, ir.Const) and flag.value is False \
            and isinstance(hermitian, ir.Const) and hermitian.value is False \
            and len(given) == len(args) + len(kwargs):  # (no name given twice)
        return ir.Call(np.linalg.svdvals, (given["a"],))
    return None


def clip_bounds(a, args, kwargs, method=False):
    """``np.clip(a, lo, hi)`` with both bounds positional (``None`` for one not given) of
    a call of ``np.clip`` (``method``: of ``a.clip``) whose bounds are given as numpy
    takes them: positional (the method's first is ``min``), ``a_min``/``a_max`` or
    ``min``/``max`` keywords, each at most once; None for any other call (left as written,
    so numpy's own error stands: ``np.clip(a, lo)`` without ``a_max``)."""
    names = ("min", "max") if method else ("a_min", "a_max")
    if len(args) > 2 or any(k not in ("a_min", "a_max", "min", "max") for k in kwargs):
        return None
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in given:
            return None
        given[k] = v
    if not method and len(args) == 1 and not ({"a_max", "max"} & set(given)):
        return None  # np.clip(a, lo): numpy's TypeError
    low = [given[k] for k in ("a_min", "min") if k in given]
    high = [given[k] for k in ("a_max", "max") if k in given]
    if len(low) > 1 or len(high) > 1:
        return None
    return ir.Call(np.clip, (a, low[0] if low else ir.Const(None),
                             high[0] if high else ir.Const(None)))


def _clip(args, kwargs):
    return clip_bounds(args[0], args[1:], kwargs) if args else None


#: ``fn`` -> ``form(args, kwargs)``: a call of ``fn`` whose constant arguments make it
#: another function, or whose arguments it takes in a standard form, as that call (None:
#: ``fn`` itself as written)
_CALL_FORMS = ((np.linalg.svd, _svd_values_only), (np.clip, _clip))


def call_form(fn, args, kwargs):
    """The call ``fn(*args, **kwargs)`` stands for where its constant arguments make it
    another function's (``_CALL_FORMS``), else None."""
    for known, form in _CALL_FORMS:
        if fn is known:
            return form(args, kwargs)
    return None
