"""Work along one axis as rows: the layout every function of ``numpy_code`` loops over."""
import numpy as np

from ..registry import definline


def rows(a, axis):
    """``a`` as rows along ``axis`` (``np.moveaxis(a, axis, -1)`` flattened to 2-D; the
    flat array as one row for None)."""
    if axis is None:
        return np.ravel(a).reshape(1, -1)
    x = np.moveaxis(a, axis, -1)  # numpy's AxisError for an axis out of range
    n = x.shape[-1]
    return x.reshape(a.size // n if n > 0 else 0, n)


def unrows(res, a, axis):
    """Rows made by ``rows(a, axis)`` back in ``a``'s layout (flat for None)."""
    if axis is None:
        return res.reshape(-1)
    return np.moveaxis(res.reshape(np.moveaxis(a, axis, -1).shape), -1, axis)


# read as code wherever the functions calling them are (cumprod's tangent: by every mode)
definline(rows, unrows)
