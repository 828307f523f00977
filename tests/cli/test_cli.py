"""The ``s2s`` command line: ``s2s dump`` and ``s2s rules`` (in-process and as a real process)."""
import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import s2s
from s2s.cli.main import main
from s2s.cli.targets import parse_signature

BIN = Path(sys.executable).parent
MODEL = '''\
import numpy as np

SCALE = 3.0


def f(x, y):
    z = np.sin(x) * y + x * x / y
    return z


def vec(x, w):
    return np.sum(np.tanh(x * w) * SCALE)


def tree(p, x):
    return p["w"] * x + p["b"] * p["w"]


def with_default(x, k=2.0):
    return x * k


square = lambda x: x * x


def gen(x):
    y = yield x
    return y


def uses_with(x):
    with open("nothing") as fh:
        y = x * 2.0
    return y


NOT_A_FUNCTION = 3
'''


def line_of(text):
    return MODEL.splitlines().index(text) + 1


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_dump_grad_prints_generated_code(capsys, model):
    rc, out, err = run(capsys, "dump", f"{model}:f")
    assert rc == 0, err
    assert out.startswith("def grad_f(x, y):\n")
    assert "np.cos(x)" in out and "return x_bar" in out
    assert "\x1b[" not in out  # not a terminal: no colour
    ns = {}
    exec("import numpy as np\nimport s2s_runtime as rt\n" + out, ns)
    assert ns["grad_f"](0.5, 2.0) == pytest.approx(np.cos(0.5) * 2.0 + 2 * 0.5 / 2.0)


def test_dump_argnums_two(capsys, model):
    rc, out, _ = run(capsys, "dump", f"{model}:f", "--argnums", "0,1")
    assert rc == 0
    assert "y_bar" in out
    assert "(x_bar, y_bar)" in out


def test_dump_mode_ir(capsys, model):
    rc, out, _ = run(capsys, "dump", f"{model}:f", "--mode", "ir")
    assert rc == 0
    assert out.startswith("def f(x, y):\n")
    assert "np.sin(x)  # 7:" in out  # three-address form with line:col
    assert "_bar" not in out


def test_dump_module_level_lambda(capsys, model):
    rc, out, err = run(capsys, "dump", f"{model}:square")
    assert rc == 0, err
    assert out.startswith("def grad_")


def test_dump_signature_with_arrays(capsys, model):
    rc, out, err = run(capsys, "dump", f"{model}:vec", "--signature", "f64[:], f64[:, :]")
    assert rc == 0, err
    assert "def grad_vec(x, w, *, SCALE):" in out  # free variables: keyword-only parameters


def test_parse_signature_kinds():
    vals = parse_signature("f64, f32[:], c128[:,:], i64, bool, c64[:, :, :]")
    assert vals[0] == 1.0 and type(vals[0]) is float
    assert vals[1].dtype == np.float32 and vals[1].shape == (2,)
    assert vals[2].dtype == np.complex128 and vals[2].shape == (2, 2)
    assert type(vals[3]) is int and vals[4] is True
    assert vals[5].shape == (2, 2, 2) and vals[5].dtype == np.complex64


def test_dump_args_dict_pytree(capsys, model):
    rc, out, err = run(capsys, "dump", f"{model}:tree",
                       "--args", "({'w': 2.0, 'b': np.ones(3)}, 1.5)")
    assert rc == 0, err
    assert "def grad_tree(p, x):" in out
    assert "'w'" in out and "'b'" in out


def test_defaults_fill_missing_parameters(capsys, model):
    rc, out, err = run(capsys, "dump", f"{model}:with_default")
    assert rc == 0, err
    assert "def grad_with_default(x, k=" in out or "def grad_with_default(x, k)" in out


def test_color_always_highlights(capsys, model):
    pytest.importorskip("pygments")
    rc, out, _ = run(capsys, "dump", f"{model}:f", "--color", "always")
    assert rc == 0 and "\x1b[" in out
    rc, out, _ = run(capsys, "dump", f"{model}:f", "--color", "never")
    assert "\x1b[" not in out


