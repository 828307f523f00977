"""The transformation pipeline, from a Python function to generated functions.

``front(fn)``: frontend (lower) -> inline user calls -> single exit; cached
per function object.  ``reverse(...)``: SSA -> copy propagation -> reverse
mode -> DCE.  Each
step is a pass over the IR with a stated contract (see the pass modules).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Dict, Sequence

from .ad.reverse import ParamInfo, Reverse
from .emit.load import load
from .emit.python import Emitted, emit_function
from .frontend.lower import lower_with_statics, statics_unchanged
from .ir import nodes as ir
from .passes.copyprop import copy_propagate
from .passes.dce import dce
from .passes.inline import inline_calls
from .passes.single_exit import single_exit
from .passes.ssa import to_ssa


@dataclass(frozen=True)
class Front:
    """A user function in IR form and its free variables (read at every call).

    ``statics`` are the free names resolved as program text (functions,
    classes, modules), of the function and every callee inlined into it;
    ``current()`` says whether they all still hold the same objects.
    """

    func: ir.Function
    freevars: Dict[str, object]
    statics: tuple = ()

    def current(self) -> bool:
        return statics_unchanged(self.statics)


_LOWERED = weakref.WeakKeyDictionary()
_FRONT = weakref.WeakKeyDictionary()


def _lowered_full(fn):
    hit = _LOWERED.get(fn)
    if hit is None or not statics_unchanged(hit[2]):
        hit = lower_with_statics(fn)
        _LOWERED[fn] = hit
    return hit


def lowered(fn):
    """``(ir_function, freevars)`` of ``fn`` from the frontend, cached per function."""
    return _lowered_full(fn)[:2]


def front(fn) -> Front:
    hit = _FRONT.get(fn)
    if hit is None or not hit.current():
        statics = []

        def lowered(f):
            func, freevars, st = _lowered_full(f)
            statics.extend(st)
            return func, freevars

        func, freevars = lowered(fn)
        func, freevars = inline_calls(func, freevars, lowered)
        hit = Front(single_exit(func), freevars, tuple(statics))
        _FRONT[fn] = hit
    return hit


def reverse(fr: Front, wrt: Sequence[str], info: Dict[str, ParamInfo], *, has_aux=False,
            holomorphic=False, returns="grad", single=True, name=None) -> ir.Function:
    func = copy_propagate(to_ssa(fr.func))
    name = name or f"{returns}_{fr.func.name}"
    out = Reverse(func, wrt, info, has_aux, holomorphic).build(returns, name, single)
    return dce(out)


def emit(func: ir.Function) -> Emitted:
    return emit_function(func)


def compile_function(func: ir.Function):
    emitted = emit(func)
    return load(emitted, func.name), emitted
