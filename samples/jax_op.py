"""A ragged per-row kernel as a JAX function, inside a jitted training loop.

Listwise ranking: each query has a different number of candidate items (a
ragged array: the items of query ``q`` are rows ``offsets[q]:offsets[q+1]``),
one of which is the right answer.  A linear scorer ``w`` rates every item;
the loss of a query is the softmax cross-entropy of its items' scores,

    loss_q = logsumexp(scores[offsets[q]:offsets[q+1]]) - scores[offsets[q] + target[q]]

``ragged_softmax_xent`` computes it with plain loops over each query's items
(a running maximum for a stable log-sum-exp), as one would in C.  In JAX a
ragged loop like this needs padding and masks or segment primitives;
``s2s.interop.to_jax`` takes the loop as written: ``jax.pure_callback`` of
``s2s.jit`` for the values, a ``jax.custom_vjp`` whose backward is ``s2s.jit``
of the gradient s2s generates.  The scores come from JAX (``X @ w``) and the
loss goes back to JAX, so ``jax.jit(jax.value_and_grad(loss))`` trains ``w``
end to end.

Run:  python samples/jax_op.py
"""
import numpy as np

import jax
import jax.numpy as jnp

from s2s.interop import to_jax

jax.config.update("jax_enable_x64", True)


def ragged_softmax_xent(scores, offsets, targets):
    """Per-query softmax cross-entropy over ragged groups of ``scores``."""
    nq = targets.shape[0]
    out = np.zeros(nq)
    for q in range(nq):
        start, stop = offsets[q], offsets[q + 1]
        m = scores[start]
        for k in range(start + 1, stop):
            if scores[k] > m:
                m = scores[k]
        s = 0.0
        for k in range(start, stop):
            s = s + np.exp(scores[k] - m)
        out[q] = m + np.log(s) - scores[start + targets[q]]
    return out


ragged_op = to_jax(ragged_softmax_xent, argnums=0)


def jax_ragged_softmax_xent(scores, offsets, targets):
    """The same loss with JAX's segment primitives (the benchmark's baseline)."""
    nq = targets.shape[0]
    seg = jnp.searchsorted(offsets, jnp.arange(scores.shape[0]), side="right") - 1
    m = jax.ops.segment_max(scores, seg, num_segments=nq)
    s = jax.ops.segment_sum(jnp.exp(scores - m[seg]), seg, num_segments=nq)
    return m + jnp.log(s) - scores[offsets[:-1] + targets]


def make_data(nq=300, d=16, seed=0):
    """Queries with 2 to 30 items each; the answer is the item a hidden scorer likes best."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 31, size=nq)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    X = rng.standard_normal((offsets[-1], d))
    w_true = rng.standard_normal(d)
    noisy = X @ w_true + 0.3 * rng.standard_normal(offsets[-1])
    targets = np.array([np.argmax(noisy[a:b]) for a, b in zip(offsets[:-1], offsets[1:])])
    return jnp.asarray(X), jnp.asarray(offsets), jnp.asarray(targets)


def loss_fn(w, X, offsets, targets, op=ragged_op):
    return jnp.mean(op(X @ w, offsets, targets))


def train(steps=50, lr=0.5, op=ragged_op):
    X, offsets, targets = make_data()
    w = jnp.zeros(X.shape[1])
    step = jax.jit(jax.value_and_grad(lambda w: loss_fn(w, X, offsets, targets, op)))
    losses = []
    for _ in range(steps):
        loss, g = step(w)
        w = w - lr * g
        losses.append(float(loss))
    return losses, w, (X, offsets, targets)


if __name__ == "__main__":
    losses, w, (X, offsets, targets) = train()
    print(f"loss: {losses[0]:.4f} -> {losses[-1]:.4f} after {len(losses)} gradient steps")
    scores = X @ w
    same = np.allclose(ragged_op(scores, offsets, targets),
                       jax_ragged_softmax_xent(scores, offsets, targets))
    print("s2s op == JAX segment ops:", same)
    hits = np.mean([int(np.argmax(scores[a:b]) == t) for a, b, t in
                    zip(offsets[:-1], offsets[1:], targets)])
    print(f"top-1 accuracy on the training queries: {hits:.2f}")
