"""The systematic table, part 5: the builtins, ``math`` and ``operator`` entries s2s
accepts in differentiated code, the functions that split a float into parts
(``divmod``, ``modf``, ``frexp``, ``ldexp``, ``fmod``, ``remainder``, ``copysign``,
``nextafter``, ``heaviside``) in their builtin, ``math`` and numpy forms, and
``NONDIFF``: one row per public callable marked non-differentiable, whose zero
derivative the same finite-difference oracle confirms (a callable with a nonzero
derivative marked non-differentiable fails its row).  ``NOT_NUMBERS`` lists the
marked callables whose results are not numbers of a float argument (so there is no
derivative to check), each with the reason.
"""
from __future__ import annotations

import math
import sys

from tests.unit.systematic_checks import Arg, Case
from tests.unit.systematic_table import M, S, V, binary, scalar, unary
from tests.unit.systematic_table_arrays import c

CASES = []
# --- numpy float parts ---------------------------------------------------------------
CASES += binary("np.divmod(x, y)", "s", "p", pairs=[(S, S), (M, V)])
CASES += unary("np.modf(x)", "s", shapes=(S, M)) + unary("np.frexp(x)", "z", shapes=(S, M))
CASES += binary("np.nextafter(x, y)", "n", "n", pairs=[(S, S), (M, V)])
CASES += [c("np.heaviside(np.floor(x), y)", M, M, dom="s"),
          Case("np.heaviside(np.floor(x), y)", (Arg(M, "s"), Arg(V, "p")))]
# --- builtins, math, operator ----------------------------------------------------------
for _e, _doms in [
        ("divmod(x, y)", "sp"), ("divmod(x, y)[1] * divmod(x, y)[0]", "sp"),
        ("math.fmod(x, y)", "sp"), ("math.remainder(x, y)", "sp"), ("math.modf(x)", "s"),
        ("math.frexp(x)", "z"), ("math.ldexp(x, 3)", "n"), ("math.ldexp(x, -2)", "n"),
        ("math.copysign(x, y)", "zz"), ("math.nextafter(x, y)", "nn"),
        ("math.fsum([x, y, x * y])", "nn"), ("sum([x, y, x * y])", "nn"),
        ("sum((x, y), 1.5)", "nn"), ("sorted([x, y, 2.0 * x])[1]", "dd"),
        ("tuple([x, y])", "nn"), ("list((x, x * y))", "nn"),
        ("dict({'a': x, 'b': x * y})['b']", "nn"),
        ("operator.add(x, y)", "nn"), ("operator.sub(x, y)", "nn"), ("operator.mul(x, y)", "nn"),
        ("operator.truediv(x, y)", "nz"), ("operator.pow(x, y)", "pn"),
        ("operator.mod(x, y)", "sp"), ("operator.neg(x)", "n"), ("operator.pos(x)", "n"),
        ("operator.getitem((x, y), 1)", "nn"), ("abs(x) + pow(x, 2)", "z")]:
    CASES += scalar(_e, *_doms)
CASES += [Case("operator.matmul(x, y)", (Arg(M), Arg(V))),
          Case("getattr(np.linalg.slogdet(x), 'logabsdet')", (Arg((2, 2)),)),
          Case("divmod(x, y)", (Arg(M, "s"), Arg(V, "p")))]
if sys.version_info >= (3, 11):
    CASES += scalar("math.cbrt(x)", "z") + scalar("math.exp2(x)", "n")

