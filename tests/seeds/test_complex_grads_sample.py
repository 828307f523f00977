"""samples/complex_grads.py (the cookbook's complex-number section) against the seed's
printed numbers and against finite differences computed here (independent of s2s)."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]

# what the seed prints (JAX, complex64)
SEED_ABS2 = 6 - 8j
SEED_SIN = -27.034945 - 3.8511531j
SEED_CONJ = 1 - 0j
SEED_CHOLESKY = np.array([
    [-0.7534186 + 0.j, -3.0509028 - 10.940544j, 5.9896846 + 3.5423026j],
    [-3.0509028 + 10.940544j, -8.904491 + 0.j, -5.1351523 - 6.559373j],
    [5.9896846 - 3.5423026j, -5.1351523 + 6.559373j, 0.01320427 + 0.j]])


@pytest.fixture(scope="module")
def sample():
    spec = importlib.util.spec_from_file_location("complex_grads",
                                                  ROOT / "samples" / "complex_grads.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fd_jax_grad(f, z, h=1e-6):
    """JAX's grad by central differences: df/dz + conj(df/dconj z) per entry."""
    z = np.asarray(z, dtype=complex)
    out = np.zeros(z.shape, complex)
    for k in np.ndindex(z.shape):
        e = np.zeros(z.shape, complex)
        e[k] = h
        d_re = (f(z + e) - f(z - e)) / (2 * h)
        d_im = (f(z + 1j * e) - f(z - 1j * e)) / (2 * h)
        out[k] = (d_re - 1j * d_im) / 2 + np.conj(d_re + 1j * d_im) / 2
    return out[()] if out.ndim == 0 else out


@pytest.mark.parametrize("seed", range(5))
def test_jvp_and_vjp_checks_of_linear_u_v(sample, seed):
    assert sample.check_jvp(seed) is True
    assert sample.check_vjp(seed) is True


def test_grad_of_abs2_is_the_conjugate_convention(sample):
    from s2s import grad
    g = grad(sample.abs2)(3. + 4j)
    assert isinstance(g, complex) or np.iscomplexobj(g)
    assert abs(g - SEED_ABS2) < 1e-12
    assert abs(g - fd_jax_grad(sample.abs2, 3. + 4j)) < 1e-6


def test_holomorphic_grads(sample):
    from s2s import grad
    g = grad(sample.sin, holomorphic=True)(3. + 4j)
    assert abs(g - SEED_SIN) < 1e-5 * abs(SEED_SIN)
    assert abs(g - np.cos(3. + 4j)) < 1e-12  # closed form
    g = grad(sample.conjugate, holomorphic=True)(3. + 4j)
    assert g == SEED_CONJ and np.iscomplexobj(g)
    assert abs(g - fd_jax_grad(sample.conjugate, 3. + 4j)) < 1e-6


def test_complex_output_without_holomorphic_raises(sample):
    from s2s import grad
    with pytest.raises(TypeError, match="holomorphic=True"):
        grad(sample.sin)(3. + 4j)


def test_cholesky_example(sample):
    from s2s import grad
    G = grad(sample.cholesky_loss, holomorphic=True)(sample.A)
    assert np.max(np.abs(G - SEED_CHOLESKY)) < 1e-4
    assert np.allclose(G, fd_jax_grad(sample.cholesky_loss_jax, sample.A), atol=1e-5)


def test_sample_prints_the_seed_values():
    out = subprocess.run([sys.executable, str(ROOT / "samples" / "complex_grads.py")],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "True True True" and lines[1] == "True True True"
    assert complex(lines[2]) == SEED_ABS2
    assert abs(complex(lines[3]) - SEED_SIN) < 1e-5 * abs(SEED_SIN)
    assert complex(lines[4]) == SEED_CONJ
    assert lines[5].startswith("TypeError: grad requires real-valued outputs")
    printed = np.array([[complex(x.replace(" ", "")) for x in
                         row.strip(" []").replace("j ", "j|").split("|") if x.strip()]
                        for row in lines[6:9]])
    assert printed.shape == (3, 3)
    assert np.max(np.abs(printed - SEED_CHOLESKY)) < 1e-4
