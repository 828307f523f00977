"""Scalar functions the CUDA tests map over arrays (sources in a file: s2s reads them).

Each entry of ``CORPUS``: ``(function, element dtypes of its arguments,
numpy reference taking arrays, domain sampler)``.  The references are
written with numpy ufuncs, independently of the scalar code.
"""
from __future__ import annotations

import math

import numpy as np


def axpy(a, x, y):
    return a * x + y


def trig_mix(x, y):
    return math.sin(x) * y + math.exp(x) ** 2 / (1 + y * y) + math.tanh(y)


def softplus(x):
    return math.log1p(math.exp(-abs(x))) + max(x, 0.0)


def logistic(x):
    return 1.0 / (1.0 + math.exp(-x))


def newton_sqrt(x):
    """sqrt(x) for x > 0 by Newton's iteration: a data-dependent while loop."""
    r = x if x > 1.0 else 1.0
    while abs(r * r - x) > 1e-12 * x:
        r = 0.5 * (r + x / r)
    return r


def piecewise(x, y):
    if x > y:
        z = x * x - y
    else:
        z = math.cos(x) * y
    for k in range(3):
        z = z + 0.1 * k * x
    return z


def many_math(x, y):
    """One call of each libdevice function the lowering uses (x in (0.1, 0.9))."""
    a = math.sin(x) + math.cos(x) + math.tan(x) + math.exp(x) + math.log(x)
    b = math.log2(x) + math.log10(x) + math.sqrt(x) + math.tanh(x) + math.sinh(x)
    c = math.cosh(x) + math.atan(x) + math.asin(x) + math.acos(x) + math.asinh(x)
    d = math.atanh(x) + math.log1p(x) + math.expm1(x) + math.erf(x) + math.erfc(x)
    e = x ** y + math.atan2(x, y) + math.hypot(x, y) + math.acosh(1.0 + x)
    return a + b + c + d + e


def two_outputs(x, y):
    return x * y, x - y


def int_ops(i, j):
    return i // j + i % j + i * j


def with_flag(x, flag):
    return x * 2.0 if flag else -x


def complex_affine(z, w):
    return z * w + 1j


def complex_modulus(z, s):
    return abs(z) * s


def checked_log(x):
    return math.log(x)


def negative_raises(x):
    if x < 0.0:
        raise ValueError("x must be non-negative")
    return math.sqrt(x)


def _pos(rng, n):
    return rng.uniform(0.1, 0.9, n)


def _any(rng, n):
    return rng.uniform(-2.0, 2.0, n)


#: function, dtypes, numpy reference, sampler per argument, differentiable argnums
CORPUS = [
    (axpy, ("f8", "f8", "f8"), lambda a, x, y: a * x + y, (_any, _any, _any), (0, 1, 2)),
    (trig_mix, ("f8", "f8"),
     lambda x, y: np.sin(x) * y + np.exp(x) ** 2 / (1 + y * y) + np.tanh(y), (_any, _any), (0, 1)),
    (softplus, ("f8",), lambda x: np.logaddexp(0.0, x), (_any,), (0,)),
    (logistic, ("f8",), lambda x: 1 / (1 + np.exp(-x)), (_any,), (0,)),
    (newton_sqrt, ("f8",), np.sqrt, (_pos,), (0,)),
    (piecewise, ("f8", "f8"),
     lambda x, y: np.where(x > y, x * x - y, np.cos(x) * y) + 0.3 * x, (_any, _any), (0, 1)),
    (many_math, ("f8", "f8"),
     lambda x, y: (np.sin(x) + np.cos(x) + np.tan(x) + np.exp(x) + np.log(x) + np.log2(x)
                   + np.log10(x) + np.sqrt(x) + np.tanh(x) + np.sinh(x) + np.cosh(x)
                   + np.arctan(x) + np.arcsin(x) + np.arccos(x) + np.arcsinh(x)
                   + np.arctanh(x) + np.log1p(x) + np.expm1(x)
                   + np.array([math.erf(v) + math.erfc(v) for v in x]) + x ** y
                   + np.arctan2(x, y) + np.hypot(x, y) + np.arccosh(1.0 + x)),
     (_pos, _pos), (0, 1)),
    (trig_mix, ("f4", "f4"), None, (_any, _any), ()),
]


# -- forward mode: a function calling s2s.jvp is an elementwise kernel too ---------------
import s2s  # noqa: E402


def trig_mix_jvp(x, y, dx, dy):
    return s2s.jvp(trig_mix, (x, y), (dx, dy))


def piecewise_jvp(x, y, dx, dy):
    return s2s.jvp(piecewise, (x, y), (dx, dy))


def many_math_jvp(x, y, dx, dy):
    return s2s.jvp(many_math, (x, y), (dx, dy))


# (softplus and newton_sqrt are left out: the jvp of abs() calls np.real, which the LLVM
# lowering does not compile yet)
JVPS = {trig_mix: trig_mix_jvp,
        piecewise: piecewise_jvp, many_math: many_math_jvp}


# -- the index form ------------------------------------------------------------------------
def scale_into(out, x, a):
    i = s2s.cuda.grid(1)
    if i < x.shape[0]:
        out[i] = a * math.sin(x[i])


def stencil(out, u):
    """Three-point Laplacian of u on the interior, one thread per point."""
    i = s2s.cuda.grid(1)
    if 0 < i < u.shape[0] - 1:
        out[i] = u[i - 1] - 2.0 * u[i] + u[i + 1]


def strided_rows(m, v):
    """Adds v to every row of the 2-d array m, a grid-stride loop over the rows."""
    i = s2s.cuda.grid(1)
    while i < m.shape[0]:
        for j in range(m.shape[1]):
            m[i, j] += v[j]
        i += s2s.cuda.gridsize(1)


def out_of_bounds(out, x):
    i = s2s.cuda.grid(1)
    out[i] = x[i + 1]


def py_mod(x, y):
    return x % y


def np_math(x):
    """numpy's ufuncs keep float32 elements float32 (libdevice's __nv_*f)."""
    return np.sin(x) * np.exp(x) + np.tanh(x) ** 2


def two_outputs_sum(x, y):
    return x * y + math.sin(x - y)


GAIN = 1.5
OFFSETS = np.arange(3.0)


def uses_global_number(x):
    return GAIN * x


def uses_global_array(x):
    return x * OFFSETS[0]
