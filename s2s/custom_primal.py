"""Custom functions in code that is run, not differentiated (``vmap``, ``jit``).

``primal_calls_inlined(func, freevars)``: every ``<f>(*args)`` (``custom.CustomCall``)
in ``func`` made a call of ``f``'s primal function (``custom.with_primal_calls``),
and every call of a callable that carries its IR (the rule calls ``<f_fwd>``,
``<f_bwd>``, ``<f_jvp>`` of derivative code, ``custom_calls.py``) inlined with
the user functions they call (``passes/inline.py``), until none is left.  What
remains of a rule is the user's code and the ``s2s_runtime.custom_checks`` helpers,
which the batching transform and the compiler handle like other helpers.  So a
transform that runs code uses the primal function where the program computes a
value and the user's rules where derivative code calls them: the rules are used,
never bypassed.
"""
from __future__ import annotations

from dataclasses import replace

from .custom import CustomCall, with_primal_calls
from .ir import nodes as ir


def _calls(stmts, pred) -> bool:
    for s in stmts:
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call) and pred(v.fn):
            return True
        if any(_calls(b, pred) for b in ir.sub_blocks(s)):
            return True
    return False


def _opaque(fn) -> bool:
    return isinstance(fn, CustomCall) or (
        not isinstance(fn, type) and getattr(fn, "_s2s_ir", None) is not None
        and getattr(fn, "_s2s_custom", None) is not None)


def has_custom_calls(func: ir.Function) -> bool:
    """Whether ``func`` calls a custom function or one of its rules."""
    return _calls(func.body, _opaque)


def primal_calls_inlined(func: ir.Function, freevars: dict, statics=None, limit: int = 50,
                         arguments=None):
    """``(func, freevars)`` with the custom calls replaced (see the module docstring).
    With ``arguments`` (every parameter of ``func`` by name, free variables included:
    the values it is specialised on), calls of transforms (a ``custom_jvp``'s transposed
    rule, ``<f_transpose>``, in gradient code) are expanded too (``passes/sites.py``)."""
    from .passes.inline import inline_calls
    from .passes.single_exit import single_exit
    from .pipeline import _lowered_full

    statics = [] if statics is None else statics

    def lowered(f):
        fn, fv, st = _lowered_full(f)
        statics.extend(st)
        return fn, fv

    from .passes.sites import expand, has_sites

    for _ in range(limit):
        if arguments is not None and has_sites(func):
            values = {**{n: fv.load() for n, fv in freevars.items()}, **arguments}
            func, freevars = expand(func, dict(freevars), values, lowered)
        if not has_custom_calls(func):
            return func, freevars
        func = with_primal_calls(func)
        func, freevars = inline_calls(func, dict(freevars), lowered, statics=statics)
        func = single_exit(func)
    return func, freevars


def front_without_custom_calls(front):
    """A ``pipeline.Front`` with its custom calls replaced (itself if it has none)."""
    if not has_custom_calls(front.func):
        return front
    statics = []
    func, freevars = primal_calls_inlined(front.func, front.freevars, statics)
    return replace(front, func=func, freevars=freevars,
                   statics=tuple(front.statics) + tuple(statics))
