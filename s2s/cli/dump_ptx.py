"""``s2s dump FILE.py:FUNC --mode ptx``: the PTX of a function's elementwise kernel.

Contract: ``ptx_text(fn, values, grad_argnums=None, arch="sm_80")`` returns
the PTX ``s2s.cuda.vectorize(fn)`` (or of ``s2s.grad(fn, argnums)`` when
``grad_argnums`` is given) launches for arrays whose elements are like
``values`` (``--signature 'f64, f32'``: one element type per parameter;
``float -> float64, np.float32 -> float32, int -> int64, bool -> bool,
complex -> complex128``).  When a value is an array (``'f64[:], f64'``) it is
the index form's kernel instead (``s2s.cuda.kernel(fn)``: the function reads
``s2s.cuda.grid(1)`` and writes its array arguments).  Deterministic for the
same function, signature and architecture.
"""
from __future__ import annotations

import numpy as np

from ..backend.cuda.target import DEFAULT_ARCH
from ..api.gradients import grad
from ..core.cuda_vectorize import vectorize

_PY = {float: np.float64, int: np.int64, bool: np.bool_, complex: np.complex128}


def element_type(value):
    """The numpy scalar type an example value stands for."""
    if type(value) in _PY:
        return _PY[type(value)]
    if isinstance(value, np.generic):
        return type(value)
    raise TypeError(f"--mode ptx makes an elementwise kernel: give element types such as "
                    f"'f64, f32, i64, bool' (got a {type(value).__name__})")


def ptx_text(fn, values, grad_argnums=None, arch=DEFAULT_ARCH) -> str:
    if any(isinstance(v, np.ndarray) for v in values):  # arrays: the index form
        if grad_argnums is not None:
            raise TypeError("--mode ptx --grad makes the gradient of an elementwise kernel: "
                            "give element types such as 'f64, f64', not arrays")
        from ..core.cuda_kernel import Kernel
        return Kernel(fn).ptx(*values, arch=arch)
    target = grad(fn, argnums=grad_argnums) if grad_argnums is not None else fn
    return vectorize(target).ptx(*[element_type(v) for v in values], arch=arch)
