"""Batched contractions (issue 20 item 5): ``vmap`` of products and of their VJPs/JVPs
against a Python loop over the batch and against ``jax.vmap``, before and after the
contractions became one ``np.matmul`` on views of the operands.

"before" runs the same batched programs with the contraction helper of the previous
release (``_einsum2_transposing`` below: every operand transposed to (batch, free,
summed) order and reshaped, a copy whenever that order is not the memory's, then one
matmul), patched in for the row; "after" is the current ``runtime/blas_contract.py``.
The loop is ``np.stack([f(example) for example in batch])`` over the same s2s
function.  ``numpy``: the batched VJP written by hand in numpy (the elementwise factor
and one matmul: the floor for any batched form), ``jit(vmap)``: ``s2s.jit`` of the
batched program (native loop nests, no BLAS; ``NO_JIT=1`` skips it), ``jax.vmap``:
``jax.jit(jax.vmap(...))`` where JAX is installed.  Every result is checked against
the loop first (and the loop against
central finite differences for the VJPs); no assertion is made on times.  The
contenders of one row are timed interleaved, round after round, the minimum per call
(``interleaved``) so that a busy machine slows them alike.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/vmap_contractions.py
"""
import importlib.util
import math
import os
import sys
import time
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import s2s  # noqa: E402
from s2s_runtime import batching_products as BP  # noqa: E402

HAVE_JAX = importlib.util.find_spec("jax") is not None
JIT = os.environ.get("NO_JIT") is None
B = 128
ROUNDS = int(os.environ.get("ROUNDS", "15"))


def _einsum2_transposing(spec, a, b):
    """The previous plan, kept here only to time against: both operands transposed to
    (batch, free, summed) letter order and reshaped to 3-D (a copy unless the memory is
    already in that order), one matmul, the result transposed back."""
    ins, so = spec.split("->")
    sa, sb = ins.split(",")
    a, b = np.asarray(a), np.asarray(b)
    if "." in spec or len(set(sa)) != len(sa) or len(set(sb)) != len(sb) or \
            any(c not in sb and c not in so for c in sa) or \
            any(c not in sa and c not in so for c in sb):
        return np.einsum(spec, a, b, optimize=True)
    batch = [c for c in so if c in sa and c in sb]
    free_a = [c for c in sa if c in so and c not in sb]
    free_b = [c for c in sb if c in so and c not in sa]
    summed = [c for c in sa if c in sb and c not in so]
    order = batch + free_a + free_b
    nb = len(batch)
    a = a.transpose([sa.index(c) for c in batch + free_a + summed])
    b = b.transpose([sb.index(c) for c in batch + summed + free_b])
    fa, sm = a.shape[nb:nb + len(free_a)], a.shape[nb + len(free_a):]
    fb = b.shape[nb + len(summed):]
    if sm != b.shape[nb:nb + len(summed)]:
        return np.einsum(spec, a, b, optimize=True)
    out = np.matmul(a.reshape(a.shape[:nb] + (math.prod(fa), math.prod(sm))),
                    b.reshape(b.shape[:nb] + (math.prod(sm), math.prod(fb))))
    out = out.reshape(out.shape[:nb] + fa + fb)
    final = [order.index(c) for c in so]
    return out.transpose(final) if final != sorted(final) else out


