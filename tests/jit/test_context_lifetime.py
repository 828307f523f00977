"""What a compiled signature keeps between calls lives as long as anything that can run it.

A jitted signature's context block (``callpath.context_block``) holds the tape
buffers its kernel keeps from call to call, and the builtin of the fast entry
(``fastcall.builtin``) points at a method definition it does not own.  Both used
to be owned by the Python wrapper (``Specialisation``/``Caller``), which can go
away first: when a ``Jitted`` was collected, CPython's deallocation of the builtin
read its freed method definition, and a builtin still held ran with freed tape
buffers.  That was the segmentation fault at interpreter exit after the whole suite
had passed.  The checks run in a child interpreter under ``PYTHONMALLOC=debug``,
which overwrites freed memory at once, so a use after free fails every time
(before the fix: a segmentation fault on the first orphaned call) instead of
depending on what the allocator reuses.
"""
from __future__ import annotations

import gc
import math
import os
import subprocess
import sys
import textwrap

import pytest

import s2s
from s2s.backend.llvm.values import abi

CHILD = textwrap.dedent("""
    import gc, math, sys
    import s2s

    def poly(x):
        return x * x + 1.0

    def iterate(x, n):
        acc = x
        for i in range(n):
            acc = math.sin(acc) * x + 0.5
        return acc

    def orphan(jitted, *args):
        jitted(*args)  # compiles, and caches the fast entry on the Jitted
        (builtin, _), = jitted.fast.values()
        return builtin

    primal = orphan(s2s.jit(poly), 3.0)
    derivative = orphan(s2s.jit(s2s.grad(iterate)), 0.7, 10)
    gc.collect()
    scribble = [[k, float(k)] for k in range(20000)]  # reuse whatever was freed
    out = [primal(2.0), derivative(0.7, 10), derivative(0.3, 5000)]  # 5000: the tape grows
    kept = s2s.jit(s2s.grad(iterate))  # alive at exit: freed while the interpreter ends
    out.append(kept(1.1, 300))
    for _ in range(5):  # wrappers with fast entries collected one after another
        j = s2s.jit(poly)
        j(1.0)
        del j
    print(repr(out))
""")


def _central_difference(f, x, *rest, h=1e-6):
    return (f(x + h, *rest) - f(x - h, *rest)) / (2 * h)


def _iterate(x, n):
    acc = x
    for _ in range(n):
        acc = math.sin(acc) * x + 0.5
    return acc


def test_fast_entries_and_tapes_outlive_their_wrappers(tmp_path):
    script = tmp_path / "orphans.py"  # a file: s2s reads the functions' source
    script.write_text(CHILD)
    env = dict(os.environ, PYTHONMALLOC="debug", PYTHONFAULTHANDLER="1")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Exception ignored" not in run.stderr, run.stderr[-3000:]
    got = eval(run.stdout.strip().splitlines()[-1])
    want = [2.0 * 2.0 + 1.0, _central_difference(_iterate, 0.7, 10),
            _central_difference(_iterate, 0.3, 5000), _central_difference(_iterate, 1.1, 300)]
    assert got == pytest.approx(want, rel=1e-6, abs=1e-9)


def test_fast_entry_keeps_its_context_block_and_method_definition():
    j = s2s.jit(s2s.grad(_iterate))
    assert j(0.7, 50) == pytest.approx(_central_difference(_iterate, 0.7, 50), rel=1e-6)
    spec, = j.specs.values()
    ctx = spec.fast.__self__
    assert ctx is spec.caller.ctx
    assert ctx[abi.TAPES] != 0  # the kernel kept its tape buffer in the context block
    assert len(ctx.fast_methods) == 1  # the definition the builtin points at
    builtin = spec.fast
    del j, spec, ctx
    gc.collect()
    assert builtin(0.4, 2000) == pytest.approx(_central_difference(_iterate, 0.4, 2000),
                                               rel=1e-6)
