"""Oracles for the linear-algebra and FFT rule tests (no s2s derivative is an oracle).

* ``check_jvp``: s2s.jvp against central finite differences along a random tangent;
* ``check_vjp``: the dot-product test ``Re <u, J t> = Re <vjp(u), t>`` with the
  bilinear pairing ``<a, b> = sum(a * b)`` (JAX's convention: the VJP is the
  transpose of the R-linear JVP, ``conj`` being its own transpose), with the JVP
  itself checked by finite differences;
* ``check_second_order``: the Hessian-vector product ``H t`` of a real scalar
  function by forward-over-reverse, reverse-over-reverse and reverse-over-forward,
  against central differences of the gradient (``grad`` itself checked by ``check_vjp``).
Outputs may be pytrees (the namedtuples of numpy.linalg).
"""
import numpy as np

import s2s


def leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for item in tree for x in leaves(item)]
    return [np.asarray(tree)]


def rebuild(tree, items):
    """``tree`` with its leaves replaced by ``items`` (consumed in order)."""
    if isinstance(tree, (tuple, list)):
        parts = [rebuild(item, items) for item in tree]
        return type(tree)(*parts) if hasattr(tree, "_fields") else type(tree)(parts)
    return items.pop(0)


def random_like(rng, x, herm=False):
    x = np.asarray(x)
    t = rng.standard_normal(x.shape)
    if np.iscomplexobj(x):
        t = t + 1j * rng.standard_normal(x.shape)
    if herm:  # a Hermitian direction, for rules defined on Hermitian matrices
        t = t + np.conj(np.swapaxes(t, -1, -2))
    return t


def scale(x):
    return max(1.0, max(float(np.max(np.abs(v))) if v.size else 0.0 for v in leaves(x)))


def fd_directional(f, x, t, h=1e-6):
    plus, minus = leaves(f(x + h * t)), leaves(f(x - h * t))
    return [(p - m) / (2 * h) for p, m in zip(plus, minus)]


def check_jvp(f, x, rng, herm=False, rtol=1e-6):
    t = random_like(rng, x, herm)
    y, ty = s2s.jvp(f, (x,), (t,))
    fd = fd_directional(f, x, t)
    got = leaves(ty)
    assert len(got) == len(fd)
    for a, b, yv in zip(got, fd, leaves(y)):
        assert a.shape == b.shape == yv.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale(b))
    return t, y, ty


def check_vjp(f, x, rng, herm=False, rtol=1e-6):
    t, y, ty = check_jvp(f, x, rng, herm, rtol)
    us = [random_like(rng, v) for v in leaves(y)]
    _, pull = s2s.vjp(f, x)
    xb, = pull(rebuild(y, list(us)))
    assert np.shape(xb) == np.shape(x)
    assert np.iscomplexobj(xb) == np.iscomplexobj(x)
    lhs = sum(np.real(np.sum(u * a)) for u, a in zip(us, leaves(ty)))
    rhs = np.real(np.sum(xb * t))
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs), float(np.sum(np.abs(xb * t))))


def check_second_order(f, x, rng, herm=False, rtol=1e-5, rev_over_fwd=True):
    """``f``: a real scalar function of ``x``.  ``rev_over_fwd``: also reverse mode over
    the forward-mode code (needs rules for the JVP helpers, which norm's lacks)."""
    t = random_like(rng, x, herm)
    g = s2s.grad(f)
    h = 1e-5
    fd = (g(x + h * t) - g(x - h * t)) / (2 * h)
    _, fwd_rev = s2s.jvp(g, (x,), (t,))
    # grad of Re sum(grad f * t) is H t (also in the conjugate convention, complex x)
    rev_rev = s2s.grad(lambda y: np.real(np.sum(g(y) * t)))(x)
    tol = rtol * scale(fd)
    np.testing.assert_allclose(fwd_rev, fd, rtol=rtol, atol=tol)
    np.testing.assert_allclose(rev_rev, fd, rtol=rtol, atol=tol)
    if rev_over_fwd:  # grad of the directional derivative df(x)[t]
        rev_fwd = s2s.grad(lambda y: s2s.jvp(f, (y,), (t,))[1])(x)
        np.testing.assert_allclose(rev_fwd, fd, rtol=rtol, atol=tol)
