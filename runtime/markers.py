"""Markers: calls that are the identity on values and tell the transforms something.

``stop_gradient(x)`` returns ``x`` (any pytree) unchanged; its derivative is
zero in every mode (JAX's ``lax.stop_gradient``, PyTorch's ``detach()``).
Outside the transforms it is the identity function.

``checkpoint_loop(range(n), levels=2)`` returns the range (checked): ``for i in
checkpoint_loop(range(n)):`` runs as ``for i in range(n):``, and reverse mode checkpoints
the loop (``s2s.checkpoint_loop``; the transforms replace the call, see
``s2s/passes/checkpoint_loops.py``).  ``range_bounds(r, levels)`` is what the replaced
loop calls: ``(start, stop, step, levels)``, checked.
"""
from __future__ import annotations


def stop_gradient(x):
    """``x`` itself; as a primitive: JVP 0, VJP 0, batching and lowering the identity."""
    return x


def checkpoint_loop(r, levels=2):
    """``r`` itself: ``for i in checkpoint_loop(range(n)):`` runs as ``for i in range(n):``;
    reverse mode checkpoints the loop (see ``s2s.checkpoint``)."""
    range_bounds(r, levels)
    return r


def range_bounds(r, levels=2):
    """``(start, stop, step, levels)`` of a checkpointed loop, checked."""
    if type(r) is not range:
        raise TypeError(f"checkpoint_loop runs over a range, got {type(r).__name__}")
    if not (levels == "log" or (type(levels) is int and levels >= 1)):
        raise ValueError(f"checkpoint_loop: levels must be an int >= 1 or 'log', got {levels!r}")
    return r.start, r.stop, r.step, levels


def refused_tangent(message):
    """The tangent forward mode cannot compute (a ``custom_vjp`` call's): a placeholder
    that the transform refuses, with ``message``, when dead-code elimination leaves it
    in the code (the tangent is needed); where it is dead (the value is used only for
    its shape, say) the placeholder is removed.  Never run: running it raises."""
    raise RuntimeError(message)
