"""The seed's linear-regression example (samples/linear_regression.py) prints
the seed's numbers.

The expected values below are the literal numbers printed in
shared/seeds/pytorch-to-jax-tutorial.txt (JAX, float32); the sample runs in
float64, so they are compared with an absolute tolerance of 1e-3.
"""
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "linear_regression.py"
TOL = 1e-3

# The seed's printed numbers, in the order the sample prints them.
SEED_F = 546.0
SEED_DF_DW = 42.0
SEED_RMS = 46.0
SEED_PREDICT = 546.0
SEED_LOSS = 46.0
SEED_GRAD_WB = (42.0, 1.0)
SEED_GRAD_DICT = {'b': 1.0, 'w': 42.0}
SEED_LOSSES = [46.0, 42.47003, 38.940002, 35.410034, 31.880066, 28.350098, 24.820068,
               21.2901, 17.760132, 14.230164, 10.700165, 7.170166, 3.6401978,
               0.110198975, 3.4197998]
SEED_FINAL_PREDICTION = 500.1102

HEADER = "# ---- generated gradient code"


@pytest.fixture(scope="module")
def output():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, str(SAMPLE)], capture_output=True, text=True,
                          cwd=str(ROOT), env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _numbers(output):
    """The printed values before the generated-code header, one per line."""
    head = output.split(HEADER)[0]
    return [line for line in head.splitlines() if line.strip()]


def _close(a, b):
    return abs(float(a) - float(b)) <= TOL


def test_prints_the_seed_numbers(output):
    lines = _numbers(output)
    # f, df_dw, rms, predict, loss, grad (w, b), loss, grad dict,
    # 15 losses, final prediction
    assert len(lines) == 8 + 15 + 1, lines
    assert _close(ast.literal_eval(lines[0]), SEED_F)
    assert _close(ast.literal_eval(lines[1]), SEED_DF_DW)
    assert _close(ast.literal_eval(lines[2]), SEED_RMS)
    assert _close(ast.literal_eval(lines[3]), SEED_PREDICT)
    assert _close(ast.literal_eval(lines[4]), SEED_LOSS)

    grad_wb = ast.literal_eval(lines[5])
    assert isinstance(grad_wb, tuple) and len(grad_wb) == 2
    assert all(_close(g, e) for g, e in zip(grad_wb, SEED_GRAD_WB))

    assert _close(ast.literal_eval(lines[6]), SEED_LOSS)
    grad_dict = ast.literal_eval(lines[7])
    assert set(grad_dict) == set(SEED_GRAD_DICT)
    assert all(_close(grad_dict[k], SEED_GRAD_DICT[k]) for k in SEED_GRAD_DICT)

    losses = [float(x) for x in lines[8:23]]
    assert len(losses) == len(SEED_LOSSES)
    for got, want in zip(losses, SEED_LOSSES):
        assert _close(got, want), (got, want)

    assert _close(float(lines[23]), SEED_FINAL_PREDICTION)


def test_prints_the_generated_gradient_code(output):
    assert HEADER in output
    code = output.split(HEADER, 1)[1].split("\n", 1)[1]
    assert "def grad_loss_fn(params, xs, ys):" in code
    compile(code, "<generated>", "exec")     # it is valid Python


def test_sample_functions_recomputed():
    """The same numbers from the sample's functions, imported (not via stdout)."""
    import importlib.util

    import s2s
    from s2s.tree_util import tree_map

    spec = importlib.util.spec_from_file_location("linear_regression_sample", SAMPLE)
    mod = importlib.util.module_from_spec(spec)
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(mod)

    xs, ys = mod.xs, mod.ys
    assert _close(s2s.grad(mod.f)(13., 42.), SEED_DF_DW)
    grads = s2s.grad(mod.loss_fn)({'w': 13., 'b': 0.}, xs, ys)
    assert all(_close(grads[k], SEED_GRAD_DICT[k]) for k in SEED_GRAD_DICT)

    params = {'w': 13., 'b': 0.}
    grad_fn = s2s.grad(mod.loss_fn)
    for want in SEED_LOSSES:
        assert _close(mod.loss_fn(params, xs, ys), want)
        params = tree_map(mod.update_combiner, params, grad_fn(params, xs, ys))
    assert _close(mod.LinearRegressor(params['w'], params['b']).predict(42.),
                  SEED_FINAL_PREDICTION)
