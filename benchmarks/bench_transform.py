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
3. Overhead of a cached call: ``g(x)`` for ``g = s2s.grad(f)`` (argument
   kinds -> cache key -> generated function) against calling the generated
   function directly, ``gen = next(iter(g.cache.values())); gen(x)``, on
   tiny inputs; best of N repeats, in microseconds (target: <= 20 us).

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
from s2s import pipeline
import fixtures
x = np.linspace(0.1, 1.0, 4)
f = fixtures.straight50
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
    t0 = time.perf_counter()
    g = s2s.grad(f)
    g(x)
    t1 = time.perf_counter()
    print(t1 - t0)
"""


def _child(stages):
    env = dict(os.environ)
    root = str(HERE.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, "-c", _CHILD.format(here=str(HERE), stages=stages)],
                         capture_output=True, text=True, check=True, env=env).stdout
    return [float(v) for v in out.split()]


def first_call():
    return statistics.median(_child(False)[0] for _ in range(RUNS))


def stages():
    rows = [_child(True) for _ in range(RUNS)]
    return [statistics.median(r[i] for r in rows) for i in range(4)]


def best_us(fn, number=2000, repeat=7):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def cached_overhead(fn, args):
    g = s2s.grad(fn)
    g(*args)
    gen = next(iter(g.cache.values()))
    t_wrapped = best_us(lambda: g(*args))
    t_direct = best_us(lambda: gen(*args))
    return t_wrapped, t_direct


def tiny(w, x):
    return w * x


def main():
    print(f"s2s {s2s.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs")
    src_lines = len(__import__("inspect").getsource(fixtures.straight50).splitlines())
    print(f"\nfixtures.straight50: {src_lines} source lines")

    t = first_call()
    print(f"first call, s2s.grad(f)(x) in a fresh process (median of {RUNS}): {t * 1e3:8.1f} ms")

    front_s, rev_s, emit_s, gen_lines = stages()
    total = front_s + rev_s + emit_s
    print(f"  by stage (median of {RUNS}, fresh process each):")
    print(f"    front   (parse, lower, inline, single exit) {front_s * 1e3:8.1f} ms")
    print(f"    reverse (SSA, reverse mode, DCE)            {rev_s * 1e3:8.1f} ms")
    print(f"    emit + compile ({int(gen_lines)} generated lines)      {emit_s * 1e3:8.1f} ms")
    print(f"    sum                                         {total * 1e3:8.1f} ms")

    print("\ncached call overhead (best of 7 x 2000 calls):")
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
