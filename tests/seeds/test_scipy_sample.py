"""samples/scipy_optimize.py: s2s derivatives as scipy.optimize.minimize's jac= and hessp=.

Oracles: SciPy's own closed forms for the Rosenbrock chain (``rosen``, ``rosen_der``,
``rosen_hess_prod``), SciPy's finite differences (``approx_fprime``) for the logistic
loss and its Hessian-vector products, and ``minimize`` with SciPy's finite-difference
gradient (``jac=None``) reaching the same optimum.
"""
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

scipy_optimize = pytest.importorskip("scipy.optimize")

import s2s  # noqa: E402

PATH = Path(__file__).resolve().parents[2] / "samples" / "scipy_optimize.py"
spec = importlib.util.spec_from_file_location("scipy_optimize_sample", PATH)
S = importlib.util.module_from_spec(spec)
spec.loader.exec_module(S)


@pytest.mark.parametrize("seed", [0, 1])
def test_rosenbrock_gradient_and_hvp_against_scipy_closed_forms(seed):
    rng = np.random.default_rng(seed)
    x, v = rng.uniform(-1.5, 1.5, 20), rng.standard_normal(20)
    value, grad = S.rosen_value_and_grad(x)
    assert value == pytest.approx(scipy_optimize.rosen(x), rel=1e-13)
    np.testing.assert_allclose(grad, scipy_optimize.rosen_der(x), rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(S.rosen_hessp(x, v), scipy_optimize.rosen_hess_prod(x, v),
                               rtol=1e-12, atol=1e-10)


def test_logistic_gradient_and_hvp_against_scipy_differences():
    X, y = S.make_data(n=60)
    w = np.random.default_rng(2).standard_normal(X.shape[1])
    args = (X, y, 1e-2)
    grad = s2s.grad(S.logistic_loss)(w, *args)
    fd = scipy_optimize.approx_fprime(w, S.logistic_loss, 1e-7, *args)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)
    v = np.linspace(-1.0, 1.0, X.shape[1])
    hvp = s2s.jvp(lambda u: s2s.grad(S.logistic_loss)(u, *args), (w,), (v,))[1]
    H = np.stack([scipy_optimize.approx_fprime(
        w, lambda u: s2s.grad(S.logistic_loss)(u, *args)[i], 1e-6) for i in range(len(w))])
    np.testing.assert_allclose(hvp, H @ v, rtol=1e-4, atol=1e-6)


def test_minimize_reaches_the_finite_difference_optimum():
    X, y = S.make_data()
    args = (X, y, 1e-2)
    w0 = np.zeros(X.shape[1])
    ours = scipy_optimize.minimize(S.logistic_loss, w0, args=args,
                                   jac=s2s.grad(S.logistic_loss), method="BFGS")
    theirs = scipy_optimize.minimize(S.logistic_loss, w0, args=args, method="BFGS")
    assert ours.success and theirs.success
    np.testing.assert_allclose(ours.x, theirs.x, atol=1e-4)
    assert ours.nfev < theirs.nfev  # no gradient evaluations by differences
    x0 = np.full(20, -1.0)
    # a tight xtol: where both stop is then the optimum, not the rounding of the last step
    tight = {"xtol": 1e-10}
    newton = scipy_optimize.minimize(S.rosenbrock, x0, jac=lambda x: S.rosen_value_and_grad(x)[1],
                                     hessp=S.rosen_hessp, method="Newton-CG", options=tight)
    reference = scipy_optimize.minimize(scipy_optimize.rosen, x0, jac=scipy_optimize.rosen_der,
                                        hessp=scipy_optimize.rosen_hess_prod, method="Newton-CG",
                                        options=tight)
    # the same iterations up to rounding: both stop at the optimum x = 1 together
    assert newton.success and reference.success
    assert newton.nit == pytest.approx(reference.nit, abs=3)
    np.testing.assert_allclose(newton.x, reference.x, atol=1e-8)
    np.testing.assert_allclose(newton.x, np.ones(20), atol=1e-8)


def test_sample_runs():
    out = subprocess.run([sys.executable, str(PATH)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Rosenbrock BFGS" in out.stdout and "accuracy" in out.stdout
