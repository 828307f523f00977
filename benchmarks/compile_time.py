"""Where the time of ``s2s.jit`` compiling a kernel (and its gradient) goes, per stage.

Stages: ``transform`` (source -> IR, and the derivative transform for a gradient),
``lower`` (IR -> LLVM IR text, ``module.build_module``), ``optimise`` (parse, verify,
LLVM's O3 pipeline), ``codegen`` (MCJIT: machine code, linking).  ``transform`` is
the first transform of the function in the process (s2s memoises transforms; the
rule templates parsed for earlier rows are reused, as in a program); the other
stages are the best of ``repeat`` runs on a fresh ``Jitted``.

Run alone:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/compile_time.py
``--chains``: seconds to the first ``grad`` / ``jit(grad)`` call of straight-line
chains of 250 to 2000 statements (``chain_source``; with ``--loops``,
``loop_chain_source``), one fresh process each; ``--grad-only`` skips ``jit(grad)``
(whose LLVM optimisation takes minutes at these sizes: benchmarks/README.md).
(``bench_jit.py`` prints the same table after its speed table.)
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import s2s  # noqa: E402
from s2s.core.jit import Jitted  # noqa: E402
from s2s.backend.llvm.driver import engine  # noqa: E402
from s2s.backend.llvm.driver.compile import param_types  # noqa: E402
from s2s.backend.llvm.driver.module import build_module  # noqa: E402

STAGES = ("transform", "lower", "optimise", "codegen")


def stage_times(fn, args):
    """Seconds per stage of compiling ``fn`` for ``args`` (wall clock)."""
    t0 = time.perf_counter()
    j = Jitted(fn)
    func, load_free = j.source_ir(args)
    t1 = time.perf_counter()
    mt = build_module(func, param_types(func, list(args) + load_free(), j.describe), True)
    t2 = time.perf_counter()
    mod = engine.optimise_module(mt.text)
    t3 = time.perf_counter()
    engine.Compiled(mod)
    t4 = time.perf_counter()
    return dict(zip(STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)))


def best_stage_times(fn, args, repeat=3):
    runs = [stage_times(fn, args) for _ in range(repeat)]
    return {s: min(r[s] for r in runs) for s in STAGES}


def table(cases, repeat=3):
    """Rows ``(label, {stage: seconds})`` for ``f`` and ``grad(f)`` of each case
    (``name: (f, args, argnums)``)."""
    rows = []
    for name, (f, args, wrt) in cases.items():
        for label, fn in ((name, f), (f"grad {name}", s2s.grad(f, argnums=wrt))):
            first = stage_times(fn, args)["transform"]  # memoised from here on
            rows.append((label, {**best_stage_times(fn, args, repeat), "transform": first}))
    return rows


def print_table(rows):
    print(f"{'compile time (ms)':22}" + "".join(f"{s:>10}" for s in STAGES) + f"{'total':>10}")
    for label, t in rows:
        total = sum(t.values())
        print(f"{label:22}" + "".join(f"{t[s] * 1e3:10.1f}" for s in STAGES)
              + f"{total * 1e3:10.1f}")


def linalg_case():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4)) + 4.0 * np.eye(4)

    def solve_loss(a, b):
        x = np.linalg.solve(a, b)
        return np.sum(x * x) + np.linalg.slogdet(a)[1]

    return solve_loss, (a, rng.standard_normal(4)), (0, 1)


def chain_source(n):
    """A straight-line numpy function of ``n`` statements (``chain(x, y)``)."""
    body = ["    a = np.tanh(a * b) + 0.5 * np.cos(a)", "    b = np.tanh(b) - a * 0.5",
            "    c = a * x + b", "    a = np.sin(c) + np.sin(b) * y"]
    lines = ["import numpy as np", "", "", "def chain(x, y):", "    a = x * y",
             "    b = np.sin(x) + y"] + [body[k % 4] for k in range(n)]
    return "\n".join(lines + ["    return np.sum(a * b)", ""])


def loop_chain_source(n):
    """``chain_source``'s statements in groups of 20, every other group inside
    ``for i in range(2): if np.sum(a) > 0.0: <10> else: ...; <10>`` (``chain(x, y)``)."""
    body = ["a = np.tanh(a * b) + 0.5 * np.cos(a)", "b = np.tanh(b) - a * 0.5",
            "c = a * x + b", "a = np.sin(c) + np.sin(b) * y"]
    lines = ["import numpy as np", "", "", "def chain(x, y):", "    a = x * y", "    b = np.sin(x) + y"]
    k = 0
    g = 0
    while k < n:
        if g % 2:
            lines.append("    for i in range(2):")
            lines.append("        if np.sum(a) > 0.0:")
            for j in range(10):
                lines.append("            " + body[(k + j) % 4])
            lines.append("        else:")
            lines.append("            a = a * 0.9")
            for j in range(10, 20):
                lines.append("        " + body[(k + j) % 4])
        else:
            for j in range(20):
                lines.append("    " + body[(k + j) % 4])
        k += 20
        g += 1
    return "\n".join(lines + ["    return np.sum(a * b)", ""])


CHILD = """
import importlib.util, sys, time
import numpy as np
import s2s
spec = importlib.util.spec_from_file_location("chain", sys.argv[1])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
x, y = np.linspace(0.1, 0.5, 4), np.linspace(0.2, 0.3, 4)
t = time.perf_counter()
(s2s.jit(s2s.grad(m.chain)) if sys.argv[2] == "jit" else s2s.grad(m.chain))(x, y)
print(time.perf_counter() - t)
"""


def chain_times(sizes=(250, 500, 1000, 2000), modes=("grad", "jit"), source=None):
    """Seconds to the first call of ``grad(chain)`` / ``jit(grad(chain))`` for chains of
    ``sizes`` statements, each in a fresh subprocess (imports before the clock)."""
    import os
    import subprocess
    import tempfile
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            path = os.path.join(d, f"chain{n}.py")
            Path(path).write_text((source or chain_source)(n))
            for mode in modes:
                env = dict(os.environ, S2S_CACHE_DIR=os.path.join(d, "cache"))
                run = subprocess.run([sys.executable, "-c", CHILD, path, mode], env=env,
                                     capture_output=True, text=True, check=True)
                out[mode, n] = float(run.stdout.split()[-1])
    return out


def print_chains(times):
    sizes = sorted({n for _, n in times})
    modes = sorted({m for m, _ in times})
    print(f"{'first call (s)':22}" + "".join(f"{n:>10}" for n in sizes))
    for m in modes:
        print(f"{m:22}" + "".join(f"{times[m, n]:10.2f}" if (m, n) in times else f"{'':10}"
                                  for n in sizes))


def main():
    if "--chains" in sys.argv:  # transform + compile time against the function's length
        loops = "--loops" in sys.argv  # the same statements in loops with branches
        modes = ("grad",) if "--grad-only" in sys.argv else ("grad", "jit")
        print_chains(chain_times(modes=modes, source=loop_chain_source if loops else None))
        return
    import jit_kernels as K
    rng = np.random.default_rng(0)
    cases = {k: v for k, v in K.cases(rng).items() if k != "lstm"}
    cases["linalg"] = linalg_case()
    print_table(table(cases))


if __name__ == "__main__":
    main()
