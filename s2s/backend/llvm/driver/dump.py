"""``s2s dump --mode llvm|asm``: the LLVM IR (or machine code) jit makes for a function.

Contract: ``llvm_module_text(jitted, values, stage="opt", asm=False)`` returns the module
``jitted`` (a ``core.jit.Jitted``: its ``source_ir`` and ``describe`` are read) compiles
for these example values: ``stage="unopt"`` the IR as lowered, ``"opt"`` after LLVM's O3
pipeline; ``asm=True`` the assembly of the optimised module.  Deterministic for the same
function and signature.  ``cli/dump_llvm.py`` makes the ``Jitted`` (of the function or
of its gradient).
"""
from __future__ import annotations

from . import engine
from .compile import param_types
from .module import build_module


def llvm_module_text(j, values, stage="opt", asm=False) -> str:
    func, load_free = j.source_ir(values)
    mt = build_module(func, param_types(func, list(values) + list(load_free()), j.describe),
                      j.boundscheck)
    if asm:
        return engine.asm(engine.optimise(mt.text))
    return mt.text if stage == "unopt" else engine.optimise(mt.text)
