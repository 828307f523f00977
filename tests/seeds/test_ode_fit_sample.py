"""The ODE fit (samples/ode_fit.py): gradient descent through an adaptive RK4
solver (a ``while`` loop with a data-dependent trip count) recovers the
parameters, and the s2s derivatives of its loss are right.

Oracles: the true parameters; the closed-form solution of the damped
oscillator; central finite differences in float64 of the sample's own loss
(reverse and forward mode), and of the loss built on the closed form.
"""
import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "ode_fit.py"
EPS = 1e-6


def _load():
    spec = importlib.util.spec_from_file_location("ode_fit_sample", SAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)       # defines functions only (__main__ guard)
    return mod


ode = _load()
TIMES = ode.times
OBSERVED = ode.simulate(ode.true_params, TIMES)
POINTS = [ode.first_guess, (1.37, 0.29), (1.62, 0.13)]


def closed_form(params, t):
    """x(t) of the underdamped oscillator with x(0) = 1, x'(0) = 0."""
    omega, zeta = params
    wd = omega * math.sqrt(1.0 - zeta * zeta)
    return np.exp(-zeta * omega * t) * (np.cos(wd * t) + zeta * omega / wd * np.sin(wd * t))


def test_sample_recovers_the_parameters():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, str(SAMPLE)], capture_output=True, text=True,
                          cwd=str(ROOT), env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    fitted = dict(re.findall(r"fitted (\w+)\s*= ([-0-9.]+)", proc.stdout))
    assert set(fitted) == {"omega", "zeta"}, proc.stdout
    assert abs(float(fitted["omega"]) - ode.true_params[0]) < 1e-5
    assert abs(float(fitted["zeta"]) - ode.true_params[1]) < 1e-5
    assert float(re.findall(r"loss ([-0-9.e+]+)", proc.stdout)[0]) > 1e-3   # it did move


def test_solver_matches_the_closed_form():
    for params in POINTS + [ode.true_params]:
        exact = closed_form(params, TIMES)
        np.testing.assert_allclose(ode.simulate(params, TIMES), exact, atol=1e-8)
        np.testing.assert_allclose(ode.simulate(params, TIMES, tol=1e-6), exact, atol=1e-4)


def test_the_while_loop_trip_count_depends_on_the_parameters(monkeypatch):
    calls = []
    step = ode.rk4_step
    monkeypatch.setattr(ode, "rk4_step", lambda *a: calls.append(1) or step(*a))
    counts = []
    for params in POINTS:
        calls.clear()
        ode.loss(params, TIMES, OBSERVED)
        counts.append(len(calls))
    assert len(set(counts)) > 1, counts


def _fd(f, params, direction):
    plus = tuple(p + EPS * d for p, d in zip(params, direction))
    minus = tuple(p - EPS * d for p, d in zip(params, direction))
    return (f(plus) - f(minus)) / (2 * EPS)


@pytest.mark.parametrize("params", POINTS)
def test_gradient_matches_finite_differences(params):
    value, grad = ode.value_and_grad_fn(params, TIMES, OBSERVED)
    assert value == pytest.approx(ode.loss(params, TIMES, OBSERVED), rel=1e-12)
    assert len(grad) == 2

    def f(p):
        return ode.loss(p, TIMES, OBSERVED)

    for direction in [(1.0, 0.0), (0.0, 1.0), (0.6, -0.8)]:
        fd = _fd(f, params, direction)
        got = sum(g * d for g, d in zip(grad, direction))
        assert got == pytest.approx(fd, rel=1e-6, abs=1e-10), direction


@pytest.mark.parametrize("params", POINTS)
def test_forward_mode_agrees(params):
    """jvp (forward mode through the while loop) against the gradient (the
    dot-product test) and against finite differences."""
    _, grad = ode.value_and_grad_fn(params, TIMES, OBSERVED)
    for direction in [(1.0, 0.0), (0.0, 1.0), (-0.3, 0.7)]:
        out, tangent = s2s.jvp(ode.loss, (params, TIMES, OBSERVED), (direction, None, None))
        assert out == pytest.approx(ode.loss(params, TIMES, OBSERVED), rel=1e-12)
        assert tangent == pytest.approx(sum(g * d for g, d in zip(grad, direction)),
                                        rel=1e-9, abs=1e-14)
        fd = _fd(lambda p: ode.loss(p, TIMES, OBSERVED), params, direction)
        assert tangent == pytest.approx(fd, rel=1e-6, abs=1e-10)


def test_tight_tolerance_gradient_approaches_the_exact_one():
    """With a tight solver tolerance, the gradient of the discrete loss is close
    to the gradient of the loss on the exact solution (differentiated by
    central differences of the closed form)."""
    params = POINTS[1]

    def exact_loss(p):
        return float(np.mean((closed_form(p, TIMES) - OBSERVED) ** 2))

    _, grad = ode.value_and_grad_fn(params, TIMES, OBSERVED, 1e-10)
    for i, direction in enumerate([(1.0, 0.0), (0.0, 1.0)]):
        assert grad[i] == pytest.approx(_fd(exact_loss, params, direction), rel=1e-5)
