"""Constructors and small array helpers that the IR names as callables.

The IR writes every operation as a call of a Python callable; building a
tuple, list or dict is a call of one of these.  The Python emitter prints
them as literals (``(a, b)``, ``[a, b]``, ``{k: v}``), so generated code
rarely calls them, but they keep the IR uniform and executable.
"""
from __future__ import annotations

import numpy as np


def make_tuple(*items):
    """``(a, b, ...)``"""
    return items


def make_list(*items):
    """``[a, b, ...]``"""
    return list(items)


def make_dict(*keys_and_values):
    """``{k0: v0, k1: v1, ...}`` from ``k0, v0, k1, v1, ...``."""
    it = iter(keys_and_values)
    return {k: v for k, v in zip(it, it)}


def astype(x, dtype):
    """``x.astype(dtype)``: a copy of ``x`` converted to ``dtype``."""
    return np.asarray(x).astype(dtype)


def dtype_of(x):
    """``x.dtype`` for arrays and numpy scalars, numpy's dtype of Python numbers."""
    return np.result_type(x)


def flatten(x):
    """``x.flatten()``: a flat copy."""
    return np.array(x).reshape(-1)


def item(x):
    """``x.item()``: the Python scalar of a one-element array or scalar."""
    return np.asarray(x).item()


def call_method(obj, name, *args, **kwargs):
    """``obj.name(*args, **kwargs)`` (``obj(*args)`` when ``name`` is ``__call__``)."""
    if name == "__call__":
        return obj(*args, **kwargs)
    return getattr(obj, name)(*args, **kwargs)


def apply_call(fn, layout, *operands):
    """``fn(a, *s, k=v, **d)``: a call with argument unpacking, as the frontend writes it
    before the inliner knows what the unpacked values hold (``passes/unpacking.py``
    replaces it by a plain call).  ``layout`` has one entry per operand: ``"a"`` a
    positional argument, ``"*"`` an iterable unpacked into positional arguments,
    ``("k", name)`` a keyword argument, ``"**"`` a mapping unpacked into keywords."""
    args, kwargs = [], {}
    for tag, value in zip(layout, operands):
        if tag == "a":
            args.append(value)
        elif tag == "*":
            args.extend(value)
        else:
            items = value.items() if tag == "**" else ((tag[1], value),)
            for k, v in items:
                if k in kwargs:
                    raise TypeError(f"{getattr(fn, '__name__', fn)}() got multiple values "
                                    f"for keyword argument {k!r}")
                kwargs[k] = v
    return fn(*args, **kwargs)


def raise_error(error):
    """Raise ``error`` (generated code's stand-in for code that could not be made)."""
    raise error


def with_cause(error, cause):
    """``error`` with ``__cause__`` set as ``raise error from cause`` sets it (what that
    statement raises); ``cause`` None suppresses the context, as in Python."""
    if isinstance(error, type):
        error = error()
    if isinstance(cause, type):
        cause = cause()
    error.__cause__ = cause
    error.__suppress_context__ = True
    return error


def reversed_range(r):
    """The range ``r`` run backwards, itself a range (so it can be reversed again):
    the iterations of an adjoint loop."""
    return r[::-1]


def iteration_items(x):
    """What a loop iterates over, as a sequence that can be run again backwards:
    ``x`` itself if it is a range, list, tuple or array, else ``list(x)``."""
    return x if isinstance(x, (range, list, tuple, np.ndarray)) else list(x)


def format_string(template, *values):
    """``template.format(*values)``: what an f-string computes (``f"{x!r:>4}"`` is
    ``format_string("{!r:>4}", x)``)."""
    return template.format(*values)


def format_percent(template, values):
    """``template % values`` for a string or bytes template (printf-style formatting)."""
    return template % values
