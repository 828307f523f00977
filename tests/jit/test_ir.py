"""The LLVM module text: verified by LLVM, deterministic, and the dump CLI."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from s2s.backend.llvm.driver import engine
from s2s.backend.llvm.driver.compile import param_types
from s2s.backend.llvm.driver.module import build_module
from s2s.core.jit import Jitted
from s2s.cli.main import main

from . import kernels as K


def _module(fn, args, boundscheck=True):
    j = Jitted(fn, boundscheck=boundscheck)
    func, load_free = j.source_ir(args)
    return build_module(func, param_types(func, list(args) + load_free(), j.describe),
                        boundscheck)


KERNELS = [(K.rk4, (1.0, 0.1, 3)), (K.heat, (np.zeros(5), 2)),
           (K.index_reads, (np.zeros((3, 3)), 1, 1)), (K.promote, (1, 2.0, True, np.float32(1), 1j)),
           (K.try_seed, (1.0,)), (K.reductions, (np.zeros(3), np.zeros((3, 3))))]


def test_modules_verify_and_are_deterministic():
    for fn, args in KERNELS:
        a = _module(fn, args).text
        b = _module(fn, args).text
        assert a == b
        engine.parse_verified(a)  # raises if LLVM's verifier rejects it
        opt = engine.optimise(a)
        assert opt == engine.optimise(a)


def test_boundscheck_false_removes_checks():
    x = (np.zeros(4), 2)
    with_checks = engine.optimise(_module(K.read_at, x).text)
    without = engine.optimise(_module(K.read_at, x, boundscheck=False).text)
    assert "fail" in _module(K.read_at, x).text
    assert "fail" not in _module(K.read_at, x, boundscheck=False).text
    assert len(without) < len(with_checks)


KERNELS_FILE = str(Path(K.__file__))


def _dump(capsys, *argv):
    rc = main(["dump", *argv, "--color", "never"])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_dump_llvm(capsys):
    rc, opt, _ = _dump(capsys, f"{KERNELS_FILE}:heat", "--mode", "llvm", "--signature",
                       "f64[:], i64")
    assert rc == 0 and "define" in opt and "s2s_heat_" in opt
    rc, unopt, _ = _dump(capsys, f"{KERNELS_FILE}:heat", "--mode", "llvm", "--signature",
                         "f64[:], i64", "--stage", "unopt")
    assert rc == 0 and "alloca" in unopt and unopt != opt
    rc, again, _ = _dump(capsys, f"{KERNELS_FILE}:heat", "--mode", "llvm", "--signature",
                         "f64[:], i64", "--stage", "unopt")
    assert again == unopt  # deterministic
    rc, grad, _ = _dump(capsys, f"{KERNELS_FILE}:logsumexp", "--mode", "llvm", "--signature",
                        "f64[:]", "--grad")
    assert rc == 0 and "grad_logsumexp" in grad
    rc, asm, _ = _dump(capsys, f"{KERNELS_FILE}:add", "--mode", "asm")
    assert rc == 0 and "ret" in asm


def test_cli_dump_llvm_compiles_what_jit_compiles(capsys):
    """A transform called inside the function: the dump is of the form ``s2s.jit``
    compiles (its tapes in the backend's forms), not an error."""
    rc, text, err = _dump(capsys, f"{KERNELS_FILE}:nearest_newton", "--mode", "llvm",
                          "--args", "(np.ones((3, 2)), np.ones((5, 2)))")
    assert rc == 0 and "define" in text, err


def test_cli_dump_llvm_error_names_the_line(capsys):
    rc, out, err = _dump(capsys, f"{KERNELS_FILE}:uses_list", "--mode", "llvm")
    assert rc == 2 and "jit does not compile" in err and "kernels.py" in err
