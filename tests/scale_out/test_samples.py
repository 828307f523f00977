"""The Dask samples run (small sizes), and their distributed results equal the ones
computed in one process."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("dask.distributed")

ROOT = Path(__file__).resolve().parents[2]


def run(name, *args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, str(ROOT / "samples" / name), *map(str, args)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    return out.stdout


def test_dask_regression_sample():
    out = run("dask_regression.py", 40_000, 2)
    m = re.search(r"summed over blocks (\S+), in one piece (\S+); largest gradient "
                  r"difference (\S+)", out)
    assert m, out
    assert float(m.group(1)) == pytest.approx(float(m.group(2)), rel=1e-12)
    assert float(m.group(3)) < 1e-8
    fitted = re.search(r"fitted w: \[(.*)\]", out).group(1).split()
    true = re.search(r"true   w: \[(.*)\]", out).group(1).split()
    assert max(abs(float(a) - float(b)) for a, b in zip(fitted, true)) < 0.1


def test_dask_ensemble_sample():
    out = run("dask_ensemble.py", 8, 2)
    diffs = [float(d) for d in re.findall(r"largest difference from this process (\S+)", out)]
    assert len(diffs) == 3 and max(diffs) < 1e-10, out
