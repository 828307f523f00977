"""vmap: batched matrix-Jacobian products and Jacobians, side by side.

1. The cookbook's matrix-Jacobian product (shared/seeds/jax-autodiff-cookbook-
   part8.txt): ``vmap(vjp_fun)`` over 128 cotangents against a Python loop over
   ``vjp_fun`` (target >= 20x; the seed shows 26x for JAX), on the seed's
   ``predict`` (inputs 4 x 3) and on a larger one (inputs 256 x 100); the same for
   Jacobian-matrix products (``vmap`` of a JVP function over 128 tangents).
2. ``jacrev``/``jacfwd`` of a 40 x 50 map: s2s's batched Jacobians (one vmapped
   VJP / JVP), s2s's loop over basis vectors (what ``jacrev``/``jacfwd`` did
   before vmap), ``s2s.jit(jacrev(f))``/``s2s.jit(jacfwd(f))`` (one native kernel),
   and JAX's (plain and ``jax.jit``-ed) when JAX is installed; the compiled ones are
   also timed interleaved with ``jax.jit``'s in one loop (minimum of the rounds).

Correctness first: every result is compared with the loop and with central
finite differences (and with JAX where present); no assertion is made on times.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/bench_vmap.py
"""
import importlib.util
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vmap_fixtures as fx  # noqa: E402

import s2s  # noqa: E402
from s2s.api import jacobians as jacobian_api  # noqa: E402
from s2s.api import batched_jacobians as batched  # noqa: E402

HAVE_JAX = importlib.util.find_spec("jax") is not None


def best(fn, number=None):
    fn()
    if number is None:
        t = timeit.timeit(fn, number=1)
        number = max(1, int(0.05 / max(t, 1e-7)))
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def interleaved(fns, rounds=40, number=20):
    """``{name: seconds}``: the contenders timed in turn, round after round (so a busy
    machine slows them alike); the minimum per call over the rounds."""
    out = {name: float("inf") for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(rounds):
        for name, fn in fns.items():
            out[name] = min(out[name], timeit.timeit(fn, number=number) / number)
    return out


def fd_jacobian(f, x, eps=1e-6):
    return np.stack([(f(x + eps * e) - f(x - eps * e)) / (2 * eps)
                     for e in np.eye(x.size)], axis=-1)


def row(name, seconds, base=None):
    ratio = f"   {base / seconds:7.1f}x" if base else ""
    print(f"  {name:<44s} {seconds * 1e3:9.3f} ms{ratio}")


def products(n_in, n_feat, label):
    rng = np.random.default_rng(1)
    inputs, W, b = rng.normal(size=(n_in, n_feat)), rng.normal(size=n_feat), 0.1
    f = lambda W: fx.predict(W, b, inputs)  # noqa: E731
    y, vjp_fun = s2s.vjp(f, W)
    U = rng.normal(size=(128,) + y.shape)
    S = rng.normal(size=(128,) + W.shape)
    J = fd_jacobian(f, W)

    def loop_mjp():
        _, vf = s2s.vjp(f, W)
        return np.vstack([vf(u) for u in U])

    def vmap_mjp():
        _, vf = s2s.vjp(f, W)
        return s2s.vmap(vf)(U)[0]

    def loop_jmp():
        return np.vstack([s2s.jvp(f, (W,), (s,))[1] for s in S])

    _jvp = lambda s: s2s.jvp(f, (W,), (s,))[1]  # noqa: E731

    def vmap_jmp():
        return s2s.vmap(_jvp)(S)

    assert np.allclose(loop_mjp(), vmap_mjp()) and np.allclose(vmap_mjp(), U @ J, atol=1e-7)
    assert np.allclose(loop_jmp(), vmap_jmp()) and np.allclose(vmap_jmp(), S @ J.T, atol=1e-7)
    print(f"\n{label}: predict with inputs {n_in} x {n_feat}, 128 vectors")
    t_loop = best(loop_mjp)
    row("matrix-Jacobian, loop over vjp_fun", t_loop)
    row("matrix-Jacobian, vmap(vjp_fun)", best(vmap_mjp), t_loop)
    t_loop = best(loop_jmp)
    row("Jacobian-matrix, loop over jvp", t_loop)
    row("Jacobian-matrix, vmap(jvp)", best(vmap_jmp), t_loop)
    if HAVE_JAX:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)

        def jpredict(W, b, inputs):
            return 0.5 * (jnp.tanh((jnp.dot(inputs, W) + b) / 2) + 1)

        jf = lambda W: jpredict(W, b, inputs)  # noqa: E731
        jW, jU = jnp.asarray(W), jnp.asarray(U)

        def jax_loop():
            _, vf = jax.vjp(jf, jW)
            return jnp.vstack([vf(u)[0] for u in jU]).block_until_ready()

        def jax_vmap():
            _, vf = jax.vjp(jf, jW)
            return jax.vmap(vf)(jU)[0].block_until_ready()

        assert np.allclose(jax_vmap(), vmap_mjp())
        t_loop = best(jax_loop, number=2)
        row("JAX matrix-Jacobian, loop over vjp_fun", t_loop)
        row("JAX matrix-Jacobian, vmap(vjp_fun)", best(jax_vmap), t_loop)


