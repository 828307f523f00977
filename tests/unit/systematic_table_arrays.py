"""The systematic table, part 2: structural primitives (shapes, joins, indexing,
sorting) and products.  Non-differentiable arguments (indices, shapes,
conditions) are literals of the expression."""
from __future__ import annotations

from tests.unit.systematic_checks import Arg, Case
from tests.unit.systematic_table import M, S, T, V


def c(expr, *shapes, dom="n", cplx=False, **kw):
    """A case whose arguments all have domain ``dom``."""
    return Case(expr, tuple(Arg(s, dom) for s in shapes), cplx=cplx, **kw)


CASES = [
    # indexing
    c("x[1]", M), c("x[:, 1:]", M), c("x[[0, 2, 0]]", V), c("x[x > 0]", M),
    c("np.take(x, [2, 0, 2], axis=1)", M), c("np.take(x, [4, 1])", M),
    c("np.take(x, [5, -1], mode='wrap')", V),
    # reshapes
    c("np.reshape(x, (3, 2))", M, cplx=True), c("np.reshape(x, (6,), order='F')", M),
    c("np.ravel(x)", M), c("np.squeeze(x)", (1, 3)), c("np.squeeze(x, axis=0)", (1, 3)),
    c("np.expand_dims(x, 1)", M), c("x.flatten()", M), c("x.astype(np.float64)", M),
    c("x.item() * 2.0", (1,)),
    # axis permutations
    c("np.transpose(x)", M, cplx=True), c("np.transpose(x, (1, 2, 0))", T),
    c("np.swapaxes(x, 0, 2)", T), c("np.moveaxis(x, 0, -1)", T), c("np.flip(x)", M),
    c("np.flip(x, axis=1)", M),
    # copies and conversions
    c("np.copy(x)", M), c("np.array(x)", M), c("np.asarray(x)", M),
    c("np.array([x, y])", V, V), c("np.asarray([[x, y], [y, x]])", S, S),
    # joins and splits
    c("np.concatenate([x, y])", V, (2,), cplx=True), c("np.concatenate((x, y), axis=1)", M, M),
    c("np.concatenate([x, y], axis=None)", M, V),
    c("np.stack([x, y])", V, V), c("np.stack([x, y], axis=1)", M, M),
    c("np.hstack([x, y])", V, (2,)), c("np.hstack([x, y])", M, (2, 1)),
    c("np.vstack([x, y])", V, V), c("np.vstack([x, y])", M, V),
    c("np.split(x, 3)", (6,), second=False), c("np.split(x, [1], axis=1)", M, second=False),
    # broadcasting and filling
    c("np.broadcast_to(x, (2, 3))", V), c("np.full((2, 3), x)", S), c("np.full((2, 3), x)", V),
    c("np.full_like(y, x)", S, M), c("np.tile(x, (2, 2))", M), c("np.tile(x, 2)", V),
    c("np.repeat(x, 2)", M), c("np.repeat(x, [1, 2, 3], axis=1)", M),
    c("np.linspace(x, y, 5)", S, S), c("np.linspace(x, y, 4, endpoint=False)", V, V),
    # diagonals
    c("np.diag(x)", V), c("np.diag(x, 1)", V), c("np.diag(x)", (3, 3)), c("np.diag(x, -1)", M),
    c("np.diagonal(x)", (3, 3)), c("np.diagonal(x, 1, 1, 2)", T),
    # sorting (value gradient; distinct values)
    c("np.sort(x)", V, dom="d"), c("np.sort(x, axis=0)", M, dom="d"),
    c("np.sort(x, axis=None)", M, dom="d"),
    # products
    c("np.dot(x, y)", V, V, cplx=True), c("np.dot(x, y)", M, V, cplx=True),
    c("np.dot(x, y)", M, (3, 4), cplx=True), c("np.dot(x, y)", S, M),
    c("np.dot(x, y)", T, (4, 2)), c("np.vdot(x, y)", M, M, cplx=True),
    c("np.inner(x, y)", V, V, cplx=True), c("np.inner(x, y)", M, (4, 3)),
    c("np.inner(x, y)", S, V), c("np.outer(x, y)", V, (2,), cplx=True),
    c("np.outer(x, y)", M, V), c("np.matmul(x, y)", M, (3, 4), cplx=True),
    c("np.matmul(x, y)", (2, 2, 3), (3, 2)), c("np.matmul(x, y)", V, V),
    c("np.tensordot(x, y)", T, (3, 4, 2), cplx=True),
    c("np.tensordot(x, y, axes=1)", M, (3, 2)),
    c("np.tensordot(x, y, axes=([0, 2], [1, 0]))", T, (4, 2)),
]
