"""numpy functions the LLVM backend compiles, and vmap batches, from plain Python
(``definline(..., code=)``).

Each function here computes what its numpy namesake computes -- values, dtype, shape
and the exception numpy raises for bad input -- with loops, indexing and the numpy
calls the jit lowers itself.  Its record says ``inline`` for the ``jit`` and ``vmap``
modes: each reads it where it has no lowering or batching rule of its own
(``passes/helpers.py``), so ``s2s.jit(f)`` compiles user code that calls ``np.cumsum``,
``s2s.jit(s2s.grad(f))`` compiles the derivative templates of ``np.cumsum`` (which call
``np.cumsum`` and ``np.flip`` again) the same way, and ``s2s.vmap(f)`` of code calling
``np.diff`` batches ``np.diff``'s code.  Derivatives stay the numpy function's own
rules; the Python emitter still calls numpy.  (``linear.py``'s ``apply_linear`` is read
by the jit only: it compiles some of the maps.)

Conventions that keep the code compilable: an ``axis`` parameter is never reassigned
(the jit folds a constant parameter only while it has one value), work along an axis
happens on ``np.moveaxis(a, axis, -1)`` (a view) flattened to rows, and arrays are made
with ``np.empty``/``np.empty_like`` (the checked allocation path: numpy's
``MemoryError``/``ValueError`` for sizes it refuses).  The bodies call numpy and the
private parts they share (``rows.py``), which are marked ``inline`` for the jit too, so
it reads them in turn.  Statements read this way carry the line of the user's call, so
an error (numpy's ``AxisError`` for an axis out of range) names the user's line.

Modules: ``elementwise`` (predicates, conversions, ``astype``), ``norms`` (vector norms),
``rows`` (an axis as rows), ``sequences`` (spaced samples, windows, triangles),
``series`` (polynomials, interpolation, convolution),
``statistics`` (variance, NaN reductions, covariance), ``scans`` (running sums and products),
``order`` (sorting, extrema, searching), ``shapes`` (flips, rolls, triangles,
rounding, taking), ``joins`` (concatenating, stacking, splitting), ``products`` (tensor
products, inner products, matrix powers), ``linear`` (linear maps of derivatives),
``pads`` (``np.pad``), ``array_api`` (``np.linalg``'s array-API names as their numpy
namesakes), ``special`` (``scipy.special``'s elementwise functions), ``ufunc_methods``
(``np.add.reduce`` and the other ufunc reductions and running reductions as the numpy
functions they equal; the frontend reads the methods as these).
"""
# each module registers its functions
from . import (array_api, elementwise, joins, linear, norms, order, pads, products,  # noqa: F401
               rows, scans, sequences, series, shapes, special, statistics, ufunc_methods)
