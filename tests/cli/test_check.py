"""``s2s check FILE.py:FUNC``: derivatives against central differences and jvp against vjp.

The oracle of the command is central differences (``s2s/check.py``); these tests give it
functions with known-wrong derivative rules (a ``custom_vjp``/``custom_jvp`` whose rule is
off by a factor) and check that it says so with exit status 1, and correct ones (exit 0).
"""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s
from s2s.check import check
from s2s.cli.main import main

BIN = Path(sys.executable).parent
MODEL = '''\
import numpy as np
import s2s


def f(x, y):
    return np.sum(np.sin(x) * y) + y ** 2


def tree(p, xs):
    return np.sum((p["w"] * xs + p["b"]) ** 2) + p["n"]


@s2s.custom_vjp
def cube(x):
    return x ** 3


cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (2.0 * g * x * x,))  # wrong: 3 x^2


def uses_cube(x):
    return np.sum(cube(x))


@s2s.custom_jvp
def softplus(x):
    return np.log1p(np.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return softplus(x), dx / (1.0 + np.exp(x))  # wrong: exp(-x)


def vector_out(x, p):
    return np.tanh(x) * p["a"], {"s": np.sum(x) * p["b"]}


def uses_softplus(x):
    return softplus(x) * 2.0


def modulus(z):
    return abs(z) ** 2


def big(x):
    return np.sum(np.exp(0.01 * x) ** 2)


def loop(x, n):
    acc = 0.0
    for i in range(n):
        acc = np.sin(acc + x * i)
    return acc


def gen(x):
    y = yield x
    return y
'''


@pytest.fixture()
def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return str(path)


def run(capsys, *argv):
    rc = main(["check", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def rows(out):
    """``{checked: (abs_err, rel_err, verdict)}`` from the printed table."""
    table = {}
    for line in out.splitlines()[2:-1]:
        parts = re.split(r"\s{2,}", line)  # columns are two or more spaces apart
        table[parts[0]] = tuple(parts[2:5])
    return table


def test_correct_gradient_passes_with_one_row_per_argument(capsys, model):
    rc, out, err = run(capsys, f"{model}:f", "--args", "(np.array([0.1, 0.2, 0.3]), 1.5)",
                       "--argnums", "0,1")
    assert rc == 0, err
    table = rows(out)
    assert set(table) == {"x", "y"}
    assert all(v[2] == "ok" and float(v[0]) < 1e-8 for v in table.values())
    assert out.splitlines()[-1].startswith("OK")


def test_wrong_vjp_rule_is_a_mismatch(capsys, model):
    rc, out, _ = run(capsys, f"{model}:uses_cube", "--args", "np.array([1.0, 2.0])")
    assert rc == 1
    abs_err, rel_err, verdict = rows(out)["x"]
    assert verdict == "FAIL"
    assert float(abs_err) == pytest.approx(4.0, rel=1e-4)  # |2 x^2 - 3 x^2| at x = 2
    assert out.splitlines()[-1].startswith("MISMATCH")


def test_wrong_jvp_rule_is_a_mismatch_in_both_modes(capsys, model):
    rc, out, _ = run(capsys, f"{model}:uses_softplus", "--args", "0.7", "--mode", "jvp")
    assert rc == 1 and rows(out)["jvp"][2] == "FAIL"
    rc, out, _ = run(capsys, f"{model}:uses_softplus", "--args", "0.7")
    assert rc == 1 and rows(out)["x"][2] == "FAIL"


def test_jvp_mode_any_output_with_the_dot_product_test(capsys, model):
    rc, out, err = run(capsys, f"{model}:vector_out", "--args",
                       "(np.array([0.1, -0.4]), {'a': 2.0, 'b': 3.0})", "--mode", "jvp",
                       "--argnums", "0,1")
    assert rc == 0, err
    table = rows(out)
    assert table["jvp"][2] == "ok" and table["dot product"][2] == "ok"


def test_jit_mode_checks_the_compiled_value_and_gradient(capsys, model):
    rc, out, err = run(capsys, f"{model}:loop", "--args", "(0.3, 5)", "--mode", "jit")
    assert rc == 0, err
    assert set(rows(out)) == {"value", "x"}


def test_pytree_complex_and_large_arguments(capsys, model):
    rc, out, err = run(capsys, f"{model}:tree", "--args",
                       "({'w': 2.0, 'b': np.array([0.5, 1.0]), 'n': 3}, np.array([1.0, 2.0]))")
    assert rc == 0, err
    rc, out, err = run(capsys, f"{model}:modulus", "--args", "3 + 4j")
    assert rc == 0, err
    rc, out, err = run(capsys, f"{model}:big", "--args", "np.arange(300.0)")
    assert rc == 0, err
    assert "random directions" in out


def test_check_function_catches_an_off_gradient():
    # the oracle is independent of s2s: a deliberately wrong gradient must fail
    def f(x):
        return float(np.sum(x ** 2))

    report = check(f, [np.array([1.0, 2.0])])
    assert report.ok
    from s2s.check import _grad_rows
    bad = _grad_rows(f, np.array([2.0, 4.1]), [np.array([1.0, 2.0])], 0, ["x"], 1e-5, 1e-8,
                     200, 3, np.random.default_rng(0))
    assert not bad[0].ok and bad[0].abs_err == pytest.approx(0.1, rel=1e-4)


@pytest.mark.parametrize("argv, needle", [
    (["--args", "(np.ones(2), {'a': 1.0, 'b': 1.0})"], "return a real number"),
    (["--args", "(np.ones(2), {'a': 1.0, 'b': 1.0})", "--argnums", "4"], "out of range"),
    (["--args", "(1,"], "bad --args"),
])
def test_usage_errors_exit_2(capsys, model, argv, needle):
    rc, out, err = run(capsys, f"{model}:vector_out", *argv)
    assert rc == 2 and needle in err and out == ""
    assert err.count("\n") == 1


def test_unsupported_code_is_a_located_error(capsys, model):
    rc, out, err = run(capsys, f"{model}:gen", "--args", "1.0")
    assert rc == 2
    line = MODEL.splitlines().index("    y = yield x") + 1
    assert err.startswith(f"{model}:{line}:")
    assert "    y = yield x" in err and "^" in err and "Traceback" not in err


def test_console_script(model):
    ok = subprocess.run([str(BIN / "s2s"), "check", f"{model}:f", "--args",
                         "(np.array([0.1, 0.2]), 2.0)"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run([str(BIN / "s2s"), "check", f"{model}:uses_cube", "--args", "1.5"],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "FAIL" in bad.stdout


@pytest.mark.parametrize("command", ["dump", "check"])
def test_a_file_that_exits_at_import_is_a_clear_error(capsys, tmp_path, command):
    path = tmp_path / "script.py"
    path.write_text("import sys\n\ndef f(x):\n    return x * x\n\nsys.exit(3)\n")
    rc = main([command, f"{path}:f"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert "sys.exit(3)" in err and "__name__ == '__main__'" in err and err.count("\n") == 1