def jacobians():
    x = np.random.default_rng(2).normal(size=50)
    J = fd_jacobian(fx.map40x50, x)
    rev, fwd = s2s.jacrev(fx.map40x50), s2s.jacfwd(fx.map40x50)
    assert np.allclose(rev(x), J, atol=1e-7) and np.allclose(fwd(x), J, atol=1e-7)
    assert batched.jacrev_batched(fx.map40x50, (x,), (0,), True) is not None
    print("\njacrev / jacfwd of a 40 x 50 map")
    real_rev, real_fwd = jacobian_api.jacrev_batched, jacobian_api.jacfwd_batched
    try:  # the loop over basis vectors (jacrev/jacfwd without vmap)
        jacobian_api.jacrev_batched = jacobian_api.jacfwd_batched = lambda *a: None
        assert np.allclose(rev(x), J, atol=1e-7) and np.allclose(fwd(x), J, atol=1e-7)
        t_rev_loop, t_fwd_loop = best(lambda: rev(x)), best(lambda: fwd(x))
    finally:
        jacobian_api.jacrev_batched, jacobian_api.jacfwd_batched = real_rev, real_fwd
    t_rev, t_fwd = best(lambda: rev(x)), best(lambda: fwd(x))
    row("s2s jacrev, loop over 40 vjps", t_rev_loop)
    row("s2s jacrev, one vmapped vjp", t_rev, t_rev_loop)
    row("s2s jacfwd, loop over 50 jvps", t_fwd_loop)
    row("s2s jacfwd, one vmapped jvp", t_fwd, t_fwd_loop)
    jit_rev, jit_fwd = s2s.jit(rev), s2s.jit(fwd)
    assert np.allclose(jit_rev(x), J, atol=1e-7) and np.allclose(jit_fwd(x), J, atol=1e-7)
    t_jrev, t_jfwd = best(lambda: jit_rev(x)), best(lambda: jit_fwd(x))
    row("s2s jit(jacrev), one native kernel", t_jrev, t_rev)
    row("s2s jit(jacfwd), one native kernel", t_jfwd, t_fwd)
    print("  (the ratio column of the jit rows is the batched time / the jit's time)")
    if HAVE_JAX:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        jW = jnp.asarray(fx.MAP_W)
        jmap = lambda x: jnp.tanh(jW @ x) + 0.1 * jnp.sin(jW @ (x * x))  # noqa: E731
        jx = jnp.asarray(x)
        for name, tr in (("jacrev", jax.jacrev), ("jacfwd", jax.jacfwd)):
            plain = tr(jmap)
            jitted = jax.jit(tr(jmap))
            assert np.allclose(np.asarray(plain(jx)), J, atol=1e-7)
            row(f"JAX {name} (no jit)", best(lambda: plain(jx).block_until_ready()),
                t_rev if name == "jacrev" else t_fwd)
            row(f"JAX {name} (jax.jit)", best(lambda: jitted(jx).block_until_ready()),
                t_rev if name == "jacrev" else t_fwd)
        print("  (the ratio column of the JAX rows is s2s's batched time / JAX's time)")
        jax_rev, jax_fwd = jax.jit(jax.jacrev(jmap)), jax.jit(jax.jacfwd(jmap))
        times = interleaved({"s2s jit(jacrev)": lambda: jit_rev(x),
                             "jax.jit(jax.jacrev)": lambda: jax_rev(jx).block_until_ready(),
                             "s2s jit(jacfwd)": lambda: jit_fwd(x),
                             "jax.jit(jax.jacfwd)": lambda: jax_fwd(jx).block_until_ready()})
        print("  interleaved, minimum over rounds:")
        for name in ("jacrev", "jacfwd"):
            ours, theirs = times[f"s2s jit({name})"], times[f"jax.jit(jax.{name})"]
            row(f"s2s jit({name})", ours)
            row(f"jax.jit(jax.{name})", theirs)
            print(f"  {'':<44s} s2s / JAX time: {ours / theirs:.2f} (target <= 1)")
    else:
        print("  (JAX not installed: its rows are skipped)")


if __name__ == "__main__":
    products(4, 3, "The seed's example")
    products(256, 100, "Larger")
    jacobians()
