"""samples/torch_op.py and samples/jax_op.py: a few training steps run, the loss falls, and
the op and its gradient agree with the same model written in the framework."""
import importlib.util
import pathlib

import numpy as np

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"sample_{name}", SAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_torch_sample():
    import torch
    mod = _load("torch_op")
    losses, _ = mod.train(steps=6, T=60)
    assert losses[-1] < losses[0]
    ref_losses, _ = mod.train(steps=6, T=60, op=mod.torch_rnn_predict)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-8)
    params = mod.init_params(5, seed=3)
    x = mod.signal(40)[:-1]
    grads = torch.autograd.grad(mod.rnn_op(*params.values(), x).sum(), list(params.values()))
    ref = torch.autograd.grad(mod.torch_rnn_predict(*params.values(), x).sum(),
                              list(params.values()))
    for g, r in zip(grads, ref):
        assert torch.allclose(g, r)


def test_jax_sample():
    import jax
    mod = _load("jax_op")
    losses, w, (X, offsets, targets) = mod.train(steps=4)
    assert losses[-1] < losses[0]
    ref_losses, w_ref, _ = mod.train(steps=4, op=mod.jax_ragged_softmax_xent)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-8)
    np.testing.assert_allclose(w, w_ref, rtol=1e-8, atol=1e-12)
    wr = np.random.default_rng(1).standard_normal(X.shape[1])
    g = jax.grad(mod.loss_fn)(wr, X, offsets, targets)
    gref = jax.grad(lambda w: mod.loss_fn(w, X, offsets, targets,
                                          mod.jax_ragged_softmax_xent))(wr)
    np.testing.assert_allclose(g, gref, rtol=1e-9)
