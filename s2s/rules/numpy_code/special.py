"""``scipy.special``'s elementwise functions as plain Python the jit compiles (when SciPy
is installed): ``erf`` and ``erfc`` (the C library's, as the jit computes ``math.erf``
elementwise), ``expit`` (SciPy's two branches: ``exp(x) / (1 + exp(x))`` below 0, so
neither overflows), ``logit``, ``xlogy`` and ``xlog1py`` (+0 where ``x`` is 0 or -0 and
``y`` is not NaN).  Values and dtypes as SciPy's for real input (float32 stays float32,
integers become float64); vmap batches these with rules of their own, and their
derivatives are their records' rules (``rules/special.py``)."""
import numpy as np

import s2s_runtime as rt

from ..registry import definline


def erf(x):
    return rt.erf(x)


def erfc(x):
    return rt.erfc(x)


def expit(x):
    """``1 / (1 + exp(-x))``."""
    e = np.exp(-np.abs(x))
    return np.where(x < 0, e / (1.0 + e), 1.0 / (1.0 + e))


def logit(x):
    """``log(x / (1 - x))``."""
    return np.log(x / (1.0 - x))


def xlogy(x, y):
    """``x * log(y)``, +0 where ``x == 0`` and ``y`` is not NaN."""
    return np.where((x == 0) & (y == y), 0.0 * np.abs(x), x * np.log(y))


def xlog1py(x, y):
    """``x * log1p(y)``, +0 where ``x == 0`` and ``y`` is not NaN."""
    return np.where((x == 0) & (y == y), 0.0 * np.abs(x), x * np.log1p(y))


try:
    import scipy.special as _sp
except ImportError:  # pragma: no cover - scipy is in the test extra
    _sp = None

if _sp is not None:
    for _fn, _code in ((_sp.erf, erf), (_sp.erfc, erfc), (_sp.expit, expit),
                       (_sp.logit, logit), (_sp.xlogy, xlogy), (_sp.xlog1py, xlog1py)):
        definline(_fn, code=_code, modes=("jit",))
