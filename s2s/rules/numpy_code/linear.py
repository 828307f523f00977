"""``s2s_runtime.apply_linear(op, x, like, spec)`` -- the linear maps derivative templates
apply by name (``"diff_T"``, ``"quantile"``...) -- as plain Python the jit compiles, for
the maps compiled here: ``np.diff``'s and ``np.pad``'s (``pads.py``) and their
transposes.  Other maps (the median's and quantiles', ``np.gradient``'s...) raise ``NotImplementedError``.  ``op`` is
a constant: the jit keeps the one branch it names."""
import numpy as np

import s2s_runtime as rt

from ..registry import definline
from .pads import pad_linear, pad_transpose
from .scans import diff_transpose


def apply_linear(op, x, like, spec=()):
    """``L_op(x)`` shaped like ``like`` (``s2s_runtime.linear_ops``)."""
    if op == "diff":
        return np.diff(x, spec[0], spec[1])
    if op == "diff_T":
        return diff_transpose(x, like, spec[0], spec[1])
    if op == "pad":
        return pad_linear(x, like, spec[0], spec[1], spec[2])
    if op == "pad_T":
        return pad_transpose(x, like, spec[0], spec[1], spec[2])
    raise NotImplementedError("s2s.jit: this linear map of a derivative (apply_linear)")


definline(rt.apply_linear, code=apply_linear, modes=("jit",))
