"""JVP (forward-mode) helpers of the rules in ``s2s/rules/arith.py`` and
``s2s/rules/elementwise.py``.

Plain numpy.  Each helper returns the tangent contribution of one input,
shaped like the primal result ``ans``.
"""
from __future__ import annotations

import numpy as np

from .adjoint import broadcast_like, zeros_like


def cast_jvp(t, ans):
    """Tangent of ``y = dtype(x)`` (a numpy scalar-type cast): ``t`` in ``ans``'s dtype.

    The cast is linear.  Casting a complex ``x`` to a real type keeps its real
    part (numpy, JAX), so the tangent is ``Re(t)`` -- the transpose of
    ``cast_vjp``, which sends a real ``g`` back as the complex ``g + 0j``.
    """
    if np.iscomplexobj(t) and not np.iscomplexobj(ans):
        t = np.real(t)
    out = np.asarray(t).astype(np.result_type(ans))
    return out[()] if np.ndim(ans) == 0 else out


def sum_builtin_jvp(t, ans):
    """Tangent of ``y = sum(items, start)`` from the items' tangents ``t``: ``sum_i t_i``.

    ``None`` entries (symbolic zeros) are skipped; the result is broadcast to
    ``ans``'s shape (items may broadcast against each other or ``start``).
    """
    total = None
    for v in t:
        if v is not None:
            total = v if total is None else total + v
    if total is None:
        return zeros_like(ans)
    return broadcast_like(total, ans)
