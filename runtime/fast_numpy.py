"""numpy functions whose Python wrappers cost more than the work on small arrays.

``np.sum(x)`` on a 40-element array spends about 2 µs in numpy's Python-level
dispatch and 1 µs adding; ``x.sum()`` skips the dispatch.  ``np.split`` is
written in Python and takes about 9 µs to cut an array in four.  Generated
code runs such calls many times per step of a loop, so the emitter
(``s2s/emit/expr.py``) names these equivalents in place of the numpy
functions (``FAST_EQUIVALENTS``), and the frontend reads them back as the
numpy functions (``NUMPY_OF``), so every rule and transform sees numpy's.

Contract: each function gives exactly what the numpy function gives — the same
values, dtype, shape, views and errors — for every argument: a plain
``ndarray`` takes the method (numpy's own wrappers call the very same
reductions), anything else goes to numpy.
"""
import numpy as np


def _method(name, numpy_fn):
    def fast(*args, **kwargs):
        if args and type(args[0]) is np.ndarray:
            return getattr(args[0], name)(*args[1:], **kwargs)
        return numpy_fn(*args, **kwargs)

    fast.__name__ = fast.__qualname__ = name
    fast.__doc__ = (f"``np.{numpy_fn.__name__}``: ``a.{name}(...)`` for a plain ndarray "
                    f"``a`` (the same reduction without numpy's dispatch), numpy otherwise.")
    fast.__module__ = __name__
    return fast


sum = _method("sum", np.sum)  # noqa: A001 (the numpy name, on purpose)
mean = _method("mean", np.mean)
prod = _method("prod", np.prod)
max = _method("max", np.max)  # noqa: A001
min = _method("min", np.min)  # noqa: A001


def split(ary, indices_or_sections, axis=0):
    """``np.split``: an ndarray cut along its first axis into equal sections by slicing
    (numpy's own result: views ``ary[k*n:(k+1)*n]``); numpy for everything else (uneven
    sections raise numpy's ``ValueError``)."""
    if (type(ary) is np.ndarray and type(indices_or_sections) is int and axis == 0
            and ary.ndim and indices_or_sections > 0):
        n, rest = divmod(ary.shape[0], indices_or_sections)
        if not rest:
            return [ary[k * n:(k + 1) * n] for k in range(indices_or_sections)]
    return np.split(ary, indices_or_sections, axis)


#: numpy function -> its equivalent above (what generated code calls)
FAST_EQUIVALENTS = {np.sum: sum, np.mean: mean, np.prod: prod, np.max: max, np.min: min,
                    np.split: split}
for _alias, _fn in (("amax", np.max), ("amin", np.min)):
    if getattr(np, _alias, _fn) is not _fn:  # distinct objects in some numpy versions
        FAST_EQUIVALENTS[getattr(np, _alias)] = FAST_EQUIVALENTS[_fn]
#: id of an equivalent -> the numpy function it stands for (what the frontend reads back)
NUMPY_OF = {id(fast): numpy_fn for numpy_fn, fast in FAST_EQUIVALENTS.items()
            if numpy_fn.__name__ == fast.__name__}
