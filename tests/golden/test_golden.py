"""Golden tests: `s2s dump` output for small functions, compared byte for byte.

Run with ``S2S_UPDATE_GOLDEN=1`` to rewrite tests/golden/expected/ after an
intended change of the generated code (then review the diff).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from s2s.cli.main import main

HERE = Path(__file__).parent
CASES_FILE = HERE / "cases.py"
EXPECTED = HERE / "expected"

#: name -> `s2s dump` options (the target is cases.py:<function>)
CASES = {
    "scalar_arith": ("scalar_arith", "--argnums", "0,1"),
    "elementwise_sum": ("elementwise_sum", "--signature", "f64[:]"),
    "broadcasting": ("broadcasting", "--argnums", "0,1", "--signature", "f64[:], f64, f64[:, :]"),
    "dict_pytree": ("dict_pytree", "--args", "({'w': np.ones(3), 'b': 0.5}, np.ones(3))"),
    "if_else": ("if_else",),
    "if_else_ir": ("if_else", "--mode", "ir"),
    "with_aux": ("with_aux", "--has-aux", "--signature", "f64[:]"),
    # control flow in reverse mode: what the tape records
    "try_except": ("try_except",),
    "while_loop": ("while_loop",),
    "return_in_loop": ("return_in_loop",),
    "try_in_loop": ("try_in_loop",),
    # forward mode: the tangent code, and forward over the gradient code (HVPs)
    "scalar_arith_jvp": ("scalar_arith", "--mode", "jvp"),
    "elementwise_sum_jvp": ("elementwise_sum", "--mode", "jvp", "--signature", "f64[:]"),
    "if_else_jvp": ("if_else", "--mode", "jvp"),
    "running_product_jvp": ("running_product", "--mode", "jvp", "--signature", "f64[:]"),
    # reverse mode: an in-place write in a loop, a method of a class built inside
    "running_product": ("running_product", "--signature", "f64[:]"),
    "method_call": ("method_call", "--signature", "f64, f64[:]"),
    "elementwise_sum_hvp": ("elementwise_sum", "--mode", "hvp", "--signature", "f64[:]"),
}


def argv(name):
    func, *opts = CASES[name]
    return ["dump", f"{CASES_FILE}:{func}", "--color", "never", *opts]


def generate(name, capsys):
    rc = main(argv(name))
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name, capsys):
    text = generate(name, capsys)
    path = EXPECTED / f"{name}.txt"
    if os.environ.get("S2S_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8", newline="\n")
    assert path.exists(), f"{path} is missing; run with S2S_UPDATE_GOLDEN=1 to create it"
    expected = path.read_bytes()
    assert text.encode("utf-8") == expected, (
        f"`s2s {' '.join(argv(name))}` differs from {path}; if the change is intended, "
        f"rerun with S2S_UPDATE_GOLDEN=1 and review the diff")


def test_every_expected_file_has_a_case():
    assert {p.stem for p in EXPECTED.glob("*.txt")} <= set(CASES)


_SCRIPT = """
import contextlib, io, json, sys
from s2s.cli import main
out = {}
for name, args in json.loads(sys.argv[1]).items():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(args) == 0, name
    out[name] = buf.getvalue()
print(json.dumps(out))
"""


def _generate_in_subprocess(seed):
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    payload = json.dumps({name: argv(name) for name in CASES})
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, payload], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_output_is_deterministic_across_processes(capsys):
    first = _generate_in_subprocess(0)
    second = _generate_in_subprocess(4242)
    assert first == second
    assert first == {name: generate(name, capsys) for name in CASES}
