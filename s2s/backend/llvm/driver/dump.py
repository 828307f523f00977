"""``s2s dump --mode llvm|asm``: the LLVM IR (or machine code) jit makes for a function.

Contract: ``llvm_module_text(jitted, values, stage="opt", asm=False)`` returns the module
``jitted`` (a ``core.jit.Jitted``: its ``compiled_ir`` and ``describe`` are read) compiles
for these example values: ``stage="unopt"`` the IR as lowered, ``"opt"`` after LLVM's O3
pipeline; ``asm=True`` the assembly of the optimised module.  Deterministic for the same
function and signature.  ``cli/dump_llvm.py`` makes the ``Jitted`` (of the function or
of its gradient).

``kernel_tape_layout(jitted, values)`` (a tape-size report: ``cli/dump_llvm.tape_layout``,
``benchmarks/tape_stats.py``): per loop of the kernel as lowered (after the lean-tape
passes), the values its body pushes on each native tape per iteration and the bytes
those slots take.
"""
from __future__ import annotations

from llvmlite import ir as ll

from ....ir import nodes as ir
from ..lower.function import FunctionLowering
from ..lower import stacks
from ..lower.stacks import is_pop
from ..typing import types as T
from . import engine
from .compile import signature_form
from .engine import triple_and_layout
from .module import build_module


def llvm_module_text(j, values, stage="opt", asm=False) -> str:
    func, load_free = j.compiled_ir(values)
    func, types, _ = signature_form(func, values, load_free, j.describe)
    mt = build_module(func, types, j.boundscheck)
    if asm:
        return engine.asm(engine.optimise(mt.text))
    return mt.text if stage == "unopt" else engine.optimise(mt.text)


def _direct(body):
    """The statements of ``body`` outside nested loops (through ``if`` branches)."""
    for s in body:
        yield s
        if isinstance(s, ir.If):
            yield from _direct(s.body)
            yield from _direct(s.orelse)


def kernel_tape_layout(j, values) -> list:
    """Per loop of the kernel ``j`` (a ``core.jit.Jitted``) compiles for ``values``, in
    source order, the loops whose body pushes on a native tape outside its nested loops
    (those are reported on their own): ``{"line", "col", "depth", "source", "pushes":
    {tape: [type, ...]}, "slot_bytes": {tape: bytes or None}, "tape_bytes": {tape: bytes},
    "bytes_per_iteration", "array_pushes"}``.  ``bytes_per_iteration`` is the bytes the
    items take on the tapes themselves (``tape_bytes`` per tape: each item the size of its
    type, or ``slot_bytes`` where a tape has fixed-size slots; an upper bound where a
    push sits in an ``if``); ``array_pushes`` counts pushed
    arrays, each of which also keeps its buffer alive until popped.  Read from the
    lowered IR: nothing is compiled or run."""
    func, load_free = j.compiled_ir(values)
    func, types, _ = signature_form(func, values, load_free, j.describe)
    module = ll.Module(name="tape_layout")
    module.triple, module.data_layout = triple_and_layout()
    L = FunctionLowering(module, func, types, "tape_layout.kernel", j.boundscheck)
    out = []

    def visit(body, depth):
        for s in body:
            if isinstance(s, (ir.For, ir.While)):
                inner = s.body if isinstance(s, ir.For) else s.test_body + s.body
                pushes, arrays, sizes = {}, 0, {}
                for x in _direct(inner):
                    if isinstance(x, ir.Assign) and x.target.name in L.stack_slot \
                            and not is_pop(x, L.stacks) and isinstance(x.value, ir.Call) \
                            and len(x.value.args) == 2:
                        v = x.value.args[0]
                        t = L.types.get(getattr(v, "name", ""))
                        pushes.setdefault(x.target.name, []).append(str(t) if t else "const")
                        arrays += isinstance(t, T.Array)
                        sizes[x.target.name] = sizes.get(x.target.name, 0) + (
                            stacks.item_size(L, x.target.name, t) if t is not None
                            else L.stack_slot[x.target.name] or 8)
                if pushes:
                    out.append({
                        "line": s.loc.line, "col": s.loc.col, "depth": depth,
                        "source": s.loc.text.strip(), "pushes": pushes,
                        "slot_bytes": {k: L.stack_slot[k] for k in pushes},
                        "tape_bytes": sizes,
                        "bytes_per_iteration": sum(sizes.values()),
                        "array_pushes": arrays})
                visit(inner, depth + 1)
            else:
                for block in ir.sub_blocks(s):
                    visit(block, depth)
    visit(L.func.body, 0)
    return out
