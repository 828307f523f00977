"""Run-time checks of what user-defined derivative rules return.

Generated code calls these around the user's ``custom_vjp`` forward and
backward functions and ``custom_jvp`` rules.  Each returns its first
argument (``check_bwd_output`` with ``None`` cotangents made zeros), so to
the transforms it is the identity in that argument and constant in the
others (``s2s/rules/custom_checks.py``).  A mismatch raises ``TypeError``
(structure) or ``ValueError`` (shape) naming the rule and what differs,
as JAX does when it traces the rule.
"""
from __future__ import annotations

import numpy as np

from .adjoint import zeros_like
from .tree import tree_flatten


def _structure(x):
    return tree_flatten(x)[1]


def _describe(x) -> str:
    leaves, tree = tree_flatten(x)
    shapes = ", ".join(str(np.shape(v)) for v in leaves)
    return f"{tree} with leaf shapes [{shapes}]"


def _same_shapes(a, b, what: str, rule: str) -> None:
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    if ta != tb:
        raise TypeError(f"{rule}: {what} has structure {tb}, expected {ta}")
    for i, (x, y) in enumerate(zip(la, lb)):
        if np.shape(x) != np.shape(y):
            where = f" (leaf {i})" if len(la) > 1 else ""
            raise ValueError(f"{rule}: {what}{where} has shape {np.shape(y)}, expected "
                             f"{np.shape(x)}")


def check_fwd_output(result, rule):
    """``result`` of a ``custom_vjp`` forward function: must be a pair ``(out, residuals)``."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        got = f"a {type(result).__name__} of length {len(result)}" \
            if isinstance(result, (tuple, list)) else f"a {type(result).__name__}"
        raise TypeError(f"{rule}: a custom_vjp forward function must return a pair "
                        f"(primal_out, residuals), got {got}")
    return result


def check_bwd_output(cts, primals, rule):
    """``cts`` from a ``custom_vjp`` backward function: a tuple with one cotangent per
    differentiable argument (``primals``), each shaped like its argument; ``None``
    stands for a zero cotangent."""
    n = len(primals)
    if not isinstance(cts, (tuple, list)):
        raise TypeError(f"{rule}: a custom_vjp backward function must return a tuple with "
                        f"one cotangent per differentiable argument ({n}), got a "
                        f"{type(cts).__name__}")
    if len(cts) != n:
        raise TypeError(f"{rule}: a custom_vjp backward function must return one cotangent "
                        f"per differentiable argument: expected {n}, got {len(cts)}")
    out = []
    for i, (c, p) in enumerate(zip(cts, primals)):
        if c is None:
            out.append(zeros_like(p))
            continue
        _same_shapes(p, c, f"the cotangent of argument {i}", rule)
        out.append(c)
    return tuple(out)


def check_jvp_output(result, rule):
    """``result`` of a ``custom_jvp`` rule: a pair ``(primal_out, tangent_out)`` of the same
    structure and shapes."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        got = f"a {type(result).__name__} of length {len(result)}" \
            if isinstance(result, (tuple, list)) else f"a {type(result).__name__}"
        raise TypeError(f"{rule}: a custom_jvp rule must return a pair "
                        f"(primal_out, tangent_out), got {got}")
    _same_shapes(result[0], result[1], "the tangent output", rule)
    return result
