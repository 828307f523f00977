"""Fit the parameters of an ODE by gradient descent through an adaptive RK4 solver.

The model is a damped harmonic oscillator,

    x'' = -omega**2 * x - 2 * zeta * omega * x',    x(0) = 1, x'(0) = 0,

with unknown natural frequency ``omega`` and damping ratio ``zeta``.  We
observe ``x`` at 20 times in [0.5, 10] (generated with the true parameters
and a tight tolerance) and recover ``(omega, zeta)`` from a wrong first
guess by gradient descent on the mean squared error.

The solver is ordinary Python on plain floats: classical RK4 steps with
step doubling (one step of size h against two of size h/2; the difference
estimates the local error), inside a ``while`` loop that accepts or rejects
each step and adapts ``h`` until it reaches the next observation time.  How
many steps it takes depends on the parameters.  ``s2s.value_and_grad``
differentiates the loss as written: the tape records the loop's trip counts
and the accept/reject decisions (conditions are not differentiated), and the
derivative flows through every accepted step, including through ``h``,
which depends on the parameters through the error estimate.  The result is
the exact derivative of the loss the solver computes (discretise, then
differentiate), which is what gradient descent on that loss needs.

Run:  python samples/ode_fit.py
"""
import numpy as np

import s2s


def oscillator(x, v, omega, zeta):
    """The right-hand side: (dx/dt, dv/dt)."""
    return v, -omega * omega * x - 2.0 * zeta * omega * v


def rk4_step(x, v, h, omega, zeta):
    k1x, k1v = oscillator(x, v, omega, zeta)
    k2x, k2v = oscillator(x + 0.5 * h * k1x, v + 0.5 * h * k1v, omega, zeta)
    k3x, k3v = oscillator(x + 0.5 * h * k2x, v + 0.5 * h * k2v, omega, zeta)
    k4x, k4v = oscillator(x + h * k3x, v + h * k3v, omega, zeta)
    return (x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x),
            v + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v))


def advance(x, v, t, h, t_end, omega, zeta, tol):
    """Integrate from ``t`` to ``t_end`` with adaptive steps; ``h`` is the step
    to try first.  Returns the state at ``t_end``, ``t_end`` and the next step."""
    while t < t_end:
        h = min(h, t_end - t)
        x1, v1 = rk4_step(x, v, h, omega, zeta)                # one step of h
        xh, vh = rk4_step(x, v, 0.5 * h, omega, zeta)          # two steps of h/2
        x2, v2 = rk4_step(xh, vh, 0.5 * h, omega, zeta)
        err = abs(x2 - x1) + abs(v2 - v1)
        if err <= tol:                                         # accept the step
            t = t + h
            x, v = x2 + (x2 - x1) / 15.0, v2 + (v2 - v1) / 15.0   # Richardson extrapolation
        h = 0.9 * h * min(4.0, max(0.2, (tol / max(err, 1e-16)) ** 0.2))
    return x, v, t, h


def loss(params, times, observed, tol=1e-6):
    """Mean squared error between the solver's x(t) and the observations."""
    omega, zeta = params
    x, v, t, h = 1.0, 0.0, 0.0, 0.1
    total = 0.0
    for t_obs, x_obs in zip(times, observed):
        x, v, t, h = advance(x, v, t, h, t_obs, omega, zeta, tol)
        total = total + (x - x_obs) ** 2
    return total / len(times)


def simulate(params, times, tol=1e-10):
    """x at ``times`` (not differentiated: generates the observations)."""
    omega, zeta = params
    x, v, t, h = 1.0, 0.0, 0.0, 0.1
    xs = []
    for t_obs in times:
        x, v, t, h = advance(x, v, t, h, t_obs, omega, zeta, tol)
        xs.append(x)
    return np.array(xs)


value_and_grad_fn = s2s.value_and_grad(loss)


def fit(params, times, observed, lr=0.5, steps=200, gtol=1e-9, report=None):
    """Gradient descent from ``params`` until the gradient is below ``gtol``."""
    for step in range(steps):
        value, grad = value_and_grad_fn(params, times, observed)
        if report is not None:
            report(step, value, params)
        if max(abs(g) for g in grad) < gtol:
            break
        params = tuple(float(p - lr * g) for p, g in zip(params, grad))
    return params


true_params = (1.5, 0.2)           # omega, zeta
first_guess = (1.2, 0.4)
times = np.linspace(0.5, 10.0, 20)

if __name__ == "__main__":
    observed = simulate(true_params, times)

    def report(step, value, params):
        if step % 5 == 0:
            print(f"step {step:3d}  loss {value:.3e}  omega {params[0]:.6f}  zeta {params[1]:.6f}")

    omega, zeta = fit(first_guess, times, observed, report=report)
    print(f"fitted omega = {omega:.6f}  (true {true_params[0]})")
    print(f"fitted zeta  = {zeta:.6f}  (true {true_params[1]})")