def _isolated(code):
    """Run ``code`` in a fresh interpreter in which ``import s2s`` fails."""
    blocker = textwrap.dedent('''\
        import sys
        class _Block:
            def find_spec(self, name, path=None, target=None):
                if name == "s2s" or name.startswith("s2s."):
                    raise ImportError("s2s must not be imported by a standalone module")
        sys.meta_path.insert(0, _Block())
        ''')
    proc = subprocess.run([sys.executable, "-I", "-c", blocker + code],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_out_writes_standalone_module(capsys, model, tmp_path):
    out_file = tmp_path / "gen" / "grad_f_mod.py"
    out_file.parent.mkdir()
    rc, out, err = run(capsys, "dump", f"{model}:f", "--argnums", "0,1", "--out", out_file,
                       "--color", "always")
    assert rc == 0, err
    assert out == ""
    text = out_file.read_text()
    assert "\x1b[" not in text
    assert text.startswith('"""Gradient of `f` in model.py')
    body = ast.parse(text).body  # docstring, imports, the function and nothing else
    assert isinstance(body[0], ast.Expr) and isinstance(body[-1], ast.FunctionDef)
    assert all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in body[1:-1])
    assert {a.name for n in body[1:-1] for a in n.names} <= {"numpy", "math", "s2s_runtime"}
    x, y = 0.7, 1.3
    stdout = _isolated(textwrap.dedent(f'''
        sys.path.insert(0, {str(out_file.parent)!r})
        import json, grad_f_mod
        assert "s2s" not in sys.modules
        print(json.dumps([float(v) for v in grad_f_mod.grad_f({x}, {y})]))
        '''))
    standalone = json.loads(stdout)
    sys.path.insert(0, str(model.parent))
    try:
        import model as user
    finally:
        sys.path.remove(str(model.parent))
    in_process = s2s.grad(user.f, argnums=(0, 1))(x, y)
    assert standalone == pytest.approx([float(v) for v in in_process], rel=1e-15)
    h = 1e-6
    fd = [(user.f(x + h, y) - user.f(x - h, y)) / (2 * h),
          (user.f(x, y + h) - user.f(x, y - h)) / (2 * h)]
    assert standalone == pytest.approx(fd, rel=1e-7)


def test_out_with_mode_ir_is_an_error(capsys, model, tmp_path):
    rc, _, err = run(capsys, "dump", f"{model}:f", "--mode", "ir", "--out", tmp_path / "x.py")
    assert rc == 2 and "--mode grad" in err


@pytest.mark.parametrize("func, construct, line, at", [
    ("gen", "yield", line_of("    y = yield x"), "yield"),
    # a with statement on a context manager that changes values: the caret at the manager
    ("uses_with", "'with' statement on open", line_of('    with open("nothing") as fh:'),
     "open(")])
def test_unsupported_syntax_is_one_located_line(capsys, model, func, construct, line, at):
    rc, out, err = run(capsys, "dump", f"{model}:{func}")
    assert rc == 2 and out == ""
    assert "Traceback" not in err
    first, quoted, caret = err.rstrip("\n").split("\n")
    assert first.startswith(f"{model}:{line}:")
    assert "unsupported syntax" in first and construct in first
    assert caret.strip() == "^"
    assert quoted[caret.index("^"):].startswith(at)


