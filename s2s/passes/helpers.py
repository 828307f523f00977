"""Run-time helpers read as code where a transform has no rule for them.

Derivative and batched code calls helpers of ``s2s_runtime`` (``rt.prod_vjp``,
``rt.as_columns``, ``rt.batch_solve``...).  A helper whose record carries the
``inline`` property (``rules.registry.definline``) is plain numpy Python: a
transform that has no rule of its own for it -- ``vmap`` without a batching
rule, ``jit`` without a lowering, reverse or forward mode without templates --
reads the helper's source and inlines it like a user function, so the mode
comes from the primitives the helper calls.  A transform that has a rule keeps
the call (the Python emitter calls the fast helper: an emission detail).

A library function whose source s2s does not read (``np.cumsum``) may carry plain
Python read in its place for some modes (``definline(fn, code=..., modes=("jit",))``).

Contract: ``helpers_inlined(func, freevars, has_rule, lowered, mode)`` returns
``(func, freevars)`` where no call of an ``inline`` helper without ``has_rule``
is left (helpers calling helpers are inlined in turn, to a fixed depth; the private
functions of ``s2s_runtime`` and ``rules/numpy_code`` a helper calls are part of its
code); the calls' operands bound once to a constant flag read the constant
(``copyprop.constants_propagated``); the IR is otherwise unchanged, single exit.
``lowered(fn) -> (ir, freevars)`` is the frontend (``pipeline.lowered``).
"""
from __future__ import annotations

import inspect
from dataclasses import replace

from ..ir import nodes as ir
from ..rules.registry import inline_code, inlined
from .containers import functional_containers
from .copyprop import constants_propagated
from .inline import inline_calls
from .single_exit import single_exit

#: how deep helpers may call helpers that are inlined in turn
DEPTH = 8


class HelperCode:
    """A helper called where the transform has no rule: a callable carrying its IR."""

    def __init__(self, fn, lowered, loc=None):
        self.fn = fn
        self._lowered = lowered
        self._loc = loc
        self.__name__ = getattr(fn, "__name__", "helper")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__module__ = getattr(fn, "__module__", None)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __s2s_ir__(self, args=None, kwargs=None):  # core/protocol.py
        func, freevars = self._lowered(inline_code(self.fn))
        func = functional_containers(func)  # its list methods as values, as for user code
        if self._loc is None:
            return func, freevars
        # the helper's statements carry the line of the call: an error in them (numpy's
        # AxisError, an unsupported operand) names the user's line, not the helper's
        loc = replace(self._loc, derived=True)
        relocated = ir.map_stmts(func.body, lambda s: replace(s, loc=loc)
                                 if getattr(s, "loc", None) is not None else s)
        return replace(func, body=relocated), freevars


#: packages of helper code: ``s2s_runtime`` and the plain Python read in place of numpy
#: functions (``rules/numpy_code``)
_CODE_PACKAGES = ("s2s_runtime.", "s2s.rules.numpy_code.")


def _private_part(fn) -> bool:
    """A private function of helper code (``s2s_runtime._is_container``,
    ``numpy_code.shapes._tiled_vjp``): part of the code of the helper that calls it
    (generated code never calls one itself)."""
    return (inspect.isfunction(fn) and fn.__name__.startswith("_")
            and (fn.__module__ or "").startswith(_CODE_PACKAGES))


def _wanted(fn, has_rule, mode=None) -> bool:
    try:
        return (inlined(fn, mode) or _private_part(fn)) and not has_rule(fn)
    except TypeError:  # an unhashable callable: never a helper
        return False


def needs_helpers(func: ir.Function, has_rule, mode=None) -> bool:
    """Whether ``func`` calls an ``inline`` helper the transform (of ``mode``: ``"jit"``,
    ...; None: one that reads only helpers read by every mode) has no rule for."""
    for s in ir.walk(func.body):
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call) and _wanted(v.fn, has_rule, mode):
            return True
    return False


def helpers_inlined(func: ir.Function, freevars: dict, has_rule, lowered, mode=None):
    """``(func, freevars)`` with the helpers ``has_rule`` refuses inlined (see above)."""
    for _ in range(DEPTH):
        if not needs_helpers(func, has_rule, mode):
            return func, freevars

        def code(s):
            v = getattr(s, "value", None)
            if isinstance(v, ir.Call) and _wanted(v.fn, has_rule, mode):
                return replace(s, value=replace(v, fn=HelperCode(v.fn, lowered,
                                                                 getattr(s, "loc", None))))
            return s

        func = replace(func, body=tuple(ir.map_stmts(func.body, code)))
        func, freevars = inline_calls(func, dict(freevars), lowered)
        func = constants_propagated(single_exit(func))  # the helpers' flags, constants
    return func, freevars
