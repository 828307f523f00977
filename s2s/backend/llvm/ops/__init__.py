"""Which calls the jit compiles: the call table and its handlers for Python and numpy.

``calls`` (the table: one type rule and lowering per callable, overloads by operand
kind, the refusal naming the call), and the handlers it registers: ``numbers``
(arithmetic, comparisons, math functions, casts), ``ops_more``, ``arrays`` (tuples,
ranges, slices, shapes, indexing, creation, reductions, products), ``build`` (arange,
linspace, full, eye, reshape, ravel), ``fancy`` (advanced-index reads and writes),
``lists``, ``dicts``, ``linalg`` and ``norm`` (``numpy.linalg``), ``printing``.
"""
