"""Custom functions in code that is run, not differentiated (``vmap``, ``jit``).

``primal_calls_inlined(func, freevars)``: every ``<f>(*args)`` (``custom.CustomCall``)
in ``func`` made a call of ``f``'s primal function (``custom.with_primal_calls``),
and every call of a callable that carries its IR (the rule calls ``<f_fwd>``,
``<f_bwd>``, ``<f_jvp>`` of derivative code, ``core/custom_calls.py``) inlined with
the user functions they call (``passes/inline.py``), until none is left.  What
remains of a rule is the user's code and the ``s2s_runtime.custom_checks`` helpers,
which the batching transform and the compiler handle like other helpers.  So a
transform that runs code uses the primal function where the program computes a
value and the user's rules where derivative code calls them: the rules are used,
never bypassed.

A call of a ``checkpoint``ed function (``remat.Remat``) is, in code that is run, a
call of the function itself (checkpointing changes what reverse mode keeps, never
a value), so it is inlined the same way.  Its derivative companions in derivative
code (the pullback ``<f>_vjp``, the pushforward ``<f>_jvp``) stand for code that
depends on the kinds of their arguments: when the values the code is specialised on
are known (``arguments``), each becomes a call site (``passes/sites.py``) expanded
to that code, the checkpointed function's vjp or jvp.
"""
from __future__ import annotations

from dataclasses import replace

from .custom import CustomCall
from .protocol import fixed_ir
from ..ir import nodes as ir


def _calls(stmts, pred) -> bool:
    for s in stmts:
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call) and pred(v.fn):
            return True
        if any(_calls(b, pred) for b in ir.sub_blocks(s)):
            return True
    return False


def _primal_of(fn, keep_custom_calls=False):
    """The function whose code computes a call of ``fn`` (None: ``fn`` is not a custom
    call or a checkpointed function, or a custom call that is kept)."""
    if isinstance(fn, CustomCall):
        return None if keep_custom_calls else fn.primal
    from .remat import Remat
    if type(fn) is Remat:
        return fn.fun
    return None


class CompanionSite:
    """A checkpointed function's pullback or pushforward (``core/remat.py``) as a call site:
    the IR it resolves to at the arguments' kinds, its keyword-only values bound."""

    def __init__(self, companion):
        self.companion = companion
        self.__name__ = self.__qualname__ = companion.__name__
        self.__module__ = getattr(companion, "__module__", None)

    def __call__(self, *args):
        return self.companion(*args)

    def __s2s_ir__(self, args=None, kwargs=None):
        if args is None:  # the IR depends on the arguments' kinds
            return None
        import types

        from ..frontend.scope import FreeVar

        fun, kw = self.companion.resolve(tuple(args))
        func, free = fun.__s2s_ir__()
        free = dict(free)
        free.update((n, FreeVar.cell(n, types.CellType(v))) for n, v in kw.items())
        return func, free


def _companion(fn) -> bool:
    from .remat import Remat
    return isinstance(fn, Remat) and type(fn) is not Remat


def _with_companion_sites(func: ir.Function) -> ir.Function:
    def site(s):
        v = getattr(s, "value", None)
        if isinstance(s, ir.Assign) and isinstance(v, ir.Call) and _companion(v.fn):
            return replace(s, value=replace(v, fn=CompanionSite(v.fn)))
        return s

    return replace(func, body=ir.map_stmts(func.body, site))


def with_primals(func: ir.Function, keep_custom_calls=False) -> ir.Function:
    """``func`` with each call of a custom (unless kept) or checkpointed function made a
    call of the function that computes its value (``custom.with_primal_calls``,
    generalised)."""
    def primal_call(s):
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call) and _primal_of(v.fn, keep_custom_calls) is not None:
            return replace(s, value=replace(v, fn=_primal_of(v.fn)))
        return s

    return replace(func, body=ir.map_stmts(func.body, primal_call))


def _opaque(fn, keep_custom_calls=False) -> bool:
    return _primal_of(fn, keep_custom_calls) is not None or _companion(fn) or (
        fixed_ir(fn) is not None
        and getattr(fn, "_s2s_custom", None) is not None)


def has_custom_calls(func: ir.Function, keep_custom_calls=False) -> bool:
    """Whether ``func`` calls a custom function (unless kept) or one of its rules."""
    return _calls(func.body, lambda fn: _opaque(fn, keep_custom_calls))


def primal_calls_inlined(func: ir.Function, freevars: dict, statics=None, limit: int = 50,
                         arguments=None, keep_custom_calls=False):
    """``(func, freevars)`` with the custom calls replaced (see the module docstring).
    With ``arguments`` (every parameter of ``func`` by name, free variables included:
    the values it is specialised on), calls of transforms (a ``custom_jvp``'s transposed
    rule, ``<f_transpose>``, in gradient code) are expanded too (``passes/sites.py``)."""
    from ..passes.containers import functional_containers
    from ..passes.inline import inline_calls
    from ..passes.out_args import out_as_writes
    from ..passes.single_exit import single_exit
    from .pipeline import lowered_full

    statics = [] if statics is None else statics

    def lowered(f):
        fn, fv, st = lowered_full(f)
        statics.extend(st)
        return fn, fv

    from ..passes.sites import expand, has_sites

    for _ in range(limit):
        if arguments is not None and _calls(func.body, _companion):
            func = _with_companion_sites(func)
        if arguments is not None and has_sites(func):
            values = {**{n: fv.load() for n, fv in freevars.items()}, **arguments}
            func, freevars = expand(func, dict(freevars), values, lowered)
        if not has_custom_calls(func, keep_custom_calls):
            return func, freevars
        if arguments is None and not _calls(func.body, lambda fn: not _companion(fn)
                                            and _opaque(fn, keep_custom_calls)):
            return func, freevars  # only companions left: nothing to expand them with
        func = with_primals(func, keep_custom_calls)
        func, freevars = inline_calls(func, dict(freevars), lowered, statics=statics)
        # the user code inlined gets what pipeline.front gives the rest: its list and dict
        # methods made values
        func = single_exit(functional_containers(out_as_writes(func)))
    return func, freevars


def front_without_custom_calls(front, arguments=None, keep_custom_calls=False):
    """A ``pipeline.Front`` with its custom calls replaced (itself if it has none);
    ``arguments`` and ``keep_custom_calls`` (the calls of custom functions themselves
    stay; their rules' calls are inlined) as for ``primal_calls_inlined``."""
    if not has_custom_calls(front.func, keep_custom_calls):
        return front
    statics = []
    func, freevars = primal_calls_inlined(front.func, front.freevars, statics,
                                          arguments=arguments,
                                          keep_custom_calls=keep_custom_calls)
    return replace(front, func=func, freevars=freevars,
                   statics=tuple(front.statics) + tuple(statics))
