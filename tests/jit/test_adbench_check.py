"""``benchmarks/adbench.py --check-only`` at the quick sizes: every kernel's s2s derivative
(Python mode and ``s2s.jit``) agrees with central finite differences in float64, or is
a refusal listed in ``KNOWN_REFUSALS`` with the error text it raises.  A wrong value, an
unlisted refusal or any other exception fails the test; a listed refusal that now works
passes (the list is what s2s cannot do yet, so other work may shorten it)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

# compiles ~40 jit gradients in a subprocess (a minute or more): ``pytest -m slow``
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"

# (case, mode) -> text the refusal contains; mode "python" (Python-mode s2s) or "jit"
KNOWN_REFUSALS = {}

CASE_NAMES = ["gmm (full cov.)", "ba objective", "ba jacobian", "hand (jacfwd)",
              "lstm (2 layers)", "ode (rk4)", "logsumexp", "least squares", "kmeans newton",
              "det (LU loop)", "det (permutations)", "heat1d copy-back", "heat1d ping-pong",
              "heat2d copy-back", "heat2d ping-pong", "wave (3 levels)", "nonlinear scan",
              "thomas", "gauss-seidel 1d", "gauss-seidel 2d", "upwind"]


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    out = tmp_path_factory.mktemp("adbench") / "rows.json"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(BENCH / "adbench.py"), "--check-only",
                           "--s2s-only", "--quick", "--json", str(out)],
                          capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {r["name"]: r for r in json.loads(out.read_text())}


def test_every_case_ran(rows):
    assert sorted(rows) == sorted(CASE_NAMES)


@pytest.mark.parametrize("mode", ["python", "jit"])
@pytest.mark.parametrize("name", CASE_NAMES)
def test_derivative_agrees_or_is_a_known_refusal(rows, name, mode):
    status = rows[name][mode]
    if status == "ok":
        return
    known = KNOWN_REFUSALS.get((name, mode))
    assert known is not None and status.startswith("refused:") and known in status, \
        f"{name} ({mode}): {status}"


def test_the_check_reports_a_wrong_derivative():
    """The comparison the suite relies on flags a gradient off by 1e-4 and passes the
    finite-difference gradient itself (so a wrong s2s value cannot pass)."""
    sys.path.insert(0, str(BENCH))
    try:
        from adbench_objectives import gmm_objective
        from adbench_oracles import agrees, fd_derivative
    finally:
        sys.path.remove(str(BENCH))
    rng = np.random.default_rng(1)
    args = (rng.normal(size=2), rng.normal(size=(2, 2)), 0.1 * rng.normal(size=(2, 3)),
            rng.normal(size=(4, 2)), 1.0, 0)
    g = fd_derivative(gmm_objective, args, 2)
    assert agrees(g, g)[0]
    bad = g.copy()
    bad[1, 2] += 1e-4 * max(1.0, np.max(np.abs(g)))
    assert not agrees(bad, g)[0]
    assert not agrees(g[:1], g)[0]
