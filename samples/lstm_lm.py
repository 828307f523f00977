"""The seed's LSTM language model, trained with s2s gradients of plain numpy code.

This is the LSTM part of the PyTorch-to-JAX tutorial
 (one of this project's seeds): the same model (vocabulary 43,
dimension 17), the same training data ``[4, 8, 15, 16, 23, 42]``, truncated
backpropagation through time over windows of 3 tokens, 101 epochs of SGD with
learning rate 0.1.  The PyTorch modules become plain functions on a dict of
numpy arrays; ``s2s.grad`` differentiates them as written (Python loops over
the sequence, matrix products, ``np.tanh``, a log-softmax).

How the seed's PyTorch code maps to this file:

==================================  =========================================
PyTorch (the seed)                  here
==================================  =========================================
``LSTMCell`` parameters             ``params["cell"]``: ``weight_ih``
(``weight_ih``, ``weight_hh``,      (68 x 17), ``weight_hh`` (68 x 17),
``bias``)                           ``bias`` (68,)
``LSTMCell.forward(inputs, h, c)``  ``lstm_cell(cell, inputs, h, c)``
``torch.chunk(ifgo, 4)``            ``np.split(ifgo, 4)``
``LSTMLM.embeddings``, ``.c_0``     ``params["embeddings"]`` (43 x 17),
                                    ``params["c_0"]`` (17,)
``LSTMLM.hc_0`` (a property)        ``hc_0(params)``
``LSTMLM.forward(seq, hc)``         ``lm_forward(params, seq, hc)``
``torch.log_softmax``               ``log_softmax``
``LSTMLM.greedy_argmax``            ``greedy_argmax`` (not differentiated,
(under ``torch.no_grad()``)         so plain numpy)
``loss.backward()``                 ``s2s.grad(bptt_loss, has_aux=True)``
``hc = (h.detach(), c.detach())``   the state returned as auxiliary data and
                                    passed back as a non-differentiated
                                    argument
``param.data -= 0.1 * param.grad``  ``tree_map(sgd, params, grads)``
``torch.rand`` (float32)            ``rng.random`` (float64)
==================================  =========================================

The trainable initial state: the seed's first window of each epoch starts
from ``lm.hc_0 = (tanh(c_0), c_0)``, computed from the parameter ``c_0``, so
the first window's loss reaches ``c_0`` through the initial state; later
windows start from the detached state of the previous window and give
``c_0`` no gradient.  ``bptt_loss(params, batch)`` (no state) computes the
initial state from ``params["c_0"]`` inside the differentiated function, so
its gradient flows in the same way; ``bptt_loss(params, batch, hc)`` starts
from a given state, which is a constant for the gradient.

The random initial weights are numpy's, not torch's, so the losses differ
from the seed's printed numbers; the sample after training is the same.

Run:  python samples/lstm_lm.py
"""
import numpy as np

import s2s
from s2s.tree_util import tree_map


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_cell(cell, inputs, h, c):
    """One LSTM step (the seed's ``LSTMCell.forward``): the new ``(h, c)``."""
    ifgo = cell["weight_ih"] @ inputs + cell["weight_hh"] @ h + cell["bias"]
    i, f, g, o = np.split(ifgo, 4)
    i = sigmoid(i)
    f = sigmoid(f)
    g = np.tanh(g)
    o = sigmoid(o)
    new_c = f * c + i * g
    new_h = o * np.tanh(new_c)
    return new_h, new_c


def log_softmax(z):
    z = z - np.max(z)
    return z - np.log(np.sum(np.exp(z)))


def hc_0(params):
    """The trainable initial state (the seed's ``LSTMLM.hc_0`` property)."""
    c_0 = params["c_0"]
    return np.tanh(c_0), c_0


def lm_forward(params, seq, hc):
    """The negative log-likelihood of ``seq`` starting from state ``hc``, and
    the state after it (the seed's ``LSTMLM.forward``)."""
    embeddings = params["embeddings"]
    loss = 0.0
    for idx in seq:
        loss -= log_softmax(embeddings @ hc[0])[idx]
        h, c = hc
        hc = lstm_cell(params["cell"], embeddings[idx, :], h, c)
    return loss, hc


def bptt_loss(params, batch, hc=None):
    """The loss of one BPTT window and, as auxiliary data, the state after it.

    Without ``hc`` the window starts from the trainable initial state.
    """
    if hc is None:
        hc = hc_0(params)
    return lm_forward(params, batch, hc)


def greedy_argmax(params, hc, length=6):
    """The most likely next token, ``length`` times (no gradient needed)."""
    embeddings = params["embeddings"]
    idxs = []
    for _ in range(length):
        idx = int(np.argmax(embeddings @ hc[0]))
        idxs.append(idx)
        hc = lstm_cell(params["cell"], embeddings[idx, :], hc[0], hc[1])
    return idxs


def init_params(vocab_size, dim=17, seed=0):
    """Uniform [0, 1) weights, zero bias and ``c_0`` (as the seed's ``torch.rand``
    and ``torch.zeros``)."""
    rng = np.random.default_rng(seed)
    return {
        "cell": {
            "weight_ih": rng.random((4 * dim, dim)),
            "weight_hh": rng.random((4 * dim, dim)),
            "bias": np.zeros(4 * dim),
        },
        "embeddings": rng.random((vocab_size, dim)),
        "c_0": np.zeros(dim),
    }


def sgd(param, grad, lr=0.1):
    return param - lr * grad


grad_fn = s2s.grad(bptt_loss, has_aux=True)


def train(params, training_data, bptt_length=3, epochs=101, report=print):
    """The seed's training loop; ``report(epoch, total_loss)`` every 50 epochs."""
    for epoch in range(epochs):
        hc = None                      # the first window starts from hc_0(params)
        totalloss = 0.0
        for start in range(0, len(training_data), bptt_length):
            batch = training_data[start:start + bptt_length]
            if epoch % 50 == 0:
                totalloss += float(bptt_loss(params, batch, hc)[0])
            grads, hc = grad_fn(params, batch, hc)     # hc: the detached state
            params = tree_map(sgd, params, grads)
        if totalloss:
            report(epoch, totalloss)
    return params


vocab_size = 43   # prime trick! :)
training_data = np.array([4, 8, 15, 16, 23, 42])
bptt_length = 3   # to illustrate hc.detach-ing

if __name__ == "__main__":
    lm = init_params(vocab_size)
    print("Sample before:", greedy_argmax(lm, hc_0(lm)))
    lm = train(lm, training_data, bptt_length,
               report=lambda epoch, loss: print("Loss:", loss))
    print("Sample after:", greedy_argmax(lm, hc_0(lm)))
