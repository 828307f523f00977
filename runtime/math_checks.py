"""What ``math``'s functions raise, checked on results computed with numpy's.

Batched code (``vmap``) computes ``math.exp(x)`` for every example at once with
``np.exp``, which returns ``inf``/``nan`` where ``math.exp`` raises.  Each check
here takes such a result ``y`` and the arguments, returns ``y`` unchanged, and
raises what CPython's ``math`` raises for the first element (in memory order)
where it would have:

* ``math_domain_checked(y, x)``: ``ValueError("math domain error")`` for a NaN from
  a number or an infinity from a finite number (a pole: ``log(0)``, ``atanh(1)``);
* ``math_range_checked(y, x)``: the same ``ValueError`` for a NaN from a number,
  ``OverflowError("math range error")`` for an infinity from a finite number
  (CPython's ``can_overflow`` functions: ``exp``, ``expm1``, ``cosh``, ``sinh``,
  ``exp2``);
* ``gamma_checked(y, x)``: ``ValueError`` at the poles (integers <= 0) and for a NaN
  from a number, ``OverflowError`` for another infinity from a finite number;
* ``pow_checked(y, a, c)``: ``ValueError`` for a NaN from two numbers
  (``pow(-8, 1/3)``) and for an infinity from ``a == 0``, ``OverflowError`` for
  another infinity from two finite numbers;
* ``fmod_checked(y, a, c)``: ``ValueError`` for a NaN from two numbers;
* ``ldexp_checked(y, x)``: ``OverflowError`` for an infinity from a finite ``x``.

To the transforms each is the identity in ``y`` and constant in the arguments
(``s2s/rules/math_checks.py``).
"""
from __future__ import annotations

import numpy as np


def _raise_first(domain, overflow):
    """Raise for the first element where ``domain`` (ValueError) or ``overflow``
    (OverflowError) holds, if any (the two never hold at one element)."""
    codes = np.ravel(np.where(domain, 1, 0) + np.where(overflow, 2, 0))
    if np.any(codes != 0):
        if codes[np.argmax(codes != 0)] == 1:
            raise ValueError("math domain error")
        raise OverflowError("math range error")


def math_domain_checked(y, x):
    blown = np.isinf(y) & np.isfinite(x)
    _raise_first(np.isnan(y) & ~np.isnan(x) | blown, blown & False)
    return y


def math_range_checked(y, x):
    _raise_first(np.isnan(y) & ~np.isnan(x), np.isinf(y) & np.isfinite(x))
    return y


def gamma_checked(y, x):
    blown = np.isinf(y) & np.isfinite(x)
    pole = (x <= 0) & (np.floor(x) == x)
    _raise_first(np.isnan(y) & ~np.isnan(x) | blown & pole, blown & ~pole)
    return y


def pow_checked(y, a, c):
    numbers = ~np.isnan(a) & ~np.isnan(c)
    blown = np.isinf(y) & np.isfinite(a) & np.isfinite(c)
    _raise_first(np.isnan(y) & numbers | blown & (a == 0), blown & (a != 0))
    return y


def fmod_checked(y, a, c):
    _raise_first(np.isnan(y) & ~np.isnan(a) & ~np.isnan(c), np.isnan(y) & False)
    return y


def ldexp_checked(y, x, i):
    blown = np.isinf(y) & np.isfinite(x)
    _raise_first(blown & False, blown)
    return y