# --- marked non-differentiable: the derivative is zero (as finite differences see it) ---
NONDIFF = [Case(e, tuple(Arg(s, d) for d in doms), second=False) for e, s, doms in [
    # builtins
    ("1.0 * int(x)", S, "s"), ("1.0 * bool(x)", S, "z"), ("1.0 * round(x)", S, "s"),
    ("round(x, 1)", S, "s"), ("1.0 * len([x, y])", S, "nn"), ("1.0 * (x < y)", S, "dd"),
    ("1.0 * all([x > 0, y > 0])", S, "zz"), ("1.0 * any([x > 0, y > 0])", S, "zz"),
    ("x // y", S, "sp"),
    # operator
    ("1.0 * operator.floordiv(x, y)", S, "sp"), ("1.0 * operator.lt(x, y)", S, "dd"),
    ("1.0 * operator.le(x, y)", S, "dd"), ("1.0 * operator.gt(x, y)", S, "dd"),
    ("1.0 * operator.ge(x, y)", S, "dd"), ("1.0 * operator.eq(x, y)", S, "dd"),
    ("1.0 * operator.ne(x, y)", S, "dd"), ("1.0 * operator.not_(x)", S, "z"),
    ("1.0 * operator.and_(x > 0, y > 0)", S, "zz"), ("1.0 * operator.or_(x > 0, y > 0)", S, "zz"),
    ("1.0 * operator.xor(x > 0, y > 0)", S, "zz"), ("1.0 * operator.invert(x > 0)", M, "z"),
    ("1.0 * operator.lshift(int(x), 2)", S, "s"), ("1.0 * operator.rshift(int(x), 1)", S, "s"),
    ("1.0 * operator.is_(x, y)", S, "nn"), ("1.0 * operator.is_not(x, y)", S, "nn"),
    # math
    ("1.0 * math.floor(x)", S, "s"), ("1.0 * math.ceil(x)", S, "s"),
    ("1.0 * math.trunc(x)", S, "s"), ("1.0 * math.isnan(x)", S, "n"),
    ("1.0 * math.isinf(x)", S, "n"), ("1.0 * math.isfinite(x)", S, "n"),
    ("math.ulp(x)", S, "z"), ("1.0 * math.isclose(x, y)", S, "dd"),
    ("1.0 * math.factorial(int(abs(x)))", S, "s"), ("1.0 * math.gcd(int(x), 6)", S, "s"),
    ("1.0 * math.lcm(int(x), 6)", S, "s"), ("1.0 * math.comb(5, int(abs(x)))", S, "s"),
    ("1.0 * math.perm(5, int(abs(x)))", S, "s"), ("1.0 * math.isqrt(int(abs(x)))", S, "s"),
    # numpy: piecewise constant
    ("np.sign(x)", M, "z"), ("np.floor(x)", M, "s"), ("np.ceil(x)", M, "s"),
    ("np.round(x, 1)", M, "s"), ("np.around(x)", M, "s"), ("np.rint(x)", M, "s"),
    ("np.trunc(x)", M, "s"), ("np.fix(x)", M, "s"), ("np.floor_divide(x, y)", M, "sp"),
    ("np.spacing(x)", M, "z"),
    # numpy: comparisons, predicates, logic
    ("1.0 * np.isnan(x)", M, "n"), ("1.0 * np.isinf(x)", M, "n"), ("1.0 * np.isfinite(x)", M, "n"),
    ("1.0 * np.isneginf(x)", M, "n"), ("1.0 * np.isposinf(x)", M, "n"),
    ("1.0 * np.signbit(x)", M, "z"), ("1.0 * np.less(x, y)", M, "dd"),
    ("1.0 * np.less_equal(x, y)", M, "dd"), ("1.0 * np.greater(x, y)", M, "dd"),
    ("1.0 * np.greater_equal(x, y)", M, "dd"), ("1.0 * np.equal(x, y)", M, "dd"),
    ("1.0 * np.not_equal(x, y)", M, "dd"), ("1.0 * np.logical_and(x > 0, y > 0)", M, "zz"),
    ("1.0 * np.logical_or(x > 0, y > 0)", M, "zz"), ("1.0 * np.logical_not(x > 0)", M, "z"),
    ("1.0 * np.logical_xor(x > 0, y > 0)", M, "zz"), ("1.0 * np.isclose(x, y)", M, "dd"),
    ("1.0 * np.allclose(x, y)", M, "dd"), ("1.0 * np.array_equal(x, y)", M, "dd"),
    ("1.0 * np.array_equiv(x, y)", M, "dd"), ("1.0 * np.all(x > 0)", M, "z"),
    ("1.0 * np.any(x > 0)", M, "z"), ("1.0 * np.iscomplex(x)", M, "n"),
    ("1.0 * np.isreal(x)", M, "n"), ("1.0 * np.isin(x, y)", M, "dd"),
    ("1.0 * np.count_nonzero(x > 0)", M, "z"),
    # numpy: index results
    ("1.0 * np.argmax(x)", M, "d"), ("1.0 * np.argmin(x, axis=0)", M, "d"),
    ("1.0 * np.argsort(x)", M, "d"), ("1.0 * np.argpartition(x, 1)", V, "d"),
    ("1.0 * np.argwhere(x > 0)", M, "z"), ("1.0 * np.flatnonzero(x > 0)", M, "z"),
    ("1.0 * np.searchsorted(np.array([-1.0, 0.0, 1.0]), x)", M, "s"),
    ("1.0 * np.digitize(x, np.array([-1.0, 0.0, 1.0]))", M, "s"),
    ("1.0 * np.nanargmax(x)", M, "D"), ("1.0 * np.nanargmin(x)", M, "D"),
    ("1.0 * np.lexsort((x, y))", V, "dd"), ("1.0 * np.nonzero(x > 0)[0]", M, "z"),
    ("1.0 * np.ravel_multi_index((np.argmax(x, axis=0), np.argmin(x, axis=0)), (3, 3))", M,
     "d"),
    ("1.0 * np.unravel_index(np.argmax(x), (2, 3))[1]", M, "d"),
    # numpy: integer bit operations of integer parts
    ("1.0 * np.bitwise_and(np.floor(x).astype(int), 3)", M, "s"),
    ("1.0 * np.bitwise_or(np.floor(x).astype(int), 3)", M, "s"),
    ("1.0 * np.bitwise_xor(np.floor(x).astype(int), 3)", M, "s"),
    ("1.0 * np.invert(np.floor(x).astype(int))", M, "s"),
    ("1.0 * np.left_shift(np.abs(np.floor(x)).astype(int), 1)", M, "s"),
    ("1.0 * np.right_shift(np.abs(np.floor(x)).astype(int), 1)", M, "s"),
    ("1.0 * np.gcd(np.floor(x).astype(int), 6)", M, "s"),
    ("1.0 * np.lcm(np.floor(x).astype(int), 6)", M, "s"),
    # numpy: constructors from shapes (and *_like of a differentiated array)
    ("np.zeros_like(x) + np.ones_like(x)", M, "n"), ("0.0 * np.empty_like(x)", M, "n"),
    ("np.zeros(np.shape(x)) + np.ones(np.size(x)).sum() + np.ndim(x)", M, "n"),
    ("0.0 * np.empty(3) + np.arange(3) * x[0, 0] ** 0", M, "p"),
    ("np.eye(2) + np.identity(2) + np.tri(2) + np.broadcast_shapes(x.shape, (1, 3))[0]", M, "n"),
    ("np.bartlett(4) + np.blackman(4) + np.hamming(4) + np.hanning(4)", V, "n"),
    ("1.0 * np.indices((2, 3)) + 1.0 * np.diag_indices(2)[0][0]", M, "n"),
    ("1.0 * np.tril_indices(3)[0] + 1.0 * np.triu_indices(3)[1]", M, "n"),
    ("1.0 * np.tril_indices_from(x)[0] + 1.0 * np.triu_indices_from(x)[1]", (3, 3), "n"),
    ("1.0 * np.diag_indices_from(x)[0]", (3, 3), "n"),
]]

