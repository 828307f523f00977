"""Timing helpers the benchmark scripts share (run them from anywhere: each script puts
its own folder on ``sys.path``, so ``from timing import ...`` finds this module).

* ``median_time(f, args)``: the median wall time of ``f(*args)`` over repeated calls
  after one warm-up call (which compiles): at least ``min_runs`` calls and at least
  ``budget`` seconds, at most ``max_runs`` calls;
* ``best(fn)``: the best time per call of ``fn()`` over 5 rounds of ~50 ms each, after
  a warm-up call.
"""
import statistics
import time
import timeit


def median_time(f, args, budget=0.3, min_runs=3, max_runs=2000):
    f(*args)
    runs, start = [], time.perf_counter()
    while len(runs) < min_runs or time.perf_counter() - start < budget:
        t0 = time.perf_counter()
        f(*args)
        runs.append(time.perf_counter() - t0)
        if len(runs) > max_runs:
            break
    return statistics.median(runs)


def best(fn):
    fn()
    t = timeit.timeit(fn, number=1)
    number = max(1, int(0.05 / max(t, 1e-7)))
    return min(timeit.repeat(fn, number=number, repeat=5)) / number
