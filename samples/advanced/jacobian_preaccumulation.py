"""Cheaper VJPs by Jacobian pre-accumulation.

A map with few inputs and outputs but many operations inside (here ten RK4
substeps of the Lorenz system, R^3 -> R^3) makes reverse mode record every
intermediate value for its backward pass.  Pre-accumulation computes the
map's small Jacobian during the forward pass instead (``jacfwd``: three
tangent sweeps, nothing recorded) and keeps only that 3x3 matrix; the
backward pass is one matrix-vector product J^T ct.  ``custom_vjp`` tells s2s
to do exactly that for every call of the map, here inside a loop over a
trajectory, where the tape then holds 9 numbers per step.

The gradient of a trajectory loss is computed both ways and compared (the
test also checks it against finite differences).

Run:  python samples/advanced/jacobian_preaccumulation.py
"""
import numpy as np

import s2s
from s2s import grad, jacfwd

SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0
DT, SUBSTEPS = 0.01, 10


def lorenz(s):
    x, y, z = s[0], s[1], s[2]
    return np.array([SIGMA * (y - x), x * (RHO - z) - y, x * y - BETA * z])


def flow(s):
    """``SUBSTEPS`` RK4 steps of the Lorenz system: many operations, 3 in, 3 out."""
    h = DT / SUBSTEPS
    for _ in range(SUBSTEPS):
        k1 = lorenz(s)
        k2 = lorenz(s + 0.5 * h * k1)
        k3 = lorenz(s + 0.5 * h * k2)
        k4 = lorenz(s + h * k3)
        s = s + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return s


@s2s.custom_vjp
def flow_preaccumulated(s):
    return flow(s)


def _flow_fwd(s):
    return flow(s), jacfwd(flow)(s)  # the residual: the 3x3 Jacobian, pre-accumulated


def _flow_bwd(J, ct):
    return (J.T @ ct,)


flow_preaccumulated.defvjp(_flow_fwd, _flow_bwd)


def trajectory_loss(s0, target, steps=20):
    s = s0
    total = 0.0
    for _ in range(steps):
        s = flow(s)
        total = total + np.sum((s - target) ** 2)
    return total


def trajectory_loss_preaccumulated(s0, target, steps=20):
    s = s0
    total = 0.0
    for _ in range(steps):
        s = flow_preaccumulated(s)
        total = total + np.sum((s - target) ** 2)
    return total


def main():
    s0 = np.array([1.0, 1.0, 20.0])
    target = np.array([2.0, 3.0, 18.0])
    g_plain = grad(trajectory_loss)(s0, target)
    g_pre = grad(trajectory_loss_preaccumulated)(s0, target)
    print("gradient, plain reverse mode:       ", g_plain)
    print("gradient, pre-accumulated Jacobians:", g_pre)
    assert np.allclose(g_plain, g_pre, rtol=1e-10, atol=1e-10)
    return s0, target, g_pre


if __name__ == "__main__":
    main()
