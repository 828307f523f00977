"""``s2s dump --mode llvm|asm``: the LLVM IR (or machine code) jit makes for a function.

Contract: ``llvm_text(fn, values, grad_argnums=None, stage="opt", asm=False)``
returns the module jit compiles for these example values (the gradient's
when ``grad_argnums`` is given): ``stage="unopt"`` the IR as lowered,
``"opt"`` after LLVM's O3 pipeline; ``asm=True`` the assembly of the
optimised module.  Deterministic for the same function and signature.
"""
from __future__ import annotations

from . import engine
from .compile import param_types
from .module import build_module


def llvm_text(fn, values, grad_argnums=None, stage="opt", asm=False, boundscheck=True) -> str:
    from ...api.gradients import grad
    from ...core.jit import Jitted

    target = grad(fn, argnums=grad_argnums) if grad_argnums is not None else fn
    j = Jitted(target, boundscheck=boundscheck)
    func, load_free = j.source_ir(values)
    mt = build_module(func, param_types(func, list(values) + list(load_free()), j.describe),
                      boundscheck)
    if asm:
        return engine.asm(engine.optimise(mt.text))
    return mt.text if stage == "unopt" else engine.optimise(mt.text)
