"""Loop-heavy functions for ``bench_loops.py`` and their hand-written gradients.

``rk4_energy`` is what s2s differentiates (plain Python floats, a ``for``
loop of RK4 steps calling a right-hand side, as a user writes it).  The
LSTM loss is the sample's (``samples/lstm_lm.py``).  The hand-written
gradients are the floor for Python code that computes the same thing, and
an independent check of s2s's results.
"""
import numpy as np


# -- RK4 on plain floats --------------------------------------------------------

def oscillator(x, v, omega, zeta):
    return v, -omega * omega * x - 2.0 * zeta * omega * v


def rk4_energy(omega, zeta, x, v, h, n_steps):
    """``x**2 + v**2`` after ``n_steps`` RK4 steps of the damped oscillator."""
    for _ in range(n_steps):
        k1x, k1v = oscillator(x, v, omega, zeta)
        k2x, k2v = oscillator(x + 0.5 * h * k1x, v + 0.5 * h * k1v, omega, zeta)
        k3x, k3v = oscillator(x + 0.5 * h * k2x, v + 0.5 * h * k2v, omega, zeta)
        k4x, k4v = oscillator(x + h * k3x, v + h * k3v, omega, zeta)
        x = x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
        v = v + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
    return x * x + v * v


def _oscillator_vjp(x, v, gx, gv, omega, zeta):
    """Cotangents (x, v, omega, zeta) of ``oscillator`` given those of its outputs."""
    return (-omega * omega * gv, gx - 2.0 * zeta * omega * gv,
            gv * (-2.0 * omega * x - 2.0 * zeta * v), gv * (-2.0 * omega * v))


def rk4_energy_grad_by_hand(omega, zeta, x, v, h, n_steps):
    """Gradient of ``rk4_energy`` w.r.t. (omega, zeta, x, v), written by hand: the
    forward sweep keeps (x, v) per step (16 bytes of float64 per step), the
    reverse sweep recomputes the stages of each step and runs their adjoints."""
    states = np.empty((n_steps, 2))
    for n in range(n_steps):
        states[n] = x, v
        k1x, k1v = oscillator(x, v, omega, zeta)
        k2x, k2v = oscillator(x + 0.5 * h * k1x, v + 0.5 * h * k1v, omega, zeta)
        k3x, k3v = oscillator(x + 0.5 * h * k2x, v + 0.5 * h * k2v, omega, zeta)
        k4x, k4v = oscillator(x + h * k3x, v + h * k3v, omega, zeta)
        x = x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
        v = v + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
    xb, vb = 2.0 * x, 2.0 * v
    wb = zb = 0.0
    for n in range(n_steps - 1, -1, -1):
        x, v = states[n].tolist()
        k1x, k1v = oscillator(x, v, omega, zeta)
        y2x, y2v = x + 0.5 * h * k1x, v + 0.5 * h * k1v
        k2x, k2v = oscillator(y2x, y2v, omega, zeta)
        y3x, y3v = x + 0.5 * h * k2x, v + 0.5 * h * k2v
        k3x, k3v = oscillator(y3x, y3v, omega, zeta)
        y4x, y4v = x + h * k3x, v + h * k3v
        # x' = x + h/6 (k1 + 2 k2 + 2 k3 + k4), the same for v
        k1xb, k1vb = h / 6.0 * xb, h / 6.0 * vb
        k2xb, k2vb = h / 3.0 * xb, h / 3.0 * vb
        k3xb, k3vb = h / 3.0 * xb, h / 3.0 * vb
        k4xb, k4vb = h / 6.0 * xb, h / 6.0 * vb
        ax, av, aw, az = _oscillator_vjp(y4x, y4v, k4xb, k4vb, omega, zeta)
        xb, vb, wb, zb = xb + ax, vb + av, wb + aw, zb + az
        k3xb, k3vb = k3xb + h * ax, k3vb + h * av
        ax, av, aw, az = _oscillator_vjp(y3x, y3v, k3xb, k3vb, omega, zeta)
        xb, vb, wb, zb = xb + ax, vb + av, wb + aw, zb + az
        k2xb, k2vb = k2xb + 0.5 * h * ax, k2vb + 0.5 * h * av
        ax, av, aw, az = _oscillator_vjp(y2x, y2v, k2xb, k2vb, omega, zeta)
        xb, vb, wb, zb = xb + ax, vb + av, wb + aw, zb + az
        k1xb, k1vb = k1xb + 0.5 * h * ax, k1vb + 0.5 * h * av
        ax, av, aw, az = _oscillator_vjp(x, v, k1xb, k1vb, omega, zeta)
        xb, vb, wb, zb = xb + ax, vb + av, wb + aw, zb + az
    return wb, zb, xb, vb


# -- the LSTM sample's loss ---------------------------------------------------------

def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_grad_by_hand(params, seq):
    """``(loss, gradient)`` of the sample's ``bptt_loss(params, seq)`` (the window
    starts from the trainable state ``(tanh(c_0), c_0)``), by hand-written BPTT."""
    cell, E = params["cell"], params["embeddings"]
    W_ih, W_hh, b = cell["weight_ih"], cell["weight_hh"], cell["bias"]
    c0 = params["c_0"]
    h, c = np.tanh(c0), c0
    loss = 0.0
    saved = []
    for idx in seq:
        z = E @ h
        z = z - np.max(z)
        p = np.exp(z)
        s = np.sum(p)
        loss = loss - (z[idx] - np.log(s))
        x = E[idx]
        i, f, g, o = np.split(W_ih @ x + W_hh @ h + b, 4)
        i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
        new_c = f * c + i * g
        tc = np.tanh(new_c)
        saved.append((idx, h, c, p / s, x, i, f, g, o, tc))
        h, c = o * tc, new_c
    gE, gWih, gWhh, gb = np.zeros_like(E), np.zeros_like(W_ih), np.zeros_like(W_hh), np.zeros_like(b)
    hb, cb = np.zeros_like(h), np.zeros_like(c)
    for idx, h, c, prob, x, i, f, g, o, tc in reversed(saved):
        ob = hb * tc
        cb = cb + hb * o * (1.0 - tc * tc)
        d = np.concatenate([cb * g * i * (1.0 - i), cb * c * f * (1.0 - f),
                            cb * i * (1.0 - g * g), ob * o * (1.0 - o)])
        gWih += np.outer(d, x)
        gWhh += np.outer(d, h)
        gb += d
        gE[idx] += W_ih.T @ d
        dz = prob.copy()
        dz[idx] -= 1.0
        gE += np.outer(dz, h)
        hb = W_hh.T @ d + E.T @ dz
        cb = cb * f
    t0 = np.tanh(c0)
    gc0 = cb + hb * (1.0 - t0 * t0)
    grads = {"c_0": gc0, "cell": {"bias": gb, "weight_hh": gWhh, "weight_ih": gWih},
             "embeddings": gE}
    return loss, grads
