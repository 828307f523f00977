"""``s2s dump --mode llvm|asm``: the LLVM IR (or machine code) ``s2s.jit`` makes for a function.

Contract: ``llvm_text(fn, values, grad_argnums=None, stage="opt", asm=False,
boundscheck=True)`` returns the module ``jit(fn)`` (``jit(grad(fn, grad_argnums))`` when
``grad_argnums`` is given) compiles for these example values: ``stage="unopt"`` the IR
as lowered, ``"opt"`` after LLVM's O3 pipeline; ``asm=True`` the assembly of the
optimised module (``backend/llvm/dump.py``).  Deterministic for the same function and
signature.  ``tape_layout(fn, values, grad_argnums=None, boundscheck=True)``: the tape
each loop of that kernel pushes per iteration (``backend/llvm/driver/dump.py``'s
``kernel_tape_layout``).
"""
from __future__ import annotations

from ..api.gradients import grad
from ..backend.llvm.driver.dump import kernel_tape_layout, llvm_module_text
from ..core.jit import Jitted


def llvm_text(fn, values, grad_argnums=None, stage="opt", asm=False, boundscheck=True) -> str:
    target = grad(fn, argnums=grad_argnums) if grad_argnums is not None else fn
    return llvm_module_text(Jitted(target, boundscheck=boundscheck), values, stage, asm)


def tape_layout(fn, values, grad_argnums=None, boundscheck=True) -> list:
    target = grad(fn, argnums=grad_argnums) if grad_argnums is not None else fn
    return kernel_tape_layout(Jitted(target, boundscheck=boundscheck), values)
