"""``s2s dump FILE.py:FUNC --mode ptx``: the PTX of the elementwise kernel."""
from __future__ import annotations

import pytest

from s2s.backend.cuda.toolkit import has_libdevice, has_ptxas
from s2s.cli.main import main
from s2s.cuda import assemble

SOURCE = """
import math
import s2s

def fill(out, a):
    i = s2s.cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * i

def f(x, y):
    return math.sin(x) * y + math.exp(x)

def g(x, n):
    return x * n
"""


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "kern.py"
    path.write_text(SOURCE)
    return path


def run(capsys, *argv):
    rc = main([str(a) for a in argv] + ["--color", "never"])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.skipif(not has_libdevice(), reason="libdevice not found: pip install 's2s[ptx]'")
@pytest.mark.parametrize("extra, target", [((), "sm_80"), (("--arch", "sm_90"), "sm_90")])
def test_dump_ptx(capsys, src, extra, target):
    rc, out, err = run(capsys, "dump", f"{src}:f", "--mode", "ptx", "--signature", "f64, f64",
                       *extra)
    assert rc == 0, err
    assert f".target {target}" in out and ".visible .entry s2s_f_" in out
    assert "__nv_" not in out.split(".visible .entry")[1].split("\n")[0]
    if has_ptxas():
        assert assemble(out, target).kernels


@pytest.mark.skipif(not has_libdevice(), reason="libdevice not found: pip install 's2s[ptx]'")
def test_dump_ptx_of_the_gradient(capsys, src):
    rc, out, err = run(capsys, "dump", f"{src}:f", "--mode", "ptx", "--signature", "f64, f64",
                       "--grad", "--argnums", "0,1")
    assert rc == 0, err
    assert ".visible .entry s2s_grad_f_" in out
    entry = out.split(".visible .entry")[1].split(")")[0]
    assert entry.count(".param") == 6  # n, x, y, dx, dy, error word
    rc2, again, _ = run(capsys, "dump", f"{src}:f", "--mode", "ptx", "--signature", "f64, f64",
                        "--grad", "--argnums", "0,1")
    assert again == out  # deterministic


def test_dump_ptx_int_signature_needs_no_libdevice(capsys, src):
    rc, out, err = run(capsys, "dump", f"{src}:g", "--mode", "ptx", "--signature", "f32, i64")
    assert rc == 0, err
    # float32 times int64 is float64 (numpy's promotion), as on the CPU
    assert "cvt.f64.f32" in out and "cvt.rn.f64.s64" in out and "mul.rn.f64" in out


@pytest.mark.parametrize("argv, message", [
    (("--signature", "f64[:], f64", "--grad"), "--mode ptx --grad makes the gradient"),
    (("--signature", "f64, f64", "--arch", "sm_1"), "unknown GPU architecture 'sm_1'")])
def test_dump_ptx_usage_errors(capsys, src, argv, message):
    rc, out, err = run(capsys, "dump", f"{src}:f", "--mode", "ptx", *argv)
    assert rc == 2 and message in err and "Traceback" not in err


def test_dump_ptx_index_form(capsys, src):
    rc, out, err = run(capsys, "dump", f"{src}:fill", "--mode", "ptx", "--signature",
                       "f64[:], f64")
    assert rc == 0, err
    assert ".visible .entry s2s_fill_" in out and "%tid.x" in out
    if has_ptxas():
        assert assemble(out, "sm_80").kernels
