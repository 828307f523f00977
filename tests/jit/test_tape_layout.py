"""``s2s.cli.dump_llvm.tape_layout``: the per-loop tape report of a compiled gradient
(used by ``benchmarks/tape_stats.py``), checked against the tape capacity the compiled
kernel actually reserves (the context block's capacity words, ``abi``), and
``tape_stats.loop_report`` (Python mode) against the tape the generated code leaves."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

import s2s
from s2s.backend.llvm.values import abi
from s2s.cli.dump_llvm import tape_layout

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _recurrence(x):
    s = 0.5
    for i in range(x.shape[0]):
        s = math.sin(x[i] * s) + s
    return s


def _straight(x):
    return math.sin(x[0]) * x[1]


def test_a_recurrence_reports_its_loop_and_the_compiled_tape_holds_it():
    x = np.linspace(0.1, 1.0, 3000)
    rows = tape_layout(_recurrence, (x,), grad_argnums=0)
    assert len(rows) == 1
    row, = rows
    assert row["source"] == "for i in range(x.shape[0]):" and row["depth"] == 0
    assert row["line"] == _recurrence.__code__.co_firstlineno + 2
    assert row["bytes_per_iteration"] >= 8  # s (or x[i] * s) is needed by the adjoint
    assert row["bytes_per_iteration"] == sum(row["tape_bytes"].values())
    for k, v in row["pushes"].items():  # items of their own sizes, or fixed slots
        assert row["tape_bytes"][k] == (8 * len(v) if row["slot_bytes"][k] is None
                                        else len(v) * row["slot_bytes"][k])
    g = s2s.jit(s2s.grad(_recurrence))
    g(x)
    spec, = g.specs.values()
    caps = sum(spec.caller.ctx[abi.TAPES + 2 * k + 1] for k in range(abi.CACHED_TAPES))
    assert caps >= x.shape[0] * row["bytes_per_iteration"]


def test_no_loop_no_rows():
    assert tape_layout(_straight, (np.array([0.3, 0.7]),), grad_argnums=0) == []


def test_python_mode_loop_report_counts_iterations_and_the_whole_tape():
    sys.path.insert(0, str(BENCH))
    try:
        import tape_stats
    finally:
        sys.path.remove(str(BENCH))
    x = np.linspace(0.1, 1.0, 50)
    g = s2s.grad(_recurrence)
    rows = tape_stats.loop_report(g, (x,))
    loops = [r for r in rows if r["loop"] != "(outside loops)"]
    assert [r["iterations"] for r in loops] == [50]
    assert loops[0]["bytes_per_iteration"] > 0
    full = tape_stats.tape_report(g, (x,), 50)
    assert sum(r["tape_bytes"] + r["ctrl_bytes"] for r in rows) == \
        full["tape_bytes"] + full["ctrl_bytes"]
