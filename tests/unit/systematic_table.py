"""The systematic table, part 1: elementwise functions (numpy, ``math``, operators)
and reductions.  Each row is a numpy expression in ``x, y, z`` with the shapes
and domains of its arguments (``systematic_checks.DOMAINS``: ``p`` positive,
``u`` inside (-1, 1), ``g`` above 1, ``z`` away from 0, ``d`` distinct values,
no ties).  Builders expand a row over representative shapes, broadcasting
pairs and axis/keepdims variants.
"""
from __future__ import annotations

from tests.unit.systematic_checks import Arg, Case

S, V, M, T = (), (3,), (2, 3), (2, 3, 4)
#: broadcasting pairs of a binary function
PAIRS = [(S, S), (V, V), (M, V), ((2, 1), (1, 3)), (S, M)]
#: axis/keepdims variants of a reduction of a (2, 3, 4) array
AXES = ["", ", axis=0", ", axis=-1", ", axis=(0, 2)", ", axis=1, keepdims=True",
        ", keepdims=True"]


def unary(expr, dom="n", cplx=False, shapes=(S, V, M), **kw):
    return [Case(expr, (Arg(s, dom),), cplx=cplx, slow=s != M, **kw) for s in shapes]


def binary(expr, dx="n", dy="n", cplx=False, pairs=PAIRS, **kw):
    return [Case(expr, (Arg(a, dx), Arg(b, dy)), cplx=cplx, slow=(a, b) not in (PAIRS[2],),
                 **kw) for a, b in pairs]


def reduction(fmt, dom="n", cplx=False, shape=T, variants=AXES, **kw):
    return [Case(fmt.format(kw=v), (Arg(shape, dom),), cplx=cplx, **kw) for v in variants]


def scalar(expr, *doms, **kw):
    return [Case(expr, tuple(Arg(S, d) for d in doms), **kw)]


# numpy elementwise: (expression, domain, defined on complex numbers)
NUMPY_UNARY = [
    ("np.sin(x)", "n", True), ("np.cos(x)", "n", True), ("np.tan(x)", "u", True),
    ("np.arcsin(x)", "u", True), ("np.arccos(x)", "u", True), ("np.arctan(x)", "n", True),
    ("np.sinh(x)", "n", True), ("np.cosh(x)", "n", True), ("np.tanh(x)", "n", True),
    ("np.arcsinh(x)", "n", True), ("np.arccosh(x)", "g", True), ("np.arctanh(x)", "u", True),
    ("np.exp(x)", "n", True), ("np.exp2(x)", "n", True), ("np.expm1(x)", "n", True),
    ("np.log(x)", "p", True), ("np.log1p(x)", "p", True), ("np.log2(x)", "p", True),
    ("np.log10(x)", "p", True), ("np.sqrt(x)", "p", True), ("np.cbrt(x)", "z", False),
    ("np.square(x)", "n", True), ("np.reciprocal(x)", "z", True), ("np.negative(x)", "n", True),
    ("np.positive(x)", "n", True), ("np.absolute(x)", "z", True), ("np.fabs(x)", "z", False),
    ("np.conjugate(x)", "n", True), ("np.real(x)", "n", True), ("np.imag(x)", "n", True),
    ("np.deg2rad(x)", "n", False), ("np.rad2deg(x)", "n", False), ("np.sinc(x)", "n", True),
    ("np.float64(x)", "n", False), ("np.complex128(x)", "n", True),
]
NUMPY_BINARY = [
    ("np.add(x, y)", "n", "n", True), ("np.subtract(x, y)", "n", "n", True),
    ("np.multiply(x, y)", "n", "n", True), ("np.divide(x, y)", "n", "z", True),
    ("np.power(x, y)", "p", "n", True), ("np.float_power(x, y)", "p", "n", False),
    ("np.arctan2(x, y)", "z", "z", False), ("np.hypot(x, y)", "z", "z", False),
    ("np.logaddexp(x, y)", "n", "n", False), ("np.logaddexp2(x, y)", "n", "n", False),
    ("np.maximum(x, y)", "n", "n", False), ("np.minimum(x, y)", "n", "n", False),
    ("np.fmax(x, y)", "n", "n", False), ("np.fmin(x, y)", "n", "n", False),
    ("x + y", "n", "n", True), ("x - y", "n", "n", True), ("x * y", "n", "n", True),
    ("x / y", "n", "z", True), ("x ** y", "p", "n", True), ("x % y", "s", "p", False),
]
MATH = [("math.sin(x)", "n"), ("math.cos(x)", "n"), ("math.tan(x)", "u"), ("math.asin(x)", "u"),
        ("math.acos(x)", "u"), ("math.atan(x)", "n"), ("math.sinh(x)", "n"),
        ("math.cosh(x)", "n"), ("math.tanh(x)", "n"), ("math.asinh(x)", "n"),
        ("math.acosh(x)", "g"), ("math.atanh(x)", "u"), ("math.exp(x)", "n"),
        ("math.expm1(x)", "n"), ("math.log(x)", "p"), ("math.log1p(x)", "p"),
        ("math.log2(x)", "p"), ("math.log10(x)", "p"), ("math.sqrt(x)", "p"),
        ("math.erf(x)", "n"), ("math.erfc(x)", "n"), ("math.fabs(x)", "z"),
        ("math.degrees(x)", "n"), ("math.radians(x)", "n"), ("-x", "n"), ("+x", "n"),
        ("abs(x)", "z"), ("float(x)", "n")]