def test_debug_shows_traceback(model):
    proc = subprocess.run([str(BIN / "s2s"), "dump", f"{model}:gen", "--debug"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr and "UnsupportedSyntaxError" in proc.stderr


@pytest.mark.parametrize("argv, needle", [
    (["dump", "missing_file.py:f"], "no such file"),
    (["dump", "{model}:nope"], "no function named 'nope'"),
    (["dump", "{model}:NOT_A_FUNCTION"], "not a Python function"),
    (["dump", "{model}:f", "--signature", "f65, f64"], "bad --signature"),
    (["dump", "{model}:f", "--signature", "f64[x]"], "bad --signature"),
    (["dump", "{model}:f", "--args", "(1.0,"], "bad --args"),
    (["dump", "{model}:f", "--args", "(1.0, 2.0, 3.0)"], "do not fit"),
    (["dump", "{model}:f", "--argnums", "a"], "bad --argnums"),
    (["dump", "{model}:f", "--argnums", "7"], "out of range"),
    (["dump", "{model}:f", "--signature", "i64, f64"], "integer"),
    (["dump", "{model}"], "FILE.py:FUNC"),
])
def test_usage_errors(capsys, model, argv, needle):
    rc, out, err = run(capsys, *[a.format(model=model) for a in argv])
    assert rc == 2
    assert out == ""
    assert needle in err
    assert err.count("\n") == 1 and err.startswith("s2s: error: ")
    assert "Traceback" not in err


def test_syntax_error_in_file(capsys, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x):\n    return x +\n")
    rc, _, err = run(capsys, "dump", f"{bad}:f")
    assert rc == 2
    assert err.startswith(f"{bad}:2:") and "syntax error" in err and "^" in err
    assert "Traceback" not in err


def test_sibling_imports(capsys, tmp_path):
    (tmp_path / "helper_mod_s2s.py").write_text("def sq(x):\n    return x * x\n")
    (tmp_path / "main_mod.py").write_text(
        "from helper_mod_s2s import sq\n\ndef f(x):\n    return sq(x) * 3.0\n")
    rc, out, err = run(capsys, "dump", f"{tmp_path / 'main_mod.py'}:f")
    assert rc == 0, err
    assert str(tmp_path) not in sys.path


def test_rules_lists_primitives_with_four_modes(capsys):
    rc, out, _ = run(capsys, "rules")
    assert rc == 0
    rows = {line.split("  ")[0]: line.split("  ")[1] for line in out.splitlines()}
    assert rows["numpy.sin"] == "jvp+ vjp+ vmap+ jit+"
    assert rows["operator.lt"].startswith("jvp0 vjp0")
    assert rows["math.exp"].startswith("jvp+ vjp+")
    assert len(rows) == len(out.splitlines()) > 500
    assert all(len(m.split()) == 4 for m in rows.values())
    # every primitive with a rule is listed, and every run-time helper
    from s2s.cli import modes
    from s2s.rules.registry import all_rules
    assert {modes.qualified_name(r.fn) for r in all_rules()} <= set(rows)
    assert "s2s_runtime.vjps.prod_vjp" in rows


def test_rules_missing_and_summary(capsys):
    rc, out, _ = run(capsys, "rules", "--missing")
    assert rc == 0
    assert all("?" in line.split("  ")[1] for line in out.splitlines())
    assert "numpy.sin  " not in out
    rc, out, _ = run(capsys, "rules", "--summary")
    counts = dict(line.split(": ") for line in out.splitlines())
    assert int(counts["primitives"]) == int(counts["all four modes"]) + int(
        counts["missing modes with a reason"]) + int(counts["missing modes without a reason"])


def test_help_version_and_no_args(capsys):
    rc, out, _ = run(capsys)
    assert rc == 0 and "usage: s2s" in out and "dump" in out
    rc, out, _ = run(capsys, "--version")
    assert rc == 0 and out.strip() == f"s2s {s2s.__version__}"
    rc, out, _ = run(capsys, "dump", "--help")
    assert rc == 0 and "--signature" in out
    rc, _, err = run(capsys, "dump", "x.py:f", "--mode", "llvm-nope")
    assert rc == 2 and "invalid choice" in err


def test_console_script_and_python_m(model):
    script = BIN / "s2s"
    assert script.exists(), "run `.venv/bin/pip install -e .` to create the console script"
    via_script = subprocess.run([str(script), "dump", f"{model}:f"],
                                capture_output=True, text=True, timeout=120)
    via_m = subprocess.run([sys.executable, "-m", "s2s", "dump", f"{model}:f"],
                           capture_output=True, text=True, timeout=120)
    assert via_script.returncode == 0, via_script.stderr
    assert via_script.stdout.startswith("def grad_f(x, y):")
    assert "\x1b[" not in via_script.stdout  # a pipe, not a terminal
    assert via_m.stdout == via_script.stdout
    err = subprocess.run([str(script), "dump", f"{model}:gen"],
                         capture_output=True, text=True, timeout=120)
    assert err.returncode == 2 and "Traceback" not in err.stderr
    assert err.stderr.startswith(f"{model}:{line_of('    y = yield x')}:9: ")


def test_dump_jvp_prints_tangent_code(tmp_path, capsys):
    src = tmp_path / "fwd.py"
    src.write_text("import numpy as np\n\n\ndef f(x, y):\n    return np.sin(x) * y\n")
    assert main(["dump", f"{src}:f", "--mode", "jvp", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("def jvp_f(x, y, dx, dy):")
    assert "np.cos(x)" in out
    namespace = {}
    exec(compile("import numpy as np\nimport s2s_runtime as rt\n" + out, "<jvp>", "exec"),
         namespace)
    value, tangent = namespace["jvp_f"](0.5, 2.0, 1.0, 0.0)
    assert abs(tangent - 2.0 * np.cos(0.5)) < 1e-14


def test_dump_hvp_prints_forward_over_reverse_code(tmp_path, capsys):
    src = tmp_path / "hv.py"
    src.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(np.tanh(x) ** 2)\n")
    assert main(["dump", f"{src}:f", "--mode", "hvp", "--signature", "f64[:]",
                 "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("def jvp_grad_f(x, dx):")
    namespace = {}
    exec(compile("import numpy as np\nimport s2s_runtime as rt\n" + out, "<hvp>", "exec"),
         namespace)
    x, v = np.array([0.3, -0.8]), np.array([1.0, 2.0])
    _, hv = namespace["jvp_grad_f"](x, v)
    t = np.tanh(x)
    np.testing.assert_allclose(hv, 2 * (1 - t ** 2) * (1 - 3 * t ** 2) * v, rtol=1e-12)
