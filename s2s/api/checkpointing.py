"""Checkpointing (rematerialisation): trading recomputation for memory in reverse mode.

Reverse mode keeps, on its tape, every intermediate value the adjoint sweep
reads.  Two ways to keep less:

``checkpoint(f)`` (JAX's ``jax.checkpoint`` / ``jax.remat``; also a decorator)
    A call of the checkpointed ``f`` inside differentiated code stays a call
    in the primal sweep: ``f`` runs as written and records nothing.  The
    adjoint sweep calls ``f``'s vjp at the saved arguments, which runs ``f``
    again with its own tape and then its adjoint (``s2s dump`` shows
    ``t6 = _checkpoint_step_vjp(s_1, k, t3_bar)``).  So the caller's tape
    holds only ``f``'s arguments, never its intermediates, for one extra
    run of ``f``.  Gradients are those of ``f`` itself (bit for bit where the
    arithmetic is the same); forward mode calls ``f``'s jvp; second order
    works (the vjp and jvp companions are checkpointed calls again).

    * ``static_argnums``: arguments that are not differentiated (zero
      cotangents).  Every argument may steer control flow anyway: s2s
      specialises on argument kinds, not values.
    * ``policy``: what may be saved from inside ``f``.  ``None`` or
      ``checkpoint_policies.nothing_saveable`` (the default: only the
      arguments); ``checkpoint_policies.everything_saveable`` turns
      checkpointing off (``f`` itself is returned).  JAX's finer policies
      (``dots_saveable``, names) are not offered: s2s has no such labels.
    * ``prevent_cse`` is accepted for JAX compatibility and has no effect.

    ``f`` is a function s2s can reach by name (module level, a closure
    variable, ``checkpoint(f)(x)`` in the code), not a lambda made inside
    the differentiated function.  It must be replayable: ``print``/``input``/``open``, random numbers,
    and changes to what it does not own (its arguments, globals: index or
    attribute assignment, ``append``...) are rejected with an error quoting
    the line, because the reverse pass would repeat them.

``for i in checkpoint_loop(range(n), levels=2):`` (a per-loop option)
    In reverse mode the loop becomes one call of its *segment function*:
    ``(lo, hi, step, *state) -> state`` running iterations ``range(lo, hi,
    step)``, where the state is what the body carries from one iteration to
    the next or out of the loop (every name must be assigned before the
    loop).  The adjoint reverses the n iterations by a multi-level uniform
    schedule (``core/remat_loop.py``): with ``m = ceil(n ** (1 / levels))`` the
    range is cut into ``m`` chunks, a plain sweep snapshots the state at
    each chunk start, and the chunks are reversed last to first by the same
    rule one level down; at most ``m`` steps run under the ordinary tape.

    ==================  =========================  ============================
    levels              snapshots + tape (states)  extra primal steps
    ==================  =========================  ============================
    1                   n (the plain tape)         0
    2 (default)         ~ 2 sqrt(n)                n       (about one primal)
    L                   ~ L n^(1/L)                (L - 1) n
    ``"log"``           ~ 2 log2(n)                n log2(n)
    ==================  =========================  ============================

    Revolve's binomial schedule reaches the same memory with fewer repeats
    for a given number of snapshots; the uniform one was chosen because each
    level is one plain call of the generated segment code (fast in Python)
    and its cost is easy to state.  ``benchmarks/bench_checkpoint.py``: a
    200,000-step loop's gradient in about 1/300 of the plain tape's peak
    memory (tracemalloc) for 0.9x-1.1x its time (the plain tape's 200,000
    tuples also cost the cyclic garbage collector time).  Outside reverse mode the loop runs
    as written.  ``break``, ``continue``, ``return`` and ``else:`` in the
    loop are errors (its trip count must be its range's), as is anything
    the recomputation could not repeat.
"""
from __future__ import annotations

from types import SimpleNamespace

from ..core.remat import Remat
from s2s_runtime.markers import checkpoint_loop  # noqa: F401  (public)
from ..rules import lookup
from ..passes.callables import same_arguments


def everything_saveable(*_, **__) -> bool:
    """Policy: save every intermediate (no checkpointing)."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Policy: save nothing from inside the function, only its arguments."""
    return False


checkpoint_policies = SimpleNamespace(everything_saveable=everything_saveable,
                                      nothing_saveable=nothing_saveable)


def checkpoint(fun=None, *, prevent_cse=True, policy=None, static_argnums=()):
    """``fun`` checkpointed: reverse mode recomputes its internals instead of
    recording them (see the module docstring).  ``@checkpoint`` and
    ``@checkpoint(static_argnums=1)`` work as decorators."""
    if fun is None:
        return lambda f: checkpoint(f, prevent_cse=prevent_cse, policy=policy,
                                    static_argnums=static_argnums)
    if not callable(fun):
        raise TypeError(f"checkpoint expects a callable, got {type(fun).__name__}")
    if policy is everything_saveable:
        return fun
    if policy not in (None, nothing_saveable):
        raise ValueError("checkpoint: policy must be None, checkpoint_policies."
                         "nothing_saveable or checkpoint_policies.everything_saveable "
                         f"(s2s has no finer policies), got {policy!r}")
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if any(type(i) is not int or i < 0 for i in static_argnums):
        raise TypeError(f"checkpoint: static_argnums must be non-negative ints, "
                        f"got {static_argnums!r}")
    if isinstance(fun, Remat) and not static_argnums:
        return fun
    if lookup(fun) is not None:
        return fun  # a primitive: its rule records only its arguments already
    return Remat(fun, tuple(static_argnums))


__all__ = ["checkpoint", "remat", "checkpoint_loop", "checkpoint_policies"]

checkpoint._s2s_static_factory = True  # checkpoint(f)(x) in code: made while lowering
checkpoint._s2s_closure_arguments = same_arguments  # of a local function: passes/callables.py
remat = checkpoint
