"""Complex numbers with JAX's conventions, against oracles independent of s2s.

* ``grad`` of a C->R function is ``df/dx - i df/dy`` (the conjugate convention);
* ``grad(f, holomorphic=True)`` of a C->C function is ``df/dz + conj(df/dconj z)``
  (``f'(z)`` for a holomorphic ``f``; ``1`` for ``conjugate``);
* ``jvp`` is the R-linear differential; ``vjp`` of the cotangent ``c + d i`` is
  ``(c, -d) J (1, -i)`` for the real 2x2 Jacobian ``J`` (the cookbook's definitions);
* the TypeErrors JAX raises.
Oracles: central finite differences (``fd_jax_grad``, ``real_jacobian``), closed forms.
"""
import numpy as np
import pytest

import s2s

H = 1e-6


def fd_jax_grad(f, z):
    """JAX's grad by central differences, per entry: df/dz + conj(df/dconj z), with
    df/dz = (D_re - i D_im)/2, df/dconj z = (D_re + i D_im)/2 (D: derivatives along 1, i)."""
    z = np.asarray(z, dtype=complex)
    out = np.zeros(z.shape, complex)
    for k in np.ndindex(z.shape):
        e = np.zeros(z.shape, complex)
        e[k] = H
        d_re = (f(z + e) - f(z - e)) / (2 * H)
        d_im = (f(z + 1j * e) - f(z - 1j * e)) / (2 * H)
        out[k] = (d_re - 1j * d_im) / 2 + np.conj(d_re + 1j * d_im) / 2
    return out[()] if out.ndim == 0 else out


def real_jacobian(f, z):
    """The 2x2 real Jacobian of g(x, y) = (Re f, Im f) at z = x + i y, by differences."""
    cols = [(f(z + H * d) - f(z - H * d)) / (2 * H) for d in (1.0, 1j)]
    return np.array([[np.real(cols[0]), np.real(cols[1])],
                     [np.imag(cols[0]), np.imag(cols[1])]])


Z = 0.7 - 1.3j
ZS = np.array([0.5 + 0.2j, -1.1 + 0.9j, 2.0 - 0.4j])

C_TO_R = {
    "abs2_parts": lambda z: np.real(z) ** 2 + np.imag(z) ** 2,
    "attributes": lambda z: z.real ** 3 - 2 * z.imag,
    "conjugate_method": lambda z: np.real(z.conjugate() * (1 + 2j)),
    "abs": lambda z: abs(z),
    "np_abs_cubed": lambda z: np.abs(z) ** 3,
    "angle": lambda z: np.angle(z),
    "angle_deg": lambda z: np.angle(z, deg=True),
    "real_of_exp": lambda z: np.real(np.exp(z)),
    "imag_of_log": lambda z: np.imag(np.log(z)),
    "abs_of_sqrt": lambda z: np.abs(np.sqrt(z)),
    "conj_times": lambda z: np.real(np.conj(z) * z * z),
    "real_power": lambda z: np.real(z ** 3 + 1j * z),
}
C_TO_R_ARRAYS = {
    "sum_abs2": lambda z: np.sum(np.abs(z) ** 2),
    "vdot": lambda z: np.real(np.vdot(z, z[::-1] * 2j)),
    "norm": lambda z: np.linalg.norm(z),
    "angles": lambda z: np.sum(np.angle(z) * np.arange(3)),
    "imag_dot": lambda z: np.imag(np.dot(z, np.conj(z) + 1j)),
    "fft_power": lambda z: np.sum(np.abs(np.fft.fft(z)) ** 3),
}
HOLOMORPHIC = {  # f and its derivative
    "sin": (lambda z: np.sin(z), np.cos),
    "exp": (lambda z: np.exp(z), np.exp),
    "cube": (lambda z: z ** 3 - 2 * z, lambda z: 3 * z ** 2 - 2),
    "log": (lambda z: np.log(z), lambda z: 1 / z),
    "tanh": (lambda z: np.tanh(z), lambda z: 1 - np.tanh(z) ** 2),
    "reciprocal": (lambda z: 1 / z, lambda z: -1 / z ** 2),
    "sqrt": (lambda z: np.sqrt(z), lambda z: 0.5 / np.sqrt(z)),
}
NOT_HOLOMORPHIC = {  # holomorphic=True on C->C functions that are not
    "conjugate": lambda z: np.conjugate(z),
    "z_conj_z": lambda z: np.conj(z) * z + 0j,
    "real_plus": lambda z: np.real(z) + 1j * np.abs(z),
    "angle_mix": lambda z: np.angle(z) * z,
}


@pytest.mark.parametrize("name", sorted(C_TO_R))
def test_grad_of_c_to_r_is_the_conjugate_convention(name):
    f = C_TO_R[name]
    g = s2s.grad(f)(Z)
    assert np.iscomplexobj(g)
    assert abs(g - fd_jax_grad(f, Z)) < 1e-6 * max(1, abs(g))


@pytest.mark.parametrize("name", sorted(C_TO_R_ARRAYS))
def test_grad_of_c_to_r_arrays(name):
    f = C_TO_R_ARRAYS[name]
    g = s2s.grad(f)(ZS)
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g, fd_jax_grad(f, ZS), atol=1e-6)


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_holomorphic_grad_is_the_complex_derivative(name):
    f, df = HOLOMORPHIC[name]
    g = s2s.grad(f, holomorphic=True)(Z)
    assert abs(g - df(Z)) < 1e-12 * max(1, abs(g))
    assert abs(g - fd_jax_grad(f, Z)) < 1e-6 * max(1, abs(g))
    gs = s2s.grad(lambda z: np.sum(f(z)), holomorphic=True)(ZS)
    np.testing.assert_allclose(gs, df(ZS), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(NOT_HOLOMORPHIC))
