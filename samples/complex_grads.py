"""Complex numbers and differentiation with s2s: the autodiff cookbook's complex examples.

The section "complex numbers and differentiation" of the JAX autodiff cookbook
 (one of this project's seeds) with ``jax`` replaced by ``s2s``
and ``jax.numpy`` by plain ``numpy`` (complex128 where JAX had complex64):

1. ``check(seed)`` for the JVP of a C->C function ``f(z) = u(x, y) + v(x, y) i``
   with ``u, v`` linear: ``jvp`` agrees with the real 2x2 Jacobian of
   ``g(x, y) = (u, v)`` applied to the tangent ``c + d i`` (prints True x 3).
2. ``check(seed)`` for the VJP: the cotangent ``c + d i`` pulls back to
   ``(c, -d) J (1, -i)`` (asserted, prints True x 3).
3. ``grad`` of the C->R function ``|z|^2`` at ``3 + 4i``: ``6 - 8i`` (conjugate
   convention); ``grad(sin, holomorphic=True)`` at ``3 + 4i``:
   ``-27.034945 - 3.8511531i``; ``grad(conjugate, holomorphic=True)``: ``1 - 0i``;
   ``grad`` of a complex-valued function without ``holomorphic=True`` raises.
4. ``grad(f, holomorphic=True)`` through the Cholesky factor of a complex
   Hermitian matrix (the seed's printed 3x3 matrix).

JAX's ``random.key`` streams are not numpy's, so the random coefficients
differ from the seed's; what the seed prints about them (True) is the same.
Each printed value is also checked here against an independent oracle
(finite differences); the seed's numbers are in ``tests/seeds``.

Run:  python samples/complex_grads.py
"""
import numpy as np

from s2s import grad, jvp, vjp


def check_jvp(seed):
    """The seed's JVP check: jvp(fun) == J(g) (c, d) read as a complex number."""
    rng = np.random.default_rng(seed)
    # random coeffs for u and v
    a, b, c, d = rng.uniform(size=4)

    def fun(z):
        x, y = np.real(z), np.imag(z)
        return u(x, y) + v(x, y) * 1j

    def u(x, y):
        return a * x + b * y

    def v(x, y):
        return c * x + d * y

    # primal point
    x, y = rng.uniform(size=2)
    z = x + y * 1j
    # tangent vector
    c, d = rng.uniform(size=2)
    z_dot = c + d * 1j
    # check jvp
    _, ans = jvp(fun, (z,), (z_dot,))
    expected = (grad(u, 0)(x, y) * c + grad(u, 1)(x, y) * d
                + grad(v, 0)(x, y) * c * 1j + grad(v, 1)(x, y) * d * 1j)
    return bool(np.allclose(ans, expected))


def check_vjp(seed):
    """The seed's VJP check: the cotangent c + d i pulls back to (c, -d) J (1, -i)."""
    rng = np.random.default_rng(seed)
    a, b, c, d = rng.uniform(size=4)

    def fun(z):
        x, y = np.real(z), np.imag(z)
        return u(x, y) + v(x, y) * 1j

    def u(x, y):
        return a * x + b * y

    def v(x, y):
        return c * x + d * y

    x, y = rng.uniform(size=2)
    z = x + y * 1j
    # cotangent vector
    c, d = rng.uniform(size=2)
    z_bar = np.array(c + d * 1j)  # for dtype control
    # check vjp
    _, fun_vjp = vjp(fun, z)
    ans, = fun_vjp(z_bar)
    expected = (grad(u, 0)(x, y) * c + grad(v, 0)(x, y) * (-d)
                + grad(u, 1)(x, y) * c * (-1j) + grad(v, 1)(x, y) * (-d) * (-1j))
    assert np.allclose(ans, expected, atol=1e-5, rtol=1e-5)
    return True


def abs2(z):
    x, y = np.real(z), np.imag(z)
    return x ** 2 + y ** 2


def sin(z):
    return np.sin(z)


def conjugate(z):
    return np.conjugate(z)  # not actually holomorphic!


def cholesky_loss(X):
    L = np.linalg.cholesky(X)
    return np.sum((L - np.sin(L)) ** 2)


A = np.array([[5., 2. + 3j, 5j], [2. - 3j, 7., 1. + 7j], [-5j, 1. - 7j, 12.]])


def fd_grad(f, z, h=1e-6):
    """JAX's ``grad`` (holomorphic or not) by central finite differences, an oracle
    independent of s2s.  Along each entry, ``D_re`` and ``D_im`` are the derivatives in
    the directions ``1`` and ``i``; the partials are ``df/dz = (D_re - i D_im) / 2`` and
    ``df/dconj(z) = (D_re + i D_im) / 2``, and JAX's VJP of the cotangent 1 is
    ``df/dz + conj(df/dconj(z))`` (``conj(2 df/dz)`` = ``D_re - i D_im`` for a real f,
    ``f'(z)`` for a holomorphic one, ``1`` for ``conjugate``)."""
    z = np.asarray(z, dtype=complex)
    out = np.zeros(z.shape, complex)
    for k in np.ndindex(z.shape):
        e = np.zeros(z.shape, complex)
        e[k] = h
        d_re = (f(z + e) - f(z - e)) / (2 * h)
        d_im = (f(z + 1j * e) - f(z - 1j * e)) / (2 * h)
        out[k] = (d_re - 1j * d_im) / 2 + np.conj((d_re + 1j * d_im) / 2)
    return out[()] if out.ndim == 0 else out


def cholesky_loss_jax(X):
    """``cholesky_loss`` as JAX defines it off the Hermitian matrices: ``jnp.linalg.cholesky``
    reads the Hermitian part ``(X + X^H) / 2`` (numpy reads the lower triangle)."""
    return cholesky_loss(0.5 * (X + np.conj(X.T)))


def main():
    print(*(check_jvp(s) for s in (0, 1, 2)))
    print(*(check_vjp(s) for s in (0, 1, 2)))

    z = 3. + 4j
    g = grad(abs2)(z)
    print(g)
    assert np.isclose(g, fd_grad(abs2, z))
    g = grad(sin, holomorphic=True)(z)
    print(g)
    assert np.isclose(g, fd_grad(sin, z))
    g = grad(conjugate, holomorphic=True)(z)
    print(g)
    assert np.isclose(g, fd_grad(conjugate, z))
    try:
        grad(sin)(z)
    except TypeError as e:
        print("TypeError:", e)

    G = grad(cholesky_loss, holomorphic=True)(A)
    with np.printoptions(precision=7, suppress=True):
        print(G)
    assert np.allclose(G, fd_grad(cholesky_loss_jax, A), atol=1e-5)


if __name__ == "__main__":
    main()
