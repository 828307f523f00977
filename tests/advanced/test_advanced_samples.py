"""samples/advanced/: the cookbook's "advanced autodiff" list, each checked against an
independent oracle (closed forms, central finite differences in float64), never
against another s2s derivative alone."""
import importlib.util
import runpy
from pathlib import Path

import numpy as np
import pytest

import s2s

ADVANCED = Path(__file__).resolve().parents[2] / "samples" / "advanced"
SAMPLES = ["fixed_point", "hutchinson", "gauss_newton", "forward_from_reverse",
           "custom_pytree", "jacobian_preaccumulation"]


def load(name):
    spec = importlib.util.spec_from_file_location(f"advanced_{name}", ADVANCED / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def central_difference(fun, x, eps=1e-6):
    """Jacobian of ``fun`` at the float64 array ``x`` (columns: inputs)."""
    x = np.asarray(x, dtype=np.float64)
    cols = []
    for e in np.eye(x.size):
        e = e.reshape(x.shape)
        cols.append((np.asarray(fun(x + eps * e)) - np.asarray(fun(x - eps * e))) / (2 * eps))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_runs_as_a_script_and_prints(name, capsys):
    runpy.run_path(str(ADVANCED / f"{name}.py"), run_name="__main__")
    assert capsys.readouterr().out.strip()


def test_fixed_point_implicit_derivatives():
    m = load("fixed_point")
    out = m.main()
    assert np.isclose(out["sqrt"], np.sqrt(2.0), rtol=1e-14)
    assert np.isclose(out["dsqrt"], 0.5 / np.sqrt(2.0), rtol=1e-12)
    a, b = 1.5, 4.0
    x = out["x"]
    assert abs(x ** 3 + a * x - b) < 1e-12
    fd = central_difference(lambda p: m.cubic_root(p[0], p[1]), np.array([a, b]))
    assert np.allclose(out["dx"], fd, rtol=1e-7)
    assert np.isclose(out["d2x_db2"], -6 * x / (3 * x ** 2 + a) ** 3, rtol=1e-10)
    # the rule is used: the gradient code calls the backward function, not the Newton loop
    src = s2s.grad(m.cubic_root, argnums=(0, 1)).generated([a, b])[0].__s2s_source__
    assert "_cubic_root_bwd(" in src and "for " not in src and "while" not in src
    # and the fixed point's derivative through a composition matches finite differences
    g = s2s.grad(lambda t: m.newton_sqrt(t * t + 1.0))(3.0)
    assert np.isclose(g, 3.0 / np.sqrt(10.0), rtol=1e-10)


def test_hutchinson_trace_estimate():
    m = load("hutchinson")
    x = np.linspace(-1.5, 1.5, m.N)
    t = np.tanh(x)
    H = np.diag(2 * (1 - t ** 2) * (1 - 3 * t ** 2)) + m.A  # closed form
    v = np.random.default_rng(1).choice([-1.0, 1.0], size=m.N)
    assert np.allclose(m.hvp(x, v), H @ v, rtol=1e-10, atol=1e-10)
    estimate, samples = m.hutchinson_trace(x, 400, seed=3)
    stderr = samples.std(ddof=1) / np.sqrt(len(samples))
    assert abs(estimate - np.trace(H)) < 4 * stderr
    # each sample is exactly v^T H v for its probe
    rng = np.random.default_rng(3)
    v0 = rng.choice([-1.0, 1.0], size=m.N)
    assert np.isclose(samples[0], v0 @ H @ v0, rtol=1e-10)


def test_gauss_newton_products():
    m = load("gauss_newton")
    theta, gnvp, G = m.main()
    J = central_difference(m.residuals, theta)
    r = m.residuals(theta)
    H_L = np.diag(2 * (1 - r ** 2) / (1 + r ** 2) ** 2)
    expected = J.T @ H_L @ J
    assert np.allclose(G, expected, rtol=1e-6, atol=1e-7)
    v = np.array([0.3, -1.0, 2.0])
    assert np.allclose(gnvp(v), expected @ v, rtol=1e-6, atol=1e-7)


def test_forward_from_reverse():
    m = load("forward_from_reverse")
    x, v, Jv = m.main()
    assert np.allclose(Jv, central_difference(m.f, x) @ v, rtol=1e-7, atol=1e-9)


def test_custom_pytree_gradients():
    m = load("custom_pytree")
    g0, dg, g = m.main()
    assert isinstance(dg, m.Gaussian) and dg.name == "prior"
    fd_mean = central_difference(
        lambda mu: m.negative_log_likelihood(m.Gaussian("prior", mu, g0.log_std), m.DATA),
        g0.mean)
    fd_log_std = central_difference(
        lambda s: m.negative_log_likelihood(m.Gaussian("prior", g0.mean, s[0]), m.DATA),
        np.array([g0.log_std]))
    assert np.allclose(dg.mean, fd_mean, rtol=1e-7)
    assert np.isclose(dg.log_std, fd_log_std[0], rtol=1e-7)
    # gradient descent on the Gaussian reaches the maximum-likelihood fit (closed form)
    assert np.allclose(g.mean, m.DATA.mean(axis=0), atol=1e-6)
    ml = np.log(np.sqrt(np.mean((m.DATA - m.DATA.mean(axis=0)) ** 2)))
    assert np.isclose(g.log_std, ml, atol=1e-6)


def test_jacobian_preaccumulation():
    m = load("jacobian_preaccumulation")
    s0, target, g = m.main()
    fd = central_difference(lambda s: m.trajectory_loss(s, target), s0)
    assert np.allclose(g, fd, rtol=1e-6)
    src = s2s.grad(m.trajectory_loss_preaccumulated).generated([s0, target])[0].__s2s_source__
    assert "_flow_fwd(" in src and "_flow_bwd(" in src and "lorenz" not in src
