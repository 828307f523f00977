"""Markers: calls that are the identity on values and tell the transforms something.

``stop_gradient(x)`` returns ``x`` (any pytree) unchanged; its derivative is
zero in every mode (JAX's ``lax.stop_gradient``, PyTorch's ``detach()``).
Outside the transforms it is the identity function.
"""
from __future__ import annotations


def stop_gradient(x):
    """``x`` itself; as a primitive: JVP 0, VJP 0, batching and lowering the identity."""
    return x


def refused_tangent(message):
    """The tangent forward mode cannot compute (a ``custom_vjp`` call's): a placeholder
    that the transform refuses, with ``message``, when dead-code elimination leaves it
    in the code (the tangent is needed); where it is dead (the value is used only for
    its shape, say) the placeholder is removed.  Never run: running it raises."""
    raise RuntimeError(message)