def interleaved(fns, rounds, number):
    """``{name: seconds}``: the contenders timed in turn, round after round; the minimum
    per call over the rounds, in CPU seconds of this process (``time.process_time``,
    all its threads: JAX's too), so that other processes on a shared machine count
    less than in wall time."""
    out = {name: float("inf") for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(rounds):
        for name, fn in fns.items():
            t = timeit.timeit(fn, number=number, timer=time.process_time)
            out[name] = min(out[name], t / number)
    return out


def predict(W, b, inputs):
    return np.tanh(inputs @ W + b)


def dotted(x, W):
    return np.dot(x, W)


def einsummed(x, W):
    return np.einsum("ij,jk->ik", x, W)


def tensordotted(x, W):
    return np.tensordot(x, W, axes=1)


def _loop(f, axes):
    def run(*args):
        n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
        return np.stack([np.asarray(f(*[a if ax is None else np.take(a, k, axis=ax)
                                         for a, ax in zip(args, axes)])) for k in range(n)])
    return run


def _row(label, s2s_fn, loop_fn, args, jax_fn=None, jax_args=None, extra=None):
    want = loop_fn(*args)
    got = s2s_fn(*args)
    got = got[0] if isinstance(got, tuple) else got
    assert np.allclose(got, want, rtol=1e-9, atol=1e-9), label
    real = BP._einsum2
    BP._einsum2 = _einsum2_transposing
    try:
        old = s2s_fn(*args)
        old = old[0] if isinstance(old, tuple) else old
        assert np.allclose(old, want, rtol=1e-9, atol=1e-9), label
    finally:
        BP._einsum2 = real

    def before():
        BP._einsum2 = _einsum2_transposing
        try:
            s2s_fn(*args)
        finally:
            BP._einsum2 = real

    fns = {"loop": lambda: loop_fn(*args), "before": before, "after": lambda: s2s_fn(*args)}
    if jax_fn is not None:
        fns["jax"] = lambda: jax_fn(*jax_args).block_until_ready()
    for name, fn in (extra or {}).items():
        value = fn(*args)
        assert np.allclose(value[0] if isinstance(value, tuple) else value, want), name
        fns[name] = lambda fn=fn: fn(*args)
    t = interleaved(fns, rounds=ROUNDS, number=3)
    cells = [f"{t['loop'] * 1e3:8.2f}", f"{t['before'] * 1e3:8.2f}",
             f"{t['after'] * 1e3:8.2f}", f"{t['loop'] / t['before']:7.1f}x",
             f"{t['loop'] / t['after']:7.1f}x"]
    for name in ("jax", "numpy", "jit"):
        cells.append(f"{t[name] * 1e3:8.2f}" if name in t else "       -")
    print(f"| {label:<46s} | " + " | ".join(cells) + " |")
    return t


def _moved(x, axis):
    """``x`` with its batch axis moved to ``axis``, C-contiguous in that layout."""
    return np.ascontiguousarray(np.moveaxis(x, 0, axis))


def _fd_vjp_check(f, x, u, h=1e-6, samples=6):
    """A few entries of ``u . J`` by central differences."""
    rng = np.random.default_rng(3)
    _, vf = s2s.vjp(f, x)
    got = vf(u)[0]
    for flat in rng.choice(x.size, size=samples, replace=False):
        k = np.unravel_index(flat, x.shape)
        e = np.zeros(x.shape)
        e[k] = h
        fd = np.sum(u * (f(x + e) - f(x - e))) / (2 * h)
        assert abs(got[k] - fd) < 1e-6 * max(1.0, abs(fd)), (k, got[k], fd)


def main():
    rng = np.random.default_rng(0)
    W, b, X = rng.normal(size=(50, 40)), rng.normal(size=40), rng.normal(size=(30, 50))
    U = rng.normal(size=(B, 30, 40))
    jx = None
    if HAVE_JAX:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        jx = (jax, jnp)
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
          f"batch {B}, times in ms (min over interleaved rounds)\n")
    print("| case | loop | before | after | loop/before | loop/after | jax.vmap | numpy "
          "| jit(vmap) |")
    print("|---|---|---|---|---|---|---|---|---|")
    # 1. the cookbook's vmap(vjp_fun): the batch on the cotangent, the product's
    #    unbatched factor on either side
    cases = [("vmap(vjp_fun) wrt W (batch x inputs^T)", lambda w: predict(w, b, X), W, 0),
             ("vmap(vjp_fun) wrt inputs (batch x W^T)", lambda x: predict(W, b, x), X, 2)]
    for label, f, x, wrt in cases:
        _fd_vjp_check(f, x, U[0])
        _, vf = s2s.vjp(f, x)
        vm = s2s.vmap(vf)
        jf = None
        if jx:
            jax, jnp = jx
            jargs = [jnp.asarray(W), jnp.asarray(b), jnp.asarray(X)]
            jpred = lambda W, b, X: jnp.tanh(X @ W + b)  # noqa: E731

            def jfun(z, wrt=wrt):
                return jpred(*[z if i == wrt else v for i, v in enumerate(jargs)])
            _, jvf = jax.vjp(jfun, jargs[wrt])
            jvm = jax.jit(jax.vmap(jvf))
            jf = lambda u: jvm(u)[0]  # noqa: E731
        y = predict(W, b, X)
        floor = {0: lambda u: np.matmul(X.T, u * (1 - y * y)),
                 2: lambda u: (u * (1 - y * y)).reshape(-1, 40) @ W.T}[wrt]
        extra = {"numpy": lambda u, floor=floor: floor(u).reshape((B,) + x.shape)}
        if JIT:
            extra["jit"] = s2s.jit(vm)
        _row(label, vm, _loop(lambda u: vf(u)[0], (0,)), (U,), jf, (U,) if jx else None,
             extra)
    # 2. vmap(jvp) over 128 tangents
    T = rng.normal(size=(B, 50, 40))
    of_W = lambda w: predict(w, b, X)  # noqa: E731
    of_X = lambda x: predict(W, b, x)  # noqa: E731
    jvp_W = lambda t: s2s.jvp(of_W, (W,), (t,))[1]  # noqa: E731
    _row("vmap(jvp) wrt W (inputs x batch)", s2s.vmap(jvp_W), _loop(jvp_W, (0,)), (T,))
    Tx = rng.normal(size=(B, 30, 50))
    jvp_X = lambda t: s2s.jvp(of_X, (X,), (t,))[1]  # noqa: E731
    _row("vmap(jvp) wrt inputs (batch x W)", s2s.vmap(jvp_X), _loop(jvp_X, (0,)), (Tx,))
    # 3. the products themselves, every placement of the batch axis
    Xb = rng.normal(size=(B, 30, 50))
    Wb = rng.normal(size=(B, 50, 40))
    for fn in (predict, dotted, einsummed, tensordotted):
        placements = [((0, None), (Xb, W)), ((1, None), (_moved(Xb, 1), W)),
                      ((None, 0), (X, Wb)), ((None, 2), (X, _moved(Wb, 2))),
                      ((0, 0), (Xb, Wb))]
        if fn is not predict:
            placements = placements[:1] + placements[2:3] + placements[4:]
        for axes, args in placements:
            if fn is predict:
                f = lambda x, w: predict(w, b, x)  # noqa: E731
            else:
                f = fn
            jf = None
            if jx:
                jax, jnp = jx
                jfn = {predict: lambda x, w: jnp.tanh(x @ w + jnp.asarray(b)),
                       dotted: jnp.dot, tensordotted: lambda x, w: jnp.tensordot(x, w, 1),
                       einsummed: lambda x, w: jnp.einsum("ij,jk->ik", x, w)}[fn]
                jf = jax.jit(jax.vmap(jfn, in_axes=axes))
            _row(f"vmap({fn.__name__}) in_axes={axes}", s2s.vmap(f, in_axes=axes),
                 _loop(f, axes), args, jf, [jx[1].asarray(a) for a in args] if jx else None)
        # the VJP of the product with the batch on either factor
    f = lambda x, w: np.sum(np.tanh(x @ w))  # noqa: E731
    g = s2s.grad(f, argnums=(0, 1))
    for axes, args in [((0, None), (Xb, W)), ((None, 0), (X, Wb)), ((0, 0), (Xb, Wb))]:
        gg = lambda x, w: g(x, w)[1]  # noqa: E731
        _row(f"vmap(grad wrt W) in_axes={axes}", s2s.vmap(gg, in_axes=axes),
             _loop(gg, axes), args)


if __name__ == "__main__":
    main()
