"""How long s2s takes to transform a function, and what a cached call costs.

1. First call of ``s2s.grad(f)(x)`` for ``fixtures.straight50`` (a ~50-line
   straight-line numpy function): parsing, lowering, reverse mode, emitting
   and compiling the generated code, plus one run of it on a tiny input.
   Each measurement runs in a fresh Python subprocess (nothing cached; the
   imports of numpy/s2s are done before the clock starts); median of 5.
2. The same, broken down by stage (also fresh subprocesses, median of 5):
   ``pipeline.front`` (parse + lower + inline + single exit),
   ``pipeline.reverse`` via ``specialised`` (SSA + reverse mode + DCE),
   ``pipeline.compile_function`` (emit source + compile + exec).
   Both are measured cold (s2s's one-time start-up: parsing the rule
   templates, warming libcst) and warm (``fixtures.warmup`` transformed first
   in the same process, so only the cost of this function remains).
3. Overhead of a cached call: ``g(x)`` for ``g = s2s.grad(f)`` (argument
   kinds -> cache key -> generated function) against calling the generated
   function directly (``gen``: element 0 of the ``(generated function, extra
   free variables)`` tuple in ``g.cache``; ``gen(x)``), on
   tiny inputs; best of 30 interleaved rounds, in microseconds (target: <= 20 us).

Run:  python benchmarks/bench_transform.py
"""
import os
import statistics
import subprocess
import sys
import timeit
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fixtures  # noqa: E402

import s2s  # noqa: E402

RUNS = 5

_CHILD = r"""
import sys, time
sys.path.insert(0, {here!r})
import numpy as np
import s2s
from s2s.core import pipeline
import fixtures
x = np.linspace(0.1, 1.0, 4)
f = fixtures.straight50
if {warm!r}:
    s2s.grad(fixtures.warmup)(x)
if {stages!r}:
    t0 = time.perf_counter()
    fr = pipeline.front(f)
    t1 = time.perf_counter()
    ir = s2s.grad(f).specialised([x])
    t2 = time.perf_counter()
    gen, emitted = pipeline.compile_function(ir)
    t3 = time.perf_counter()
    gen(x)
    print(t1 - t0, t2 - t1, t3 - t2, len(emitted.source.splitlines()))
else:
    # s2s shares transforms and generated code between equal functions
    # (s2s.core.specialise.memo, pipeline._front_of_sibling): check that the timed call
    # really lowers and compiles straight50, not reuses earlier work
    compiled = []
    compile_function = pipeline.compile_function
    pipeline.compile_function = lambda ir: compiled.append(ir.name) or compile_function(ir)
    t0 = time.perf_counter()
    g = s2s.grad(f)
    g(x)
    t1 = time.perf_counter()
    pipeline.compile_function = compile_function
    if not compiled:
        sys.exit("the timed call compiled nothing: it measured a cache hit")
    print(t1 - t0)
"""


def _child(stages, warm=False):
    env = dict(os.environ)
    root = str(HERE.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, "-c", _CHILD.format(here=str(HERE), stages=stages, warm=warm)],
                         capture_output=True, text=True, check=True, env=env).stdout
    return [float(v) for v in out.split()]


def first_call(warm):
    return statistics.median(_child(False, warm)[0] for _ in range(RUNS))


def stages(warm):
    rows = [_child(True, warm) for _ in range(RUNS)]
    return [statistics.median(r[i] for r in rows) for i in range(4)]


def cached_overhead(fn, args, rounds=30, number=1000):
    """Best per-call time of g(*args) and gen(*args), timed in interleaved rounds
    (the machine may be shared; a busy spell then hurts both alike)."""
    g = s2s.grad(fn)
    g(*args)
    gen = generated_function(g)
    t_wrapped = t_direct = float("inf")
    for _ in range(rounds):
        t_wrapped = min(t_wrapped, timeit.timeit(lambda: g(*args), number=number))
        t_direct = min(t_direct, timeit.timeit(lambda: gen(*args), number=number))
    return t_wrapped / number * 1e6, t_direct / number * 1e6


def generated_function(transform):
    """The one generated function in ``transform.cache``: its values are
    ``(generated function, extra free variables)`` tuples (entries keyed
    ``("front", ...)`` hold expanded IR, not code)."""
    gens = [v[0] for v in transform.cache.values() if isinstance(v, tuple)]
    assert len(gens) == 1, f"expected one generated function, found {len(gens)}"
    return gens[0]


def tiny(w, x):
    return w * x


def main():
    print(f"s2s {s2s.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs")
    src_lines = len(__import__("inspect").getsource(fixtures.straight50).splitlines())
    print(f"\nfixtures.straight50: {src_lines} source lines")

    for warm in (False, True):
        what = ("after s2s has transformed another function in the process (one-time "
                "start-up costs excluded)" if warm else "in a fresh process (cold)")
        t = first_call(warm)
        print(f"\nfirst call of s2s.grad(straight50)(x), {what}; median of {RUNS}: "
              f"{t * 1e3:.1f} ms")
        front_s, rev_s, emit_s, gen_lines = stages(warm)
        total = front_s + rev_s + emit_s
        print(f"  by stage (median of {RUNS}, fresh process each):")
        print(f"    front   (parse, lower, inline, single exit) {front_s * 1e3:8.1f} ms")
        print(f"    reverse (SSA, reverse mode, DCE)            {rev_s * 1e3:8.1f} ms")
        print(f"    emit + compile ({int(gen_lines)} generated lines)      {emit_s * 1e3:8.1f} ms")
        print(f"    sum                                         {total * 1e3:8.1f} ms")

    print("\ncached call overhead (best of 30 interleaved rounds of 1000 calls):")
    print(f"  {'function':<34}{'g(x) us':>10}{'gen(x) us':>11}{'overhead us':>13}")
    cases = [
        ("tiny(w, x) = w * x, scalars", tiny, (13.0, 42.0)),
        ("straight50, x of 4 float64", fixtures.straight50, (np.linspace(0.1, 1.0, 4),)),
    ]
    for label, fn, args in cases:
        wrapped, direct = cached_overhead(fn, args)
        print(f"  {label:<34}{wrapped:>10.2f}{direct:>11.2f}{wrapped - direct:>13.2f}")


if __name__ == "__main__":
    main()
