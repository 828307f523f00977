"""jit and vmap composed (issue 8), side by side: for a per-example function over a
batch of 256 examples, a Python loop of ``f``, ``vmap(f)`` (numpy over the batch),
a Python loop of ``jit(f)``, ``jit(vmap(f))`` (one compiled batched program) and
``vmap(jit(f))`` (the same, reached the other way).

Then the cookbook's matrix-Jacobian product (``benchmarks/vmap_fixtures.py``'s
``predict``, inputs 4 x 3): ``vjp_fun`` over 128 cotangents as a Python loop,
``vmap(vjp_fun)`` (numpy), ``jit(vmap(vjp_fun))`` (one native kernel, the batched
tape-free adjoint) and JAX's ``jax.jit(jax.vmap(vjp_fun))`` when JAX is installed.

Correctness first: every result is compared with the Python loop; no assertion is
made on times.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/bench_jit_vmap.py
"""
import importlib.util
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vmap_fixtures as fx  # noqa: E402

import s2s  # noqa: E402
from timing import best  # noqa: E402


def loop_scalar(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i]
    return s


def smooth(x, w):
    return np.sum(np.tanh(x * w) * x)


def main():
    rng = np.random.default_rng(0)
    X, w = rng.normal(size=(256, 16)), rng.normal(size=16)
    cases = [("loop_scalar", loop_scalar, 0, (X,)),
             ("smooth", smooth, (0, None), (X, w)),
             ("grad(smooth)", s2s.grad(smooth), (0, None), (X, w)),
             ("grad(loop)", s2s.grad(loop_scalar), 0, (X,))]  # a batched tape
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


def matrix_jacobian():
    rng = np.random.default_rng(1)
    inputs, W, b = rng.normal(size=(4, 3)), rng.normal(size=3), 0.1
    f = lambda W: fx.predict(W, b, inputs)  # noqa: E731
    y, vjp_fun = s2s.vjp(f, W)
    U = rng.normal(size=(128,) + y.shape)
    vm, jvm = s2s.vmap(vjp_fun), s2s.jit(s2s.vmap(vjp_fun))
    loop = lambda: np.vstack([vjp_fun(u)[0] for u in U])  # noqa: E731
    want = loop()
    for g in (vm, jvm):
        np.testing.assert_allclose(g(U)[0], want, rtol=1e-10, atol=1e-12)
    t = {"loop": best(loop), "vmap": best(lambda: vm(U)), "jit(vmap)": best(lambda: jvm(U))}
    if importlib.util.find_spec("jax") is not None:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        jf = lambda W: 0.5 * (jnp.tanh((jnp.dot(inputs, W) + b) / 2) + 1)  # noqa: E731
        _, jvf = jax.vjp(jf, jnp.asarray(W))
        jj, jU = jax.jit(jax.vmap(jvf)), jnp.asarray(U)
        np.testing.assert_allclose(np.asarray(jj(jU)[0]), want, rtol=1e-10, atol=1e-12)
        t["jax.jit(vmap)"] = best(lambda: jj(jU)[0].block_until_ready())
    print(f"{'predict mjp':14s} " + "  ".join(f"{k} {v * 1e6:8.1f}us" for k, v in t.items())
          + f"   loop/jit(vmap) {t['loop'] / t['jit(vmap)']:.0f}x"
          + f"  vmap/jit(vmap) {t['vmap'] / t['jit(vmap)']:.1f}x")


if __name__ == "__main__":
    main()
    matrix_jacobian()
