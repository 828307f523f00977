"""The systematic table, part 4: edge cases of the rules' argument handling (negative
and tuple axes, keepdims, order, modes, exact zeros in products, NaNs in fmax/fmin,
broadcast batch axes, unusual norms and indices)."""
from __future__ import annotations

from tests.unit.systematic_checks import Arg, Case
from tests.unit.systematic_table import M, S, T, V
from tests.unit.systematic_table_arrays import c

CASES = [
    # exact zeros in products and scans (one and several per slice)
    c("np.prod(x)", V, dom="0"), c("np.prod(x, axis=-1)", T, dom="0"),
    c("np.prod(x, axis=(0, -1), keepdims=True)", T, dom="0"), c("np.prod(x)", M, dom="00"),
    c("np.prod(x, axis=1)", T, dom="00"), c("np.cumprod(x)", (6,), dom="0"),
    c("np.cumprod(x, axis=-1)", T, dom="00"), c("np.cumprod(x, axis=0)", M, dom="0"),
    # negative and tuple axes, keepdims
    c("np.sum(x, axis=(-1, 0))", T, cplx=True), c("np.mean(x, axis=-2, keepdims=True)", T),
    c("np.var(x, axis=(-1, -3), ddof=1, keepdims=True)", T),
    c("np.std(x, axis=(1, 2), keepdims=True)", T, cplx=True),
    c("np.max(x, axis=(-1, 0), keepdims=True)", T, dom="d"),
    c("np.prod(x, initial=2.0)", M, dom="z"), c("np.prod(x, axis=1, initial=-1.5)", M, dom="0"),
    c("np.max(x, initial=100.0)", M), c("np.max(x, axis=0, initial=0.0)", M, dom="d"),
    c("np.mean(x, where=np.array([True, False, True]))", M),
    c("np.mean(x, axis=1, where=np.array([True, False, True]))", M),
    c("np.sum(x, axis=0, dtype=np.float64)", M), c("np.cumsum(x, axis=-2)", T, cplx=True),
    c("np.cumsum(x)", M, cplx=True), c("np.average(x, axis=-1, weights=y)", M, (3,)),
    c("np.average(x, axis=(0, 1), weights=y)", M, M),
    # methods
    c("x.sum(axis=0)", M), c("x.mean(-1, keepdims=True)", T), c("x.max(axis=1)", M, dom="d"),
    c("x.prod()", M, dom="z"), c("x.var(ddof=1)", M), c("x.std(axis=0)", M),
    c("x.cumsum(axis=1)", M), c("x.cumprod()", V, dom="z"), c("x.T @ y", M, (2, 2)),
    c("x.reshape(3, 2)", M), c("x.reshape((-1,))", M), c("x.ravel()", M),
    c("x.transpose(1, 0)", M), c("x.swapaxes(0, 1)", M), c("x.squeeze()", (1, 3)),
    c("x.clip(-0.5, 0.5)", M, dom="d"), c("x.dot(y)", M, V), c("x.trace()", (3, 3)),
    c("x.diagonal(1)", (3, 3)), c("x.conj()", M, cplx=True), c("x.real + x.imag", M, cplx=True),
    c("x.repeat(2, axis=0)", M), c("x.take([1, 1], axis=1)", M),
    # shapes: orders, negative axes, modes
    c("np.reshape(x, (-1, 2), order='F')", (3, 2)), c("np.reshape(x, ())", (1, 1)),
    c("np.transpose(x, (-1, 0, 1))", T), c("np.moveaxis(x, [0, 1], [-1, -2])", T),
    c("np.swapaxes(x, -1, 0)", T), c("np.expand_dims(x, (0, -1))", M),
    c("np.squeeze(x, axis=-1)", (2, 1)), c("np.repeat(x, np.array([2, 0]), axis=-2)", M),
    c("np.tile(x, (2, 1, 2))", M), c("np.concatenate([x, 2.0 * y, y], axis=-1)", M, (2, 1)),
    c("np.stack([x, y], axis=-1)", M, M), c("np.take(x, [-1, 0], axis=-1)", M),
    c("np.take(x, [7, -5], axis=0, mode='clip')", V), c("x[..., ::-2]", T),
    c("x[None, :, 1]", M), c("x[[0, 0, 1], [2, 2, 0]]", M), c("x[x[:, 0] > 0]", (4, 2)),
    c("np.trace(x, offset=-1, axis1=0, axis2=2)", (3, 2, 3)),
    c("np.diagonal(x, -1, 2, 0)", (3, 2, 3)), c("np.diag(x, -2)", (4, 4)),
    c("np.linspace(x, y, 4, axis=-1)", V, V), c("np.linspace(x, y, 1)", S, S),
    c("np.full((2, 2), x, dtype=np.float64)", S), c("np.broadcast_to(x, (2, 2, 3))", (1, 3)),
    # products with broadcast batch axes, degenerate contractions
    c("np.matmul(x, y)", (1, 2, 3), (4, 3, 2), cplx=True), c("np.matmul(x, y)", V, (2, 3, 2)),
    c("np.matmul(x, y)", (2, 2, 3), V), c("np.dot(x, y)", V, (2, 3, 2)),
    c("np.dot(x, y)", M, S), c("np.inner(x, y)", T, (2, 4)), c("np.outer(x, y)", M, M),
    c("np.tensordot(x, y, axes=0)", V, (2,)), c("np.tensordot(x, y, axes=([1], [0]))", M, (3,)),
    c("np.vdot(x, y)", V, V, cplx=True),
    # clip/where with broadcast bounds, NaN-ignoring extrema
    c("np.clip(x, None, 0.5)", M, dom="d"), c("np.clip(x, y, z)", M, (3,), S, dom="d"),
    c("np.where(x > 0, 1.5, x)", M), Case("np.fmax(x, y)", (Arg(M, "N"), Arg(M))),
    Case("np.fmin(x, y)", (Arg(M), Arg(V, "N"))),
    # norms: more orders, reversed and negative matrix axes
    c("np.linalg.norm(x, -np.inf)", V, dom="d"), c("np.linalg.norm(x, 0.5)", V, dom="z"),
    c("np.linalg.norm(x, -1)", V, dom="z"), c("np.linalg.norm(x, 1, axis=(1, 0))", M, dom="z"),
    c("np.linalg.norm(x, np.inf, axis=(-1, -2))", T, dom="z"),
    c("np.linalg.norm(x, -2)", (3, 3)), c("np.linalg.norm(x, 'nuc', axis=(0, 2))", T),
    c("np.linalg.norm(x, axis=-1, keepdims=True)", T, cplx=True),
    c("np.linalg.norm(x, 'fro', axis=(0, 1))", T, cplx=True),
    # elementwise at special points and mixed scalars
    c("np.abs(x) ** 1.5", M, dom="z", cplx=False),
    c("np.sqrt(x) * x ** 2 / (1.0 + np.exp(-x))", M, dom="p", cplx=True),
    c("np.power(x, 3)", M), c("x ** 2", M, cplx=True), c("2.0 ** x", M), c("x ** -1.5", M, dom="p"),
    c("np.power(x, y)", M, (3,), dom="p", cplx=True), c("np.float_power(x, 2)", M),
    c("np.logaddexp(x, y)", M, M, dom="n"), c("np.exp2(x) + np.log2(np.abs(x))", M, dom="z"),
    c("np.arctan2(x, 2.0)", M), c("np.hypot(3.0, x)", M),
    c("np.conjugate(x) * x", M, cplx=True), c("np.real(x * x)", M, cplx=True),
    c("np.imag(x * x)", M, cplx=True), c("np.absolute(x * x)", M, dom="z", cplx=True),
]
# scalars and 0-d arguments of array functions, attributes, casts
CASES += [
    c("np.stack([x, y])", S, S), c("np.hstack([x, y])", S, S), c("np.vstack([x, y])", S, S),
    c("np.repeat(x, 3)", S), c("np.tile(x, (2, 2))", S), c("np.broadcast_to(x, (2, 2))", S),
    c("np.flip(x, axis=(0, 1))", M), c("np.max(x)", S), c("np.prod(x)", S), c("np.cumsum(x)", S),
    c("np.mean(x)", S), c("np.sum(x, axis=0)", V), c("np.linspace(x, y, 4, axis=1)", (2,), (2,)),
    c("np.where(True, x, y)", S, S), c("np.clip(x, -0.3, 0.3)", S, dom="d"),
    c("np.float64(x)", V), c("x.astype(np.complex128)", M), c("x.real * 2.0 + x.imag", M),
    c("x[[0, 1], 1:]", M), c("x[1, [2, 0]]", M), c("np.diag(x)", (1,)),
    c("np.concatenate([x])", V), c("np.sort(x)[::-1]", V, dom="d"), c("np.dot(x, x)", V),
    c("x * x * x", M, cplx=True), c("(x + y) * (x - y)", M, V, cplx=True),
    c("np.sum(x * y, axis=1) / np.sum(y)", M, V, dom="p"),
]
# zero exponents at x == 0: d(x**0)/dx = 0 (was NaN, inf or an exception)
CASES += [
    c("x ** np.array([1.0, 2.0, 0.0])", V, dom="0"),
    c("np.power(x, np.array([1, 2, 0]))", V, dom="0"),
    c("np.float_power(x, np.array([1.0, 2.0, 0.0]))", V, dom="0"), c("x ** 0", S, dom="O"),
    c("pow(x, 0.0) + x ** 2.0", S, dom="O"), c("math.pow(x, 0.0) * 3.0", S, dom="O"),
    c("np.sum(x ** np.arange(5.0))", (5,), dom="0"),
]

# The default run keeps the rows that guard fixed bugs (exact zeros, special points, NaNs,
# clip's bounds) and the methods; the other edge rows run in the slow variant.
for _c in CASES:
    _c.slow = not (any(a.domain in ("0", "00", "t", "O", "N") for a in _c.args)
                   or "clip" in _c.expr or _c.expr.startswith("x."))
# complex(re, im) of complex arguments (re + 1j im; the cotangents were Re g, -Im g)
CASES += [Case("complex(x, y) * complex(y, x)", (Arg(S), Arg(S)), cplx=True)]
