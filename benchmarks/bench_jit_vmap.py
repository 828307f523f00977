"""jit and vmap composed (issue 8), side by side: for a per-example function over a
batch of 256 examples, a Python loop of ``f``, ``vmap(f)`` (numpy over the batch),
a Python loop of ``jit(f)``, ``jit(vmap(f))`` (one compiled batched program) and
``vmap(jit(f))`` (the same, reached the other way).

Correctness first: every result is compared with the Python loop; no assertion is
made on times.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/bench_jit_vmap.py
"""
import timeit

import numpy as np

import s2s


def loop_scalar(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i]
    return s


def smooth(x, w):
    return np.sum(np.tanh(x * w) * x)


def best(fn):
    fn()
    t = timeit.timeit(fn, number=1)
    number = max(1, int(0.05 / max(t, 1e-7)))
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main():
    rng = np.random.default_rng(0)
    X, w = rng.normal(size=(256, 16)), rng.normal(size=16)
    cases = [("loop_scalar", loop_scalar, 0, (X,)),
             ("smooth", smooth, (0, None), (X, w)),
             ("grad(smooth)", s2s.grad(smooth), (0, None), (X, w))]
    for name, f, axes, args in cases:
        jf = s2s.jit(f)
        loop = lambda: np.stack([f(x, *args[1:]) for x in args[0]])  # noqa: E731
        jloop = lambda: np.stack([jf(x, *args[1:]) for x in args[0]])  # noqa: E731
        vm, jvm, vjm = s2s.vmap(f, axes), s2s.jit(s2s.vmap(f, axes)), s2s.vmap(jf, axes)
        want = loop()
        for g in (vm, jvm, vjm):
            np.testing.assert_allclose(g(*args), want, rtol=1e-10, atol=1e-12)
        t = {k: best(v) for k, v in [("loop", loop), ("vmap", lambda: vm(*args)),
                                     ("loop jit", jloop), ("jit(vmap)", lambda: jvm(*args)),
                                     ("vmap(jit)", lambda: vjm(*args))]}
        print(f"{name:14s} " + "  ".join(f"{k} {v * 1e6:8.1f}us" for k, v in t.items())
              + f"   loop/jit(vmap) {t['loop'] / t['jit(vmap)']:.0f}x"
              + f"  vmap/jit(vmap) {t['vmap'] / t['jit(vmap)']:.1f}x")


if __name__ == "__main__":
    main()
