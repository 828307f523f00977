"""A loop-heavy recurrence as a PyTorch op, trained with torch.optim.

The op is a small recurrent network written as plain Python loops over numpy
arrays, one scalar at a time, the way one would write it in C:

    h[t+1, i] = tanh(b[i] + U[i] * x[t] + sum_j W[i, j] * h[t, j])
    pred[t]   = sum_i v[i] * h[t+1, i]

In eager PyTorch this loop costs a few dozen tiny tensor operations per time
step (each with its dispatch overhead and a node on the autograd tape).
``s2s.interop.to_torch`` compiles it instead: the forward is ``s2s.jit`` of the
function and the backward is ``s2s.jit`` of the gradient s2s generates (the
reverse sweep of the loops), called from PyTorch's autograd; everything around
it (the loss, the optimiser) stays PyTorch.

The task: predict the next sample of a noisy two-tone signal from the past.
``train`` fits ``(W, U, b, v)`` with Adam and returns the losses.

Run:  python samples/torch_op.py
"""
import numpy as np
import torch

from s2s.interop import to_torch


def rnn_predict(W, U, b, v, xs):
    """One-step-ahead predictions of an Elman network over the sequence ``xs``."""
    H = W.shape[0]
    T = xs.shape[0]
    hs = np.zeros((T + 1, H))
    preds = np.zeros(T)
    for t in range(T):
        p = 0.0
        for i in range(H):
            acc = b[i] + U[i] * xs[t]
            for j in range(H):
                acc = acc + W[i, j] * hs[t, j]
            hs[t + 1, i] = np.tanh(acc)
            p = p + v[i] * hs[t + 1, i]
        preds[t] = p
    return preds


rnn_op = to_torch(rnn_predict, argnums=(0, 1, 2, 3))


def torch_rnn_predict(W, U, b, v, xs):
    """The same network in eager PyTorch (the reference and the benchmark's baseline)."""
    h = torch.zeros(W.shape[0], dtype=W.dtype)
    preds = []
    for t in range(xs.shape[0]):
        h = torch.tanh(b + U * xs[t] + W @ h)
        preds.append(v @ h)
    return torch.stack(preds)


def signal(T, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(T + 1)
    x = np.sin(0.07 * t) + 0.5 * np.sin(0.23 * t) + 0.05 * rng.standard_normal(T + 1)
    return torch.tensor(x)


def init_params(H, seed=0):
    g = torch.Generator().manual_seed(seed)
    shapes = {"W": (H, H), "U": (H,), "b": (H,), "v": (H,)}
    scale = {"W": 0.5 / H ** 0.5, "U": 1.0, "b": 0.1, "v": 0.5}
    return {k: (torch.randn(*s, generator=g, dtype=torch.float64) * scale[k]).requires_grad_()
            for k, s in shapes.items()}


def train(steps=60, H=8, T=200, lr=0.02, op=rnn_op):
    x = signal(T)
    inputs, targets = x[:-1], x[1:]
    params = init_params(H)
    opt = torch.optim.Adam(params.values(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        preds = op(params["W"], params["U"], params["b"], params["v"], inputs)
        loss = torch.mean((preds - targets) ** 2)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, params


if __name__ == "__main__":
    losses, params = train()
    print(f"loss: {losses[0]:.4f} -> {losses[-1]:.4f} after {len(losses)} Adam steps")
    x = signal(200)[:-1]
    with torch.no_grad():
        same = torch.allclose(rnn_op(*(params[k] for k in "WUbv"), x),
                              torch_rnn_predict(*(params[k] for k in "WUbv"), x))
    print("s2s op == eager PyTorch network:", same)
