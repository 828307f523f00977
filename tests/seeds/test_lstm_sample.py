"""The seed's LSTM language model (samples/lstm_lm.py): it learns the training
sequence, and its s2s gradients are right.

Oracles: the seed's printed ``Sample after: [4, 8, 15, 16, 23, 42]``; central
finite differences in float64 of the sample's own loss, in random directions
(reverse mode) and against forward mode (the jvp/vjp dot-product test); and the
epoch-0 loss the sample prints, recomputed with one SGD step on a
finite-difference gradient (no s2s involved).
"""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s
from s2s.tree_util import tree_leaves, tree_map

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "lstm_lm.py"
EPS = 1e-6


def _load():
    spec = importlib.util.spec_from_file_location("lstm_lm_sample", SAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)       # defines functions only (__main__ guard)
    return mod


lm = _load()


@pytest.fixture(scope="module")
def output():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, str(SAMPLE)], capture_output=True, text=True,
                          cwd=str(ROOT), env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_prints_the_seed_sample_after_training(output):
    assert len(output) == 5, output
    before, losses, after = output[0], output[1:4], output[4]
    assert before.startswith("Sample before: [")
    sample = [int(t) for t in before.split("[", 1)[1].rstrip("]").split(",")]
    assert len(sample) == 6 and all(0 <= t < 43 for t in sample)
    assert all(line.startswith("Loss: ") for line in losses)
    values = [float(line.split()[1]) for line in losses]
    assert values[0] > values[1] > values[2] > 0
    assert after == "Sample after: [4, 8, 15, 16, 23, 42]"


def test_epoch0_loss_matches_an_sgd_step_on_finite_differences(output):
    """The first printed loss is window 1 at the initial parameters plus window
    2 after one SGD step; here the step uses a central-difference gradient."""
    printed = float(output[1].split()[1])
    params = lm.init_params(lm.vocab_size)
    data, n = lm.training_data, lm.bptt_length
    loss1, hc = lm.bptt_loss(params, data[:n])
    step = tree_map(lambda p, g: p - 0.1 * g, params,
                    fd_gradient(lambda p: lm.bptt_loss(p, data[:n])[0], params))
    loss2, _ = lm.bptt_loss(step, data[n:2 * n], hc)
    assert abs(printed - (loss1 + loss2)) <= 1e-6 * abs(printed)


# ------------------------------------------------------------------ gradients


def fd_gradient(f, params):
    """Central differences of ``f`` at ``params``, every entry of every leaf."""
    leaves = tree_leaves(params)
    grads = []
    for li, leaf in enumerate(leaves):
        g = np.zeros_like(leaf)
        for i in np.ndindex(leaf.shape):
            plus = [l.copy() for l in leaves]
            minus = [l.copy() for l in leaves]
            plus[li][i] += EPS
            minus[li][i] -= EPS
            g[i] = (f(_rebuild(params, plus)) - f(_rebuild(params, minus))) / (2 * EPS)
        grads.append(g)
    return _rebuild(params, grads)


def _rebuild(tree, leaves):
    it = iter(leaves)
    return tree_map(lambda _: next(it), tree)


def _dot(a, b):
    return sum(float(np.vdot(x, y)) for x, y in zip(tree_leaves(a), tree_leaves(b)))


def _directional_fd(f, params, direction):
    plus = tree_map(lambda p, d: p + EPS * d, params, direction)
    minus = tree_map(lambda p, d: p - EPS * d, params, direction)
    return (f(plus) - f(minus)) / (2 * EPS)


def window_loss(params, batch, hc=None):
    loss, _ = lm.bptt_loss(params, batch, hc)
    return loss


def _params(trained):
    params = lm.init_params(lm.vocab_size, seed=3)
    if trained:       # a later point of training: the gates are no longer saturated alike
        params = lm.train(params, lm.training_data, epochs=20, report=lambda *a: None)
    return params


@pytest.mark.parametrize("trained", [False, True])
@pytest.mark.parametrize("detached", [False, True])
def test_gradient_matches_finite_differences(trained, detached):
    rng = np.random.default_rng(5 + 2 * trained + detached)
    params = _params(trained)
    batch = lm.training_data[3:] if detached else lm.training_data[:3]
    hc = None
    if detached:      # the state after the first window, as the training loop passes it
        _, hc = lm.bptt_loss(params, lm.training_data[:3])

    grads, aux = lm.grad_fn(params, batch, hc)
    loss, state = lm.bptt_loss(params, batch, hc)
    for got, want in zip(aux, state):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    if detached:
        # a given state is a constant: c_0 gets no gradient (the seed's hc.detach())
        assert np.all(grads["c_0"] == 0)
    else:
        assert np.linalg.norm(grads["c_0"]) > 0

    def f(p):
        return window_loss(p, batch, hc)

    for _ in range(4):
        direction = tree_map(lambda p: rng.standard_normal(p.shape), params)
        fd = _directional_fd(f, params, direction)
        assert abs(_dot(grads, direction) - fd) <= 1e-6 * max(1.0, abs(fd))
    # each parameter on its own (a wrong leaf cannot hide behind a right one)
    for path in [("cell", "weight_ih"), ("cell", "weight_hh"), ("cell", "bias"),
                 ("embeddings",), ("c_0",)]:
        direction = tree_map(np.zeros_like, params)
        leaf = direction
        for key in path[:-1]:
            leaf = leaf[key]
        leaf[path[-1]] = rng.standard_normal(leaf[path[-1]].shape)
        fd = _directional_fd(f, params, direction)
        assert abs(_dot(grads, direction) - fd) <= 1e-6 * max(1.0, abs(fd)), path


@pytest.mark.parametrize("detached", [False, True])
def test_forward_mode_agrees_with_reverse_mode(detached):
    """Dot-product test: <grad, v> from reverse mode equals jvp(v) from forward
    mode (two independent transforms), and both equal finite differences."""
    rng = np.random.default_rng(17 + detached)
    params = _params(False)
    batch = lm.training_data[3:] if detached else lm.training_data[:3]
    hc = lm.bptt_loss(params, lm.training_data[:3])[1] if detached else None
    grads, _ = lm.grad_fn(params, batch, hc)
    for _ in range(2):
        v = tree_map(lambda p: rng.standard_normal(p.shape), params)
        zeros = None if hc is None else tree_map(np.zeros_like, hc)
        out, tangent = s2s.jvp(window_loss, (params, batch, hc), (v, None, zeros))
        assert out == pytest.approx(window_loss(params, batch, hc), rel=1e-12)
        assert tangent == pytest.approx(_dot(grads, v), rel=1e-9, abs=1e-12)
        fd = _directional_fd(lambda p: window_loss(p, batch, hc), params, v)
        assert tangent == pytest.approx(fd, rel=1e-6, abs=1e-8)
