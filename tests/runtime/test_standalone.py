"""s2s_runtime on its own (the distribution ``s2s-runtime`` built from ``runtime/``).

The slow test builds the wheel, installs it with numpy into a fresh virtual environment
that has nothing else (no s2s, no system site-packages), and runs a module written by
``s2s dump --out`` there against the gradient s2s computes in this process.
"""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import s2s
import s2s_runtime
from s2s.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def _version(pyproject: Path) -> str:
    return re.search(r'^version = "([^"]+)"', pyproject.read_text(), re.M).group(1)


def test_versions_agree():
    """One version for s2s and s2s-runtime: both pyprojects and both packages."""
    versions = {_version(ROOT / "pyproject.toml"), _version(ROOT / "runtime" / "pyproject.toml"),
                s2s.__version__, s2s_runtime.__version__}
    assert len(versions) == 1, versions


def test_runtime_imports_nothing_of_s2s():
    for path in (ROOT / "runtime").glob("*.py"):
        text = path.read_text()
        assert not re.search(r"^\s*(from s2s\b|import s2s\b)(?!_runtime)", text, re.M), path
    assert "s2s-runtime" in (ROOT / "runtime" / "pyproject.toml").read_text()
    deps = re.search(r"^dependencies = \[(.*)\]", (ROOT / "runtime" / "pyproject.toml")
                     .read_text(), re.M).group(1)
    assert re.findall(r'"(\w+)', deps) == ["numpy"]


MODEL = textwrap.dedent('''\
    import numpy as np


    def loss(w, xs, ys):
        pred = np.tanh(xs @ w)
        for _ in range(3):
            pred = pred * 0.5 + np.sin(pred)
        return np.sum((pred - ys) ** 2)
''')


def _run(cmd, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert out.returncode == 0, f"{cmd}\n{out.stdout}\n{out.stderr}"
    return out


@pytest.mark.slow
def test_dumped_module_runs_with_numpy_and_the_runtime_only(tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    out_module = tmp_path / "grad_loss.py"
    args = "(np.array([0.3, -0.2]), np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.1]]), " \
           "np.array([0.1, 0.2, 0.3]))"
    assert main(["dump", f"{model}:loss", "--args", args, "--out", str(out_module)]) == 0
    capsys.readouterr()
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels),
          str(ROOT / "runtime")])
    wheel, = wheels.glob("s2s_runtime-*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", f"numpy=={np.__version__}", str(wheel)])
    listed = _run([str(python), "-m", "pip", "list", "--format=freeze"]).stdout
    names = {line.split("==")[0].lower() for line in listed.split()}
    assert names - {"pip", "setuptools", "wheel"} == {"numpy", "s2s-runtime"}, names
    script = textwrap.dedent(f'''\
        import importlib.util, sys
        import numpy as np
        try:
            import s2s
        except ImportError:
            pass
        else:
            sys.exit("s2s is importable")
        spec = importlib.util.spec_from_file_location("grad_loss", {str(out_module)!r})
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        args = {args}
        print(repr(mod.grad_loss(*args).tolist()))
    ''')
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    ran = _run([str(python), "-I", "-c", script], cwd=str(tmp_path), env=env)
    got = np.array(eval(ran.stdout.strip()))
    w, xs, ys = eval(args)
    np.testing.assert_allclose(got, s2s.grad(eval("loss", _namespace(model)))(w, xs, ys),
                               rtol=1e-12)


def _namespace(path):
    ns = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    return ns
