"""Forward mode from reverse mode alone: a JVP from two VJPs.

The pullback u -> J^T u of ``vjp(f, x)`` is linear in u.  Its own VJP
transposes it again: (J^T)^T v = J v.  So two reverse passes give a
Jacobian-vector product, the trick for systems that only have reverse mode.
The result is checked against s2s's forward mode (``jvp``) here and against
finite differences in the test.

Run:  python samples/advanced/forward_from_reverse.py
"""
import numpy as np

from s2s import jvp, vjp


def f(x):
    """R^3 -> R^2, nonlinear in every input."""
    return np.array([np.sin(x[0]) * x[1] + x[2] ** 2, np.exp(x[0] * x[2]) - np.tanh(x[1])])


def jvp_from_two_vjps(fun, x, v):
    y, pullback = vjp(fun, x)  # u -> (J^T u,)
    _, pull_pullback = vjp(lambda u: pullback(u)[0], np.zeros_like(y))  # w -> (J w,)
    return y, pull_pullback(v)[0]


def main():
    x = np.array([0.3, -0.8, 0.5])
    v = np.array([1.0, 0.5, -2.0])
    y, Jv = jvp_from_two_vjps(f, x, v)
    y_fwd, Jv_fwd = jvp(f, (x,), (v,))
    print("f(x)                   =", y)
    print("J v from two vjps      =", Jv)
    print("J v from jvp           =", Jv_fwd)
    assert np.allclose(Jv, Jv_fwd, rtol=1e-12, atol=1e-14)
    return x, v, Jv


if __name__ == "__main__":
    main()