def test_holomorphic_true_on_a_non_holomorphic_function(name):
    f = NOT_HOLOMORPHIC[name]
    g = s2s.grad(f, holomorphic=True)(Z)
    assert abs(g - fd_jax_grad(f, Z)) < 1e-6 * max(1, abs(g))


def test_seed_values():
    assert s2s.grad(lambda z: np.real(z) ** 2 + np.imag(z) ** 2)(3. + 4j) == 6 - 8j
    g = s2s.grad(lambda z: np.sin(z), holomorphic=True)(3. + 4j)
    assert abs(g - (-27.034945 - 3.8511531j)) < 1e-5
    g = s2s.grad(lambda z: np.conjugate(z), holomorphic=True)(3. + 4j)
    assert g == 1 and np.iscomplexobj(g)


@pytest.mark.parametrize("name", ["linear", "nonlinear", "angle", "parts"])
def test_jvp_and_vjp_match_the_cookbook_definitions(name):
    f = {"linear": lambda z: 0.3 * np.real(z) - 1.2 * np.imag(z) + 1j * (2 * np.real(z)
                                                                        + 0.5 * np.imag(z)),
         "nonlinear": lambda z: z * np.conj(z) ** 2 + 1j * np.sin(np.real(z)),
         "angle": lambda z: np.angle(z) + 1j * np.abs(z) ** 2,
         "parts": lambda z: np.conj(z) * np.imag(z) + np.real(z)}[name]
    J = real_jacobian(f, Z)
    c, d = 0.8, -0.35
    _, tangent = s2s.jvp(f, (Z,), (c + d * 1j,))
    expected = np.array([1, 1j]) @ J @ np.array([c, d])
    assert abs(tangent - expected) < 1e-6
    _, pull = s2s.vjp(f, Z)
    ct, = pull(np.array(c + d * 1j))
    expected = np.array([c, -d]) @ J @ np.array([1, -1j])
    assert abs(ct - expected) < 1e-6


@pytest.mark.parametrize("fn", [np.real, np.imag, np.conj, np.abs, np.angle])
def test_parts_second_derivatives(fn):
    # Hessian-vector products of a real loss through each part vs differences of grad
    f = lambda z: np.sum(fn(z) ** 2 * np.abs(z))  # noqa: E731
    t = np.array([0.3 - 0.1j, 1.0 + 0.5j, -0.2 + 0.7j])
    g = s2s.grad(lambda z: np.real(f(z)))
    fd = (g(ZS + 1e-5 * t) - g(ZS - 1e-5 * t)) / 2e-5
    _, hv = s2s.jvp(g, (ZS,), (t,))
    np.testing.assert_allclose(hv, fd, atol=1e-6)
    hv2 = s2s.grad(lambda z: np.real(np.sum(g(z) * t)))(ZS)
    np.testing.assert_allclose(hv2, fd, atol=1e-6)


def test_dtypes_of_gradients():
    # complex input: complex gradient, even through np.real; real input: real gradient,
    # even through complex intermediates (the seed's remark on FFT-like code)
    g = s2s.grad(lambda z: np.real(z) ** 2)(Z)
    assert np.iscomplexobj(g) and g == 2 * np.real(Z)
    assert s2s.grad(lambda z: np.imag(z) ** 2)(Z) == -2j * np.imag(Z)
    x = 0.4
    g = s2s.grad(lambda x: np.real(np.exp(1j * x)))(x)
    assert not np.iscomplexobj(g) and abs(g + np.sin(x)) < 1e-15
    assert s2s.grad(lambda x: np.angle(x + 0j) + np.imag(x))(x) == 0.0


def test_type_errors_like_jax():
    with pytest.raises(TypeError, match="holomorphic=True"):
        s2s.grad(lambda z: np.sin(z))(Z)
    with pytest.raises(TypeError, match="requires complex"):
        s2s.grad(lambda x: np.sin(x) + 0j, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="requires complex"):
        s2s.grad(lambda z: np.abs(z), holomorphic=True)(Z)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        s2s.jacfwd(lambda z: np.abs(z))(ZS)
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        s2s.jacrev(lambda z: np.sin(z))(ZS)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs"):
        s2s.jacfwd(lambda x: x + 0j, holomorphic=True)(np.ones(2))
    with pytest.raises(TypeError, match="holomorphic=True requires outputs"):
        s2s.jacrev(lambda z: np.abs(z), holomorphic=True)(ZS)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        s2s.hessian(lambda z: np.sum(np.abs(z) ** 2))(ZS)


def test_holomorphic_jacobians_and_hessian():
    np.testing.assert_allclose(s2s.jacfwd(np.sin, holomorphic=True)(ZS), np.diag(np.cos(ZS)))
    np.testing.assert_allclose(s2s.jacrev(np.sin, holomorphic=True)(ZS), np.diag(np.cos(ZS)))
    h = s2s.hessian(lambda z: np.sum(np.sin(z)) * z[0], holomorphic=True)(ZS)
    expected = np.diag(-np.sin(ZS) * ZS[0])
    expected[0, :] += np.cos(ZS)
    expected[:, 0] += np.cos(ZS)
    np.testing.assert_allclose(h, expected, atol=1e-12)
    # C -> R by jacrev: one row per output, the conjugate convention
    np.testing.assert_allclose(s2s.jacrev(lambda z: np.abs(z) ** 2)(ZS),
                               np.diag(2 * np.conj(ZS)), atol=1e-12)
