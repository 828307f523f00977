"""``power(x, y)``: the power in derivative code, ``x ** y`` with numpy's value at 0.

The derivative of ``x ** y`` in ``x`` is ``y * x ** (y - 1)``.  At ``x == 0`` with
``0 < y < 1`` (``x ** 0.5``, ``abs(x) ** 0.2``) the function is finite but its
derivative is infinite, and Python's ``0.0 ** -0.5`` raises ``ZeroDivisionError``
where numpy and JAX give ``inf``.  The derivative templates of ``**`` call this
helper instead of ``**`` so that the derivative is ``inf`` (``nan`` for
``inf * 0``), as in numpy and JAX, while the user's own ``**`` keeps Python's
semantics.  Contract: ``x ** y`` whenever that does not raise
``ZeroDivisionError`` (so Python numbers stay Python numbers: a negative float to a
fractional power is a Python complex, as in the primal); otherwise (``x`` a Python
zero, ``y`` negative or complex) numpy's power of ``x`` as a float64 or complex128
scalar, with numpy's divide-by-zero warning.
"""
import numpy as np


def power(x, y):
    """``x ** y``, or numpy's value (``inf``...) where Python raises ZeroDivisionError."""
    try:
        return x ** y
    except ZeroDivisionError:
        complex_ = isinstance(x, complex) or isinstance(y, complex)
        return np.power(np.complex128(x) if complex_ else np.float64(x), y)
