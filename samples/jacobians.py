"""Jacobian-matrix and matrix-Jacobian products with vmap: the autodiff cookbook's
"Composing VJPs, JVPs, and vmap" section (one of this project's seeds)
with ``jax`` replaced by ``s2s`` and ``jax.numpy`` by numpy (float64).

Pulling back 128 covectors through ``vjp_fun`` one at a time, then all at once
with ``vmap(vjp_fun)`` (one batched run of the adjoint code: a matrix-matrix
product where the loop made 128 vector-matrix ones); the same for pushing 128
tangents through ``jvp``; then ``jacrev``/``jacfwd`` written with ``vmap`` as in
the cookbook, equal to ``s2s.jacrev``/``s2s.jacfwd`` and to finite differences.

Run:  python samples/jacobians.py          (add --quick to skip the timings)
"""
import sys
import timeit

import numpy as np

from s2s import jacfwd, jacrev, jvp, vjp, vmap


def sigmoid(x):
    return 0.5 * (np.tanh(x / 2) + 1)


def predict(W, b, inputs):
    return sigmoid(np.dot(inputs, W) + b)


inputs = np.array([[0.52, 1.12, 0.77],
                   [0.88, -1.08, 0.15],
                   [0.52, 0.06, -1.30],
                   [0.74, -2.49, 1.39]])
rng = np.random.default_rng(0)
W, b = rng.normal(size=3), rng.normal()

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)  # noqa: E731


# Pull back the covectors `m_i` along `f`, evaluated at `W`, for all `i`.
# First, use a list comprehension to loop over rows in the matrix M.
def loop_mjp(f, x, M):
    y, vjp_fun = vjp(f, x)
    return np.vstack([vjp_fun(mi) for mi in M])


# Now, use vmap to build a computation that does a single fast matrix-matrix
# multiply, rather than an outer loop over vector-matrix multiplies.
def vmap_mjp(f, x, M):
    y, vjp_fun = vjp(f, x)
    outs, = vmap(vjp_fun)(M)
    return outs


def loop_jmp(f, W, M):
    # jvp immediately returns the primal and tangent values as a tuple,
    # so we'll compute and select the tangents in a list comprehension
    return np.vstack([jvp(f, (W,), (mi,))[1] for mi in M])


def vmap_jmp(f, W, M):
    _jvp = lambda s: jvp(f, (W,), (s,))[1]  # noqa: E731
    return vmap(_jvp)(M)


def our_jacrev(f):
    def jacfun(x):
        y, vjp_fun = vjp(f, x)
        # Use vmap to do a matrix-Jacobian product.
        # Here, the matrix is the Euclidean basis, so we get all
        # entries in the Jacobian at once.
        J, = vmap(vjp_fun, in_axes=0)(np.eye(len(y)))
        return J
    return jacfun


def our_jacfwd(f):
    def jacfun(x):
        _jvp = lambda s: jvp(f, (x,), (s,))[1]  # noqa: E731
        Jt = vmap(_jvp, in_axes=1)(np.eye(len(x)))
        return np.transpose(Jt)
    return jacfun


def finite_difference_jacobian(fun, x, eps=1e-6):
    cols = [(fun(x + eps * e) - fun(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
    return np.stack(cols, axis=-1)


def timeit_row(name, run, number=10, repeat=3):
    """``%timeit -n10 -r3`` of the seed; returns the mean seconds per loop."""
    run()  # the first call transforms; the seed's timings are of warm calls too
    per_loop = np.array(timeit.repeat(run, number=number, repeat=repeat)) / number
    print(f"{name}\n{per_loop.mean() * 1e3:.3g} ms ± {per_loop.std() * 1e6:.3g} µs per loop "
          f"(mean ± std. dev. of {repeat} runs, {number} loops each)")
    return per_loop.mean()


def main(quick=False):
    y = f(W)
    J_fd = finite_difference_jacobian(f, W)

    num_covecs = 128
    U = rng.normal(size=(num_covecs,) + y.shape)
    loop_vs = loop_mjp(f, W, M=U)
    vmap_vs = vmap_mjp(f, W, M=U)
    assert np.allclose(loop_vs, vmap_vs), \
        'Vmap and non-vmapped Matrix-Jacobian Products should be identical'
    assert np.allclose(vmap_vs, U @ J_fd, rtol=1e-6, atol=1e-9)
    print("vmapped and looped matrix-Jacobian products agree (and with finite differences)")
    if not quick:
        t_loop = timeit_row('Non-vmapped Matrix-Jacobian product', lambda: loop_mjp(f, W, M=U))
        t_vmap = timeit_row('\nVmapped Matrix-Jacobian product', lambda: vmap_mjp(f, W, M=U))
        print(f"(vmap is {t_loop / t_vmap:.1f}x faster)\n")

    num_vecs = 128
    S = rng.normal(size=(num_vecs,) + W.shape)
    loop_vs = loop_jmp(f, W, M=S)
    vmap_vs = vmap_jmp(f, W, M=S)
    assert np.allclose(loop_vs, vmap_vs), \
        'Vmap and non-vmapped Jacobian-Matrix products should be identical'
    assert np.allclose(vmap_vs, S @ J_fd.T, rtol=1e-6, atol=1e-9)
    print("vmapped and looped Jacobian-matrix products agree (and with finite differences)")
    if not quick:
        t_loop = timeit_row('Non-vmapped Jacobian-Matrix product', lambda: loop_jmp(f, W, M=S))
        t_vmap = timeit_row('\nVmapped Jacobian-Matrix product', lambda: vmap_jmp(f, W, M=S))
        print(f"(vmap is {t_loop / t_vmap:.1f}x faster)\n")

    assert np.allclose(jacrev(f)(W), our_jacrev(f)(W)), 'Incorrect reverse-mode Jacobian results!'
    assert np.allclose(jacfwd(f)(W), our_jacfwd(f)(W)), 'Incorrect forward-mode Jacobian results!'
    assert np.allclose(our_jacrev(f)(W), J_fd, rtol=1e-6, atol=1e-9)
    print("our_jacrev and our_jacfwd (built with vmap) equal s2s.jacrev and s2s.jacfwd")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
