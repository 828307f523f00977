"""scipy.optimize.minimize with s2s derivatives: jac= from a compiled gradient, hessp= from
a Hessian-vector product (forward mode over the gradient), on two problems:

* an extended Rosenbrock chain in 20 dimensions (plain loops, compiled by s2s.jit), with
  ``jac=True`` from ``s2s.jit(s2s.value_and_grad(f))`` and Newton-CG's ``hessp``;
* a logistic regression with an L2 penalty written with ``scipy.special`` (``log_expit``
  through ``logsumexp``, ``expit``), ``jac`` from ``s2s.grad``.

Run: python samples/scipy_optimize.py
"""
import numpy as np
import scipy.optimize
import scipy.special

import s2s


# --- a Rosenbrock chain: sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2 ---------------------
def rosenbrock(x):
    total = 0.0
    for i in range(x.shape[0] - 1):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        total += 100.0 * a * a + b * b
    return total


rosen_value_and_grad = s2s.jit(s2s.value_and_grad(rosenbrock))


def rosen_hessp(x, v):
    """H(x) v: the directional derivative of the gradient (forward over reverse)."""
    return s2s.jvp(s2s.grad(rosenbrock), (x,), (v,))[1]


# --- logistic regression: mean log-loss + L2 --------------------------------------------------
def make_data(n=200, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d)
    y = (rng.uniform(size=n) < scipy.special.expit(X @ w_true)).astype(float)
    return X, y


def logistic_loss(w, X, y, lam):
    z = X @ w
    # log(1 + exp(z)) = logsumexp([0, z]) row by row, stable for large |z|
    softplus = scipy.special.logsumexp(np.stack([np.zeros_like(z), z]), axis=0)
    return np.mean(softplus - y * z) + 0.5 * lam * np.sum(w * w)


def accuracy(w, X, y):
    return float(np.mean((scipy.special.expit(X @ w) > 0.5) == (y > 0.5)))


def main():
    x0 = np.full(20, -1.0)
    res = scipy.optimize.minimize(rosen_value_and_grad, x0, jac=True, method="BFGS")
    print(f"Rosenbrock BFGS: f = {res.fun:.3e} after {res.nit} iterations, "
          f"max |x - 1| = {np.max(np.abs(res.x - 1.0)):.2e}")
    res = scipy.optimize.minimize(rosenbrock, x0, jac=lambda x: rosen_value_and_grad(x)[1],
                                  hessp=rosen_hessp, method="Newton-CG")
    print(f"Rosenbrock Newton-CG: f = {res.fun:.3e} after {res.nit} iterations")

    X, y = make_data()
    lam = 1e-2
    res = scipy.optimize.minimize(logistic_loss, np.zeros(X.shape[1]), args=(X, y, lam),
                                  jac=s2s.grad(logistic_loss), method="L-BFGS-B")
    print(f"logistic regression: loss = {res.fun:.4f}, accuracy = {accuracy(res.x, X, y):.2f}")


if __name__ == "__main__":
    main()
