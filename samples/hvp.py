"""Hessian-vector products and Jacobians with s2s: the autodiff cookbook's examples.

The HVP and Jacobian sections of the JAX autodiff cookbook
 (one of this project's seeds) with ``jax`` replaced by
``s2s`` and ``jax.numpy`` by plain ``numpy`` (float64).  The three ways to
compose forward and reverse mode into an HVP, and the naive product with the
materialised Hessian, must agree with each other and with the closed form;
then they are timed as in the seed.  Last, the cookbook's ``predict``
Jacobians by ``jacfwd`` and ``jacrev``, checked against finite differences.

Run:  python samples/hvp.py          (add --quick to skip the timings)
"""
import sys
import timeit

import numpy as np

from s2s import grad, hessian, jacfwd, jacrev, jvp


# forward-over-reverse
def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


# reverse-over-forward
def hvp_revfwd(f, primals, tangents):
    g = lambda primals: jvp(f, primals, tangents)[1]  # noqa: E731
    return grad(g)(primals)


# reverse-over-reverse, only works for single arguments
def hvp_revrev(f, primals, tangents):
    x, = primals
    v, = tangents
    return grad(lambda x: np.vdot(grad(f)(x), v))(x)


def f(X):
    return np.sum(np.tanh(X) ** 2)


def f_hvp_closed_form(X, V):
    """f is a sum of x -> tanh(x)^2, whose second derivative is 2 (1 - t^2)(1 - 3 t^2)."""
    t = np.tanh(X)
    return 2 * (1 - t ** 2) * (1 - 3 * t ** 2) * V


def hvps(X, V):
    ans1 = hvp(f, (X,), (V,))
    ans2 = np.tensordot(hessian(f)(X), V, 2)
    ans3, = hvp_revfwd(f, (X,), (V,))  # grad with respect to a tuple gives a tuple
    ans4 = hvp_revrev(f, (X,), (V,))
    return ans1, ans2, ans3, ans4


def time_hvps(X, V, number=10, repeat=3):
    """``%timeit -n10 -r3`` of the seed: mean and standard deviation over the repeats."""
    rows = [("Forward over reverse", lambda: hvp(f, (X,), (V,))),
            ("Reverse over forward", lambda: hvp_revfwd(f, (X,), (V,))),
            ("Reverse over reverse", lambda: hvp_revrev(f, (X,), (V,))),
            ("Naive full Hessian materialization",
             lambda: np.tensordot(hessian(f)(X), V, 2))]
    for name, run in rows:
        run()  # the first call transforms; the seed's timings are of warm calls too
        per_loop = np.array(timeit.repeat(run, number=number, repeat=repeat)) / number
        print(f"{name:<36s} {per_loop.mean() * 1e3:8.3f} ms ± {per_loop.std() * 1e3:6.3f} ms "
              f"per loop (mean ± std. dev. of {repeat} runs, {number} loops each)")


# --- Jacobians of the cookbook's predict ----------------------------------------------

def sigmoid(x):
    return 0.5 * (np.tanh(x / 2) + 1)


def predict(W, b, inputs):
    return sigmoid(np.dot(inputs, W) + b)


inputs = np.array([[0.52, 1.12, 0.77],
                   [0.88, -1.08, 0.15],
                   [0.52, 0.06, -1.30],
                   [0.74, -2.49, 1.39]])


def finite_difference_jacobian(fun, x, eps=1e-6):
    cols = [(fun(x + eps * e) - fun(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
    return np.stack(cols, axis=-1)


def main(quick=False):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 40))
    V = rng.normal(size=(30, 40))
    ans1, ans2, ans3, ans4 = hvps(X, V)
    expected = f_hvp_closed_form(X, V)
    print(np.allclose(ans1, ans2, 1e-4, 1e-4))        # True, as in the seed
    for ans in (ans1, ans2, ans3, ans4):
        assert np.allclose(ans, expected, rtol=1e-10, atol=1e-12)
    print("all four HVPs agree with each other and with the closed form")
    if not quick:
        time_hvps(X, V)

    W, b = rng.normal(size=3), rng.normal()
    J_fwd = jacfwd(predict)(W, b, inputs)
    J_rev = jacrev(predict)(W, b, inputs)
    J_fd = finite_difference_jacobian(lambda W: predict(W, b, inputs), W)
    print("jacfwd result, with shape", J_fwd.shape)
    print(J_fwd)
    assert np.allclose(J_fwd, J_rev, rtol=1e-12, atol=1e-14)
    assert np.allclose(J_fwd, J_fd, rtol=1e-6, atol=1e-9)
    print("jacfwd and jacrev agree with each other and with finite differences")
    J_b = jacrev(predict, argnums=1)(W, b, inputs)
    assert np.allclose(J_b, finite_difference_jacobian(
        lambda b: predict(W, b[0], inputs), np.array([b]))[:, 0], rtol=1e-6)


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