MATH2 = [("math.log(x, y)", "p", "g"), ("math.pow(x, y)", "p", "n"), ("math.hypot(x, y)", "z", "z"),
         ("math.atan2(x, y)", "z", "z"), ("pow(x, y)", "p", "n"), ("max(x, y)", "d", "d"),
         ("min(x, y)", "d", "d"), ("complex(x, y).real * complex(x, y).imag", "n", "n")]

CASES = []
for _e, _d, _c in NUMPY_UNARY:
    CASES += unary(_e, _d, _c)
# casts to a lower precision: finite differences of float32/float16 results are coarse
# (linear in the argument, so a large step is exact up to the rounding of the cast)
for _e, _tol in [("np.float32(x)", 1e-5), ("np.float16(x)", 1e-2), ("np.longdouble(x)", 1e-5),
                 ("np.complex64(x)", 1e-5)]:
    CASES += unary(_e, "n", tol=_tol, shapes=(S,), eps=0.5)
for _e, _dx, _dy, _c in NUMPY_BINARY:
    CASES += binary(_e, _dx, _dy, _c)
for _e, _d in MATH:
    CASES += scalar(_e, _d)
for _e, _dx, _dy in MATH2:
    CASES += scalar(_e, _dx, _dy)
CASES += [
    Case("np.where(x > 0.1, x, y)", (Arg(M, "z"), Arg(M)), cplx=False),
    Case("np.where(x > 0.1, x * y, 2.0)", (Arg(M, "z"), Arg(V))),
    Case("np.clip(x, -0.5, 0.7)", (Arg(M, "d"),)),
    Case("np.clip(x, y, 0.9)", (Arg(M, "d"), Arg(V, "d"))),
    Case("np.clip(x, -0.5, y)", (Arg(M, "n"), Arg(S, "p"))),
    Case("x @ y", (Arg(M), Arg((3, 4))), cplx=True),
    Case("x @ y", (Arg(V), Arg((3, 2))), cplx=True),
    Case("x @ y", (Arg((2, 2, 3)), Arg(V)), cplx=True),
]

# --- reductions -------------------------------------------------------------------------
CASES += reduction("np.sum(x{kw})", cplx=True)
CASES += reduction("np.mean(x{kw})", cplx=True)
CASES += reduction("np.prod(x{kw})", "z", cplx=True)
CASES += reduction("np.max(x{kw})", "d") + reduction("np.min(x{kw})", "d")
CASES += reduction("np.amax(x{kw})", "d", variants=["", ", axis=1"])
CASES += reduction("np.amin(x{kw})", "d", variants=["", ", axis=(0, 1)"])
CASES += reduction("np.var(x{kw})", cplx=True) + reduction("np.std(x{kw})", cplx=True)
CASES += reduction("np.var(x, ddof=1{kw})", variants=["", ", axis=1"])
CASES += reduction("np.std(x, ddof=1{kw})", variants=["", ", axis=0"])
CASES += reduction("np.cumsum(x{kw})", cplx=True, variants=["", ", axis=0", ", axis=-1"])
CASES += reduction("np.cumprod(x{kw})", "z", cplx=True, variants=["", ", axis=1", ", axis=-1"])
CASES += [
    Case("np.sum(x, where=x > 0)", (Arg(M),)),
    Case("np.average(x)", (Arg(M),)),
    Case("np.average(x, axis=1, weights=y)", (Arg(M), Arg(V, "p"))),
    Case("np.average(x, axis=0, weights=y)", (Arg(M), Arg(M, "p"))),
    Case("np.average(x, weights=y, keepdims=True)", (Arg(M), Arg(M, "p"))),
    Case("np.trace(x)", (Arg((3, 3)),), cplx=True),
    Case("np.trace(x, offset=1, axis1=1, axis2=2)", (Arg(T),)),
    Case("np.linalg.norm(x)", (Arg(V),), cplx=True),
    Case("np.linalg.norm(x, axis=1)", (Arg(M),), cplx=True),
    Case("np.linalg.norm(x, ord=1)", (Arg(V, "z"),)),
    Case("np.linalg.norm(x, ord=np.inf)", (Arg(V, "d"),)),
    Case("np.linalg.norm(x, ord=3)", (Arg(V, "z"),)),
    Case("np.linalg.norm(x, 'fro')", (Arg(M),)),
    Case("np.linalg.norm(x, 'nuc')", (Arg(M),)),
    Case("np.linalg.norm(x, 2)", (Arg(M),)),
    Case("np.linalg.norm(x, 1, keepdims=True)", (Arg(M, "z"),)),
]
