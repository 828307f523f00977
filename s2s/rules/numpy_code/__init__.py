"""numpy functions the LLVM backend compiles from plain Python (``definline(..., code=)``).

Each function here computes what its numpy namesake computes -- values, dtype, shape
and the exception numpy raises for bad input -- with loops, indexing and the numpy
calls the jit lowers itself.  Its record says ``inline`` for the ``jit`` mode only: the
jit reads it where it has no lowering of its own (``passes/helpers.py``), so
``s2s.jit(f)`` compiles user code that calls ``np.cumsum``, and ``s2s.jit(s2s.grad(f))``
compiles the derivative templates of ``np.cumsum`` (which call ``np.cumsum`` and
``np.flip`` again) the same way.  Derivatives and batching stay the numpy function's
own rules; the Python emitter still calls numpy.

Conventions that keep the code compilable: an ``axis`` parameter is never reassigned
(the jit folds a constant parameter only while it has one value), work along an axis
happens on ``np.moveaxis(a, axis, -1)`` (a view) flattened to rows, and arrays are made
with ``np.empty``/``np.empty_like`` (the checked allocation path: numpy's
``MemoryError``/``ValueError`` for sizes it refuses).  The bodies call numpy and the
private parts they share (``rows.py``), which are marked ``inline`` for the jit too, so
it reads them in turn.  Statements read this way carry the line of the user's call, so
an error (numpy's ``AxisError`` for an axis out of range) names the user's line.

Modules: ``elementwise`` (predicates, conversions, ``astype``), ``rows`` (an axis as rows), ``scans`` (running sums and products),
``order`` (sorting, extrema, searching), ``shapes`` (flips, rolls, triangles,
rounding), ``joins`` (concatenating and stacking).
"""
from . import elementwise, joins, linear, order, products, rows, scans, series, shapes, statistics  # noqa: F401  (each registers its functions)
