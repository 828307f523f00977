"""Gauss-Newton vector products with one linearization.

For a loss L(r(theta)) of a residual function r, the Gauss-Newton matrix is
G = J^T H_L J, with J the Jacobian of r at theta and H_L the Hessian of L at
r(theta).  One ``linearize`` fixes the point and gives r(theta) and
``r_jvp(v) = J v``; J^T comes from the vjp of that linear function (made
once as well), and H_L u from forward over reverse on L.  Each product G v
is then one J v, one H_L u and one J^T w, and no matrix is built.  (s2s's
linearized function holds no residuals: each call recomputes the primal
values the tangent code needs, which for this r is a few exponentials.)

Here r is a small nonlinear least-squares model, y_i - theta_0 exp(-theta_1
t_i) + theta_2, and L(r) = sum(log(1 + r^2)) (a robust loss), so H_L is
diagonal, 2 (1 - r^2) / (1 + r^2)^2; the test builds G from finite-difference
Jacobians and compares.

Run:  python samples/advanced/gauss_newton.py
"""
import numpy as np

from s2s import grad, jvp, linearize, vjp

T = np.linspace(0.0, 4.0, 9)
Y = 2.0 * np.exp(-0.7 * T) - 0.3 + 0.05 * np.sin(7 * T)


def residuals(theta):
    return Y - theta[0] * np.exp(-theta[1] * T) + theta[2]


def loss_of_residuals(r):
    return np.sum(np.log(1.0 + r ** 2))


def make_gnvp(theta):
    """``v -> G v`` at ``theta``; r is evaluated once, by ``linearize``."""
    r, r_jvp = linearize(residuals, theta)
    _, r_vjp = vjp(r_jvp, np.zeros_like(theta))  # the transpose of the linear map J

    def gnvp(v):
        Jv = r_jvp(v)
        HJv = jvp(grad(loss_of_residuals), (r,), (Jv,))[1]
        return r_vjp(HJv)[0]

    return gnvp


def main():
    theta = np.array([1.5, 0.5, 0.1])
    gnvp = make_gnvp(theta)
    G = np.stack([gnvp(e) for e in np.eye(3)], axis=1)
    print("Gauss-Newton matrix at theta =", theta, "from 3 products:")
    print(G)
    v = np.array([0.3, -1.0, 2.0])
    print("G v for v =", v, ":", gnvp(v))
    return theta, gnvp, G


if __name__ == "__main__":
    main()
