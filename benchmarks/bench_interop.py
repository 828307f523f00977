"""s2s ops inside PyTorch and JAX against the same op written in the framework.

One training step (forward + backward) of each sample's op, median wall time:

* the recurrence of ``samples/torch_op.py`` (an 8-unit Elman network over 200
  steps): ``to_torch`` op vs eager PyTorch (a Python loop of tensor ops) vs
  ``torch.compile`` of that loop (``--compile``; its compile takes a minute),
  and ``to_jax`` op vs ``jax.jit`` of the same network with ``lax.scan``;
* the ragged kernel of ``samples/jax_op.py`` (300 queries of 2-30 items):
  ``to_jax`` op vs ``jax.jit`` of the same loss with segment primitives, and
  ``to_torch`` op vs eager PyTorch looping over the queries.

Run:  python benchmarks/bench_interop.py [--compile]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "samples"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from timing import median_time  # noqa: E402

import torch_op  # noqa: E402
import jax_op  # noqa: E402
from s2s.interop import to_jax, to_torch  # noqa: E402


def torch_step(op, params, x, y):
    def step():
        for p in params:
            p.grad = None
        loss = torch.mean((op(*params, x) - y) ** 2)
        loss.backward()
        return loss
    return step


def recurrence(compile_too):
    H, T = 8, 200
    sig = torch_op.signal(T)
    x, y = sig[:-1], sig[1:]
    params = list(torch_op.init_params(H).values())
    rows = []
    t_s2s = median_time(torch_step(torch_op.rnn_op, params, x, y), ())
    t_eager = median_time(torch_step(torch_op.torch_rnn_predict, params, x, y), ())
    rows.append(("recurrence", "torch: s2s op", t_s2s, None))
    rows.append(("recurrence", "torch: eager loop", t_eager, t_eager / t_s2s))
    if compile_too:
        compiled = torch.compile(torch_op.torch_rnn_predict)
        t_c = median_time(torch_step(compiled, params, x, y), ())
        rows.append(("recurrence", "torch: torch.compile loop", t_c, t_c / t_s2s))

    jop = to_jax(torch_op.rnn_predict)
    jp = [jnp.asarray(p.detach().numpy()) for p in params]
    jx, jy = jnp.asarray(x.numpy()), jnp.asarray(y.numpy())

    def jax_rnn(W, U, b, v, xs):
        def cell(h, xt):
            h = jnp.tanh(b + U * xt + W @ h)
            return h, v @ h
        return jax.lax.scan(cell, jnp.zeros(W.shape[0]), xs)[1]

    def jstep(op):
        f = jax.jit(jax.grad(lambda ps: jnp.mean((op(*ps, jx) - jy) ** 2)))
        return lambda: jax.block_until_ready(f(jp))
    t_js = median_time(jstep(jop), ())
    t_scan = median_time(jstep(jax_rnn), ())
    rows.append(("recurrence", "jax: s2s op (jit)", t_js, None))
    rows.append(("recurrence", "jax: jit + lax.scan", t_scan, t_scan / t_js))
    return rows


def ragged():
    X, offsets, targets = jax_op.make_data()
    w = jnp.zeros(X.shape[1])
    rows = []

    def jstep(op):
        f = jax.jit(jax.grad(lambda w: jax_op.loss_fn(w, X, offsets, targets, op)))
        return lambda: jax.block_until_ready(f(w))
    t_s2s = median_time(jstep(jax_op.ragged_op), ())
    t_seg = median_time(jstep(jax_op.jax_ragged_softmax_xent), ())
    rows.append(("ragged", "jax: s2s op (jit)", t_s2s, None))
    rows.append(("ragged", "jax: jit + segment ops", t_seg, t_seg / t_s2s))

    tX, toff, ttar = (torch.from_numpy(np.array(a)) for a in (X, offsets, targets))
    tw = torch.zeros(X.shape[1], dtype=torch.float64, requires_grad=True)
    top = to_torch(jax_op.ragged_softmax_xent, argnums=0)

    def torch_ragged(scores, offsets, targets):
        out = []
        for q in range(targets.shape[0]):
            a, b = int(offsets[q]), int(offsets[q + 1])
            out.append(torch.logsumexp(scores[a:b], 0) - scores[a + int(targets[q])])
        return torch.stack(out)

    def tstep(op):
        def step():
            tw.grad = None
            loss = torch.mean(op(tX @ tw, toff, ttar))
            loss.backward()
        return step
    t_ts = median_time(tstep(top), ())
    t_te = median_time(tstep(torch_ragged), ())
    rows.append(("ragged", "torch: s2s op", t_ts, None))
    rows.append(("ragged", "torch: eager loop", t_te, t_te / t_ts))
    return rows


def main():
    jax.config.update("jax_enable_x64", True)
    torch.set_num_threads(1)
    rows = recurrence("--compile" in sys.argv) + ragged()
    print("| op | implementation | forward + backward | / s2s op |")
    print("|---|---|---:|---:|")
    for op, impl, t, ratio in rows:
        print(f"| {op} | {impl} | {t * 1e3:.3f} ms | {'' if ratio is None else f'{ratio:.2f}'} |")


if __name__ == "__main__":
    main()
