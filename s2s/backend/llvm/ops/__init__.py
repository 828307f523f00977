"""Which calls the jit compiles: the call table and its handlers for Python and numpy.

``calls`` (the table: one type rule and lowering per callable, overloads by operand
kind, the refusal naming the call), and the handlers it registers: ``numbers``
(arithmetic, comparisons, math and other elementwise functions, casts, identity
markers), ``bitwise`` (``&``, ``|``, ``^``, ``~`` on flags and ints), ``arrays`` (tuples, ranges, slices, shapes, indexing,
creation, copies, reductions, products), ``build`` (arange, linspace, full, eye,
reshape, ravel), ``fancy`` (advanced-index reads, writes and their derivative
helpers), ``lists`` (lists that grow), ``dicts`` (dicts with constant keys),
``einsum`` (``np.einsum`` and its derivative helpers as loop nests), ``gamma``
(``gammaln``, ``digamma``, ``polygamma``, ``lgamma``, ``gamma`` elementwise), ``linalg`` and
``norm`` (``numpy.linalg``), ``printing`` (``print`` at run time).
"""

# the call table first: it registers the handler modules (importing one of them alone,
# before the table, would meet the table's modules half-initialised)
from . import calls  # noqa: E402,F401