#: marked callables with no number-valued result of a float argument to check
NOT_NUMBERS = {
    "builtins.id": "an object's identity", "builtins.isinstance": "a type test",
    "builtins.print": "output", "builtins.range": "a range of integers",
    "builtins.repr": "a string", "builtins.slice": "an index object",
    "builtins.str": "a string", "builtins.type": "a type",
    "numpy.dtype": "a dtype", "numpy.iscomplexobj": "a type test",
    "numpy.isrealobj": "a type test", "numpy.isscalar": "a type test",
    "numpy.isdtype": "a dtype test", "numpy.issubdtype": "a dtype test",
    "numpy.can_cast": "a dtype test", "numpy.promote_types": "a dtype",
    "numpy.result_type": "a dtype", "numpy.iterable": "a type test",
    "numpy.shares_memory": "a memory test", "numpy.may_share_memory": "a memory test",
    "numpy.einsum_path": "a contraction plan", "numpy.shape": "a shape",
    "numpy.size": "a size", "numpy.ndim": "a number of axes",
    "numpy.broadcast_shapes": "a shape",
    "numpy.linalg.matrix_rank": "an integer rank (numpy.linalg: tests/unit/test_rules_linalg.py)",
    "numpy.fft.fftfreq": "sample frequencies of a length",
    "numpy.fft.rfftfreq": "sample frequencies of a length",
}
assert math  # (the table names math functions in strings)
